"""DuckDB's `INTERVAL (expr) HOURS` (an interval of a computed count) as Spark's `(expr) * INTERVAL '1' HOUR`:
sqlglot writes it unchanged, which Spark reads as a call of a function named INTERVAL."""

from __future__ import annotations

from sqlglot import exp


def computed_intervals(tree: exp.Expression) -> exp.Expression:
    """Rewrite every interval whose count is not a literal (in place; returned)."""
    for node in list(tree.find_all(exp.Interval)):
        count, unit = node.this, node.args.get("unit")
        inner = count.this if isinstance(count, exp.Paren) else count
        if unit is None or isinstance(inner, exp.Literal) or (isinstance(inner, exp.Neg) and
                                                              isinstance(inner.this, exp.Literal)):
            continue
        name = unit.name.upper()
        single = name[:-1] if name.endswith("S") else name
        one = exp.Interval(this=exp.Literal.string("1"), unit=exp.var(single))
        node.replace(exp.paren(exp.Mul(this=exp.paren(inner.copy()), expression=one)))
    return tree
