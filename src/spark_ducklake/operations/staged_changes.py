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

from ..catalog.changes.data import AppendFiles, DeleteRows, InlineInsert, ReplaceAll
from ..catalog.changes.ddl import TableRef
from ..dataplane.arrow.local_dml import stage_positions
from ..dataplane.arrow.local_expressions import NotLocal
from ..dataplane.arrow.local_scan import ROWID
from ..dataplane.arrow.scan_columns import FILE, POS
from ..dataplane.arrow.statement_rows import delete_rows, marked_rows, net_change, update_rows
from ..dataplane.arrow.storage import delete_paths
from ..dataplane.engine import engine_for
from ..dataplane.spark import deletes as spark_deletes
from ..dataplane.spark import types
from ..dataplane.spark.conform import cast_by_name, value_types
from ..dataplane.spark.expressions import check_expression
from ..dataplane.spark.scan_plan import ScanPlan
from ..dataplane.spark.session import cached
from ..errors import DuckLakeError, SchemaMismatchError
from ..spec.internal_columns import INLINED_ROW_ID
from ..spec.model import TableInfo
from ..spec.names import parse_table_name as split_name
from ..spec.names import spark_name
from .delete_update import delete_op, insert_versions, stage_rows
from .staging import Staged
from .write import stage_write

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
    if tx.created(key) is not None:
        return True
    info = tx.ctx.table_info(tx.names.source(key), version=tx.read_snapshot)
    return bool(table_ops(tx, info.table_uuid))


@dataclass
class _Current:
    """The table as the transaction sees it, and which of its rows are unchanged since it began."""

    key: tuple[str, str]
    info: TableInfo  # the new rows are written with it
    ref: TableRef | None  # of a table created in the transaction, else None
    original: ScanPlan | None  # at the transaction's snapshot (None for a table created in it)
    now: ScanPlan  # the table with the transaction's staged changes
    files: list[int]  # data files whose visible rows are unchanged since the transaction began
    inlined: list[int]  # inlined row ids unchanged since it began


def _current(tx: Transaction, table: str, what: str) -> _Current:
    """Plan the table as it began and as the transaction sees it (catalog reads only, no Spark)."""
    key = split_name(table)
    schema, name = key
    created = tx.created(key)
    if created is not None:
        info, ref = created
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
    with tx.staged(catalog_only=True) as ctx:  # Spark, if it runs, starts after the preview
        now = ctx.plan_scan(key)
    if original is None:
        return _Current(key, info, ref, None, now, [], [])
    # Rows of the files that existed then are unchanged (staged files have ids of their own); inlined rows are
    # unchanged when their id is one of the rows inlined then that no staged delete or update has ended.
    ended = set().union(*[op.inlined_row_ids for op in staged if isinstance(op, DeleteRows)])
    if any(isinstance(op, ReplaceAll) for op in staged):
        return _Current(key, info, ref, original, now, [], [])
    before = [] if original.inlined is None else original.inlined.column(INLINED_ROW_ID).to_pylist()
    return _Current(key, info, ref, original, now, [f.data_file_id for f in original.files],
                    [i for i in before if i not in ended])


def _marked(tx: Transaction, current: _Current):
    """(the table as the transaction sees it on Spark, with rowid, _dl_file, _dl_pos and _dl_original; the last
    row id that existed when it began)."""
    from pyspark.sql import functions as F

    spark = tx.ctx.spark
    frame = current.now.to_dataframe(spark, positions=True, row_ids=True)
    if current.original is None:
        return frame.withColumn(ORIGINAL, F.lit(False)), -1
    unchanged = F.col(FILE).isin(current.files) if current.files else F.lit(False)
    if current.inlined:
        unchanged = unchanged | (F.col(FILE).isNull() & F.col(POS).isin(current.inlined))
    frame = frame.withColumn(ORIGINAL, F.coalesce(unchanged, F.lit(False)))
    last = current.original.to_dataframe(spark, row_ids=True).agg(F.max("rowid")).first()[0]
    return frame, -1 if last is None else last


def _in_process(tx: Transaction, current: _Current) -> bool:
    """Whether the files the statement reads (the table as it began and as the transaction sees it) are small
    enough to change without Spark (dataplane/arrow/threshold.py)."""
    files = {f.path: f for f in current.now.files}
    if current.original is not None:
        files.update({f.path: f for f in current.original.files})
    return engine_for(tx.ctx, list(files.values())).in_process


