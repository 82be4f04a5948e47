"""DuckDB's `preserve_insertion_order` in `lake.sql(dialect="duckdb")`: a query without ORDER BY returns a table's
rows in the order they sit in the lake (data files by id, each file's rows by position, then inlined rows).

DuckDB keeps that order by default; Spark does not (it plans a scan's files by size and runs them in parallel).
So a DuckDB-dialect SELECT whose top level reads one lake table and nothing reorders (no ORDER BY, GROUP BY,
aggregate, window, DISTINCT, join or set operation) is ordered by the scan's `file_index` and `file_row_number`
virtual columns. The cost: the read carries the row positions and file numbers (a broadcast lookup of the file
list) and Spark sorts the result, which for a large table means a full sort (a LIMIT becomes a top-N over every
file). `SET preserve_insertion_order = false` turns it off for the handle, as in DuckDB; RESET turns it back on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from ..errors import InvalidArgumentError
from .references import QueryContext, TableRef

if TYPE_CHECKING:
    from ..lake import DuckLake

SETTING = "preserve_insertion_order"
ORDER_COLUMNS = ("file_index", "file_row_number")
_ATTR = "_sql_preserve_insertion_order"  # per handle, like a DuckDB connection's setting
_REORDERING = ("order", "group", "distinct", "having", "qualify", "joins", "laterals", "pivots")


def set_preserve_insertion_order(lake: DuckLake, value: str | None) -> None:
    """`SET preserve_insertion_order = true|false` (None: RESET, back to DuckDB's default, true)."""
    if value is None:
        setattr(lake, _ATTR, True)
        return
    text = value.strip().strip("'\"").lower()
    if text not in ("true", "false", "1", "0", "on", "off"):
        raise InvalidArgumentError(f"SET {SETTING}: expected true or false, got {value!r}")
    setattr(lake, _ATTR, text in ("true", "1", "on"))


def preserves_insertion_order(lake: DuckLake) -> bool:
    """Whether this handle's DuckDB-dialect queries keep insertion order (DuckDB's default: true)."""
    return getattr(lake, _ATTR, True)


def ordered_ref(ctx: QueryContext, tree: exp.Expression, refs: list[TableRef]) -> TableRef | None:
    """The lake table read a DuckDB-dialect query returns in insertion order, or None (nothing to keep)."""
    if ctx.dialect != "duckdb" or not isinstance(tree, exp.Select) or not preserves_insertion_order(ctx.lake):
        return None
    if any(tree.args.get(arg) for arg in _REORDERING):
        return None
    if any(e.find(exp.AggFunc, exp.Window, exp.Explode, exp.Unnest) for e in tree.expressions):
        return None
    from_ = tree.args.get("from_") or tree.args.get("from")
    if from_ is None:
        return None
    ref = next((r for r in refs if r.node is from_.this), None)
    if ref is None or ref.columns & set(ORDER_COLUMNS):  # a real column of that name hides the virtual one
        return None
    return ref


def order_by_position(tree: exp.Select, qualifier: str) -> None:
    """ORDER BY the read's file number, then row position (the virtual columns it was read with)."""
    tree.set("order", exp.Order(expressions=[
        exp.Ordered(this=exp.column(name, table=qualifier, quoted=True), nulls_first=False)
        for name in ORDER_COLUMNS]))
