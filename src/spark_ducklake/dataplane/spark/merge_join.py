"""MERGE rows computed on Spark: the target and the source joined (full outer) on the condition, each joined row given
the action of the first clause (in order) whose kind and condition hold, the new values computed per clause.

The rules are `arrow/merge_rows.py`'s (which takes the same `MergeSpec`): a source row may match several target
rows (each is changed), and a target row matched by several source rows is changed once, by the first of them in
the source's order, while the counts are of matched pairs (DuckDB's numbers). The result names the target positions
to delete, the new versions of updated rows (keeping their row ids) and the inserted rows; `operations/merge.py`
stages them as one snapshot.
"""

from __future__ import annotations

from typing import Any

from ...spec.names import spark_name
from ..arrow.conform import default_of
from ..arrow.delete_plan import DeletePlan
from ..arrow.merge_rows import MergeClause, MergeSpec
from ..arrow.scan_columns import FILE, POS
from ..arrow.sql_syntax import check_syntax
from . import deletes as spark_deletes
from . import types
from .conform import cast_by_name, value_types
from .expressions import check_resolves, empty_frame
from .scan_plan import ScanPlan
from .session import cached


class SparkMergeRows:
    """What a MERGE changes, computed on Spark. The same interface as `arrow/merge_rows.py`'s `ArrowMergeRows`: a
    context manager (its exit releases the cached join), the counts (matched pairs, DuckDB's numbers), `new_rows`
    (the statement's new rows, as the inlining rule counts them: the updated and inserted pairs),
    `stage_deletes`, and the `updates` (table columns + `rowid`, the ids kept) and `inserts` (the same columns,
    `rowid` null) as Spark DataFrames, each None when there are none."""

    def __init__(self, spark: Any, plan: ScanPlan, cached_rows: Any, rows: Any, counts: dict[str, int]) -> None:
        self.spark = spark
        self.plan = plan
        self._cached = cached_rows  # the joined rows, cached: unpersisted on exit
        self._rows = rows  # the same, one matched pair per target row
        self.inserted = counts.get("insert", 0)
        self.updated = counts.get("update", 0)
        self.deleted = counts.get("delete", 0)

    @property
    def new_rows(self) -> int:
        return self.updated + self.inserted

    def stage_deletes(self, inline_limit: int) -> DeletePlan:
        """The deletion of the updated and deleted target rows staged (delete files written, or inlined)."""
        from pyspark.sql import functions as F

        touched = self._rows.where(F.col("_dl_kind") != "insert").select(FILE, POS)
        return spark_deletes.stage_deletes(self.spark, self.plan, touched, inline_limit)

    @property
    def updates(self) -> Any:
        return self._of_kind("update", self.updated)

    @property
    def inserts(self) -> Any:
        return self._of_kind("insert", self.inserted)

    def _of_kind(self, kind: str, count: int) -> Any:
        from pyspark.sql import functions as F

        if not count:
            return None
        data_cols = [spark_name(c.name) for c in self.plan.table.columns]
        return self._rows.where(F.col("_dl_kind") == kind).select(*data_cols, "rowid")

    def __enter__(self) -> SparkMergeRows:
        return self

    def __exit__(self, *exc: object) -> None:
        self._cached.unpersist()


def _expr(value):
    from pyspark.sql import functions as F

    return F.expr(value) if isinstance(value, str) else value


