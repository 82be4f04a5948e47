"""DELETE and UPDATE on DuckLake's merge-on-read design: the data plane finds and rewrites rows, the driver commits
once.

Each asks `engine_for` once and calls its verbs (`stage_delete`, `update_rows`): pyarrow on the driver for small
tables, else Spark's executors. An update is a delete of the old row versions plus an insert of the new ones in
the same snapshot; the new versions keep their row ids (`_ducklake_internal_row_id` in Parquet, the `row_id` of
inlined rows), as the reference does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from ..catalog.changes.data import AppendFiles, DeleteRows, InlineInsert
from ..catalog.inlined import codec as inlined
from ..dataplane.arrow.conform import conform_arrow
from ..dataplane.arrow.local_scan import ROWID
from ..dataplane.arrow.storage import delete_paths
from ..dataplane.engine import engine_for
from ..dataplane.spark.delete_writes import restamp
from ..errors import SchemaMismatchError
from .staging import Staged
from .write import write_rows

if TYPE_CHECKING:
    from .context import LakeContext


def delete_op(plan, staged) -> DeleteRows:
    return DeleteRows(plan.table, staged.delete_files, staged.ended_files, staged.inlined_file_deletes,
                      staged.inlined_row_ids, restamp=restamp)


def stage_delete_op(ctx: LakeContext, plan, condition) -> Staged[int]:
    """The DeleteRows operation (none if no row matches), its delete files and the rows deleted, for the rows
    `condition` matches in the plan; on the data plane `engine_for` picks for the plan's files (in-process with
    pyarrow when they are small)."""
    staged = engine_for(ctx, plan.files).stage_delete(plan, condition, ctx.inlining_limit(plan.table))
    if staged.empty:
        return Staged([], [], 0)
    return Staged([delete_op(plan, staged)], [d.path for d in staged.delete_files], staged.deleted_rows)


def pruning_filter(condition) -> str | None:
    """The condition as a file-pruning filter: SQL strings prune by min/max stats, Columns cannot."""
    return condition if isinstance(condition, str) else None


def stage_update(ctx: LakeContext, plan, assignments: dict, condition) -> Staged[int]:
    """The operations, staged files and rows updated of an UPDATE against the plan's snapshot; nothing committed.
    The plane is `engine_for`'s for the plan's files: its `update_rows` finds the matched rows and their new
    versions, the old versions are deleted and the new ones inserted keeping their row ids."""
    if not assignments:
        raise SchemaMismatchError("update needs at least one column to set")
    columns = {c.name.lower() for c in plan.table.columns}
    unknown = [name for name in assignments if name.lower() not in columns]
    if unknown:
        raise SchemaMismatchError(f"columns not in table {plan.table.qualified_name}: {', '.join(unknown)}")
    with engine_for(ctx, plan.files).update_rows(plan, assignments, condition) as update:
        staged = update.stage_deletes(ctx.inlining_limit(plan.table))
        if staged.empty:
            return Staged([], [], 0)
        written = [d.path for d in staged.delete_files]
        try:
            insert = stage_new_rows(ctx, plan, update.new_versions, staged.deleted_rows, keep_ids=True)
        except BaseException:
            delete_paths(written)
            raise
    return Staged([delete_op(plan, staged), *insert.ops], written + insert.files, staged.deleted_rows)


def stage_new_rows(ctx: LakeContext, plan, rows, new_rows: int, *, keep_ids: bool) -> Staged[None]:
    """The insert operation (and its files) of a statement's new rows: `rows` holds the table's columns and
    `rowid`, as Arrow rows or a Spark DataFrame; with `keep_ids` the rows keep those ids (an UPDATE's or MERGE's new
    versions), else they get new ones at commit. Inlined when the statement's new rows (`new_rows`: all of a
    MERGE's updated and inserted rows) are at most the inlining limit, else files (`write_rows`: Arrow rows
    in-process where they can be, else on Spark as one statement's file)."""
    few = new_rows <= ctx.inlining_limit(plan.table)
    if not isinstance(rows, pa.Table):
        return _stage_frame(ctx, plan, rows, few=few, keep_ids=keep_ids)
    data = conform_arrow(rows.drop_columns([ROWID]), plan.table)
    ids = rows.column(ROWID) if keep_ids else None
    inline = inlined_insert(ctx, plan, data, ids, few=few)
    if inline is not None:
        return Staged([inline], [], None)
    kept = data if ids is None else data.append_column(ROWID, ids)
    files = write_rows(ctx, kept, plan.table, plan.snapshot_id, options_table=plan.table, keep_ids=keep_ids,
                       one_file=True)
    return Staged([AppendFiles(plan.table, files)], [f.path for f in files], None)


def inlined_insert(ctx: LakeContext, plan, data: pa.Table, ids: pa.ChunkedArray | None, *,
                   few: bool) -> InlineInsert | None:
    """Arrow rows (the table's columns) inlined, keeping the row ids `ids` if given, when the statement's new
    rows are `few` (at most the inlining limit, which the caller has looked up) and the catalog can hold their
    values; else None (they are files)."""
    if not few or not inlined.inlinable(plan.table.columns, ctx.engine, data):
        return None
    return InlineInsert(plan.table, data, row_ids=None if ids is None else ids.to_pylist())


def _stage_frame(ctx: LakeContext, plan, rows, *, few: bool, keep_ids: bool) -> Staged[None]:
    """`stage_new_rows` for a Spark DataFrame: fetched and inlined when few, else written on Spark."""
    if few:
        small = rows.toArrow()
        data = conform_arrow(small.drop_columns([ROWID]), plan.table)
        inline = inlined_insert(ctx, plan, data, small.column(ROWID) if keep_ids else None, few=True)
        if inline is not None:
            return Staged([inline], [], None)
    files = write_rows(ctx, rows if keep_ids else rows.drop(ROWID), plan.table, plan.snapshot_id,
                       options_table=plan.table, keep_ids=keep_ids)
    return Staged([AppendFiles(plan.table, files)], [f.path for f in files], None)
