"""A planned scan turned into a DataFrame on demand: `ScanPlan` is the plain `arrow/planned_scan.py` data plus
`to_dataframe`, so the pyarrow readers and Spark take the same plan."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from ...spec.model import Column
from ...spec.names import spark_name
from ..arrow.planned_scan import PlannedScan
from ..arrow.scan_columns import ScanColumns
from . import scan
from .expressions import check_expression


@dataclass
class ScanPlan(PlannedScan):
    """Files (after pruning), inlined rows and deletes of one table at one snapshot, readable by Spark."""

    def to_dataframe(self, spark, *, row_ids: bool = False, positions: bool = False,
                     virtual: tuple[str, ...] = ()):
        """The Spark DataFrame for this plan (Spark's native Parquet scan underneath); `virtual` appends DuckDB's
        virtual columns (the plan made with inlined_sources=True)."""
        return scan.scan_table(spark, self.table, self.files, snapshot_id=self.snapshot_id, inlined=self.inlined,  # type: ignore[arg-type]
                               inlined_deletes=self.inlined_deletes, names_stable=self.names_stable,
                               extra=ScanColumns(row_ids=row_ids, positions=positions, virtual=virtual))


def rows_as_arrow(spark: Any, plan: ScanPlan, columns: list[Column], where: str | None) -> pa.Table:
    """The plan's rows of `columns` where the SQL condition `where` holds, read by Spark, as Arrow (the types
    `lake.read(...).toArrow()` gives)."""
    from pyspark.sql import functions as F

    frame = plan.to_dataframe(spark)
    if where:
        check_expression(spark, plan.table, where, "where")
        frame = frame.where(where)
    return frame.select(*[F.col(spark_name(c.name)) for c in columns]).toArrow()
