"""A table's history: the change feed between two snapshots (its plan; `feed_arrow`: as Arrow on the plane the
engine picks), and restoring a table to an earlier snapshot.

Restore writes one new snapshot (history is kept) in which the table holds exactly the rows it held then, under
its *current* schema: columns added since read their default, dropped columns stay dropped, renamed ones keep
their new names. Only what changed since is touched: row versions inserted since are deleted, row versions
deleted since are inserted again with their original row ids, so the change feed shows restored updates as
updates. The rows come from the change feed's row versions, so only files changed since are read.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import sqlalchemy as sa

from ..catalog.changes.data import DeleteRows
from ..catalog.database.spec_tables import T
from ..catalog.planners.change_feed import ChangePlan, lower_bound, plan_changes, upper_bound
from ..catalog.reads import reader
from ..dataplane.arrow.change_rows import FeedKind
from ..dataplane.arrow.scan_columns import DELETED, FILE, POS
from ..dataplane.arrow.storage import delete_paths
from ..dataplane.engine import engine_for
from ..dataplane.spark import deletes as spark_deletes
from ..dataplane.spark.change_feed import INSERTED, ROWID, row_versions
from ..dataplane.spark.delete_writes import restamp
from ..errors import InvalidArgumentError, NotFoundError
from ..spec.commit_properties import CommitProperties
from ..spec.names import parse_table_name as split_name
from ..spec.names import spark_name
from .delete_update import stage_new_rows

if TYPE_CHECKING:
    from .context import LakeContext


def change_plan(ctx: LakeContext, table: str, start: int | datetime, end: int | datetime) -> ChangePlan:
    """The catalog's part of a change feed: the table as of `end` and what holds its changes since `start`."""
    schema, name = split_name(table)
    with ctx.engine.connect() as conn:
        first, last = lower_bound(conn, start), upper_bound(conn, end)
        if ctx.pinned_snapshot is not None and last > ctx.pinned_snapshot:
            raise NotFoundError(f"snapshot {last} is newer than the attached snapshot {ctx.pinned_snapshot}")
        info = reader.find_table(conn, last, ctx.data_path, schema, name)
        return plan_changes(conn, info, first, last)


def feed_arrow(ctx: LakeContext, table: str, start: int | datetime, end: int | datetime, kind: FeedKind) -> pa.Table:
    """One change feed (`kind`: changes, insertions or deletions) as a pyarrow Table, on the plane `engine_for`
    picks for the files it reads."""
    plan = change_plan(ctx, table, start, end)
    return engine_for(ctx, plan.files).change_feed(plan, kind)


def restore_table(ctx: LakeContext, table: str, version: int | None, timestamp: datetime | None,
                  properties: CommitProperties) -> int:
    """Commit a snapshot in which `table` holds the rows it held at `version` / `timestamp`; returns its id
    (the current snapshot when nothing differs)."""
    ctx.check_writable()
    if (version is None) == (timestamp is None):
        raise InvalidArgumentError("restore needs exactly one of version= or timestamp=")
    current = ctx.plan_scan(table)
    now = current.snapshot_id
    with ctx.engine.connect() as conn:
        target = (reader.get_snapshot(conn, version) if version is not None
                  else reader.snapshot_at(conn, timestamp)).snapshot_id  # type: ignore[arg-type]  # one is given
        if target > now:
            raise NotFoundError(f"snapshot {target} is newer than the current snapshot {now}")
        _check_existed(conn, current.table.table_id, current.table.qualified_name, target)
        if target == now:
            return now
        plan = plan_changes(conn, current.table, target + 1, now)

    from pyspark.sql import functions as F

    versions = row_versions(ctx.spark, plan).cache()
    try:
        newer = versions.where((F.col(INSERTED) > target) & F.col(DELETED).isNull()).select(FILE, POS)
        older = versions.where((F.col(INSERTED) <= target) & (F.col(DELETED) > target)).select(
            *[F.col(spark_name(c.name)) for c in current.table.columns], ROWID)
        staged = spark_deletes.stage_deletes(ctx.spark, current, newer, ctx.inlining_limit(current.table))
        written = [d.path for d in staged.delete_files]
        ops: list[Any] = [] if staged.empty else [DeleteRows(current.table, staged.delete_files, staged.ended_files,
                                                  staged.inlined_file_deletes, staged.inlined_row_ids,
                                                  restamp=restamp)]
        try:
            count = older.count()
            if count:
                inserted = stage_new_rows(ctx, current, older, count, keep_ids=True)
                ops += inserted.ops
                written += inserted.files
        except BaseException:
            delete_paths(written)
            raise
    finally:
        versions.unpersist()
    if not ops:
        return now
    return ctx.commit(ops, read_snapshot=now, properties=properties, staged_files=written)


def _check_existed(conn: sa.Connection, table_id: int, name: str, snapshot_id: int) -> None:
    """NotFoundError unless the table (this table id, not a re-created namesake) existed at the snapshot."""
    t = T["ducklake_table"]
    found = conn.execute(sa.select(t.c.table_id).where(t.c.table_id == table_id, reader.visible(t, snapshot_id))
                         .limit(1)).first()
    if found is None:
        raise NotFoundError(f"table {name} did not exist at snapshot {snapshot_id}")
