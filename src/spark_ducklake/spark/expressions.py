"""Checking user SQL strings (conditions, assignments) before any data moves: one expression, no subqueries,
only names Spark resolves; anything else is an InvalidExpressionError naming the string."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from ..errors import InvalidExpressionError
from . import types as spark_types

# Anything that reads a relation: catalog tables must stay out of reach of a where= string.
_RELATIONS = (exp.Select, exp.Subquery, exp.Exists, exp.Table, exp.Union, exp.Command)


def check_syntax(text: str, what: str) -> None:
    """InvalidExpressionError if `text` holds several statements, a statement, or a subquery.

    Strings sqlglot cannot parse are left to Spark's parser (`check_resolves`), which has the final word."""
    if not text.strip():
        raise InvalidExpressionError(f"{what} is empty")
    try:
        trees = [t for t in sqlglot.parse(text, read="spark") if t is not None and not isinstance(t, exp.Semicolon)]
    except sqlglot.errors.SqlglotError:
        if ";" in text:  # Spark's expression parser refuses it too; say why plainly
            raise InvalidExpressionError(f"{what} {text!r} is not a single expression") from None
        return
    if len(trees) != 1 or _has_separator(text):
        raise InvalidExpressionError(f"{what} {text!r} is not a single expression (statement separators are "
                                     "not allowed)")
    tree = trees[0]
    if isinstance(tree, _RELATIONS) or tree.find(*_RELATIONS) is not None:
        raise InvalidExpressionError(f"{what} {text!r} holds a subquery or a table reference (not allowed)")
    if not isinstance(tree, exp.Condition | exp.Expression) or isinstance(tree, exp.DDL | exp.DML):
        raise InvalidExpressionError(f"{what} {text!r} is a statement, not an expression")


def _has_separator(text: str) -> bool:
    """Whether a `;` token (not one inside a string literal) is in the text."""
    from sqlglot.tokens import TokenType

    return any(t.token_type == TokenType.SEMICOLON for t in sqlglot.tokenize(text, read="spark"))


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
