"""MERGE INTO a lake table, with delta-spark's builder (snake_case): matched / not matched / not matched by source.

The source is a Spark DataFrame, a pyarrow Table or a pandas DataFrame. A pyarrow/pandas source merged into a table
whose files are, with it, at most the small-data threshold is merged in-process with pyarrow
(operations/merge_in_process.py, same rules and results); otherwise the join runs on Spark. Each joined row gets the
action of the first clause (in order) whose condition holds. Target rows to update or delete are staged as deletes;
updated rows keep their row ids; everything commits as one snapshot. As in DuckDB, a source row may match several
target rows (each is changed), and several source rows may match one target row: it is changed once, by the first of
them in the source's order, while the result's counts are of matched pairs (DuckDB's numbers).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ..dataplane.arrow.conform import default_of
from ..dataplane.arrow.scan_columns import FILE, POS
from ..dataplane.arrow.sql_syntax import check_syntax
from ..dataplane.arrow.storage import delete_paths
from ..dataplane.engine import engine_for
from ..dataplane.spark import deletes as spark_deletes
from ..dataplane.spark import types
from ..dataplane.spark.conform import cast_by_name, value_types
from ..dataplane.spark.expressions import check_resolves, empty_frame
from ..dataplane.spark.session import cached
from ..errors import DuckLakeError, SchemaMismatchError
from ..spec.arguments import check_assignments, check_condition, check_data
from ..spec.names import spark_name
from .delete_update import delete_op, stage_rows
from .error_causes import translate_methods
from .merge_in_process import merge_in_process
from .staging import Staged
from .write import frame_of_arrow, is_pandas

if TYPE_CHECKING:
    from .context import LakeContext


@dataclass
class _Clause:
    kind: str  # matched | not_matched | not_matched_by_source
    action: str  # update | delete | insert
    condition: object = None
    values: dict | None = None  # None with update/insert = "all columns from the source"


@dataclass
class MergeResult:
    """Rows changed by a MERGE."""

    inserted: int = 0
    updated: int = 0
    deleted: int = 0


@translate_methods  # execute() runs the merge: its errors reach the user from here
@dataclass
class MergeBuilder:
    """Collects clauses; `execute()` runs the merge."""

    ctx: LakeContext
    table: str | tuple[str, str]  # a name, or (schema, table) as a transaction resolves it
    source: Any  # a Spark DataFrame, a pyarrow Table or a pandas DataFrame (spec/arguments.py check_data)
    condition: object
    target_alias: str = "target"
    source_alias: str = "source"
    clauses: list[_Clause] = field(default_factory=list)
    run: Callable[[MergeBuilder], MergeResult] | None = None  # stages it in a transaction (Transaction.stage_merge)

    def __post_init__(self):
        check_data(self.source, "the MERGE source")
        check_condition(self.condition, "the merge condition", optional=False)

    def _add(self, kind: str, action: str, condition=None, values=None) -> MergeBuilder:
        check_condition(condition, f"the when_{kind}_{action} condition")
        if values is not None:
            check_assignments(values, f"the when_{kind}_{action} values")
            values = dict(values)  # the clause keeps its own copy
        self.clauses.append(_Clause(kind, action, condition, values))
        return self

    def when_matched_update(self, set: dict, condition=None) -> MergeBuilder:  # noqa: A002 - delta's name
        """Update matched target rows: {column: SQL string or Column}."""
        return self._add("matched", "update", condition, set)

    def when_matched_update_all(self, condition=None) -> MergeBuilder:
        """Update every column of matched target rows from the source's same-named columns."""
        return self._add("matched", "update", condition)

    def when_matched_delete(self, condition=None) -> MergeBuilder:
        """Delete matched target rows."""
        return self._add("matched", "delete", condition)

    def when_not_matched_insert(self, values: dict, condition=None) -> MergeBuilder:
        """Insert source rows without a match: {column: SQL string or Column}."""
        return self._add("not_matched", "insert", condition, values)

    def when_not_matched_insert_all(self, condition=None) -> MergeBuilder:
        """Insert source rows without a match, every column from the source's same-named columns."""
        return self._add("not_matched", "insert", condition)

    def when_not_matched_by_source_update(self, set: dict, condition=None) -> MergeBuilder:  # noqa: A002
        """Update target rows no source row matches."""
        return self._add("not_matched_by_source", "update", condition, set)

    def when_not_matched_by_source_delete(self, condition=None) -> MergeBuilder:
        """Delete target rows no source row matches."""
        return self._add("not_matched_by_source", "delete", condition)

    def execute(self) -> MergeResult:
        """Run the merge as one snapshot; returns the counts."""
        if not self.clauses:
            raise DuckLakeError("merge needs at least one when_... clause")
        return self.run(self)  # type: ignore[misc]  # both makers (table.py, Transaction.merge) pass run


