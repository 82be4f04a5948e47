"""Fitting incoming data to a table: new-table columns from a schema, and checks before any write."""

from __future__ import annotations

import pyarrow as pa

from ...errors import ConstraintError, SchemaMismatchError
from ...spec import types
from ...spec.model import Column, TableInfo
from ...spec.names import check_name, check_unique, spark_name
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


def _match(names: list[str], table: TableInfo) -> dict[str, Column]:
    """Map incoming names to table columns (case-insensitive, like Spark); name the ones that do not fit."""
    by_lower = {col.name.lower(): col for col in table.columns}
    unknown = [n for n in names if n.lower() not in by_lower]
    if unknown:
        raise SchemaMismatchError(
            f"columns not in table {table.qualified_name}: {', '.join(unknown)} "
            f"(table columns: {', '.join(c.name for c in table.columns)})"
        )
    matched = {n: by_lower[n.lower()] for n in names}
    missing_required = [
        c.name for c in table.columns
        if c not in matched.values() and not c.nullable and c.default_value in (None, "NULL")
    ]
    if missing_required:
        raise SchemaMismatchError(
            f"NOT NULL columns of {table.qualified_name} missing from the data: {', '.join(missing_required)}"
        )
    return matched


def _fits(incoming: str, target: Column) -> bool:
    return incoming == target.type or types.fits(incoming, target.type)


def conform_spark(df, table: TableInfo):
    """`df` reordered, cast and completed to the table's columns; SchemaMismatchError names misfits."""
    from pyspark.sql import functions as F

    fields = {f.name: f for f in df.schema.fields}
    matched = _match(list(fields), table)
    bad = []
    exact = list(fields) == [c.name for c in table.columns]  # and, checked below, the table's types
    for name, col in matched.items():
        wanted = spark_types.to_spark_type(col)
        got = fields[name].dataType
        exact = exact and got.simpleString() == wanted.simpleString()
        if _strip(got) == _strip(wanted):
            continue
        incoming = _ducklake_type_of_spark(name, got)
        if incoming is None or not _fits(incoming, col):
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


def conform_arrow(data: pa.Table, table: TableInfo) -> pa.Table:
    """Arrow rows reordered, cast and completed to the table's columns."""
    matched = _match(data.column_names, table)
    by_col = {id(col): name for name, col in matched.items()}
    arrays, bad = [], []
    for col in table.columns:
        target = types.to_arrow_type(col)
        if id(col) not in by_col:
            arrays.append(pa.array([default_of(col)] * data.num_rows, type=target))
            continue
        arr = match_fields(data.column(by_col[id(col)]), col, by_col[id(col)])
        if arr.type != target:
            try:
                if not _arrow_fits(by_col[id(col)], arr.type, col) and not _both_numeric(arr.type, target):
                    raise pa.ArrowInvalid("not a lossless conversion")
                arr = arr.cast(target, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                bad.append(f"{by_col[id(col)]} ({arr.type} into {col.type})")
                continue
        arrays.append(arr)
    if bad:
        raise SchemaMismatchError(f"columns of incompatible type for {table.qualified_name}: {', '.join(bad)}")
    check_not_null(arrays, table)
    return pa.Table.from_arrays(arrays, names=[c.name for c in table.columns])


def match_fields(arr: pa.Array | pa.ChunkedArray, col: Column, path: str | None = None):
    """Arrow values for a nested column with their struct fields named as the column's (matched ignoring case, at
    any depth), so Arrow's cast, which matches struct fields by exact name, fills only the fields the data lacks
    (NULL, as DuckDB's cast does); SchemaMismatchError names a field the column lacks (Arrow's cast would drop it)."""
    if not col.is_nested:
        return arr
    named = _named_like(arr.type, col, path or col.name)
    if named == arr.type:
        return arr
    if isinstance(arr, pa.ChunkedArray):
        return pa.chunked_array([chunk.view(named) for chunk in arr.chunks], type=named)
    return arr.view(named)


def _named_like(got: pa.DataType, col: Column, path: str) -> pa.DataType:
    """`got` with the struct field names of `col` (same layout: a view, no copy)."""
    if col.type == "struct" and pa.types.is_struct(got):
        children = {c.name.lower(): c for c in col.children}
        names = [got.field(i).name for i in range(got.num_fields)]
        unknown = [n for n in names if n.lower() not in children]
        if unknown:
            raise SchemaMismatchError(f"fields not in column {path}: {', '.join(unknown)} "
                                      "(write with merge_schema=True to add them)")
        twice = sorted({n for n in names if [m.lower() for m in names].count(n.lower()) > 1})
        if twice:
            raise SchemaMismatchError(f"column {path} is given the field {twice[0]!r} more than once")
        fields = []
        for i in range(got.num_fields):
            field, child = got.field(i), children[got.field(i).name.lower()]
            fields.append(pa.field(child.name, _named_like(field.type, child, f"{path}.{child.name}"), field.nullable))
        return pa.struct(fields)
    if col.type == "list" and (pa.types.is_list(got) or pa.types.is_large_list(got)):
        item = got.value_field
        inner = item.with_type(_named_like(item.type, col.children[0], f"{path}.element"))
        return pa.list_(inner) if pa.types.is_list(got) else pa.large_list(inner)
    if col.type == "map" and pa.types.is_map(got):
        key, item = got.key_field, got.item_field
        return pa.map_(key.with_type(_named_like(key.type, col.children[0], f"{path}.key")),
                       item.with_type(_named_like(item.type, col.children[1], f"{path}.value")), got.keys_sorted)
    return got


def check_not_null(arrays: list, table: TableInfo) -> None:
    """ConstraintError, as the reference words it, if a NOT NULL column's values (table order) hold a NULL."""
    for arr, col in zip(arrays, table.columns, strict=True):
        if not col.nullable and arr.null_count:
            raise ConstraintError(not_null_message(table, col))


def not_null_message(table: TableInfo, col: Column) -> str:
    """The reference's message: `NOT NULL constraint failed: t.k`."""
    return f"NOT NULL constraint failed: {table.name}.{col.name}"


def _both_numeric(got: pa.DataType, target: pa.DataType) -> bool:
    """Numbers into numbers: Arrow's safe cast checks every value, so only lossless values pass."""
    def numeric(t: pa.DataType) -> bool:
        return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)

    return numeric(got) and numeric(target)


def _arrow_fits(name: str, got: pa.DataType, col: Column) -> bool:
    """The Spark path's rule for Arrow data: the type Spark would give it must fit the column (so a timestamp or
    boolean is not silently cast to a number just because the write is small enough to inline)."""
    from pyspark.sql.pandas.types import from_arrow_type

    try:
        spark_type = from_arrow_type(got, prefer_timestamp_ntz=True)
        if _strip(spark_type) == _strip(spark_types.to_spark_type(col)):
            return True
        incoming = _ducklake_type_of_spark(name, spark_type)
    except (TypeError, NotImplementedError):  # no Spark type (uint64, ...): the Arrow type's own DuckLake type
        try:
            incoming = types.columns_from_arrow(pa.schema([pa.field(name, got)]))[0].type
        except SchemaMismatchError:
            return False
    return incoming is not None and _fits(incoming, col)


def default_of(col: Column):
    """The value a row written without the column stores: its literal default (None: NULL)."""
    if col.default_value in (None, "NULL"):
        return None
    return types.parse_literal(col.type, col.default_value)


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
