"""Deletion vectors: Iceberg's `deletion-vector-v1` blobs (Puffin files), the delete files DuckDB writes with
`write_deletion_vectors` (`ducklake_delete_file.format = 'puffin'`).

A file holds either one bare blob (its positions were deleted at the delete file's begin_snapshot) or a Puffin
container: `PFA1`, blobs, then a JSON footer whose blob entries carry a `ducklake-snapshot-id` property. Blobs are
cumulative (each holds every position deleted as of its snapshot), so a reader at snapshot S uses the newest blob
at or before S. A blob is: length (4 bytes, big endian), magic `D1 D3 39 64`, the number of 64-bit buckets
(8 bytes, little endian), per bucket its high 32 bits (4 bytes) and a portable Roaring bitmap of the low 32 bits,
then a CRC-32 (big endian) of everything from the magic on.

Runs on executors: pyarrow, numpy and the standard library only.
"""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ...errors import SchemaMismatchError
from ...spec.internal_columns import SNAPSHOT_ID_COLUMN
from .storage import filesystem

PUFFIN_MAGIC = b"PFA1"
DV_MAGIC = bytes([0xD1, 0xD3, 0x39, 0x64])
SNAPSHOT_PROPERTY = "ducklake-snapshot-id"
_NO_RUNS, _WITH_RUNS = 12346, 12347  # portable Roaring cookies
_ARRAY_LIMIT = 4096


class CorruptDeletionVector(SchemaMismatchError):
    """A deletion vector or Puffin file that does not follow its format."""


@dataclass
class Blob:
    """One deletion vector of a file: the snapshot it belongs to (None: the delete file's own) and positions."""

    snapshot_id: int | None
    positions: np.ndarray  # int64, sorted


