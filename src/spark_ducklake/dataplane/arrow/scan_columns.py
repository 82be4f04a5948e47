"""The helper columns a scan adds to the table's, on both planes (file path, row position, data file id, ...), and
`ScanColumns`, the record of which of them a scan is asked for."""

from __future__ import annotations

from dataclasses import dataclass

# Helper columns a scan adds (file path, row position, data file id, first row id, first snapshot): underscored
# so no lake column collides with them.
PATH, POS, FILE, ROW_START, BEGIN = "_dl_path", "_dl_pos", "_dl_file", "_dl_row_start", "_dl_begin"
DELETED = "_dl_deleted"  # the snapshot that deleted a position (delete files' and deletion vectors' rows)


@dataclass(frozen=True)
class ScanColumns:
    """Which columns a scan returns besides the table's, one record instead of flags threaded through the readers.

    `row_ids` adds `rowid`; `positions` adds `_dl_file` (data file id; NULL for inlined rows) and `_dl_pos` (row
    position; the row id for inlined rows) to a scan's result, and to a raw file read (Spark's `read_files`) also
    `_dl_path`, `_dl_row_start` and `_dl_begin`; `snapshots` and `lineage` add the files'
    `_ducklake_internal_snapshot_id` / `_ducklake_internal_row_id` (raw file reads); `virtual` names DuckDB's
    virtual columns to append (Spark's scan).
    """

    row_ids: bool = False
    positions: bool = False
    snapshots: bool = False
    lineage: bool = False
    virtual: tuple[str, ...] = ()


TABLE_ONLY = ScanColumns()  # the table's columns, nothing more (frozen: safe as a shared default)
