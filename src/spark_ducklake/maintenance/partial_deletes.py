"""Partial delete files: positional deletes that also store the snapshot that deleted each row.

Flushing inlined data writes them, as the reference does: for the rows of flushed files that were deleted while
inlined, and for inlined deletes of existing files, merged with the file's current delete file. One executor task
per data file merges and writes its file with pyarrow, straight to the final name (like `spark/deletes.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from ..catalog.spec_tables import new_uuid
from ..spark.deletes import FILE_PATH_FIELD_ID, POS_FIELD_ID
from ..spark.paths import filesystem
from ..spark.scan import POS
from ..spark.write import SNAPSHOT_ID_COLUMN, SNAPSHOT_ID_FIELD_ID, delete_paths

KEY, SNAP = "_dl_key", "_dl_snap"


@dataclass
class DeleteTarget:
    """A data file to write a partial delete file for, and the delete file it already has (merged in)."""

    data_path: str
    old_path: str | None = None
    old_begin: int | None = None  # the old file's begin snapshot: its positions' snapshot when it stores none


@dataclass
class WrittenDeletes:
    """A partial delete file written for one data file."""

    path: str
    delete_count: int
    file_size_bytes: int
    footer_size: int
    first_snapshot: int
    last_snapshot: int


def write_partial_deletes(spark, positions, targets: dict[str, DeleteTarget], table_path: str) -> dict[
        str, WrittenDeletes]:
    """Write one partial delete file per key of `positions` (columns `_dl_key`, `_dl_pos`, `_dl_snap`; the key
    names a target); returns them by key."""
    names = {key: f"{table_path}ducklake-{new_uuid()}-delete.parquet" for key in targets}
    result_schema = (f"{KEY} string, path string, delete_count long, file_size_bytes long, footer_size long, "
                     "first_snapshot long, last_snapshot long")

    def write_one(group: pa.Table) -> pa.Table:
        key = group.column(KEY)[0].as_py()
        target, path = targets[key], names[key]
        meta, first, last = write_file(group.column(POS), group.column(SNAP), target, path)
        fs, inner = filesystem(path)
        return pa.table({KEY: [key], "path": [path], "delete_count": [meta.num_rows],
                         "file_size_bytes": [fs.get_file_info(inner).size], "footer_size": [meta.serialized_size],
                         "first_snapshot": [first], "last_snapshot": [last]})

    try:
        rows = positions.select(KEY, POS, SNAP).groupBy(KEY).applyInArrow(write_one, result_schema).collect()
    except BaseException:
        delete_paths(list(names.values()))
        raise
    return {r[KEY]: WrittenDeletes(r["path"], r["delete_count"], r["file_size_bytes"], r["footer_size"],
                                   r["first_snapshot"], r["last_snapshot"]) for r in rows}


def write_file(positions, snapshots, target: DeleteTarget, path: str):
    """Write the sorted positions with their snapshots (merged with the old delete file, the earliest snapshot
    of a position winning); returns (metadata, first snapshot, last snapshot)."""
    import pyarrow.compute as pc

    pos = [pa.chunked_array(positions).cast(pa.int64())]
    snap = [pa.chunked_array(snapshots).cast(pa.int64())]
    if target.old_path is not None:
        fs, inner = filesystem(target.old_path)
        old = pq.read_table(inner, filesystem=fs)
        pos.append(old.column("pos").cast(pa.int64()))
        stored = (old.column(SNAPSHOT_ID_COLUMN).cast(pa.int64()) if SNAPSHOT_ID_COLUMN in old.column_names
                  else pa.chunked_array([pa.nulls(old.num_rows, pa.int64())]))
        snap.append(pc.fill_null(stored, target.old_begin))
    merged = pa.table({"pos": pa.chunked_array([c for part in pos for c in part.chunks], pa.int64()),
                       "snap": pa.chunked_array([c for part in snap for c in part.chunks], pa.int64())})
    merged = merged.group_by("pos").aggregate([("snap", "min")]).sort_by("pos")
    schema = pa.schema([
        pa.field("file_path", pa.string(), nullable=False, metadata={b"PARQUET:field_id": str(FILE_PATH_FIELD_ID)}),
        pa.field("pos", pa.int64(), nullable=False, metadata={b"PARQUET:field_id": str(POS_FIELD_ID)}),
        pa.field(SNAPSHOT_ID_COLUMN, pa.int64(), nullable=False,
                 metadata={b"PARQUET:field_id": str(SNAPSHOT_ID_FIELD_ID)}),
    ])
    snaps = merged.column("snap_min")
    table = pa.table({"file_path": pa.array([target.data_path] * merged.num_rows, pa.string()),
                      "pos": merged.column("pos"), SNAPSHOT_ID_COLUMN: snaps}, schema=schema)
    fs, inner = filesystem(path)
    with fs.open_output_stream(inner) as out:
        pq.write_table(table, out)
    return pq.read_metadata(inner, filesystem=fs), pc.min(snaps).as_py(), pc.max(snaps).as_py()
