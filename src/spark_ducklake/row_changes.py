"""DELETE and UPDATE on DuckLake's merge-on-read design: executors find and rewrite rows, the driver commits once.

An update is a delete of the old row versions plus an insert of the new ones in the same snapshot; the new
versions keep their row ids (`_ducklake_internal_row_id` in Parquet, the `row_id` of inlined rows), as the
reference does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .catalog.commit import CommitInfo, commit
from .catalog.data_ops import AppendFiles, DeleteRows, InlineInsert
from .errors import ReadOnlyError, SchemaMismatchError
from .write_plan import conform_arrow

if TYPE_CHECKING:
    from .lake import DuckLake


def _delete_op(plan, staged) -> DeleteRows:
    return DeleteRows(plan.table, staged.delete_files, staged.ended_files, staged.inlined_file_deletes,
                      staged.inlined_row_ids)


def _commit(lake: DuckLake, ops, plan, info: CommitInfo, written: list[str]) -> int:
    from .spark.write import delete_paths

    try:
        return commit(lake.engine, ops, read_snapshot=plan.snapshot_id, data_path=lake.data_path, info=info)
    except BaseException:
        delete_paths(written)
        raise


def stage_delete_op(lake: DuckLake, table: str, condition, snapshot_id: int):
    """(DeleteRows operation or None, staged delete files) for the rows `condition` matches at the snapshot."""
    from .spark.deletes import plan_delete

    plan = lake.plan_scan(table, version=snapshot_id)
    staged = plan_delete(lake.spark, plan, condition, lake.inlining_limit(plan.table))
    if staged.empty:
        return None, []
    return _delete_op(plan, staged), staged.delete_files


def delete_rows(lake: DuckLake, table: str, condition, info: CommitInfo) -> int:
    """DELETE FROM table WHERE condition; returns the number of rows deleted (no snapshot when 0)."""
    from .spark.deletes import plan_delete

    _writable(lake)
    plan = lake.plan_scan(table)
    staged = plan_delete(lake.spark, plan, condition, lake.inlining_limit(plan.table))
    if staged.empty:
        return 0
    _commit(lake, [_delete_op(plan, staged)], plan, info, [d.path for d in staged.delete_files])
    return staged.deleted_rows


def update_rows(lake: DuckLake, table: str, assignments: dict, condition, info: CommitInfo) -> int:
    """UPDATE table SET assignments WHERE condition; returns the number of rows updated."""
    from pyspark.sql import functions as F

    from .catalog import types
    from .spark.deletes import stage_deletes
    from .spark.scan import FILE, POS
    from .spark.write import write_data_files
    from .writer import _write_options

    _writable(lake)
    if not assignments:
        raise SchemaMismatchError("update needs at least one column to set")
    plan = lake.plan_scan(table)
    columns = {c.name.lower(): c for c in plan.table.columns}
    unknown = [name for name in assignments if name.lower() not in columns]
    if unknown:
        raise SchemaMismatchError(f"columns not in table {plan.table.qualified_name}: {', '.join(unknown)}")
    values = {columns[k.lower()].name: (F.expr(v) if isinstance(v, str) else v) for k, v in assignments.items()}
    frame = plan.to_dataframe(lake.spark, positions=True, row_ids=True)
    matches = frame if condition is None else frame.where(condition)
    new_rows = matches.select(
        *[values.get(c.name, F.col(f"`{c.name}`")).cast(types.to_spark_type(c)).alias(c.name)
          for c in plan.table.columns],
        "rowid", FILE, POS,
    ).cache()
    try:
        limit = lake.inlining_limit(plan.table)
        staged = stage_deletes(lake.spark, plan, new_rows.select(FILE, POS), limit)
        if staged.empty:
            return 0
        ops, written = [_delete_op(plan, staged)], [d.path for d in staged.delete_files]
        if staged.deleted_rows <= limit:
            small = new_rows.drop(FILE, POS).toArrow()
            row_ids = small.column("rowid").to_pylist()
            ops.append(InlineInsert(plan.table, conform_arrow(small.drop_columns(["rowid"]), plan.table),
                                    row_ids=row_ids))
        else:
            files = write_data_files(lake.spark, new_rows.drop(FILE, POS), plan.table,
                                     options=_write_options(lake, plan.table), row_ids=True)
            written += [f.path for f in files]
            ops.append(AppendFiles(plan.table, files))
        _commit(lake, ops, plan, info, written)
        return staged.deleted_rows
    finally:
        new_rows.unpersist()


def _writable(lake: DuckLake) -> None:
    if lake.read_only:
        raise ReadOnlyError("this lake is attached read-only (or at a past snapshot)")
