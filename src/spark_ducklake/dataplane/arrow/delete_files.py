"""Positional delete files as the reference writes them, one per data file: plain files of a local lake by Spark's
own Parquet writer (no Python on the workers), the others with pyarrow inside one executor task per data file.

Used by row-level deletes (`deletes.py`) and by `flush_inlined_data` (partial delete files of flushed rows).

A plain delete file holds `file_path` (field id 2147483646) and `pos` (2147483645), sorted. When a data file already
has a delete file, the new one replaces it in every snapshot (spec: "the deletion file is rewritten as a partial
deletion file"): it also stores `_ducklake_internal_snapshot_id`, the snapshot that deleted each position, so
readers at older snapshots skip the newer positions; the old file is then scheduled for deletion.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import BinaryIO

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ...spec.internal_columns import SNAPSHOT_ID_COLUMN, SNAPSHOT_ID_FIELD_ID
from ...spec.model import DeleteFile
from .deletion_vectors import as_positional, write_vectors
from .storage import filesystem

# This module runs on executors, which have pyarrow but not sqlalchemy: it imports nothing that needs the catalog
# layer (so no spark.write).
FILE_PATH_FIELD_ID, POS_FIELD_ID = 2147483646, 2147483645

FILE_PATH_FIELD = pa.field("file_path", pa.string(), nullable=False,
                      metadata={b"PARQUET:field_id": str(FILE_PATH_FIELD_ID)})
POS_FIELD = pa.field("pos", pa.int64(), nullable=False, metadata={b"PARQUET:field_id": str(POS_FIELD_ID)})
SNAPSHOT_FIELD = pa.field(SNAPSHOT_ID_COLUMN, pa.int64(), nullable=False,
                     metadata={b"PARQUET:field_id": str(SNAPSHOT_ID_FIELD_ID)})


KEY, SNAP = "_dl_key", "_dl_snap"  # columns of the positions handed to write_delete_files (with POS)


@dataclass
class DeleteTarget:
    """A data file to write a delete file for: the delete file it has now (merged in and replaced), and the
    snapshot of the new positions when their frame carries none (making the file partial when `old` is set)."""

    data_path: str
    old: DeleteFile | None = None
    snapshot: int | None = None


@dataclass
class WrittenDeleteFile:
    """What writing a delete file produced."""

    path: str
    delete_count: int
    file_size_bytes: int
    footer_size: int
    first_snapshot: int | None = None  # partial files: the oldest and newest snapshot they hold
    last_snapshot: int | None = None
    encryption_key: str | None = field(default=None, repr=False)  # ENCRYPTED lakes: the file's base64 key
    row_group_count: int | None = None  # Parquet files' row groups (None: a Puffin file, or not known)






def described_file(path: str) -> WrittenDeleteFile:
    fs, inner = filesystem(path)
    with fs.open_input_file(inner) as fh:
        meta = pq.ParquetFile(fh).metadata
    return WrittenDeleteFile(path, meta.num_rows, fs.get_file_info(inner).size, meta.serialized_size,
                             row_group_count=meta.num_row_groups)


def write_delete_file(path: str, data_path: str, positions: pa.Array | pa.ChunkedArray,
                      snapshots: pa.Array | pa.ChunkedArray | int | None = None, old: DeleteFile | None = None,
                      sink: BinaryIO | None = None, *, history: bool = False) -> WrittenDeleteFile:
    """Write the sorted, distinct positions of `data_path` to `path`.

    Without `snapshots` and `old` the file is plain. Otherwise it is partial: `snapshots` (an array, or one
    snapshot id for every position) says when each position was deleted, and the old file's positions are merged
    in with theirs; a position deleted twice keeps its first deletion. With `sink` (encrypted lakes) the file
    goes there instead, and its sizes are left 0. `history`: see `write_vectors` (Puffin files only).
    """
    pos = pa.chunked_array(positions).cast(pa.int64())
    if snapshots is None and old is None:
        unique = pc.unique(pos).sort()
        table = pa.table({"file_path": pa.array([data_path] * len(unique), pa.string()), "pos": unique},
                         schema=pa.schema([FILE_PATH_FIELD, POS_FIELD]))
        return write_positions(path, table, sink)
    if snapshots is None or isinstance(snapshots, int):
        snaps = pa.chunked_array([pa.array([snapshots] * len(pos), pa.int64())])
    else:
        snaps = pa.chunked_array(snapshots).cast(pa.int64())
    pos_parts, snap_parts = [pos], [snaps]
    if old is not None:
        fs, inner = filesystem(old.path)
        stored = (as_positional(old.path, old.begin_snapshot, old.partial_max) if old.format == "puffin"
                  else pq.read_table(inner, filesystem=fs))
        pos_parts.append(stored.column("pos").cast(pa.int64()))
        old_snaps = (stored.column(SNAPSHOT_ID_COLUMN).cast(pa.int64()) if SNAPSHOT_ID_COLUMN in stored.column_names
                     else pa.chunked_array([pa.nulls(stored.num_rows, pa.int64())]))
        snap_parts.append(pc.fill_null(old_snaps, old.begin_snapshot))
    merged = pa.table({"pos": pa.chunked_array([c for p in pos_parts for c in p.chunks], pa.int64()),
                       "snap": pa.chunked_array([c for p in snap_parts for c in p.chunks], pa.int64())})
    merged = merged.group_by("pos").aggregate([("snap", "min")]).sort_by("pos")
    table = pa.table({"file_path": pa.array([data_path] * merged.num_rows, pa.string()),
                      "pos": merged.column("pos"), SNAPSHOT_ID_COLUMN: merged.column("snap_min")},
                     schema=pa.schema([FILE_PATH_FIELD, POS_FIELD, SNAPSHOT_FIELD]))
    written = write_positions(path, table, sink, history)
    written.first_snapshot = pc.min(table.column(SNAPSHOT_ID_COLUMN)).as_py()
    written.last_snapshot = pc.max(table.column(SNAPSHOT_ID_COLUMN)).as_py()
    return written




def positions_as_of(delete_file: DeleteFile, snapshot_id: int) -> pa.Array:
    """The positions a delete file lists as deleted at `snapshot_id` (int64): a partial file's per-position
    snapshots are honoured, a plain file's positions all date from its begin snapshot."""
    fs, inner = filesystem(delete_file.path)
    if delete_file.format == "puffin":
        stored = as_positional(delete_file.path, delete_file.begin_snapshot, delete_file.partial_max)
    else:
        schema = pq.read_schema(inner, filesystem=fs)
        columns = ["pos"] + ([SNAPSHOT_ID_COLUMN] if SNAPSHOT_ID_COLUMN in schema.names else [])
        stored = pq.read_table(inner, columns=columns, filesystem=fs)
    pos = stored.column("pos").cast(pa.int64())
    if SNAPSHOT_ID_COLUMN in stored.column_names:
        when = pc.fill_null(stored.column(SNAPSHOT_ID_COLUMN).cast(pa.int64()), delete_file.begin_snapshot)
        pos = pos.filter(pc.less_equal(when, snapshot_id))
    return pos.combine_chunks()


