"""A DELETE or UPDATE applied on Spark to a table as its transaction sees it (rows staged earlier included), and
the net change that takes the table from how the transaction began to how it is after the statement.

The steps of `arrow/statement_rows.py` as Spark DataFrames: the table as the transaction sees it is scanned with
its positions and row ids, each row marked as unchanged since the transaction began or not (`_dl_original`) and
as matched by the statement or not (`_dl_hit`); the statement is applied; the positions of the rows that existed
then and are gone or changed now are found with an anti-join and their deletion staged (`deletes.stage_deletes`);
the rows whose ids existed then (updated versions, which keep them) and the new rows are handed, as DataFrames,
to the caller's staging (`NetRows`), while the frames they come from are still cached.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from ...spec.names import spark_name
from ..arrow.delete_plan import DeletePlan
from ..arrow.scan_columns import FILE, POS
from ..arrow.statement_rows import NetRows, TableInTransaction
from ..arrow.storage import delete_paths
from . import deletes as spark_deletes
from . import types
from .conform import cast_by_name, value_types
from .expressions import check_expression
from .session import cached

T = TypeVar("T")
ORIGINAL, HIT = "_dl_original", "_dl_hit"  # row as the transaction began, unchanged / matched by the statement


def _marked(spark: Any, view: TableInTransaction) -> tuple[Any, int]:
    """(the table as the transaction sees it, with rowid, _dl_file, _dl_pos and _dl_original; the last row id
    that existed when it began)."""
    from pyspark.sql import functions as F

    frame = view.now.to_dataframe(spark, positions=True, row_ids=True)  # type: ignore[attr-defined]
    if view.original is None:
        return frame.withColumn(ORIGINAL, F.lit(False)), -1
    unchanged = F.col(FILE).isin(view.files) if view.files else F.lit(False)
    if view.inlined:
        unchanged = unchanged | (F.col(FILE).isNull() & F.col(POS).isin(view.inlined))
    frame = frame.withColumn(ORIGINAL, F.coalesce(unchanged, F.lit(False)))
    last = view.original.to_dataframe(spark, row_ids=True).agg(F.max("rowid")).first()[0]  # type: ignore[attr-defined]
    return frame, -1 if last is None else last


def _hit(condition: Any) -> Any:
    from pyspark.sql import functions as F

    if condition is None:
        return F.lit(True)
    column = F.expr(condition) if isinstance(condition, str) else condition
    return F.coalesce(column.cast("boolean"), F.lit(False))


def _deleted(spark: Any, view: TableInTransaction, frame: Any, condition: Any) -> tuple[Any, Callable[[Any], Any]]:
    """The marked frame with `_dl_hit`, and the change a DELETE makes to it."""
    check_expression(spark, view.table, condition, "condition")
    return frame.withColumn(HIT, _hit(condition)), lambda f: f.where(~f[HIT])


def _updated(spark: Any, view: TableInTransaction, frame: Any, assignments: Mapping[str, Any],
             condition: Any) -> tuple[Any, Callable[[Any], Any]]:
    """The marked frame with `_dl_hit`, and the change an UPDATE makes to it (matched rows get their new values
    and are no longer original)."""
    from pyspark.sql import functions as F

    columns = {c.name.lower(): c for c in view.table.columns}
    check_expression(spark, view.table, condition, "condition")
    for name, value in assignments.items():
        check_expression(spark, view.table, value, f"value of {name}", select=True)
    values = {columns[k.lower()].name: (F.expr(v) if isinstance(v, str) else v) for k, v in assignments.items()}
    hit = frame.withColumn(HIT, _hit(condition))
    nested = [name for name in values if columns[name.lower()].is_nested]
    for name, got in zip(nested, value_types(hit, [values[n] for n in nested]), strict=True):
        values[name] = cast_by_name(values[name], got, columns[name.lower()])  # struct fields by name

    def updated(f: Any) -> Any:
        cols = []
        for c in view.table.columns:
            old = F.col(spark_name(c.name))
            new = values.get(c.name)
            value = old if new is None else F.when(f[HIT], new.cast(types.to_spark_type(c))).otherwise(old)
            cols.append(value.cast(types.to_spark_type(c)).alias(c.name))
        return f.select(*cols, "rowid", FILE, POS, (f[ORIGINAL] & ~f[HIT]).alias(ORIGINAL))

    return hit, updated


def restage(spark: Any, view: TableInTransaction, condition: Any, assignments: Mapping[str, Any] | None,
            inline_limit: int, stage: Callable[[NetRows], T]) -> tuple[int, T | None]:
    """A DELETE (`assignments` None) or UPDATE applied on Spark to the table as the transaction sees it, the
    deletion of the rows it leaves gone staged, and the net change handed to `stage`: (the rows the statement
    matched, what `stage` returned; None when it matched nothing). The delete files are deleted again if `stage`
    fails."""
    from pyspark.sql import functions as F

    frame, last = _marked(spark, view)
    if assignments is None:
        frame, change = _deleted(spark, view, frame, condition)
    else:
        frame, change = _updated(spark, view, frame, assignments, condition)
    marked = cached(spark, frame)
    try:
        matched = marked.where(F.col(HIT)).count()
        if not matched:
            return 0, None
        after = cached(spark, change(marked))
        try:
            return matched, _net(spark, view, last, after, inline_limit, stage)
        finally:
            after.unpersist()
    finally:
        marked.unpersist()


def _net(spark: Any, view: TableInTransaction, last: int, after: Any, inline_limit: int,
         stage: Callable[[NetRows], T]) -> T:
    """The deletion of the rows that existed when the transaction began and are not in `after` staged, and the
    rest of the net change handed to `stage`."""
    from pyspark.sql import functions as F

    deletes = DeletePlan()
    if view.original is not None:
        kept = after.where(F.col(ORIGINAL)).select(F.col(FILE).alias("_k_file"), F.col(POS).alias("_k_pos"))
        then = view.original.to_dataframe(spark, positions=True).select(FILE, POS)  # type: ignore[attr-defined]
        gone = cached(spark, then.join(kept, F.col(FILE).eqNullSafe(F.col("_k_file"))
                                       & (F.col(POS) == F.col("_k_pos")), "left_anti"))
        try:
            deletes = spark_deletes.stage_deletes(spark, view.original, gone, inline_limit)  # type: ignore[arg-type]
        finally:
            gone.unpersist()
    try:
        new = after.where(~F.col(ORIGINAL))
        names = [F.col(f"`{c.name.replace('`', '``')}`") for c in view.table.columns]
        kept_id = F.col("rowid") <= F.lit(last)
        counts = new.agg(F.count(F.lit(1)).alias("n"), F.sum(kept_id.cast("long")).alias("k")).first()
        updated, fresh = counts["k"] or 0, counts["n"] - (counts["k"] or 0)
        return stage(NetRows(deletes, new.where(kept_id).select(*names, "rowid"), updated,
                             new.where(~kept_id).select(*names), fresh))
    except BaseException:
        delete_paths([d.path for d in deletes.delete_files])
        raise
