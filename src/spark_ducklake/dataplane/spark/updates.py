"""UPDATE on Spark: the rows a condition matches and their new versions, found on the executors and cached.

An update is a delete of the old row versions plus an insert of the new ones; `update_rows` gives both halves
(`SparkUpdate`), the caller stages them (`stage_deletes`, then writes `new_versions`) and leaves the `with`
block, which releases the cache. `arrow/local_dml.py`'s `LocalUpdate` is the same on pyarrow.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...spec.model import TableInfo
from ...spec.names import spark_name
from ..arrow.delete_plan import DeletePlan
from ..arrow.local_scan import ROWID
from ..arrow.scan_columns import FILE, POS
from . import deletes as spark_deletes
from . import types
from .conform import cast_by_name, value_types
from .expressions import check_expression
from .scan_plan import ScanPlan
from .session import cached


class SparkUpdate:
    """The matched rows of an UPDATE as one cached frame: the table's columns with the new values, `rowid` and
    the old versions' positions (`_dl_file`, `_dl_pos`). Used as a context manager: the cache goes on exit."""

    def __init__(self, spark: Any, plan: ScanPlan, rows: Any) -> None:
        self.spark = spark
        self.plan = plan
        self.rows = rows  # cached: the deletes and the new versions read it once each

    def __enter__(self) -> SparkUpdate:
        return self

    def __exit__(self, *exc: object) -> None:
        self.rows.unpersist()

    def stage_deletes(self, inline_limit: int) -> DeletePlan:
        """The deletion of the old versions staged (delete files written, inlined deletes, ended files)."""
        return spark_deletes.stage_deletes(self.spark, self.plan, self.rows.select(FILE, POS), inline_limit)

    @property
    def new_versions(self) -> Any:
        """The new versions: a Spark DataFrame of the table's columns (its Spark types) and `rowid`."""
        return self.rows.drop(FILE, POS)


def check_update(spark: Any, table: TableInfo, assignments: Mapping[str, Any], condition: Any) -> None:
    """The condition and the assignments' SQL strings checked against the table's columns (nothing runs)."""
    check_expression(spark, table, condition, "condition")
    for name, value in assignments.items():
        check_expression(spark, table, value, f"value of {name}", select=True)


def update_rows(spark: Any, plan: ScanPlan, assignments: Mapping[str, Any], condition: Any) -> SparkUpdate:
    """The rows `condition` matches (all without one) with `assignments` (column name, any case -> SQL string or
    Column) applied and cast to the columns' types, struct fields matched by name; cached, nothing computed yet."""
    from pyspark.sql import functions as F

    columns = {c.name.lower(): c for c in plan.table.columns}
    frame = plan.to_dataframe(spark, positions=True, row_ids=True)  # first: F.expr needs a session
    values = {columns[k.lower()].name: (F.expr(v) if isinstance(v, str) else v) for k, v in assignments.items()}
    nested = [name for name in values if columns[name.lower()].is_nested]
    for name, got in zip(nested, value_types(frame, [values[n] for n in nested]), strict=True):
        values[name] = cast_by_name(values[name], got, columns[name.lower()])  # struct fields by name
    matches = frame if condition is None else frame.where(condition)
    rows = cached(spark, matches.select(
        *[values.get(c.name, F.col(spark_name(c.name))).cast(types.to_spark_type(c)).alias(c.name)
          for c in plan.table.columns],
        ROWID, FILE, POS,
    ))
    return SparkUpdate(spark, plan, rows)
