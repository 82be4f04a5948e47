"""DuckDB value literals Spark lacks, rewritten before sqlglot writes Spark SQL: `MAP {'k': v, ...}` (sqlglot
keeps it as `MAP STRUCT(...)`, which Spark cannot parse) becomes Spark's `MAP('k', v, ...)`; casts to TIMESTAMP_NS
(Spark has no nanosecond timestamps) become casts to TIMESTAMP_NTZ, whose microseconds are what a timestamp_ns
column reads as (docs/types.md; Spark drops the further digits); VALUES typed as their columns (a VARIANT column's
values made variants)."""

from __future__ import annotations

from sqlglot import exp

from ..errors import UnsupportedSqlError


def duckdb_literals(tree: exp.Expression) -> exp.Expression:
    """Rewrite the literals of `tree` (in place; returned)."""
    for dtype in list(tree.find_all(exp.DataType)):
        if dtype.this == exp.DataType.Type.TIMESTAMP_NS:  # `TIMESTAMP_NS '...'`, `::TIMESTAMP_NS`
            dtype.replace(exp.DataType.build("TIMESTAMP_NTZ", dialect="spark"))
    for node in list(tree.find_all(exp.ToMap)):
        struct = node.this
        if not isinstance(struct, exp.Struct):
            continue
        args: list[exp.Expression] = []
        for entry in struct.expressions:
            if not isinstance(entry, (exp.PropertyEQ, exp.Slice)):
                raise UnsupportedSqlError(f"MAP literal entry {entry.sql(dialect='duckdb')!r} is not `key: value`")
            key = entry.this
            if isinstance(key, (exp.Identifier, exp.Column)):  # `{k: 1}`: DuckDB reads a bare name as text
                key = exp.Literal.string(key.name)
            args += [key.copy(), entry.expression.copy()]
        node.replace(exp.VarMap(keys=exp.Array(expressions=args[0::2]), values=exp.Array(expressions=args[1::2])))
    return tree


def typed_values(source: exp.Expression, types: list) -> exp.Expression:
    """`INSERT ... VALUES`: each value cast to its column's Spark type (`types`, in VALUES order), as DuckDB casts
    them on insert; Spark would otherwise type the inline table first and refuse rows that mix, say, 'NaN' and 1.
    Nested columns are left to the insert's own cast; rows of another width are left for its arity error."""
    if not isinstance(source, exp.Values):
        return source
    for row in source.expressions:
        if not isinstance(row, exp.Tuple) or len(row.expressions) != len(types):
            return source
    for row in source.expressions:
        for value, dtype in zip(list(row.expressions), types, strict=True):
            if dtype.typeName() == "variant":
                value.replace(as_variant(value.copy()))
                continue
            if dtype.typeName() in ("array", "map", "struct") or isinstance(value, exp.Null):
                continue
            value.replace(exp.Cast(this=value.copy(), to=exp.DataType.build(dtype.simpleString(), dialect="spark")))
    return source


def as_variant(value: exp.Expression) -> exp.Expression:
    """A VALUES entry for a VARIANT column: any value becomes a variant, as DuckDB's VARIANT takes it (`42`,
    `'text'`, `DATE '2000-01-01'`, `[1, 2]`, `{'a': 1, 'b': NULL}`, NULL); a struct as a variant object (Spark casts no
    struct to VARIANT), its NULL fields as variant nulls (Spark's to_variant_object takes no untyped NULL)."""
    variant = exp.DataType.build("VARIANT", dialect="spark")
    if isinstance(value, exp.Null):  # stored as the variant null, as the reference stores a NULL it inserts
        return exp.Anonymous(this="parse_json", expressions=[exp.Literal.string("null")])
    if isinstance(value, exp.Struct):
        for entry in value.expressions:
            inner = entry.expression if isinstance(entry, (exp.PropertyEQ, exp.Slice)) else None
            if isinstance(inner, exp.Null):
                inner.replace(exp.Cast(this=exp.Null(), to=variant.copy()))
        return exp.Anonymous(this="to_variant_object", expressions=[value])
    return exp.Cast(this=value, to=variant)
