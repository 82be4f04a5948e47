"""Column DEFAULT values in `lake.sql`: `CREATE TABLE t(i INTEGER DEFAULT 42)`, `INSERT INTO t DEFAULT VALUES`
and `VALUES (DEFAULT, 1)`. A literal default is stored as the reference stores it (ducklake_column.initial_default
and default_value, default_value_type 'literal'); rows inserted without the column read it, as in DuckDB."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from ..dataplane.spark.types import to_spark_type
from ..errors import UnsupportedSqlError
from ..operations.schema_change import default_text
from .duck_types import cast_default, set_types
from .references import QueryContext, evaluate

if TYPE_CHECKING:
    from ..spec.model import Column, TableInfo

NON_LITERAL = ("We cannot add a column with a non-literal default value. Add the column and then explicitly set the "
               "default for new values using \"ALTER ... SET DEFAULT\"")


def is_literal(value: exp.Expression) -> bool:
    """A constant the reference stores as a 'literal' default (42, -1.5, 'text', true, NULL, '1 day'::INTERVAL)."""
    if isinstance(value, exp.Paren):
        return is_literal(value.this)
    if isinstance(value, exp.Cast):
        return is_literal(value.this)
    if isinstance(value, exp.Neg):
        return isinstance(value.this, exp.Literal) and not value.this.is_string
    return isinstance(value, (exp.Literal, exp.Boolean, exp.Null))


def literal_default(ctx: QueryContext, value: exp.Expression, column: str):
    """The value of a literal DEFAULT; an expression (now(), random()) is refused, naming the column."""
    if not is_literal(value):
        raise UnsupportedSqlError(f"column {column!r}: DEFAULT {value.sql(dialect=ctx.dialect)} is an expression; "
                                  "lake.sql stores literal defaults only (42, 'text', true)")
    while isinstance(value, (exp.Paren, exp.Cast)):
        value = value.this
    return None if isinstance(value, exp.Null) else evaluate(ctx, value)


def split_defaults(ctx: QueryContext, columns: list[exp.Expression]) -> tuple[list[exp.Expression], dict]:
    """CREATE TABLE's column definitions without their DEFAULT constraints, and {column name: literal value}."""
    out, defaults = [], {}
    for col in columns:
        constraints = getattr(col, "constraints", None) or []
        kept = [c for c in constraints if not isinstance(c.kind, exp.DefaultColumnConstraint)]
        if len(kept) == len(constraints):
            out.append(col)
            continue
        default = next(c.kind for c in constraints if isinstance(c.kind, exp.DefaultColumnConstraint))
        defaults[col.name] = literal_default(ctx, default.this, col.name)
        if ctx.dialect == "duckdb":  # DEFAULT 1 of a BOOLEAN is true, as DuckDB casts it (sql/duck_types.py)
            defaults[col.name] = cast_default(defaults[col.name], col.args.get("kind"))
        copy = col.copy()
        copy.set("constraints", [c.copy() for c in kept])
        out.append(copy)
    return out, defaults


def create_table(ctx: QueryContext, tx, key: tuple[str, str], ddl: str, defaults: dict,
                 types: dict[str, str] | None = None) -> None:
    """CREATE TABLE whose columns have defaults or DuckLake types Spark lacks (`types`, sql/duck_types.py):
    created and given them in one snapshot (or in `tx`)."""
    if tx is not None:
        _create(tx, key, ddl, defaults, types or {})
        return
    with ctx.lake.transaction() as own:
        _create(own, key, ddl, defaults, types or {})


def _create(tx, key: tuple[str, str], ddl: str, defaults: dict, types: dict[str, str]) -> None:
    tx.create_table(key, ddl)
    set_types(tx.table_info(key).columns, types)
    wanted = {name.lower(): value for name, value in defaults.items()}
    for col in tx.table_info(key).columns:
        if col.name.lower() in wanted and wanted[col.name.lower()] is not None:
            col.initial_default = col.default_value = default_text(col.type, wanted[col.name.lower()])


def fill_values(info: TableInfo, source: exp.Expression | None, names: list[str] | None,
                default_values: bool) -> exp.Expression | None:
    """`DEFAULT VALUES` as one row of defaults, and each `DEFAULT` of a VALUES row as its column's default."""
    targets = _targets(info, names)
    if default_values:
        return exp.Values(expressions=[exp.Tuple(expressions=[_default_node(c) for c in targets])])
    if not isinstance(source, exp.Values):
        return source
    for row in source.expressions:
        items = row.expressions if isinstance(row, exp.Tuple) else [row]
        for position, item in enumerate(items):
            if is_default(item):
                if position >= len(targets):
                    raise UnsupportedSqlError(f"DEFAULT in position {position + 1}: the table has "
                                              f"{len(targets)} column(s)")
                item.replace(_default_node(targets[position]))
    return source


def has_defaults(source: exp.Expression | None) -> bool:
    """Whether a VALUES list holds the DEFAULT keyword."""
    return isinstance(source, exp.Values) and any(is_default(v) for v in source.find_all(exp.Var, exp.Column))


def is_default(node: exp.Expression) -> bool:
    """Whether a value is the DEFAULT keyword."""
    return isinstance(node, (exp.Var, exp.Column)) and not getattr(node, "table", "") and \
        node.name.upper() == "DEFAULT"


def _targets(info: TableInfo, names: list[str] | None) -> list[Column]:
    by_name = {c.name.lower(): c for c in info.columns}
    if names is None:
        return list(info.columns)
    return [by_name[n.lower()] for n in names if n.lower() in by_name]


def _default_node(col: Column) -> exp.Expression:
    """The column's default as a literal cast to the column's type (Spark's VALUES rows must agree), or NULL."""
    if col.default_value in (None, "NULL") or col.is_nested:
        return exp.Null()
    target = exp.DataType.build(to_spark_type(col).simpleString(), dialect="spark")
    return exp.Cast(this=exp.Literal.string(col.default_value), to=target)
