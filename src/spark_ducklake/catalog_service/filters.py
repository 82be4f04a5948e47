"""The filters Spark pushes (`{"column", "op", "values"}`) as Spark SQL conditions: a scan's file pruning (where
a filter left out only keeps more files) and an overwrite's replaced rows (where none may be left out)."""

from __future__ import annotations

from typing import Any

from .fields import UnsupportedRequestError


def overwrite_predicate(filters: list[dict[str, Any]]) -> str:
    """The Spark SQL condition of an overwrite's filters (the rows replaced); unlike pruning, a filter that
    cannot be written exactly is refused, since leaving it out would replace more rows."""
    parts = [_predicate(f) for f in filters]
    written = [part for part in parts if part is not None]
    if not parts or len(written) < len(parts):
        raise UnsupportedRequestError("an overwrite condition the lake catalog cannot pass on exactly (comparisons, "
                                   "IN, IS [NOT] NULL of top-level columns with numbers, strings or booleans)")
    return " AND ".join(written)


_OPS = {"=", "<", "<=", ">", ">=", "in", "is_null", "not_null"}


def pruning_predicate(filters: list[dict[str, Any]]) -> str | None:
    """The Spark SQL conjunction of the filters Spark pushed (`{"column", "op", "values"}`), for the catalog's file
    pruning; a filter that cannot be written safely is left out (pruning then keeps more files, never fewer)."""
    parts = [part for part in (_predicate(f) for f in filters) if part is not None]
    return " AND ".join(parts) or None


def _predicate(condition: dict[str, Any]) -> str | None:
    column, op, values = condition.get("column"), condition.get("op"), condition.get("values") or []
    if not isinstance(column, str) or "`" in column or op not in _OPS:
        return None
    name = f"`{column}`"
    if op == "is_null":
        return f"{name} IS NULL"
    if op == "not_null":
        return f"{name} IS NOT NULL"
    literals = [_literal(v) for v in values]
    written = [literal for literal in literals if literal is not None]
    if not literals or len(written) < len(literals):
        return None
    if op == "in":
        return f"{name} IN ({', '.join(written)})"
    return f"{name} {op} {written[0]}" if len(written) == 1 else None


def _literal(value: Any) -> str | None:
    """A Spark SQL literal for a JSON value; None for what is not written here (strings with quotes or
    backslashes, whose escaping differs between dialects; nested values)."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return repr(value) if value == value and abs(value) != float("inf") else None
    if isinstance(value, str) and "'" not in value and "\\" not in value:
        return f"'{value}'"
    return None
