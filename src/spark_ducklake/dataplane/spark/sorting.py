"""Sorted tables on Spark: a catalog sort key (DuckDB SQL) as a Spark sort Column."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...catalog.changes.sorting import SortKey


def sort_column(key: SortKey):
    """The key as a Spark sort Column (expression translated from DuckDB's SQL by sqlglot)."""
    import sqlglot
    from pyspark.sql import functions as F

    expr = F.expr(sqlglot.transpile(key.expression, read="duckdb", write="spark")[0])
    first = key.null_order == "NULLS_FIRST"
    if key.direction == "DESC":
        return expr.desc_nulls_first() if first else expr.desc_nulls_last()
    return expr.asc_nulls_first() if first else expr.asc_nulls_last()
