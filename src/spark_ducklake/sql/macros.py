"""Scalar macros of the lake in `lake.sql` queries: a call `add_values(1, b := 2)` (or `lake.add_values(...)`,
`schema.add_values(...)`) is replaced by the macro's body with its parameters bound, before Spark sees the query.
The body is DuckDB SQL; sqlglot translates it like any query text, so a macro works where its body does. A table
macro `FROM m(args)` becomes its query as a subquery. CREATE/DROP MACRO: macro_ddl.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlglot
from sqlglot import exp

from ..errors import UnsupportedSqlError
from .sqlglot_dialects import LakeDuckDB
from .views import expand_views

if TYPE_CHECKING:
    from ..catalog.reads.macros import MacroRow
    from .references import QueryContext

_MAX_DEPTH = 32  # macros calling macros: deeper than this is a cycle
_TEXT_TYPES = ("varchar", "string", "text", "char", "bpchar")


def expand_macros(ctx: QueryContext, tree: exp.Expression) -> exp.Expression:
    """`tree` with every call of one of the lake's scalar macros replaced by its body (in place where possible)."""
    calls = [node for node in tree.find_all(exp.Anonymous)]
    if not calls:
        return tree
    rows = ctx.lake.macros(version=ctx.snapshot)
    tables = _macros_of(rows, "table")
    if tables and _expand_tables(tree, tables, ctx):
        expand_views(ctx, tree)  # a table macro's query may read lake views
    macros = _macros_of(rows, "scalar")
    if not macros:
        return tree
    return _expand(tree, macros, ctx, 0)


def _macros_of(rows: list[MacroRow], kind: str) -> dict[str, list[MacroRow]]:
    found: dict[str, list[MacroRow]] = {}
    for row in rows:
        if row.macro_type == kind and row.dialect == "duckdb":
            found.setdefault(row.macro_name.lower(), []).append(row)
    return found


def _expand_tables(tree: exp.Expression, macros: dict[str, list[MacroRow]], ctx: QueryContext) -> bool:
    """Replace each `FROM m(args) [AS alias]` of a table macro by its query as a subquery (in place)."""
    expanded = False
    for _ in range(_MAX_DEPTH):
        found = False
        for node in list(tree.find_all(exp.Table)):
            if not isinstance(node.this, exp.Anonymous):
                continue
            parts = [p.name.lower() for p in (node.args.get("catalog"), node.args.get("db")) if p is not None]
            if parts and parts[0] == ctx.catalog_name.lower():
                parts = parts[1:]
            impls = [m for m in macros.get(node.this.name.lower(), [])
                     if not parts or (len(parts) == 1 and m.schema_name.lower() == parts[0])]
            if not impls:
                continue
            alias = node.args.get("alias") or exp.TableAlias(this=exp.to_identifier(node.this.name))
            node.replace(exp.Subquery(this=_bind(node.this, impls, ctx), alias=alias.copy()))
            found = expanded = True
        if not found:
            return expanded
    raise UnsupportedSqlError(f"table macros call each other more than {_MAX_DEPTH} levels deep (a cycle?)")


def _expand(tree: exp.Expression, macros: dict[str, list[MacroRow]], ctx: QueryContext, depth: int):
    if depth > _MAX_DEPTH:
        raise UnsupportedSqlError(f"macros call each other more than {_MAX_DEPTH} levels deep (a cycle?)")

    def replace(node: exp.Expression) -> exp.Expression:
        call, schema = _call_of(node, ctx)
        if call is None:
            return node
        impls = [m for m in macros.get(call.name.lower(), []) if schema is None or m.schema_name.lower() == schema]
        if not impls:
            return node
        body = _bind(call, impls, ctx)
        return exp.Paren(this=_expand(body, macros, ctx, depth + 1))

    return tree.transform(replace, copy=False)


