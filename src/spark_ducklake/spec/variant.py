"""JSON text -> a variant's binary form (Parquet's Variant encoding: a metadata dictionary of the object keys and
a value), for the variant values DuckDB inlines in a DuckDB catalog (read as JSON). Every size and offset is
written 4 bytes wide (the encoding allows it; it keeps this small). JSON numbers become int64 or double, so
values DuckDB typed more finely (dates, decimals) arrive as their JSON rendering.
"""

from __future__ import annotations

import json
import struct
from typing import Any

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def from_json(text: str) -> dict[str, bytes]:
    """{'value': ..., 'metadata': ...} of the JSON text `text`."""
    data = json.loads(text)
    keys = sorted(_keys(data, set()))
    ids = {k: i for i, k in enumerate(keys)}
    encoded = [k.encode("utf-8") for k in keys]
    offsets, position = [], 0
    for raw in encoded:
        offsets.append(position)
        position += len(raw)
    offsets.append(position)
    # header: version 1, sorted keys (bit 4), offsets 4 bytes wide (bits 6-7 = 3)
    metadata = bytes([0x01 | 0x10 | 0xC0]) + struct.pack(f"<{len(offsets) + 1}I", len(keys), *offsets) + b"".join(
        encoded)
    return {"value": _value(data, ids), "metadata": metadata}


def _keys(data: object, out: set[str]) -> set[str]:
    if isinstance(data, dict):
        for key, item in data.items():
            out.add(key)
            _keys(item, out)
    elif isinstance(data, list):
        for item in data:
            _keys(item, out)
    return out


def _value(data: Any, ids: dict[str, int]) -> bytes:
    if data is None:
        return b"\x00"
    if data is True or data is False:
        return bytes([(1 if data else 2) << 2])
    if isinstance(data, int) and _INT64_MIN <= data <= _INT64_MAX:
        return bytes([6 << 2]) + struct.pack("<q", data)
    if isinstance(data, int | float):
        return bytes([7 << 2]) + struct.pack("<d", float(data))
    if isinstance(data, str):
        raw = data.encode("utf-8")
        if len(raw) < 64:
            return bytes([(len(raw) << 2) | 1]) + raw
        return bytes([16 << 2]) + struct.pack("<I", len(raw)) + raw
    if isinstance(data, list):
        return array_value([_value(item, ids) for item in data])
    return object_value({key: _value(item, ids) for key, item in data.items()}, ids)


def array_value(parts: list[bytes]) -> bytes:
    """A variant array of encoded values."""
    # basic type 3, offsets 4 bytes (bits 2-3 of the header = 3), large count (bit 4)
    return bytes([3 | (0b111 << 2)]) + struct.pack("<I", len(parts)) + _offsets(parts) + b"".join(parts)


def object_value(fields: dict[str, bytes], ids: dict[str, int]) -> bytes:
    """A variant object of encoded field values; `ids` maps each key to its metadata dictionary id."""
    items = sorted(fields.items())  # fields in key order, as the encoding requires
    parts = [part for _key, part in items]
    field_ids = struct.pack(f"<{len(items)}I", *(ids[key] for key, _part in items))
    # basic type 2, offsets 4 bytes (bits 2-3), field ids 4 bytes (bits 4-5), large count (bit 6)
    header = 2 | (0b11 << 2) | (0b11 << 4) | (1 << 6)
    return bytes([header]) + struct.pack("<I", len(items)) + field_ids + _offsets(parts) + b"".join(parts)


def _offsets(parts: list[bytes]) -> bytes:
    out, position = [0], 0
    for part in parts:
        position += len(part)
        out.append(position)
    return struct.pack(f"<{len(out)}I", *out)
