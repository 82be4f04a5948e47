"""Syntax checks of the user's SQL strings with sqlglot, before anything runs; no Spark needed."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from ...errors import InvalidExpressionError

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