def snapshot_range(path: str) -> tuple[int, int] | None:
    """(min, max) of a delete file's per-position snapshots from its footer; None without that column."""
    fs, inner = filesystem(path)
    with fs.open_input_file(inner) as fh:
        meta = pq.ParquetFile(fh).metadata
    names = [meta.schema.column(i).name for i in range(meta.num_columns)]
    if SNAPSHOT_ID_COLUMN not in names:
        return None
    index = names.index(SNAPSHOT_ID_COLUMN)
    lows, highs = [], []
    for g in range(meta.num_row_groups):
        stats = meta.row_group(g).column(index).statistics
        if stats is None or not stats.has_min_max:
            return (0, 2**62)  # no statistics: any snapshot
        lows.append(stats.min)
        highs.append(stats.max)
    return (min(lows), max(highs)) if lows else None


def write_positions(path: str, table: pa.Table, sink: BinaryIO | None = None, history: bool = False
                    ) -> WrittenDeleteFile:
    if sink is not None:
        pq.write_table(table, sink)
        return WrittenDeleteFile(path, table.num_rows, 0, 0)
    if path.endswith(".puffin"):  # write_deletion_vectors: the same rows as Iceberg deletion vectors
        return WrittenDeleteFile(path, *write_vectors(path, table, history))
    fs, inner = filesystem(path)
    with fs.open_output_stream(inner) as out:
        pq.write_table(table, out)
    meta = pq.read_metadata(inner, filesystem=fs)
    return WrittenDeleteFile(path, meta.num_rows, fs.get_file_info(inner).size, meta.serialized_size,
                             row_group_count=meta.num_row_groups)
