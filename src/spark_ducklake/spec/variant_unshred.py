"""A shredded variant (Parquet's VariantShredding: `value` plus a `typed_value` column, as DuckDB writes them) back
to its plain binary value, for readers that get it from pyarrow (the encrypted files' reader) rather than from
Spark's Parquet reader, which unshreds on its own. Works on the Python values pyarrow's `to_pylist` gives, with
the Arrow type of `typed_value` telling how a primitive is encoded. Offsets and ids are written 4 bytes wide.
"""

from __future__ import annotations

import datetime as dt
import struct
import uuid
from decimal import Decimal
from typing import Any

import pyarrow as pa

from .model import Column
from .variant import array_value, object_value

_EPOCH = dt.date(1970, 1, 1)
_EPOCH_TS = dt.datetime(1970, 1, 1)
_EPOCH_TZ = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_NULL = b"\x00"


def unshred(group: dict[str, Any] | None, typed_type: pa.DataType | None, metadata: bytes) -> bytes | None:
    """The binary value of one shredded variant group ({'value', 'typed_value'}); None when missing (both
    null: an object field that is absent)."""
    if group is None:
        return None
    typed = group.get("typed_value")
    if typed is not None and typed_type is not None:
        if pa.types.is_struct(typed_type):
            return _object(group.get("value"), typed, typed_type, metadata)
        if pa.types.is_list(typed_type) or pa.types.is_large_list(typed_type):
            element = typed_type.value_type
            inner = _typed_type(element)
            return array_value([unshred(item, inner, metadata) or _NULL for item in typed])
        return _primitive(typed, typed_type)
    return group.get("value")


def unshred_values(col: Column, arrow_type: pa.DataType, value: Any) -> Any:
    """One value of column `col` (read by pyarrow as `arrow_type`) with every variant in it, at any depth,
    as {'value', 'metadata'}: shredded ones rebuilt, a null row kept None."""
    if value is None:
        return None
    if col.type == "variant":
        typed_type = _typed_type(arrow_type)
        if typed_type is None:
            return value
        rebuilt = unshred(value, typed_type, value["metadata"])
        return {"value": _NULL if rebuilt is None else rebuilt, "metadata": value["metadata"]}
    if col.type == "list":
        return [unshred_values(col.children[0], arrow_type.value_type, v) for v in value]
    if col.type == "map":
        key, item = col.children
        return [(unshred_values(key, arrow_type.key_type, k), unshred_values(item, arrow_type.item_type, v))
                for k, v in value]
    if col.type == "struct":
        fields = {arrow_type.field(i).name: arrow_type.field(i).type for i in range(arrow_type.num_fields)}
        return {c.name: unshred_values(c, fields[c.name], value.get(c.name)) if c.name in fields
                else value.get(c.name) for c in col.children}
    return value


def _typed_type(group_type: pa.DataType) -> pa.DataType | None:
    index = group_type.get_field_index("typed_value") if pa.types.is_struct(group_type) else -1
    return group_type.field(index).type if index >= 0 else None


def _keys(metadata: bytes) -> dict[str, int]:
    """The metadata dictionary: key -> id."""
    width = ((metadata[0] >> 6) & 0x3) + 1
    count = int.from_bytes(metadata[1:1 + width], "little")
    offsets = [int.from_bytes(metadata[1 + width * (i + 1):1 + width * (i + 2)], "little") for i in range(count + 1)]
    start = 1 + width * (count + 2)
    return {metadata[start + offsets[i]:start + offsets[i + 1]].decode("utf-8"): i for i in range(count)}


def _object_fields(value: bytes, metadata: bytes) -> dict[str, bytes]:
    """The fields of an encoded object value (a partially shredded object's unshredded part)."""
    header = value[0] >> 2
    offset_width, id_width, large = (header & 0x3) + 1, ((header >> 2) & 0x3) + 1, (header >> 4) & 0x1
    count_width = 4 if large else 1
    count = int.from_bytes(value[1:1 + count_width], "little")
    pos = 1 + count_width
    ids = [int.from_bytes(value[pos + i * id_width:pos + (i + 1) * id_width], "little") for i in range(count)]
    pos += count * id_width
    offsets = [int.from_bytes(value[pos + i * offset_width:pos + (i + 1) * offset_width], "little")
               for i in range(count + 1)]
    data = pos + (count + 1) * offset_width
    ends = sorted(set(offsets))
    names = {i: k for k, i in _keys(metadata).items()}
    out = {}
    for fid, start in zip(ids, offsets[:-1], strict=True):
        end = next(e for e in ends if e > start)
        out[names[fid]] = value[data + start:data + end]
    return out


def _object(value: bytes | None, typed: dict[str, Any], typed_type: pa.StructType, metadata: bytes) -> bytes:
    fields = _object_fields(value, metadata) if value else {}
    for i in range(typed_type.num_fields):
        name = typed_type.field(i).name
        part = unshred(typed.get(name), _typed_type(typed_type.field(i).type), metadata)
        if part is not None:
            fields[name] = part
    return object_value(fields, _keys(metadata))


def _primitive(value: Any, t: pa.DataType) -> bytes:
    """A typed_value as the variant primitive of its type (the spec's shredded type table)."""
    def prim(type_id: int, payload: bytes = b"") -> bytes:
        return bytes([type_id << 2]) + payload

    if pa.types.is_boolean(t):
        return prim(1 if value else 2)
    for check, type_id, fmt in ((pa.types.is_int8, 3, "<b"), (pa.types.is_int16, 4, "<h"), (pa.types.is_int32, 5, "<i"),
                                (pa.types.is_int64, 6, "<q"), (pa.types.is_float64, 7, "<d"),
                                (pa.types.is_float32, 14, "<f")):
        if check(t):
            return prim(type_id, struct.pack(fmt, value))
    if pa.types.is_decimal(t):
        unscaled = int(Decimal(value).scaleb(t.scale))
        type_id, width = (8, 4) if t.precision <= 9 else (9, 8) if t.precision <= 18 else (10, 16)
        return prim(type_id, bytes([t.scale]) + unscaled.to_bytes(width, "little", signed=True))
    if pa.types.is_date(t):
        return prim(11, struct.pack("<i", (value - _EPOCH).days))
    if pa.types.is_timestamp(t):
        zoned = t.tz is not None
        delta = value - (_EPOCH_TZ if zoned else _EPOCH_TS)
        micros = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
        if t.unit == "ns":
            nanos = getattr(value, "nanosecond", 0)
            return prim(18 if zoned else 19, struct.pack("<q", micros * 1000 + nanos))
        return prim(12 if zoned else 13, struct.pack("<q", micros))
    if pa.types.is_time(t):
        micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
        return prim(17, struct.pack("<q", micros))
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        raw = value.encode("utf-8")
        return bytes([(len(raw) << 2) | 1]) + raw if len(raw) < 64 else prim(16, struct.pack("<I", len(raw)) + raw)
    if isinstance(value, uuid.UUID) or (pa.types.is_fixed_size_binary(t) and t.byte_width == 16):
        return prim(20, value.bytes if isinstance(value, uuid.UUID) else bytes(value))
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return prim(15, struct.pack("<I", len(value)) + bytes(value))
    raise ValueError(f"a shredded variant typed_value of type {t} is not known")
