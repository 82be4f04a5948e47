"""`expire_snapshots`: forget old snapshots and every catalog row only they needed, as the reference does.

Rows go when no surviving snapshot lies in their [begin_snapshot, end_snapshot): data files (with their column
stats, variant stats and partition values) and delete files, which are scheduled in
ducklake_files_scheduled_for_deletion for `cleanup_old_files`; tables dropped before every surviving snapshot
(with columns, stats, partitioning, sorting, schema versions, inlined data tables and name mappings); schemas,
views, tags and macros. The newest snapshot is never expired. No snapshot is created: it is one short catalog
transaction, queued behind committing writers.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

import sqlalchemy as sa

from ...catalog.database.spec_tables import T
from ...catalog.database.transactions import write_transaction
from ...catalog.database.versions import catalog_is_v11
from ...catalog.inlined import codec as inlined
from ...catalog.reads import reader
from ...catalog.reads.metadata_functions import snapshot_rows
from ...spec.intervals import cutoff as interval_cutoff
from .catalog_files import file_path, schedule_row, table_dirs
from .locking import chunks

if TYPE_CHECKING:
    from ...catalog.reads.metadata_functions import SnapshotRow
    from ..context import LakeContext

# Catalog tables holding per-table rows that go with a table dropped before every surviving snapshot.
_TABLE_ROWS = ("ducklake_table", "ducklake_table_stats", "ducklake_table_column_stats", "ducklake_partition_info",
               "ducklake_partition_column", "ducklake_column", "ducklake_column_tag", "ducklake_sort_info",
               "ducklake_sort_expression", "ducklake_schema_versions", "ducklake_inlined_data_tables",
               "ducklake_column_mapping")
_FILE_ROWS = ("ducklake_data_file", "ducklake_file_column_stats", "ducklake_file_variant_stats",
              "ducklake_file_partition_value")
_ENDED_ROWS = ("ducklake_schema", "ducklake_view", "ducklake_tag", "ducklake_macro")


def expire_snapshots(ctx: LakeContext, older_than: datetime | timedelta | str | None = None,
                     versions: list[int] | None = None, dry_run: bool = False) -> list[SnapshotRow]:
    """Expire the snapshots in `versions`, or older than `older_than` (default: option expire_older_than);
    returns them as `snapshots()` rows. Without either and without the option nothing is expired."""
    ctx.check_writable()
    if versions is not None and older_than is not None:
        raise ValueError("expire_snapshots: give either versions or older_than, not both")
    with write_transaction(ctx.engine) as conn:
        chosen = _choose(conn, older_than, versions)
        if chosen and not dry_run:
            _forget(conn, ctx.data_path, [s.snapshot_id for s in chosen])
    return snapshot_rows(chosen)


def _choose(conn: sa.Connection, older_than, versions):
    snaps = reader.list_snapshots(conn)
    if not snaps:
        return []
    latest = snaps[-1].snapshot_id  # never expired
    if versions is not None:
        wanted = {int(v) for v in versions if v is not None}
        return [s for s in snaps if s.snapshot_id in wanted and s.snapshot_id != latest]
    if older_than is None:
        rows = reader.options(conn)
        default = reader.option_value(rows, "expire_older_than")
        if default is None:
            return []
        limit = interval_cutoff(default)
    else:
        limit = point_in_time(older_than)
    return [s for s in snaps if s.snapshot_time < limit and s.snapshot_id != latest]


def point_in_time(value: datetime | timedelta | str) -> datetime:
    """A datetime (naive: UTC) as is; a timedelta or an interval string ('7 days') as that long before now."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, timedelta):
        return datetime.now(timezone.utc) - value
    if isinstance(value, str):
        return interval_cutoff(value)
    raise TypeError(f"older_than must be a datetime, timedelta or interval string, got {type(value).__name__}")


def _alive(tbl: sa.Table):
    """Some remaining snapshot lies in the row's [begin_snapshot, end_snapshot)."""
    snap = T["ducklake_snapshot"]
    return sa.exists().where(snap.c.snapshot_id >= tbl.c.begin_snapshot, snap.c.snapshot_id < tbl.c.end_snapshot)


def _unneeded(tbl: sa.Table):
    return sa.and_(tbl.c.end_snapshot.is_not(None), ~_alive(tbl))