# --------------------------------------------------------------------------------------------- Roaring bitmaps
def _read_roaring(buf: bytes, start: int) -> tuple[np.ndarray, int]:
    """(sorted uint32 values, bytes used) of the portable Roaring bitmap at `start`."""
    cookie = struct.unpack_from("<I", buf, start)[0]
    pos = start + 4
    if cookie & 0xFFFF == _WITH_RUNS:
        size = (cookie >> 16) + 1
        run_flags = np.unpackbits(np.frombuffer(buf, np.uint8, (size + 7) // 8, pos), bitorder="little")[:size]
        pos += (size + 7) // 8
        has_offsets = size >= 4
    elif cookie == _NO_RUNS:
        size = struct.unpack_from("<I", buf, pos)[0]
        pos += 4
        run_flags = np.zeros(size, np.uint8)
        has_offsets = True
    else:
        raise CorruptDeletionVector(f"not a portable Roaring bitmap (cookie {cookie})")
    header = np.frombuffer(buf, "<u2", 2 * size, pos).reshape(size, 2) if size else np.zeros((0, 2), "<u2")
    pos += 4 * size
    if has_offsets:
        pos += 4 * size  # container offsets: the containers follow in order anyway
    parts = []
    for i in range(size):
        key, card = int(header[i, 0]) << 16, int(header[i, 1]) + 1
        if run_flags[i]:
            runs = struct.unpack_from("<H", buf, pos)[0]
            pairs = np.frombuffer(buf, "<u2", 2 * runs, pos + 2).reshape(runs, 2).astype(np.int64)
            pos += 2 + 4 * runs
            values = np.concatenate([np.arange(s, s + n + 1) for s, n in pairs]) if runs else np.zeros(0, np.int64)
        elif card <= _ARRAY_LIMIT:
            values = np.frombuffer(buf, "<u2", card, pos).astype(np.int64)
            pos += 2 * card
        else:
            words = np.frombuffer(buf, np.uint8, 8192, pos)
            values = np.flatnonzero(np.unpackbits(words, bitorder="little"))
            pos += 8192
        parts.append(values + key)
    values = np.concatenate(parts).astype(np.uint32) if parts else np.zeros(0, np.uint32)
    return values, pos - start


def _write_roaring(values: np.ndarray) -> bytes:
    """Sorted, distinct uint32 values as a portable Roaring bitmap (array and bitmap containers, no runs)."""
    values = values.astype(np.uint32)
    keys, starts, counts = np.unique(values >> 16, return_index=True, return_counts=True)
    header, bodies = [], []
    offset = 4 + 4 + 8 * len(keys)
    for key, start, count in zip(keys, starts, counts, strict=True):
        low = (values[start:start + count] & 0xFFFF).astype("<u2")
        if count <= _ARRAY_LIMIT:
            body = low.tobytes()
        else:
            bits = np.zeros(65536, np.uint8)
            bits[low] = 1
            body = np.packbits(bits, bitorder="little").tobytes()
        header.append(struct.pack("<HH", int(key), int(count) - 1))
        bodies.append(body)
    offsets = []
    for body in bodies:
        offsets.append(struct.pack("<I", offset))
        offset += len(body)
    return struct.pack("<II", _NO_RUNS, len(keys)) + b"".join(header) + b"".join(offsets) + b"".join(bodies)


# --------------------------------------------------------------------------------------------- blobs
def decode_blob(blob: bytes) -> np.ndarray:
    """The sorted int64 positions of one deletion-vector-v1 blob (checksum verified)."""
    if len(blob) < 12 or blob[4:8] != DV_MAGIC:
        raise CorruptDeletionVector("deletion vector: bad magic")
    size = struct.unpack_from(">I", blob, 0)[0]
    if size + 8 != len(blob):
        raise CorruptDeletionVector(f"deletion vector: length {size} does not match the blob ({len(blob)} bytes)")
    if zlib.crc32(blob[4:4 + size]) != struct.unpack_from(">I", blob, 4 + size)[0]:
        raise CorruptDeletionVector("deletion vector: checksum mismatch")
    count = struct.unpack_from("<q", blob, 8)[0]
    pos, parts = 16, []
    for _ in range(count):
        high = struct.unpack_from("<i", blob, pos)[0]
        values, used = _read_roaring(blob, pos + 4)
        parts.append(values.astype(np.int64) + (high << 32))
        pos += 4 + used
    if pos != 4 + size:
        raise CorruptDeletionVector("deletion vector: trailing bytes after its bitmaps")
    return np.sort(np.concatenate(parts)) if parts else np.zeros(0, np.int64)


def encode_blob(positions: npt.ArrayLike) -> bytes:
    """A deletion-vector-v1 blob of the given row positions."""
    pos = np.unique(np.asarray(positions, dtype=np.int64))
    if pos.size and pos[0] < 0:
        raise ValueError("deletion vector positions must not be negative")
    highs = pos >> 32
    body = [struct.pack("<q", len(np.unique(highs)))]
    for high in np.unique(highs):
        body.append(struct.pack("<i", int(high)) + _write_roaring(pos[highs == high] & 0xFFFFFFFF))
    data = DV_MAGIC + b"".join(body)
    return struct.pack(">I", len(data)) + data + struct.pack(">I", zlib.crc32(data))


# --------------------------------------------------------------------------------------------- Puffin files
def read_blobs(data: bytes) -> list[Blob]:
    """The deletion vectors of a delete file: a bare blob, or every deletion-vector-v1 blob of a Puffin file."""
    if data[:4] == PUFFIN_MAGIC and len(data) >= 16 and data[-4:] == PUFFIN_MAGIC:
        payload_size, flags = struct.unpack_from("<II", data, len(data) - 12)
        if flags:
            raise CorruptDeletionVector("Puffin file: compressed footers are not supported")
        payload_start = len(data) - 12 - payload_size
        if payload_start < 8 or data[payload_start - 4:payload_start] != PUFFIN_MAGIC:
            raise CorruptDeletionVector("Puffin file: footer magic mismatch")
        footer = json.loads(data[payload_start:len(data) - 12])
        blobs = []
        for entry in footer.get("blobs", []):
            if entry.get("type") != "deletion-vector-v1":
                continue
            start, length = int(entry["offset"]), int(entry["length"])
            snapshot = (entry.get("properties") or {}).get(SNAPSHOT_PROPERTY)
            blobs.append(Blob(int(snapshot) if snapshot is not None else None,
                              decode_blob(data[start:start + length])))
        return blobs
    if len(data) >= 8 and data[4:8] == DV_MAGIC:
        return [Blob(None, decode_blob(data))]
    raise CorruptDeletionVector("not a deletion vector: magic mismatch")


def write_puffin(blobs: list[Blob], data_file_path: str) -> tuple[bytes, int]:
    """(file bytes, footer size) as DuckDB writes them: one blob bare, several in a Puffin container."""
    if len(blobs) == 1:
        return encode_blob(blobs[0].positions), 0
    out, entries = bytearray(PUFFIN_MAGIC), []
    for blob in blobs:
        raw = encode_blob(blob.positions)
        properties = {"referenced-data-file": data_file_path, "cardinality": str(len(blob.positions))}
        if blob.snapshot_id is not None:
            properties[SNAPSHOT_PROPERTY] = str(blob.snapshot_id)
        entries.append({"type": "deletion-vector-v1", "fields": [], "snapshot-id": -1, "sequence-number": -1,
                        "offset": len(out), "length": len(raw), "properties": properties})
        out += raw
    payload = json.dumps({"blobs": entries, "properties": {"created-by": "spark-ducklake"}},
                         separators=(",", ":")).encode()
    out += PUFFIN_MAGIC + payload + struct.pack("<II", len(payload), 0) + PUFFIN_MAGIC
    return bytes(out), len(payload) + 16


def referenced_data_file(data: bytes) -> str:
    """The data file a Puffin container's first blob names (`referenced-data-file`); '' for a bare blob."""
    if data[:4] != PUFFIN_MAGIC or len(data) < 16:
        return ""
    payload_size = struct.unpack_from("<I", data, len(data) - 12)[0]
    footer = json.loads(data[len(data) - 12 - payload_size:len(data) - 12])
    for entry in footer.get("blobs", []):
        return str((entry.get("properties") or {}).get("referenced-data-file", ""))
    return ""


def attributed_positions(blobs: list[Blob], begin_snapshot: int, last_snapshot: int | None) -> tuple[
        np.ndarray, np.ndarray]:
    """(positions, the snapshot that deleted each): a position belongs to the first blob that holds it. A blob
    without a snapshot is the delete file's newest state (its `partial_max`, else its begin snapshot)."""
    newest = last_snapshot if last_snapshot is not None else begin_snapshot
    ordered = sorted(blobs, key=lambda b: b.snapshot_id if b.snapshot_id is not None else newest)
    seen = np.zeros(0, np.int64)
    pos_parts, snap_parts = [], []
    for blob in ordered:
        fresh = np.setdiff1d(blob.positions, seen, assume_unique=True)
        pos_parts.append(fresh)
        snap_parts.append(np.full(fresh.size, blob.snapshot_id if blob.snapshot_id is not None else newest,
                                  np.int64))
        seen = np.union1d(seen, fresh)
    if not pos_parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(pos_parts), np.concatenate(snap_parts)


def read_file(path: str) -> bytes:
    """A delete file's bytes (local or object storage)."""
    fs, inner = filesystem(path)
    with fs.open_input_file(inner) as fh:
        return fh.read()


def positions_table(path: str, data_file_id: int, begin_snapshot: int, last_snapshot: int | None,
                    names: tuple[str, str, str]) -> pa.Table:
    """(data file id, position, deleting snapshot) rows of one deletion-vector file, columns named `names`."""
    positions, snapshots = attributed_positions(read_blobs(read_file(path)), begin_snapshot, last_snapshot)
    return pa.table({names[0]: pa.array(np.full(positions.size, data_file_id, np.int64)),
                     names[1]: pa.array(positions), names[2]: pa.array(snapshots)})




def as_positional(path: str, begin_snapshot: int, last_snapshot: int | None) -> pa.Table:
    """A deletion-vector file as a partial positional delete file's rows: `pos` and the deleting snapshot."""
    positions, snapshots = attributed_positions(read_blobs(read_file(path)), begin_snapshot, last_snapshot)
    order = np.argsort(positions, kind="stable")
    return pa.table({"pos": pa.array(positions[order]), SNAPSHOT_ID_COLUMN: pa.array(snapshots[order])})


def write_vectors(path: str, table: pa.Table, history: bool = False) -> tuple[int, int, int]:
    """Write a delete file's positions (column `pos`) at `path`; returns (positions, bytes, footer size).

    Without `history` (1.0 catalogs) one bare deletion vector, as DuckDB 1.5.5 writes and reads them: a new vector
    holds every position deleted so far and replaces the old file from its snapshot on (1.5.5 reads no multi-blob
    Puffin container). With `history` (1.1 catalogs) and positions deleted at several snapshots (the column
    `_ducklake_internal_snapshot_id` of a partial file), a Puffin container of cumulative blobs, one per snapshot,
    as the 1.1 reference writes a partial deletion-vector file."""
    positions = table.column("pos").to_numpy().astype(np.int64)
    data_file = table.column("file_path")[0].as_py() if table.num_rows else ""
    blobs = [Blob(None, np.unique(positions))]
    if history and SNAPSHOT_ID_COLUMN in table.column_names:
        snapshots = table.column(SNAPSHOT_ID_COLUMN).to_numpy().astype(np.int64)
        if np.unique(snapshots).size > 1:
            blobs = [Blob(int(s), np.unique(positions[snapshots <= s])) for s in np.unique(snapshots)]
    raw, footer = write_puffin(blobs, data_file)
    fs, inner = filesystem(path)
    with fs.open_output_stream(inner) as out:
        out.write(raw)
    return int(np.unique(positions).size), len(raw), footer
