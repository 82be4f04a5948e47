"""DELETE and UPDATE on DuckLake's merge-on-read design: executors find and rewrite rows, the driver commits once.

An update is a delete of the old row versions plus an insert of the new ones in the same snapshot; the new
versions keep their row ids (`_ducklake_internal_row_id` in Parquet, the `row_id` of inlined rows), as the
reference does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..catalog.changes.data import AppendFiles, DeleteRows, InlineInsert
from ..catalog.inlined import codec as inlined
from ..dataplane.arrow.conform import conform_arrow
from ..dataplane.arrow.local_dml import check_condition, matching_rows, stage_positions, updated_rows
from ..dataplane.arrow.local_expressions import NotLocal
from ..dataplane.arrow.local_scan import ROWID
from ..dataplane.arrow.scan_columns import FILE, POS
from ..dataplane.arrow.storage import delete_paths
from ..dataplane.engine import engine_for
from ..dataplane.spark import deletes as spark_deletes
from ..dataplane.spark import types
from ..dataplane.spark.conform import cast_by_name, value_types
from ..dataplane.spark.delete_writes import restamp
from ..dataplane.spark.expressions import check_expression
from ..dataplane.spark.session import cached
from ..errors import SchemaMismatchError
from ..spec.names import spark_name
from .staging import Staged
from .write import write_arrow_files, write_files

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
    """The operations, staged files and rows updated of an UPDATE against the plan's snapshot; nothing committed."""
    from pyspark.sql import functions as F

    if not assignments:
        raise SchemaMismatchError("update needs at least one column to set")
    columns = {c.name.lower(): c for c in plan.table.columns}
    unknown = [name for name in assignments if name.lower() not in columns]
    if unknown:
        raise SchemaMismatchError(f"columns not in table {plan.table.qualified_name}: {', '.join(unknown)}")
    if engine_for(ctx, plan.files).in_process:
        local = _stage_update_in_process(ctx, plan, assignments, condition)
        if local is not None:
            return local
    spark = ctx.spark  # checked once per operation (ctx.spark re-verifies the session's confs on each use)
    check_expression(spark, plan.table, condition, "condition")
    for name, value in assignments.items():
        check_expression(spark, plan.table, value, f"value of {name}", select=True)
    frame = plan.to_dataframe(spark, positions=True, row_ids=True)  # first: F.expr needs a session
    values = {columns[k.lower()].name: (F.expr(v) if isinstance(v, str) else v) for k, v in assignments.items()}
    nested = [name for name in values if columns[name.lower()].is_nested]
    for name, got in zip(nested, value_types(frame, [values[n] for n in nested]), strict=True):
        values[name] = cast_by_name(values[name], got, columns[name.lower()])  # struct fields by name
    matches = frame if condition is None else frame.where(condition)
    new_rows = cached(spark, matches.select(
        *[values.get(c.name, F.col(spark_name(c.name))).cast(types.to_spark_type(c)).alias(c.name)
          for c in plan.table.columns],
        "rowid", FILE, POS,
    ))
    try:
        limit = ctx.inlining_limit(plan.table)
        staged = spark_deletes.stage_deletes(spark, plan, new_rows.select(FILE, POS), limit)
        if staged.empty:
            return Staged([], [], 0)
        written = [d.path for d in staged.delete_files]
        try:
            insert = stage_rows(ctx, plan, new_rows.drop(FILE, POS), staged.deleted_rows, keep_ids=True)
        except BaseException:
            delete_paths(written)
            raise
        return Staged([delete_op(plan, staged), *insert.ops], written + insert.files, staged.deleted_rows)
    finally:
        new_rows.unpersist()


def _stage_update_in_process(ctx: LakeContext, plan, assignments: dict, condition) -> Staged[int] | None:
    """An UPDATE staged with pyarrow (new versions written first, then the deletes), or None when a string or
    the table's file layout is outside what the in-process path does exactly as Spark."""
    try:
        check_condition(plan, condition)
        matches = matching_rows(plan, condition, row_ids=True)
        new_rows = updated_rows(plan, matches, assignments)
    except NotLocal:
        return None
    if not matches.num_rows:
        return Staged([], [], 0)
    inserted = insert_versions(ctx, plan, conform_arrow(new_rows, plan.table), matches.column(ROWID))
    if inserted is None:
        return None
    try:
        staged = stage_positions(plan, matches, ctx.inlining_limit(plan.table))
    except BaseException:
        delete_paths(inserted.files)
        raise
    return Staged([delete_op(plan, staged), *inserted.ops], [d.path for d in staged.delete_files] + inserted.files,
                  staged.deleted_rows)


def insert_versions(ctx: LakeContext, plan, data, ids, *, any_size: bool = False,
                    new_rows: int | None = None) -> Staged[None] | None:
    """The insert operation (and its files) for new row versions (Arrow, the table's columns) keeping the row ids
    `ids`: inlined when the statement's new rows (`new_rows`, default these) are few, else files written in-process
    (above the small-data threshold too with `any_size`); None when they are to be written on Spark. `ids`: a
    ChunkedArray."""
    ids = ids.combine_chunks()
    few = (data.num_rows if new_rows is None else new_rows) <= ctx.inlining_limit(plan.table)
    if few and inlined.inlinable(plan.table.columns, ctx.engine, data):
        return Staged([InlineInsert(plan.table, data, row_ids=ids.to_pylist())], [], None)
    written = write_arrow_files(ctx, data, plan.table, plan.snapshot_id, options_table=plan.table, row_ids=ids,
                                any_size=any_size)
    if written is None:
        return None
    return Staged([AppendFiles(plan.table, written)], [f.path for f in written], None)


def stage_rows(ctx: LakeContext, plan, rows, new_rows: int, *, keep_ids: bool) -> Staged[None]:
    """The insert operation (and its files) for `rows` (table columns + `rowid`): inlined when the statement's new
    rows (`new_rows`, all of a MERGE's updated and inserted rows) are at most the inlining limit, else files; ids
    kept if asked."""
    if new_rows <= ctx.inlining_limit(plan.table):
        small = rows.toArrow()
        data = conform_arrow(small.drop_columns(["rowid"]), plan.table)
        if inlined.inlinable(plan.table.columns, ctx.engine, data):
            ids = small.column("rowid").to_pylist() if keep_ids else None
            return Staged([InlineInsert(plan.table, data, row_ids=ids)], [], None)
    files = write_files(ctx, rows if keep_ids else rows.drop("rowid"), plan.table, plan.snapshot_id,
                        options_table=plan.table, row_ids=keep_ids)
    return Staged([AppendFiles(plan.table, files)], [f.path for f in files], None)

