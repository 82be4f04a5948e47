"""Planning a change feed from the catalog: which files, delete records and inlined rows can hold the row
versions inserted or deleted between two snapshots (both inclusive).

A row version is inserted by the snapshot stored with it (`_ducklake_internal_snapshot_id` inside compacted or
flushed files, else the data file's begin_snapshot; an inlined row's begin_snapshot) and deleted by the first of:
a positional delete file listing it (the per-position `_ducklake_internal_snapshot_id` of partial delete files,
else the delete file's begin_snapshot), an inlined delete, or the end of its data file (an inlined row's
end_snapshot). Only data files that can hold an insert or a delete in the range are read; for those with deletes
in the range every delete record up to the end snapshot is kept, so the first deletion is found even when later
delete files repeat earlier positions.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import pyarrow as pa
import sqlalchemy as sa

from ...errors import NotFoundError
from ...spec import paths
from ...spec.model import DataFile, TableInfo
from ..database.spec_tables import T
from ..inlined import codec as inlined
from ..inlined import tables as inlined_tables
from ..reads import reader
from ..reads.file_columns import mark_absent_columns


@dataclass
class ChangePlan:
    """What a change feed of one table between `start` and `end` must read."""

    table: TableInfo  # as of the end snapshot: the feed's columns
    start: int
    end: int
    files: list[DataFile]
    file_ends: dict[int, int] = field(default_factory=dict)  # data file id -> end_snapshot, ends in the range
    delete_files: list[tuple[str, int, int]] = field(default_factory=list)  # (path, data file id, begin)
    inlined_deletes: list[tuple[int, int, int]] = field(default_factory=list)  # (data file id, position, snapshot)
    inlined: pa.Table | None = None  # inlined rows inserted or deleted in the range (inlined_tables.BEGIN_COL...)
    deleted_positions: int = 0  # positions the delete files and inlined deletes list, by the catalog's counts
    names_stable: bool = True
    # ENCRYPTED lakes: delete file path -> its base64 key (kept out of reprs, so logs and errors never show it).
    delete_keys: dict[str, str] = field(default_factory=dict, repr=False)


def lower_bound(conn: sa.Connection, bound: int | datetime) -> int:
    """A start bound: the snapshot with that id, or the first snapshot committed at or after the time."""
    if isinstance(bound, datetime):
        when = _utc(bound)
        for snap in reader.list_snapshots(conn):
            if snap.snapshot_time >= when:
                return snap.snapshot_id
        raise NotFoundError(f"no snapshot exists at or after {when.isoformat()}")
    return _by_id(conn, bound)


def upper_bound(conn: sa.Connection, bound: int | datetime) -> int:
    """An end bound: the snapshot with that id, or the newest snapshot committed at or before the time."""
    if isinstance(bound, datetime):
        return reader.snapshot_at(conn, _utc(bound)).snapshot_id
    return _by_id(conn, bound)


def _by_id(conn: sa.Connection, bound: Any) -> int:
    if isinstance(bound, bool) or not isinstance(bound, int):
        raise TypeError(f"a snapshot bound is a snapshot id (int) or a datetime, got {bound!r}")
    return reader.get_snapshot(conn, bound).snapshot_id


def _utc(when: datetime) -> datetime:
    return when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when


def plan_changes(conn: sa.Connection, table: TableInfo, start: int, end: int) -> ChangePlan:
    """The files, delete records and inlined rows holding the table's changes in snapshots start..end."""
    plan = ChangePlan(table=table, start=start, end=end, files=[],
                      names_stable=reader.column_names_stable(conn, table.table_id))
    if start > end:
        return plan
    plan.inlined = inlined_tables.rows_changed_between(conn, table.table_id, table.columns, start, end)
    deletes = _delete_files(conn, table, end)
    small = _inlined_deletes(conn, table.table_id, end)
    for f, file_end in _data_files(conn, table, end):
        inserts = f.begin_snapshot >= start or (f.partial_max is not None and f.partial_max >= start)
        removals = (
            (file_end is not None and start <= file_end <= end)
            or any(max(begin, pmax or begin) >= start for _path, begin, pmax, _n, _k in deletes[f.data_file_id])
            or any(snap >= start for _pos, snap in small[f.data_file_id])
        )
        if not (inserts or removals):
            continue
        plan.files.append(f)
        if file_end is not None and start <= file_end <= end:
            plan.file_ends[f.data_file_id] = file_end
        # Every delete record of the file, also when only its inserts are in range: a flushed file's partial
        # delete file begins at its first deletion and carries later ones per row (without a partial_max), and a
        # later delete file may repeat positions deleted before.
        if removals or inserts:
            records = deletes[f.data_file_id]
            plan.delete_files += [(path, f.data_file_id, begin) for path, begin, _pmax, _n, _k in records]
            plan.delete_keys.update((path, key) for path, *_rest, key in records if key)
            plan.deleted_positions += sum(n or 0 for *_rest, n, _k in records) + len(small[f.data_file_id])
            plan.inlined_deletes += [(f.data_file_id, pos, snap) for pos, snap in small[f.data_file_id]]
    mark_absent_columns(conn, table, plan.files)
    return plan


