"""DuckDB's `range(...)` and `generate_series(...)` table functions as Spark's `range`, with DuckDB's column names.

sqlglot turns both into `EXPLODE(SEQUENCE(...))`, which Spark cannot alias as `t(i)` and which names its column
`col`; a subquery over Spark's `range(start, end, step)` keeps DuckDB's names (`range`, `generate_series` or the
alias's column) and its BIGINT type."""

from __future__ import annotations

from sqlglot import exp


def series_as_range(tree: exp.Expression) -> exp.Expression:
    """Replace every integer `range` / `generate_series` table function of the tree (in place; returned)."""
    for node in list(tree.find_all(exp.Table)):
        series = node.this
        if not isinstance(series, exp.GenerateSeries) or series.find(exp.Interval) is not None:
            continue
        start, end = series.args.get("start"), series.args.get("end")
        step = series.args.get("step") or exp.Literal.number(1)
        if end is None:
            continue
        exclusive = bool(series.args.get("is_end_exclusive"))
        alias = node.args.get("alias")
        columns = alias.args.get("columns") if alias is not None else None
        column = columns[0].name if columns else ("range" if exclusive else "generate_series")
        one = exp.Literal.number(1)
        stop = end.copy() if exclusive else exp.paren(  # generate_series includes its end
            exp.Sub(this=end.copy(), expression=one) if isinstance(step, exp.Neg) else
            exp.Add(this=end.copy(), expression=one))
        call = exp.Anonymous(this="range", expressions=[(start or exp.Literal.number(0)).copy(), stop, step.copy()])
        select = exp.select(exp.alias_(exp.column("id"), column, quoted=True)).from_(exp.Table(this=call))
        name = alias.this if alias is not None and alias.this else exp.to_identifier(column, quoted=True)
        node.replace(exp.Subquery(this=select, alias=exp.TableAlias(this=name)))
    return tree