def _call_of(node: exp.Expression, ctx: QueryContext) -> tuple[exp.Anonymous | None, str | None]:
    """The macro call a node is, and the schema it names (None: any); `lake.f()` / `lake.s.f()` parse as Dots."""
    if isinstance(node, exp.Anonymous):
        return node, None
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Anonymous):
        parts = [p.name.lower() for p in _qualifier(node.this)]
        if parts and parts[0] == ctx.catalog_name.lower():
            parts = parts[1:]
        if len(parts) <= 1:
            return node.expression, parts[0] if parts else None
    return None, None


def _qualifier(node: exp.Expression) -> list[exp.Expression]:
    if isinstance(node, exp.Dot):
        return [*_qualifier(node.this), node.expression]
    if isinstance(node, exp.Column):
        return [p for p in (node.args.get("db"), node.args.get("table"), node.this) if p is not None]
    return [node]


def _bind(call: exp.Anonymous, impls: list[MacroRow], ctx: QueryContext) -> exp.Expression:
    positional, named = [], {}
    for arg in call.expressions:
        named_arg = isinstance(arg, (exp.PropertyEQ, exp.Kwarg))  # `b := 2` (DuckDB), `b => 2`
        if named_arg and isinstance(arg.this, (exp.Column, exp.Var, exp.Identifier)):
            named[arg.this.name.lower()] = arg.expression
        else:
            positional.append(arg)
    for impl in impls:  # overloads: the first whose parameters the call fills
        names = [p.name.lower() for p in impl.parameters]
        required = [p for p in impl.parameters if p.default is None]
        if len(positional) > len(names) or set(named) - set(names):
            continue
        values = dict(zip(names, positional, strict=False))
        values.update(named)
        if any(p.name.lower() not in values for p in required):
            continue
        for p in impl.parameters:
            if p.name.lower() not in values:
                values[p.name.lower()] = _default(p)
        return _substitute(_parse_body(impl), values, impl)
    wanted = " or ".join(f"{m.macro_name}({', '.join(p.name for p in m.parameters)})" for m in impls)
    raise UnsupportedSqlError(f"macro call {call.sql(dialect=ctx.dialect)!r} does not match {wanted}")


def _parse_body(impl: MacroRow) -> exp.Expr:
    try:
        return sqlglot.parse_one(impl.sql, read=LakeDuckDB)
    except sqlglot.errors.SqlglotError:
        raise UnsupportedSqlError(f"macro {impl.schema_name}.{impl.macro_name}: cannot translate its body "
                                  f"{impl.sql!r}") from None


def _default(param) -> exp.Expression:
    """The default as a literal of its stored type (the reference keeps the value, not SQL: 'hello', '10')."""
    kind = (param.default_type or "").lower()
    if kind in _TEXT_TYPES:
        return exp.Literal.string(param.default)
    if kind.startswith(("int", "uint", "float", "decimal")):
        return exp.Literal.number(param.default)
    if kind == "boolean":
        return exp.Boolean(this=param.default.lower() == "true")
    return exp.cast(exp.Literal.string(param.default), _duck_type(kind), dialect="duckdb")


def _substitute(body: exp.Expr, values: dict[str, exp.Expression], impl: MacroRow) -> exp.Expression:
    types = {p.name.lower(): p.type for p in impl.parameters}

    def bind(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and not node.table and node.name.lower() in values:
            value = exp.Paren(this=values[node.name.lower()].copy())
            declared = types.get(node.name.lower())
            if declared in ("list", "struct", "map"):  # stored without their element types: nothing to cast to
                return value
            return exp.cast(value, _duck_type(declared)) if declared else value
        return node

    return body.transform(bind)


def _duck_type(name: str) -> exp.DataType:
    # the reference stores declared types in DuckLake's names (int32, varchar, ...): DuckDB's own spelling
    aliases = {"int8": "TINYINT", "int16": "SMALLINT", "int32": "INTEGER", "int64": "BIGINT", "float32": "FLOAT",
               "float64": "DOUBLE", "uint8": "UTINYINT", "uint16": "USMALLINT", "uint32": "UINTEGER",
               "uint64": "UBIGINT"}
    return exp.DataType.build(aliases.get(name.lower(), name), dialect="duckdb")
