"""Several row-level changes to one table in a transaction, each seeing the ones before it (read-your-writes).

The first DELETE or UPDATE of a table the transaction has not written to plans against the table as the
transaction began (delete_update.py). A later one, one after an INSERT, or one on a table created in the
transaction reads the table as the transaction sees it (the staged preview, staged_reads.py), applies its change
there, and re-stages the table's whole net change against the table as it began: one delete of the rows that
existed then and are gone or changed now (positions in their files, inlined row ids), and the inserts of every row
the transaction adds (updated versions keep their row ids, new rows get theirs at COMMIT). The table's earlier
data operations are replaced and their files deleted once the commit no longer needs them, so COMMIT still writes
one snapshot, with one delete file per data file, as the reference does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..catalog.operations.data import AppendFiles, DeleteRows, InlineInsert, ReplaceAll
from ..errors import DuckLakeError, SchemaMismatchError
from ..spec.internal_columns import INLINED_ROW_ID
from ..spec.names import parse_table_name as split_name

if TYPE_CHECKING:
    from .transaction import Transaction

DATA_OPS = (AppendFiles, InlineInsert, DeleteRows, ReplaceAll)
ORIGINAL, HIT = "_dl_original", "_dl_hit"  # row as the transaction began, unchanged / matched by the statement


def table_ops(tx: Transaction, uuid: str) -> list:
    """The staged operations that change rows of the table with this uuid."""
    return [op for op in tx.ops if getattr(getattr(op, "table", None), "table_uuid", None) == uuid]


def has_staged_rows(tx: Transaction, uuid: str) -> bool:
    """Whether the transaction inserts, deletes or updates rows of the table with this uuid."""
    return any(isinstance(op, DATA_OPS) for op in table_ops(tx, uuid))


def needs_compose(tx: Transaction, table: str) -> bool:
    """Whether a row-level change of `table` (its name now) must see rows staged earlier in the transaction."""
    key = split_name(table)
    if key in tx.new_tables:
        return True
    info = tx.ctx.table_info(tx.names.source(key), version=tx.read_snapshot)
    return bool(table_ops(tx, info.table_uuid))


@dataclass
class _Current:
    """The table as the transaction sees it, rows marked as unchanged since it began or not."""

    key: tuple[str, str]
    info: object  # TableInfo the new rows are written with
    ref: object  # TableRef of a table created in the transaction, else None
    original: object  # ScanPlan at the transaction's snapshot (None for a table created in it)
    frame: object  # table columns, rowid, _dl_file, _dl_pos, _dl_original
    last_original_id: int  # row ids up to this one existed when the transaction began


def _current(tx: Transaction, table: str, what: str) -> _Current:
    from pyspark.sql import functions as F

    from ..spark.scan import FILE, POS

    key = split_name(table)
    schema, name = key
    spark = tx.ctx.spark
    if key in tx.new_tables:
        info, ref = tx.new_tables[key]
        original, uuid = None, info.table_uuid
    else:
        original, ref = tx.ctx.plan_scan(tx.names.source(key), version=tx.read_snapshot), None
        info = tx.table_info(key)  # the columns its ALTERs in the transaction leave: new rows are written so
        uuid = info.table_uuid
    staged = table_ops(tx, uuid)
    other = [op for op in staged if not isinstance(op, DATA_OPS)]
    if other:
        raise DuckLakeError(f"{schema}.{name}: {type(other[0]).__name__} is staged for it in this transaction; "
                            f"{what} it in another transaction")
    with tx.staged() as ctx:
        now = ctx.plan_scan(key)
    frame = now.to_dataframe(spark, positions=True, row_ids=True)
    if original is None:
        return _Current(key, info, ref, None, frame.withColumn(ORIGINAL, F.lit(False)), -1)
    # Rows of the files that existed then are unchanged (staged files have ids of their own); inlined rows are
    # unchanged when their id is one of the rows inlined then that no staged delete or update has ended.
    ended = set().union(*[op.inlined_row_ids for op in staged if isinstance(op, DeleteRows)])
    if any(isinstance(op, ReplaceAll) for op in staged):
        files, inlined = [], []
    else:
        files = [f.data_file_id for f in original.files]
        before = [] if original.inlined is None else original.inlined.column(INLINED_ROW_ID).to_pylist()
        inlined = [i for i in before if i not in ended]
    unchanged = F.col(FILE).isin(files) if files else F.lit(False)
    if inlined:
        unchanged = unchanged | (F.col(FILE).isNull() & F.col(POS).isin(inlined))
    frame = frame.withColumn(ORIGINAL, F.coalesce(unchanged, F.lit(False)))
    last = original.to_dataframe(spark, row_ids=True).agg(F.max("rowid")).first()[0]
    return _Current(key, info, ref, original, frame, -1 if last is None else last)


def _hit(condition):
    from pyspark.sql import functions as F

    if condition is None:
        return F.lit(True)
    column = F.expr(condition) if isinstance(condition, str) else condition
    return F.coalesce(column.cast("boolean"), F.lit(False))


def compose_delete(tx: Transaction, table: str, condition) -> int:
    """DELETE on the table as the transaction sees it; returns the rows it deletes."""
    from ..spark.expressions import check_expression

    current = _current(tx, table, "delete from")
    check_expression(tx.ctx.spark, current.info, condition, "condition")
    frame = current.frame.withColumn(HIT, _hit(condition))
    return _restage(tx, current, frame, lambda f: f.where(~f[HIT]))


def compose_update(tx: Transaction, table: str, assignments: dict, condition) -> int:
    """UPDATE on the table as the transaction sees it; returns the rows it updates."""
    from pyspark.sql import functions as F

    from ..spark import types
    from ..spark.expressions import check_expression
    from ..spark.scan import FILE, POS
    from ..spec.names import spark_name

    current = _current(tx, table, "update")
    columns = {c.name.lower(): c for c in current.info.columns}
    if not assignments:
        raise SchemaMismatchError("update needs at least one column to set")
    unknown = [n for n in assignments if n.lower() not in columns]
    if unknown:
        raise SchemaMismatchError(f"columns not in table {current.info.qualified_name}: {', '.join(unknown)}")
    spark = tx.ctx.spark
    check_expression(spark, current.info, condition, "condition")
    for name, value in assignments.items():
        check_expression(spark, current.info, value, f"value of {name}", select=True)
    values = {columns[k.lower()].name: (F.expr(v) if isinstance(v, str) else v) for k, v in assignments.items()}
    hit = current.frame.withColumn(HIT, _hit(condition))

    def updated(f):
        cols = []
        for c in current.info.columns:
            old = F.col(spark_name(c.name))
            new = values.get(c.name)
            value = old if new is None else F.when(f[HIT], new.cast(types.to_spark_type(c))).otherwise(old)
            cols.append(value.cast(types.to_spark_type(c)).alias(c.name))
        return f.select(*cols, "rowid", FILE, POS, (f[ORIGINAL] & ~f[HIT]).alias(ORIGINAL))

    return _restage(tx, current, hit, updated)


def _restage(tx: Transaction, current: _Current, frame, change) -> int:
    """Apply `change` to the marked frame, stage the table's net change in place of its staged data operations;
    returns the rows the statement matched."""
    from pyspark.sql import functions as F

    from ..spark.session import cached

    spark = tx.ctx.spark
    marked = cached(spark, frame)
    try:
        matched = marked.where(F.col(HIT)).count()
        if not matched:
            return 0
        after = cached(spark, change(marked))
        try:
            ops, files = _net_ops(tx, current, after)
        finally:
            after.unpersist()
    finally:
        marked.unpersist()
    _swap(tx, current, ops, files)
    return matched


def _net_ops(tx: Transaction, current: _Current, after) -> tuple[list, list[str]]:
    """The operations (and their files) taking the table from how it began to `after`."""
    from pyspark.sql import functions as F

    from ..spark.deletes import stage_deletes
    from ..spark.scan import FILE, POS
    from ..spark.session import cached
    from ..spark.write import delete_paths
    from .delete_update import _delete_op, stage_rows
    from .write import stage_write

    spark, ctx = tx.ctx.spark, tx.ctx
    ops, files = [], []
    try:
        if current.original is not None:
            kept = after.where(F.col(ORIGINAL)).select(F.col(FILE).alias("_k_file"), F.col(POS).alias("_k_pos"))
            then = current.original.to_dataframe(spark, positions=True).select(FILE, POS)
            gone = cached(spark, then.join(kept, F.col(FILE).eqNullSafe(F.col("_k_file"))
                                           & (F.col(POS) == F.col("_k_pos")), "left_anti"))
            try:
                staged = stage_deletes(spark, current.original, gone, ctx.inlining_limit(current.info))
            finally:
                gone.unpersist()
            if not staged.empty:
                ops.append(_delete_op(current.original, staged))
                files += [d.path for d in staged.delete_files]
        new = after.where(~F.col(ORIGINAL))
        names = [F.col(f"`{c.name.replace('`', '``')}`") for c in current.info.columns]
        kept_id = F.col("rowid") <= F.lit(current.last_original_id)
        counts = new.agg(F.count(F.lit(1)).alias("n"), F.sum(kept_id.cast("long")).alias("k")).first()
        updated, fresh = counts["k"] or 0, counts["n"] - (counts["k"] or 0)
        if updated:
            plan = replace(current.original, table=current.info)  # written with the columns as altered
            insert, written = stage_rows(ctx, plan, new.where(kept_id).select(*names, "rowid"),
                                         updated, keep_ids=True)
            ops.append(insert)
            files += written
        if fresh:
            rows = new.where(~kept_id).select(*names)
            limit = ctx.inlining_limit(current.info if current.original is not None else None)
            write = stage_write(ctx, rows, current.info, current.ref, replace_all=False,
                                read_snapshot=tx.read_snapshot, replace_existing=current.original is not None,
                                limit=limit)
            ops += write.ops
            files += write.files
    except BaseException:
        delete_paths(files)
        raise
    return ops, files


def _swap(tx: Transaction, current: _Current, ops: list, files: list[str]) -> None:
    """Replace the table's staged data operations by `ops`; their files are deleted when the commit ends."""
    old = {id(op) for op in table_ops(tx, current.info.table_uuid) if isinstance(op, DATA_OPS)}
    replaced = [op for op in tx.ops if id(op) in old]
    old_files = set()
    for op in replaced:
        if isinstance(op, AppendFiles):
            old_files |= {f.path for f in op.files}
        elif isinstance(op, DeleteRows):
            old_files |= {d.path for d in op.delete_files}
    tx.ops = [op for op in tx.ops if id(op) not in old] + ops
    tx.files = [f for f in tx.files if f not in old_files] + files
    tx.discarded += sorted(old_files)