def _expr(value):
    from pyspark.sql import functions as F

    return F.expr(value) if isinstance(value, str) else value


def stage_merge(m: MergeBuilder, plan) -> Staged[MergeResult]:
    """Join and classify on Spark, stage files; returns the operations, staged files and counts, nothing
    committed."""
    from pyspark.sql import functions as F

    cols = plan.table.columns
    names = {c.name.lower(): c.name for c in cols}
    t, s = m.target_alias, m.source_alias
    for clause in m.clauses:
        unknown = [k for k in (clause.values or {}) if k.lower() not in names]
        if unknown:
            raise SchemaMismatchError(f"columns not in table {plan.table.qualified_name}: {', '.join(unknown)}")
    if _is_arrow(m.source):
        local = _merge_in_process(m, plan)
        if local is not None:
            return local

        m.source = frame_of_arrow(m.ctx, _as_arrow(m.source))  # Spark merges it from here on
    spark = m.ctx.spark  # checked once per operation (lake.spark re-verifies the session's confs on each use)
    _check_strings(m, plan, spark)
    target = (plan.to_dataframe(spark, positions=True, row_ids=True)
              .withColumn("_dl_t", F.lit(True)).alias(t))
    source = m.source.withColumn("_dl_s", F.lit(True)).withColumn("_dl_sid", F.monotonically_increasing_id())
    joined = target.join(source.alias(s), _expr(m.condition), "full_outer")
    matched = F.col(f"{t}._dl_t").isNotNull() & F.col("_dl_s").isNotNull()
    kinds = {"matched": matched, "not_matched": F.col(f"{t}._dl_t").isNull(),
             "not_matched_by_source": F.col("_dl_s").isNull()}
    action = None
    for index, clause in enumerate(m.clauses):
        test = kinds[clause.kind] if clause.condition is None else kinds[clause.kind] & _expr(clause.condition)
        action = (F.when(test, F.lit(index)) if action is None else action.when(test, F.lit(index)))
    joined = joined.withColumn("_dl_action", action).where(F.col("_dl_action").isNotNull())

    in_source = {n.lower() for n in m.source.columns}
    by_name = {c.name: c for c in cols}

    def value_of(clause: _Clause, col) -> object:
        given = {k.lower(): v for k, v in (clause.values or {}).items()}
        if col.name.lower() in given:
            return _expr(given[col.name.lower()])
        if clause.values is None and col.name.lower() in in_source:  # *_all: the source's same-named column
            return F.col(f"{s}.{spark_name(col.name)}")
        # a column the clause leaves out: an update keeps the row's value, an insert stores the default (as
        # a plain write and DuckDB's MERGE do)
        return F.col(f"{t}.{spark_name(col.name)}") if clause.action == "update" else F.lit(default_of(col))

    values = {(index, col.name): value_of(clause, col) for index, clause in enumerate(m.clauses)
              if clause.action in ("update", "insert") for col in cols}
    nested = [key for key in values if by_name[key[1]].is_nested]
    for key, got in zip(nested, value_types(joined, [values[k] for k in nested]), strict=True):
        values[key] = cast_by_name(values[key], got, by_name[key[1]])  # struct fields by name, as a write
    outputs = []
    for col in cols:
        out = None
        for index, clause in enumerate(m.clauses):
            if clause.action in ("update", "insert"):
                expr = values[(index, col.name)]
                out = (F.when(F.col("_dl_action") == index, expr) if out is None
                       else out.when(F.col("_dl_action") == index, expr))
        outputs.append((out if out is not None else F.lit(None)).cast(types.to_spark_type(col)).alias(col.name))
    kind_of = {i: c.action for i, c in enumerate(m.clauses)}
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
        result = _once_per_target(result, matched_kinds=[i for i, c in enumerate(m.clauses) if c.kind == "matched"])
        outcome = MergeResult(inserted=counts.get("insert", 0), updated=counts.get("update", 0),
                              deleted=counts.get("delete", 0))
        ops: list[Any]
        written: list[str]
        ops, written = [], []
        if not any(counts.values()):
            return Staged(ops, written, outcome)
        try:
            touched = result.where(F.col("_dl_kind") != "insert").select(FILE, POS)
            staged = spark_deletes.stage_deletes(spark, plan, touched, m.ctx.inlining_limit(plan.table))
            if not staged.empty:
                ops.append(delete_op(plan, staged))
                written += [d.path for d in staged.delete_files]
            data_cols = [spark_name(c.name) for c in cols]
            new_rows = counts.get("update", 0) + counts.get("insert", 0)  # the limit holds for the statement
            for kind, keep_ids in (("update", True), ("insert", False)):
                if counts.get(kind, 0):
                    rows = result.where(F.col("_dl_kind") == kind).select(*data_cols, "rowid")
                    inserted = stage_rows(m.ctx, plan, rows, new_rows, keep_ids=keep_ids)
                    ops += inserted.ops
                    written += inserted.files
        except BaseException:
            delete_paths(written)
            raise
        return Staged(ops, written, outcome)
    finally:
        result.unpersist()


