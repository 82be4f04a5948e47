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
from ..dataplane.spark.scan import spark_safe
from ..errors import SchemaMismatchError
from .staging import Staged
from .write import frame_of_arrow, write_arrow_files, write_files

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
    MERGE's updated and inserted rows) are at most the inlining limit, else files; Arrow rows are written
    in-process where they can be (`insert_arrow`), else on Spark as one statement's file."""
    if not isinstance(rows, pa.Table):
        return _stage_frame(ctx, plan, rows, new_rows, keep_ids=keep_ids)
    data = conform_arrow(rows.drop_columns([ROWID]), plan.table)
    ids = rows.column(ROWID) if keep_ids else None
    inserted = insert_arrow(ctx, plan, data, ids, new_rows=new_rows)
    if inserted is not None:
        return inserted
    # Only Spark writes them as the lake wants (too large, encrypted, a layout the in-process writer refuses):
    # the rows found in-process go there as they are, row ids included, as one statement's file.
    kept = data if ids is None else data.append_column(ROWID, ids)
    return _write_on_spark(ctx, plan, frame_of_arrow(ctx, spark_safe(kept), one_file=True), keep_ids=keep_ids)


def insert_arrow(ctx: LakeContext, plan, data: pa.Table, ids: pa.ChunkedArray | None, *,
                 any_size: bool = False, new_rows: int | None = None) -> Staged[None] | None:
    """The insert operation (and its files) for Arrow rows (the table's columns), keeping the row ids `ids` if
    given: inlined when the statement's new rows (`new_rows`, default these) are few, else files written
    in-process (above the small-data threshold too with `any_size`); None when they are to be written on Spark."""
    row_ids = None if ids is None else ids.combine_chunks()
    few = (data.num_rows if new_rows is None else new_rows) <= ctx.inlining_limit(plan.table)
    if few and inlined.inlinable(plan.table.columns, ctx.engine, data):
        listed = None if row_ids is None else row_ids.to_pylist()
        return Staged([InlineInsert(plan.table, data, row_ids=listed)], [], None)
    written = write_arrow_files(ctx, data, plan.table, plan.snapshot_id, options_table=plan.table, row_ids=row_ids,
                                any_size=any_size)
    if written is None:
        return None
    return Staged([AppendFiles(plan.table, written)], [f.path for f in written], None)


def _stage_frame(ctx: LakeContext, plan, rows, new_rows: int, *, keep_ids: bool) -> Staged[None]:
    """`stage_new_rows` for a Spark DataFrame: fetched and inlined when few, else written on Spark."""
    if new_rows <= ctx.inlining_limit(plan.table):
        small = rows.toArrow()
        data = conform_arrow(small.drop_columns([ROWID]), plan.table)
        if inlined.inlinable(plan.table.columns, ctx.engine, data):
            ids = small.column(ROWID).to_pylist() if keep_ids else None
            return Staged([InlineInsert(plan.table, data, row_ids=ids)], [], None)
    return _write_on_spark(ctx, plan, rows, keep_ids=keep_ids)


def _write_on_spark(ctx: LakeContext, plan, rows, *, keep_ids: bool) -> Staged[None]:
    """`rows` (a Spark DataFrame: table columns + `rowid`) written as the table's files on Spark."""
    files = write_files(ctx, rows if keep_ids else rows.drop(ROWID), plan.table, plan.snapshot_id,
                        options_table=plan.table, row_ids=keep_ids)
    return Staged([AppendFiles(plan.table, files)], [f.path for f in files], None)
