"""Fitting Spark data to a table: new-table columns from a schema, and a DataFrame checked and cast before a write.

Arrow rows are fitted without Spark by `dataplane/arrow/conform.py`, by the same rule.
"""

from __future__ import annotations

import pyarrow as pa

from ...errors import SchemaMismatchError
from ...spec import types
from ...spec.model import Column, TableInfo
from ...spec.names import check_name, check_unique, spark_name
from ..arrow.conform import default_of, fits_column, match_columns
from . import types as spark_types


def plan_columns(schema) -> list[Column]:
    """Columns (ids 1..) for a new table from a Spark StructType, a pyarrow Schema or a DDL string."""
    from pyspark.sql.types import StructType

    if isinstance(schema, StructType):
        return check_column_names(spark_types.columns_from_spark(schema))
    if isinstance(schema, pa.Schema):
        return check_column_names(types.columns_from_arrow(schema))
    if isinstance(schema, str):
        # lazy: executors import this module (the format("ducklake") writer); dataplane/spark/ddl.py needs sqlglot
        from .ddl import parse_columns_ddl

        return check_column_names(spark_types.columns_from_spark(parse_columns_ddl(schema)))
    raise SchemaMismatchError(
        f"a table schema must be a Spark StructType, a pyarrow Schema or a DDL string, not {type(schema).__name__}"
    )


def check_column_names(columns: list[Column], where: str = "the table") -> list[Column]:
    """`columns` if DuckDB can use their names: non-empty, no NUL, unique ignoring case (struct fields too)."""
    check_unique([c.name for c in columns], "column", where)
    for col in columns:
        check_name(col.name, "column")
        if col.children:
            check_column_names(col.children, f"column {col.name!r}")
    return columns


def conform_spark(df, table: TableInfo):
    """`df` reordered, cast and completed to the table's columns; SchemaMismatchError names misfits."""
    from pyspark.sql import functions as F

    fields = {f.name: f for f in df.schema.fields}
    matched = match_columns(list(fields), table)
    bad = []
    exact = list(fields) == [c.name for c in table.columns]  # and, checked below, the table's types
    for name, col in matched.items():
        wanted = spark_types.to_spark_type(col)
        got = fields[name].dataType
        exact = exact and got.simpleString() == wanted.simpleString()
        if _strip(got) == _strip(wanted):
            continue
        incoming = _ducklake_type_of_spark(name, got)
        if incoming is None or not fits_column(incoming, col):
            bad.append(f"{name} ({got.simpleString()} into {col.type})")
    if bad:
        raise SchemaMismatchError(f"columns of incompatible type for {table.qualified_name}: {', '.join(bad)}")
    if exact:
        return df  # already the table's names, order and types: no projection to build
    by_col = {id(col): name for name, col in matched.items()}
    exprs = []
    for col in table.columns:
        target = spark_types.to_spark_type(col)
        if id(col) in by_col:
            name = by_col[id(col)]
            exprs.append(_by_name(F.col(spark_name(name)), fields[name].dataType, col, name).alias(col.name))
        else:
            exprs.append(F.lit(default_of(col)).cast(target).alias(col.name))
    return df.select(*exprs)


def cast_by_name(expr, got, col: Column):
    """Spark Column `expr` (of Spark type `got`) as the column's type, struct fields matched by name at any depth
    (Spark's own struct cast is positional: {'b': 2} would become {a: 2}); a field the column lacks is a
    SchemaMismatchError naming it, one the value lacks is NULL, as DuckDB casts structs."""
    return _by_name(expr, got, col, col.name)


def value_types(frame, values: list) -> list:
    """The Spark types of Column expressions over `frame` (one analysis, nothing runs)."""
    if not values:
        return []
    return [f.dataType for f in frame.select(*[v.alias(f"_dl_v{i}") for i, v in enumerate(values)]).schema.fields]


def _by_name(expr, got, col: Column, path: str):
    """`expr` (of Spark type `got`) as the column's type, struct fields matched by name at any depth (Spark's
    struct cast is positional); fields the table lacks are an error, fields the data lacks are NULL."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, MapType, StructType

    target = spark_types.to_spark_type(col)
    if not col.is_nested or got == target:
        return spark_types.conform_column(col, expr, got)
    if col.type == "struct" and isinstance(got, StructType):
        fields = {f.name.lower(): f for f in got.fields}
        unknown = sorted(set(fields) - {c.name.lower() for c in col.children})
        if unknown:
            raise SchemaMismatchError(f"fields not in column {path}: {', '.join(fields[u].name for u in unknown)} "
                                      "(write with merge_schema=True to add them)")
        parts = [(_by_name(expr.getField(fields[c.name.lower()].name), fields[c.name.lower()].dataType, c,
                           f"{path}.{c.name}") if c.name.lower() in fields
                  else F.lit(None).cast(spark_types.to_spark_type(c))).alias(c.name) for c in col.children]
        return F.when(expr.isNull(), F.lit(None).cast(target)).otherwise(F.struct(*parts))
    if col.type == "list" and isinstance(got, ArrayType):
        return F.transform(expr, lambda e: _by_name(e, got.elementType, col.children[0], f"{path}.element"))
    if col.type == "map" and isinstance(got, MapType):
        keyed = F.transform_keys(expr, lambda k, _v: _by_name(k, got.keyType, col.children[0], f"{path}.key"))
        return F.transform_values(keyed, lambda _k, v: _by_name(v, got.valueType, col.children[1], f"{path}.value"))
    return expr.cast(target)


def _ducklake_type_of_spark(name: str, data_type) -> str | None:
    from pyspark.sql.types import StructField, StructType

    try:
        return spark_types.columns_from_spark(StructType([StructField(name, data_type)]))[0].type
    except SchemaMismatchError:
        return None


def _strip(data_type):
    """A type with nullability and metadata removed, for structural comparison."""
    from pyspark.sql.types import ArrayType, MapType, StructField, StructType

    if isinstance(data_type, StructType):
        return StructType([StructField(f.name.lower(), _strip(f.dataType)) for f in data_type.fields])
    if isinstance(data_type, ArrayType):
        return ArrayType(_strip(data_type.elementType))
    if isinstance(data_type, MapType):
        return MapType(_strip(data_type.keyType), _strip(data_type.valueType))
    return data_type
