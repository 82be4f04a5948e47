"""`lake.read_arrow` / `lake.to_pandas`: a table (at a snapshot, filtered, projected) read without Spark."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

import pyarrow as pa
from sqlglot import exp

from ..dataplane.arrow.local_expressions import NotLocal, parse
from ..dataplane.arrow.sql_syntax import check_syntax
from ..dataplane.engine import engine_for
from ..errors import InvalidArgumentError, InvalidExpressionError, SchemaMismatchError

if TYPE_CHECKING:
    from .context import LakeContext


def read_arrow(ctx: LakeContext, table: str | tuple[str, str], *, columns: list[str] | None = None,
               where: str | None = None, version: int | None = None,
               timestamp: datetime | str | None = None) -> pa.Table:
    """The table's rows as a pyarrow Table, read in-process: files pruned by `where`'s min/max stats first, then
    `where` applied to the rows; `columns` (names, any case) picks and orders the columns."""
    if columns is not None and (isinstance(columns, str) or not all(isinstance(c, str) for c in columns)):
        raise InvalidArgumentError(f"columns must be a list of column names, got {columns!r}")
    if where is not None:
        if not isinstance(where, str):
            raise InvalidArgumentError("where must be a SQL string here (Spark Columns need lake.read)")
        check_syntax(where, "where")
    plan = ctx.plan_scan(table, version=version, timestamp=timestamp, where=where)
    by_name = {c.name.lower(): c for c in plan.table.columns}
    picked = plan.table.columns
    if columns is not None:
        unknown = [c for c in columns if c.lower() not in by_name]
        if unknown:
            raise SchemaMismatchError(f"columns not in table {plan.table.qualified_name}: {', '.join(unknown)}")
        picked = [by_name[c.lower()] for c in columns]
    needed = {c.column_id for c in picked}
    if where is not None:
        try:
            tree = parse(where)
        except NotLocal as exc:
            raise InvalidExpressionError(f"where {where!r}: {exc}") from None
        names = {col.name.lower() for col in tree.find_all(exp.Column)}
        missing = sorted(names - set(by_name))
        if missing:
            raise InvalidExpressionError(f"where {where!r}: no column {', '.join(missing)} in "
                                         f"{plan.table.qualified_name}")
        needed |= {by_name[n].column_id for n in names}
    # Data files only Spark decrypts go to Spark; whatever their size, the rest is read with pyarrow.
    engine = engine_for(ctx, plan.files, any_size=True)
    try:
        rows = engine.read_rows(plan, [c for c in plan.table.columns if c.column_id in needed], where)
    except NotLocal as exc:
        raise InvalidExpressionError(f"where {where!r} cannot be evaluated without Spark ({exc}); use "
                                     "lake.read() for full Spark SQL") from None
    return rows.select([c.name for c in picked])
