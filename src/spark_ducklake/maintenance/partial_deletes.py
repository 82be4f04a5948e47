"""Partial delete files: positional deletes that also store the snapshot that deleted each row.

Flushing inlined data writes them, as the reference does: for the rows of flushed files that were deleted while
inlined, and for inlined deletes of existing files, merged with the file's current delete file. One executor task
per data file merges and writes its file with pyarrow (`spark/delete_files.py`), straight to the final name.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from ..catalog.spec_tables import new_uuid
from ..spark.delete_files import OldDeletes, write_delete_file
from ..spark.scan import POS
from ..spark.write import delete_paths

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
        old = OldDeletes(target.old_path, target.old_begin) if target.old_path is not None else None
        w = write_delete_file(path, target.data_path, group.column(POS), group.column(SNAP), old)
        return pa.table({KEY: [key], "path": [path], "delete_count": [w.delete_count],
                         "file_size_bytes": [w.file_size_bytes], "footer_size": [w.footer_size],
                         "first_snapshot": [w.first_snapshot], "last_snapshot": [w.last_snapshot]})

    try:
        rows = positions.select(KEY, POS, SNAP).groupBy(KEY).applyInArrow(write_one, result_schema).collect()
    except BaseException:
        delete_paths(list(names.values()))
        raise
    return {r[KEY]: WrittenDeletes(r["path"], r["delete_count"], r["file_size_bytes"], r["footer_size"],
                                   r["first_snapshot"], r["last_snapshot"]) for r in rows}
