"""Checking user SQL strings (conditions, assignments) before any data moves: one expression, no subqueries,
only names Spark resolves; anything else is an InvalidExpressionError naming the string."""

from __future__ import annotations

from ...errors import InvalidExpressionError
from ..arrow.sql_syntax import check_syntax
from . import types as spark_types


def check_resolves(frame, text: str, what: str, *, select: bool = False) -> None:
    """Spark's parser and analyzer on `text` over the (empty) `frame`: InvalidExpressionError naming the cause."""
    from pyspark.errors import AnalysisException, ParseException
    from pyspark.sql import functions as F

    try:
        checked = frame.select(F.expr(text)) if select else frame.where(text)
        checked.schema  # noqa: B018 - forces analysis on Spark Connect too
    except (ParseException, AnalysisException) as exc:
        cause = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise InvalidExpressionError(f"{what} {text!r}: {cause}") from None


def check_expression(spark, table, text, what: str, *, select: bool = False) -> None:
    """Both checks for a string over the table's columns (Columns are the caller's own code: not checked)."""
    if isinstance(text, str):
        check_syntax(text, what)
        check_resolves(empty_frame(spark, table), text, what, select=select)


def empty_frame(spark, table):
    """No rows, the table's columns: for Spark to analyze user expressions against without reading files."""
    return spark.createDataFrame([], spark_types.to_spark_schema(table.columns))