def _hit(condition):
    from pyspark.sql import functions as F

    if condition is None:
        return F.lit(True)
    column = F.expr(condition) if isinstance(condition, str) else condition
    return F.coalesce(column.cast("boolean"), F.lit(False))


def compose_delete(tx: Transaction, table: str, condition) -> int:
    """DELETE on the table as the transaction sees it; returns the rows it deletes."""
    current = _current(tx, table, "delete from")
    if _in_process(tx, current):
        local = _restage_in_process(tx, current, lambda rows: delete_rows(current.now, current.info, rows, condition))
        if local is not None:
            return local
    frame, last = _marked(tx, current)
    check_expression(tx.ctx.spark, current.info, condition, "condition")
    frame = frame.withColumn(HIT, _hit(condition))
    return _restage(tx, current, last, frame, lambda f: f.where(~f[HIT]))


def compose_update(tx: Transaction, table: str, assignments: dict, condition) -> int:
    """UPDATE on the table as the transaction sees it; returns the rows it updates."""
    from pyspark.sql import functions as F

    current = _current(tx, table, "update")
    columns = {c.name.lower(): c for c in current.info.columns}
    if not assignments:
        raise SchemaMismatchError("update needs at least one column to set")
    unknown = [n for n in assignments if n.lower() not in columns]
    if unknown:
        raise SchemaMismatchError(f"columns not in table {current.info.qualified_name}: {', '.join(unknown)}")
    if _in_process(tx, current):
        local = _restage_in_process(
            tx, current, lambda rows: update_rows(current.now, current.info, rows, assignments, condition))
        if local is not None:
            return local
    frame, last = _marked(tx, current)
    spark = tx.ctx.spark
    check_expression(spark, current.info, condition, "condition")
    for name, value in assignments.items():
        check_expression(spark, current.info, value, f"value of {name}", select=True)
    values = {columns[k.lower()].name: (F.expr(v) if isinstance(v, str) else v) for k, v in assignments.items()}
    hit = frame.withColumn(HIT, _hit(condition))
    nested = [name for name in values if columns[name.lower()].is_nested]
    for name, got in zip(nested, value_types(hit, [values[n] for n in nested]), strict=True):
        values[name] = cast_by_name(values[name], got, columns[name.lower()])  # struct fields by name

    def updated(f):
        cols = []
        for c in current.info.columns:
            old = F.col(spark_name(c.name))
            new = values.get(c.name)
            value = old if new is None else F.when(f[HIT], new.cast(types.to_spark_type(c))).otherwise(old)
            cols.append(value.cast(types.to_spark_type(c)).alias(c.name))
        return f.select(*cols, "rowid", FILE, POS, (f[ORIGINAL] & ~f[HIT]).alias(ORIGINAL))

    return _restage(tx, current, last, hit, updated)


def _restage(tx: Transaction, current: _Current, last: int, frame, change) -> int:
    """Apply `change` to the marked frame, stage the table's net change in place of its staged data operations;
    returns the rows the statement matched."""
    from pyspark.sql import functions as F

    spark = tx.ctx.spark
    marked = cached(spark, frame)
    try:
        matched = marked.where(F.col(HIT)).count()
        if not matched:
            return 0
        after = cached(spark, change(marked))
        try:
            net = _net_ops(tx, current, last, after)
        finally:
            after.unpersist()
    finally:
        marked.unpersist()
    _swap(tx, current, net)
    return matched