def _data_files(conn: sa.Connection, table: TableInfo, end: int) -> list[tuple[DataFile, int | None]]:
    """Every data file of the table begun by `end` (ended or not), with its end_snapshot."""
    df = T["ducklake_data_file"]
    query = (
        sa.select(df.c.data_file_id, df.c.path, df.c.path_is_relative, df.c.record_count, df.c.file_size_bytes,
                  df.c.footer_size, df.c.row_id_start, df.c.begin_snapshot, df.c.end_snapshot, df.c.partial_max,
                  df.c.partition_id, df.c.mapping_id, df.c.encryption_key)
        .where(df.c.table_id == table.table_id, df.c.begin_snapshot <= end)
        .order_by(df.c.data_file_id)
    )
    return [
        (DataFile(data_file_id=r.data_file_id, table_id=table.table_id,
                  path=paths.join(table.path, r.path, r.path_is_relative), record_count=r.record_count,
                  file_size_bytes=r.file_size_bytes, footer_size=r.footer_size, row_id_start=r.row_id_start,
                  begin_snapshot=r.begin_snapshot, partial_max=r.partial_max, partition_id=r.partition_id,
                  mapping_id=r.mapping_id, encryption_key=r.encryption_key),
         r.end_snapshot)
        for r in conn.execute(query)
    ]


def _delete_files(conn: sa.Connection, table: TableInfo, end: int) -> dict[int, list[tuple[Any, ...]]]:
    """(path, begin_snapshot, partial_max, delete_count, encryption key) of every delete file begun by `end`, per
    data file id."""
    dl = T["ducklake_delete_file"]
    query = (sa.select(dl.c.data_file_id, dl.c.path, dl.c.path_is_relative, dl.c.begin_snapshot, dl.c.partial_max,
                       dl.c.delete_count, dl.c.encryption_key)
             .where(dl.c.table_id == table.table_id, dl.c.begin_snapshot <= end))
    out: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
    for r in conn.execute(query):
        out[r.data_file_id].append((paths.join(table.path, r.path, r.path_is_relative), r.begin_snapshot,
                                    r.partial_max, r.delete_count, r.encryption_key))
    return out


def _inlined_deletes(conn: sa.Connection, table_id: int, end: int) -> dict[int, list[tuple[int, int]]]:
    """(position, snapshot) of every inlined delete of a data file row begun by `end`, per data file id."""
    name = inlined.inlined_delete_table_name(table_id)
    out: dict[int, list[tuple[int, int]]] = defaultdict(list)
    if not sa.inspect(conn).has_table(name):
        return out
    tbl = sa.table(name, sa.column("file_id"), sa.column("row_id"), sa.column("begin_snapshot"))
    for file_id, pos, snap in conn.execute(
        sa.select(tbl.c.file_id, tbl.c.row_id, tbl.c.begin_snapshot).where(tbl.c.begin_snapshot <= end)
    ):
        out[file_id].append((pos, snap))
    return out