def _is_arrow(source) -> bool:
    return isinstance(source, pa.Table) or is_pandas(source)


def _as_arrow(source) -> pa.Table:
    return source if isinstance(source, pa.Table) else pa.Table.from_pandas(source, preserve_index=False)


def _merge_in_process(m: MergeBuilder, plan) -> Staged[MergeResult] | None:
    """The MERGE of a pyarrow/pandas source staged with pyarrow on the driver (operations/merge_in_process.py) when
    the target's files and the source are at most the small-data threshold; None: Spark merges it."""
    if any(f.encryption_key for f in plan.files):  # before converting the source: Spark merges it as it is
        return None
    source = _as_arrow(m.source)
    if not engine_for(m.ctx, plan.files, source.nbytes).in_process:
        return None
    staged = merge_in_process(m, plan, source)
    if staged is None:
        return None
    counts = staged.result
    outcome = MergeResult(inserted=counts["insert"], updated=counts["update"], deleted=counts["delete"])
    return Staged(staged.ops, staged.files, outcome)


def _check_strings(m: MergeBuilder, plan, spark) -> None:
    """Conditions and values given as SQL strings: one expression each, no subquery, resolvable against the
    target and source (an empty join: Spark analyzes, nothing runs)."""
    texts = [("merge condition", m.condition, False)]
    for c in m.clauses:
        texts.append((f"when_{c.kind}_{c.action} condition", c.condition, False))
        texts += [(f"value of {k}", v, True) for k, v in (c.values or {}).items()]
    strings = [(what, text, select) for what, text, select in texts if isinstance(text, str)]
    if not strings:
        return
    joined = empty_frame(spark, plan.table).alias(m.target_alias).crossJoin(
        m.source.limit(0).alias(m.source_alias))
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