def _net_ops(tx: Transaction, current: _Current, last: int, after) -> Staged[None]:
    """The operations (and their files) taking the table from how it began to `after`."""
    from pyspark.sql import functions as F

    spark, ctx = tx.ctx.spark, tx.ctx
    ops: list = []
    files: list[str] = []
    try:
        if current.original is not None:
            kept = after.where(F.col(ORIGINAL)).select(F.col(FILE).alias("_k_file"), F.col(POS).alias("_k_pos"))
            then = current.original.to_dataframe(spark, positions=True).select(FILE, POS)
            gone = cached(spark, then.join(kept, F.col(FILE).eqNullSafe(F.col("_k_file"))
                                           & (F.col(POS) == F.col("_k_pos")), "left_anti"))
            try:
                staged = spark_deletes.stage_deletes(spark, current.original, gone, ctx.inlining_limit(current.info))
            finally:
                gone.unpersist()
            if not staged.empty:
                ops.append(delete_op(current.original, staged))
                files += [d.path for d in staged.delete_files]
        new = after.where(~F.col(ORIGINAL))
        names = [F.col(f"`{c.name.replace('`', '``')}`") for c in current.info.columns]
        kept_id = F.col("rowid") <= F.lit(last)
        counts = new.agg(F.count(F.lit(1)).alias("n"), F.sum(kept_id.cast("long")).alias("k")).first()
        updated, fresh = counts["k"] or 0, counts["n"] - (counts["k"] or 0)
        if updated:
            # written with the columns as altered; updated rows existed when the transaction began: original is set
            plan = replace(current.original, table=current.info)  # type: ignore[type-var]
            inserted = stage_rows(ctx, plan, new.where(kept_id).select(*names, "rowid"), updated, keep_ids=True)
            ops += inserted.ops
            files += inserted.files
        if fresh:
            write = _stage_fresh(tx, current, new.where(~kept_id).select(*names))
            ops += write.ops
            files += write.files
    except BaseException:
        delete_paths(files)
        raise
    return Staged(ops, files, None)


def _restage_in_process(tx: Transaction, current: _Current, statement) -> int | None:
    """`statement` (marked rows -> local.compose.Statement) applied with pyarrow and the table's net change
    staged in place of its staged data operations; the rows it matched, or None when something is outside what
    the in-process path does exactly as Spark (nothing is then left staged)."""
    try:
        after = statement(marked_rows(current.now, current.files, current.inlined))
        if not after.matched:
            return 0
        net = _net_ops_in_process(tx, current, net_change(current.original, current.info, after))
    except NotLocal:
        return None
    _swap(tx, current, net)
    return after.matched


def _net_ops_in_process(tx: Transaction, current: _Current, net) -> Staged[None]:
    """The operations (and their files) of a NetChange, staged as `_net_ops` stages them on Spark; NotLocal
    (the files written deleted) when updated versions are to be written on Spark."""
    ctx = tx.ctx
    ops: list = []
    files: list[str] = []
    try:
        if current.original is not None and net.gone.num_rows:
            staged = stage_positions(current.original, net.gone, ctx.inlining_limit(current.info))
            ops.append(delete_op(current.original, staged))
            files += [d.path for d in staged.delete_files]
        if net.kept_ids.num_rows:
            # written with the columns as altered; updated rows existed when the transaction began: original is set
            plan = replace(current.original, table=current.info)  # type: ignore[type-var]
            data = net.kept_ids.drop_columns([ROWID])
            inserted = insert_versions(ctx, plan, data, net.kept_ids.column(ROWID))
            if inserted is None:
                raise NotLocal("updated rows too large to write in-process")
            ops += inserted.ops
            files += inserted.files
        if net.fresh.num_rows:
            write = _stage_fresh(tx, current, net.fresh)
            ops += write.ops
            files += write.files
    except BaseException:
        delete_paths(files)
        raise
    return Staged(ops, files, None)


def _stage_fresh(tx: Transaction, current: _Current, rows) -> Staged[None]:
    """Rows new to the table (a Spark DataFrame or an Arrow table) staged as a write into it."""
    limit = tx.ctx.inlining_limit(current.info if current.original is not None else None)
    return stage_write(tx.ctx, rows, current.info, current.ref, replace_all=False, read_snapshot=tx.read_snapshot,
                       replace_existing=current.original is not None, limit=limit)


def _swap(tx: Transaction, current: _Current, net: Staged[None]) -> None:
    """Replace the table's staged data operations by `net`'s; their files are deleted when the commit ends."""
    old = {id(op) for op in table_ops(tx, current.info.table_uuid) if isinstance(op, DATA_OPS)}
    replaced = [op for op in tx.ops if id(op) in old]
    old_files = set()
    for op in replaced:
        if isinstance(op, AppendFiles):
            old_files |= {f.path for f in op.files}
        elif isinstance(op, DeleteRows):
            old_files |= {d.path for d in op.delete_files}
    tx.replace_ops([op for op in tx.ops if id(op) not in old] + net.ops,
                   files=[f for f in tx.files if f not in old_files] + net.files, discarded=sorted(old_files))