def _forget(conn: sa.Connection, data_path: str, snapshot_ids: list[int]) -> None:
    now = datetime.now(timezone.utc)
    for name in ("ducklake_snapshot", "ducklake_snapshot_changes"):
        tbl = T[name]
        for ids in chunks(snapshot_ids):
            conn.execute(tbl.delete().where(tbl.c.snapshot_id.in_(ids)))
    dropped = _dropped_tables(conn)
    dirs = table_dirs(conn, data_path)  # before the dropped tables' rows go: their files still need paths

    df = T["ducklake_data_file"]
    where = _unneeded(df) if not dropped else sa.or_(df.c.table_id.in_(dropped), _unneeded(df))
    files = conn.execute(sa.select(df.c.data_file_id, df.c.table_id, df.c.path, df.c.path_is_relative)
                         .where(where)).all()
    file_ids = [r.data_file_id for r in files]
    for name in _FILE_ROWS:
        tbl = T[name]
        for ids in chunks(file_ids):
            conn.execute(tbl.delete().where(tbl.c.data_file_id.in_(ids)))
    scheduled = [schedule_row(data_path, r.data_file_id, file_path(dirs, r.table_id, r.path, r.path_is_relative),
                              now) for r in files]

    dl = T["ducklake_delete_file"]
    cols = (dl.c.delete_file_id, dl.c.table_id, dl.c.path, dl.c.path_is_relative)
    where = _unneeded(dl) if not dropped else sa.or_(dl.c.table_id.in_(dropped), _unneeded(dl))
    deletes = {r.delete_file_id: r for r in conn.execute(sa.select(*cols).where(where))}
    for ids in chunks(file_ids):  # delete files of data files that just went
        deletes.update({r.delete_file_id: r for r in conn.execute(sa.select(*cols).where(dl.c.data_file_id.in_(ids)))})
    for ids in chunks(sorted(deletes)):
        conn.execute(dl.delete().where(dl.c.delete_file_id.in_(ids)))
    # The reference files a delete file under its own id in data_file_id.
    scheduled += [schedule_row(data_path, r.delete_file_id, file_path(dirs, r.table_id, r.path, r.path_is_relative),
                               now) for r in deletes.values()]
    if scheduled:
        conn.execute(T["ducklake_files_scheduled_for_deletion"].insert(), scheduled)

    if dropped:
        _forget_tables(conn, dropped)
    view_column_tags = ("ducklake_view_column_tag",) if catalog_is_v11(conn) else ()  # a 1.1 table
    for name in _ENDED_ROWS + view_column_tags:
        tbl = T[name]
        conn.execute(tbl.delete().where(_unneeded(tbl)))
    macro = T["ducklake_macro"]
    for name in ("ducklake_macro_impl", "ducklake_macro_parameters"):
        tbl = T[name]
        conn.execute(tbl.delete().where(~sa.exists().where(macro.c.macro_id == tbl.c.macro_id)))
    cm, nm = T["ducklake_column_mapping"], T["ducklake_name_mapping"]
    conn.execute(nm.delete().where(~sa.exists().where(cm.c.mapping_id == nm.c.mapping_id)))


def _dropped_tables(conn: sa.Connection) -> list[int]:
    """Ids of tables whose every row ended before (or between) the surviving snapshots."""
    t, other = T["ducklake_table"], T["ducklake_table"].alias("other")
    snap = T["ducklake_snapshot"]
    other_alive = sa.exists().where(snap.c.snapshot_id >= other.c.begin_snapshot,
                                    snap.c.snapshot_id < other.c.end_snapshot)
    still_used = sa.exists().where(other.c.table_id == t.c.table_id,
                                   sa.or_(other.c.end_snapshot.is_(None), other_alive))
    query = sa.select(t.c.table_id).where(_unneeded(t), ~still_used).distinct()
    return sorted(conn.execute(query).scalars())


def _forget_tables(conn: sa.Connection, table_ids: list[int]) -> None:
    registry = T["ducklake_inlined_data_tables"]
    inlined_names = list(conn.execute(sa.select(registry.c.table_name).where(registry.c.table_id.in_(table_ids)))
                         .scalars())
    inlined_names += [inlined.inlined_delete_table_name(tid) for tid in table_ids]
    for name in _TABLE_ROWS:
        tbl = T[name]
        conn.execute(tbl.delete().where(tbl.c.table_id.in_(table_ids)))
    for name in inlined_names:
        sa.Table(name, sa.MetaData()).drop(conn, checkfirst=True)