def merge_join(spark, spec: MergeSpec, plan: ScanPlan, source) -> SparkMergeRows:
    """What the MERGE of `source` (a Spark DataFrame) into the plan's rows changes, joined and classified on Spark,
    nothing staged; the joined rows stay cached until the result's context exits."""
    from pyspark.sql import functions as F

    cols = plan.table.columns
    t, s = spec.target_alias, spec.source_alias
    _check_strings(spec, plan, spark, source)
    in_source = {n.lower() for n in source.columns}
    target = (plan.to_dataframe(spark, positions=True, row_ids=True)
              .withColumn("_dl_t", F.lit(True)).alias(t))
    source = source.withColumn("_dl_s", F.lit(True)).withColumn("_dl_sid", F.monotonically_increasing_id())
    joined = target.join(source.alias(s), _expr(spec.condition), "full_outer")
    matched = F.col(f"{t}._dl_t").isNotNull() & F.col("_dl_s").isNotNull()
    kinds = {"matched": matched, "not_matched": F.col(f"{t}._dl_t").isNull(),
             "not_matched_by_source": F.col("_dl_s").isNull()}
    action = None
    for index, clause in enumerate(spec.clauses):
        test = kinds[clause.kind] if clause.condition is None else kinds[clause.kind] & _expr(clause.condition)
        action = (F.when(test, F.lit(index)) if action is None else action.when(test, F.lit(index)))
    joined = joined.withColumn("_dl_action", action).where(F.col("_dl_action").isNotNull())

    by_name = {c.name: c for c in cols}

    def value_of(clause: MergeClause, col) -> object:
        given = {k.lower(): v for k, v in (clause.values or {}).items()}
        if col.name.lower() in given:
            return _expr(given[col.name.lower()])
        if clause.values is None and col.name.lower() in in_source:  # *_all: the source's same-named column
            return F.col(f"{s}.{spark_name(col.name)}")
        # a column the clause leaves out: an update keeps the row's value, an insert stores the default (as
        # a plain write and DuckDB's MERGE do)
        return F.col(f"{t}.{spark_name(col.name)}") if clause.action == "update" else F.lit(default_of(col))

    values = {(index, col.name): value_of(clause, col) for index, clause in enumerate(spec.clauses)
              if clause.action in ("update", "insert") for col in cols}
    nested = [key for key in values if by_name[key[1]].is_nested]
    for key, got in zip(nested, value_types(joined, [values[k] for k in nested]), strict=True):
        values[key] = cast_by_name(values[key], got, by_name[key[1]])  # struct fields by name, as a write
    outputs = []
    for col in cols:
        out = None
        for index, clause in enumerate(spec.clauses):
            if clause.action in ("update", "insert"):
                expr = values[(index, col.name)]
                out = (F.when(F.col("_dl_action") == index, expr) if out is None
                       else out.when(F.col("_dl_action") == index, expr))
        outputs.append((out if out is not None else F.lit(None)).cast(types.to_spark_type(col)).alias(col.name))
    kind_of = {i: c.action for i, c in enumerate(spec.clauses)}
    act = F.col("_dl_action")
    result = cached(spark, joined.select(
        *outputs, F.col(f"{t}.rowid").alias("rowid"), F.col(f"{t}.{FILE}").alias(FILE),
        F.col(f"{t}.{POS}").alias(POS), act.alias("_dl_action"), F.col("_dl_sid"),
        F.when(act.isin([i for i, k in kind_of.items() if k == "update"] or [-1]), "update")
        .when(act.isin([i for i, k in kind_of.items() if k == "delete"] or [-1]), "delete")
        .otherwise("insert").alias("_dl_kind"),
    ))
    try:
        counts = {r["_dl_kind"]: r["count"] for r in result.groupBy("_dl_kind").count().collect()}
        once = _once_per_target(result, [i for i, c in enumerate(spec.clauses) if c.kind == "matched"])
    except BaseException:
        result.unpersist()
        raise
    return SparkMergeRows(spark, plan, result, once, counts)


def _check_strings(spec: MergeSpec, plan: ScanPlan, spark, source) -> None:
    """Conditions and values given as SQL strings: one expression each, no subquery, resolvable against the
    target and source (an empty join: Spark analyzes, nothing runs)."""
    texts = [("merge condition", spec.condition, False)]
    for c in spec.clauses:
        texts.append((f"when_{c.kind}_{c.action} condition", c.condition, False))
        texts += [(f"value of {k}", v, True) for k, v in (c.values or {}).items()]
    strings = [(what, text, select) for what, text, select in texts if isinstance(text, str)]
    if not strings:
        return
    joined = empty_frame(spark, plan.table).alias(spec.target_alias).crossJoin(
        source.limit(0).alias(spec.source_alias))
    for what, text, select in strings:
        check_syntax(text, what)
        check_resolves(joined, text, what, select=select)


def _once_per_target(result, matched_kinds: list[int]):
    """`result` with one matched pair per target row: the first source row (in the source's order) wins.

    DuckDB lets several source rows match one target row and applies one of them; the counts stay the pairs'.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if not matched_kinds:
        return result
    pairs = result.where(F.col("_dl_action").isin(matched_kinds))
    if not pairs.groupBy("rowid").count().where("count > 1").limit(1).collect():
        return result  # the usual case: no window (and no shuffle) needed
    first = F.row_number().over(Window.partitionBy("rowid").orderBy("_dl_sid"))
    return (result.withColumn("_dl_nth", F.when(F.col("rowid").isNull(), 1).otherwise(first))
            .where("_dl_nth = 1").drop("_dl_nth"))
