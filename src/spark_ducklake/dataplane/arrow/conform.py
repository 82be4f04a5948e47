"""Fitting Arrow rows to a table without Spark: reordered, cast and completed to its columns, checked first.

Writes that hold Arrow rows (in-process writes, the catalog service, MERGE and UPDATE on small tables) take the
same decisions as the Spark path (`dataplane/spark/conform.py`'s `conform_spark`), which sees Arrow data through
the Spark type pyspark gives it. `arrow_fits` applies that rule from the Arrow type itself (pyspark's
`from_arrow_type` mapping, written out here), so a timestamp or boolean is never cast to a number just because the
write is small enough to stay in-process, and this module runs where there is no pyspark.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ...errors import ConstraintError, SchemaMismatchError
from ...spec import types
from ...spec.model import Column, TableInfo

# A Spark type as a tuple: its class name, then decimal precision and scale, an element's, key's and value's
# shapes, or a struct's (lower-cased field name, shape) pairs. Nullability and metadata are left out, as the
# comparison of the Spark path leaves them out.
Shape = tuple[Any, ...]

# DuckLake primitive type -> the class name of the Spark type users see for it (`dataplane/spark/types.py`
# `to_spark_type` builds its types from this); nested and decimal types are built from their parts.
SPARK_TYPE_NAMES = {
    "boolean": "BooleanType", "int8": "ByteType", "int16": "ShortType", "int32": "IntegerType",
    "int64": "LongType", "uint8": "ShortType", "uint16": "IntegerType", "uint32": "LongType",
    "float32": "FloatType", "float64": "DoubleType", "varchar": "StringType", "json": "StringType",
    "blob": "BinaryType", "date": "DateType", "timestamp": "TimestampNTZType", "timestamptz": "TimestampType",
    "timestamp_s": "TimestampNTZType", "timestamp_ms": "TimestampNTZType", "timestamp_ns": "TimestampNTZType",
    "uuid": "StringType", "time": "StringType", "timetz": "StringType", "interval": "StringType",
    "variant": "VariantType", "geometry": "BinaryType",
}
WIDE_INTEGER_DIGITS = {"uint64": 20, "int128": 38, "uint128": 38}  # Spark shows them as decimal(digits, 0)

# Spark type -> the DuckLake type of a column created from it (`dataplane/spark/types.py` `columns_from_spark`);
# Spark types missing here (TIME, intervals, NULL, geography) have none.
_COLUMN_OF_SPARK = {
    "BooleanType": "boolean", "ByteType": "int8", "ShortType": "int16", "IntegerType": "int32",
    "LongType": "int64", "FloatType": "float32", "DoubleType": "float64", "StringType": "varchar",
    "BinaryType": "blob", "DateType": "date", "TimestampType": "timestamptz", "TimestampNTZType": "timestamp",
    "VariantType": "variant", "GeometryType": "geometry", "ArrayType": "list", "MapType": "map",
    "StructType": "struct",
}

# Arrow type test -> the Spark type pyspark gives it (`pyspark.sql.pandas.types.from_arrow_type`).
_SPARK_OF_ARROW = [
    (pa.types.is_boolean, "BooleanType"), (pa.types.is_int8, "ByteType"), (pa.types.is_int16, "ShortType"),
    (pa.types.is_int32, "IntegerType"), (pa.types.is_int64, "LongType"), (pa.types.is_float32, "FloatType"),
    (pa.types.is_float64, "DoubleType"), (pa.types.is_string, "StringType"),
    (pa.types.is_large_string, "StringType"), (pa.types.is_binary, "BinaryType"),
    (pa.types.is_fixed_size_binary, "BinaryType"), (pa.types.is_large_binary, "BinaryType"),
    (pa.types.is_date32, "DateType"), (pa.types.is_time64, "TimeType"), (pa.types.is_duration, "DayTimeIntervalType"),
    (pa.types.is_null, "NullType"),
]
_INTERVAL_MONTHS = 21  # Arrow's type id of a year-month interval, which pyarrow has no test for


def conform_arrow(data: pa.Table, table: TableInfo) -> pa.Table:
    """Arrow rows reordered, cast and completed to the table's columns."""
    matched = match_columns(data.column_names, table)
    by_col = {id(col): name for name, col in matched.items()}
    arrays, bad = [], []
    for col in table.columns:
        target = types.to_arrow_type(col)
        if id(col) not in by_col:
            arrays.append(pa.array([default_of(col)] * data.num_rows, type=target))
            continue
        name = by_col[id(col)]
        arr = match_fields(data.column(name), col, name)
        if arr.type != target:
            try:
                if not arrow_fits(name, arr.type, col) and not _both_numeric(arr.type, target):
                    raise pa.ArrowInvalid("not a lossless conversion")
                arr = arr.cast(target, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                bad.append(f"{name} ({arr.type} into {col.type})")
                continue
        arrays.append(arr)
    if bad:
        raise SchemaMismatchError(f"columns of incompatible type for {table.qualified_name}: {', '.join(bad)}")
    check_not_null(arrays, table)
    return pa.Table.from_arrays(arrays, names=[c.name for c in table.columns])


def match_columns(names: list[str], table: TableInfo) -> dict[str, Column]:
    """Incoming names mapped to table columns (ignoring case, like Spark); SchemaMismatchError names a name the
    table lacks and a NOT NULL column without a default that the data lacks."""
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


def fits_column(incoming: str, target: Column) -> bool:
    """Whether data of DuckLake type `incoming` can be written into the column without loss."""
    return incoming == target.type or types.fits(incoming, target.type)


def match_fields(arr: pa.Array | pa.ChunkedArray, col: Column, path: str | None = None) -> Any:
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
        lowered = [n.lower() for n in names]
        twice = sorted({n for n in names if lowered.count(n.lower()) > 1})
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


def check_not_null(arrays: list[Any], table: TableInfo) -> None:
    """ConstraintError, as the reference words it, if a NOT NULL column's values (table order) hold a NULL."""
    for arr, col in zip(arrays, table.columns, strict=True):
        if not col.nullable and arr.null_count:
            raise ConstraintError(not_null_message(table, col))


def not_null_message(table: TableInfo, col: Column) -> str:
    """The reference's message: `NOT NULL constraint failed: t.k`."""
    return f"NOT NULL constraint failed: {table.name}.{col.name}"


def default_of(col: Column) -> Any:
    """The value a row written without the column stores: its literal default (None: NULL)."""
    if col.default_value in (None, "NULL"):
        return None
    return types.parse_literal(col.type, col.default_value)


def _both_numeric(got: pa.DataType, target: pa.DataType) -> bool:
    """Numbers into numbers: Arrow's safe cast checks every value, so only lossless values pass."""
    def numeric(t: pa.DataType) -> bool:
        return bool(pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t))

    return numeric(got) and numeric(target)


def arrow_fits(name: str, got: pa.DataType, col: Column) -> bool:
    """The Spark path's rule for Arrow data: the Spark type pyspark gives `got` is the column's, or its DuckLake
    type fits the column; Arrow types Spark has no type for (unsigned integers, ...) by their own DuckLake type."""
    shape = _arrow_shape(got)
    if shape is None:
        try:
            incoming: str | None = types.columns_from_arrow(pa.schema([pa.field(name, got)]))[0].type
        except SchemaMismatchError:
            return False
    elif shape == _column_shape(col):
        return True
    else:
        incoming = _column_type_of(shape)
    return incoming is not None and fits_column(incoming, col)


def _arrow_shape(got: pa.DataType) -> Shape | None:
    """The Spark type pyspark gives Arrow data of type `got` (None: it has none; a part without one spoils the
    whole, as pyspark raises for it)."""
    simple = next((spark for test, spark in _SPARK_OF_ARROW if test(got)), None)
    if simple is not None:
        return (simple,)
    if pa.types.is_decimal(got):
        return ("DecimalType", got.precision, got.scale)
    if pa.types.is_timestamp(got):
        return ("TimestampType",) if got.tz else ("TimestampNTZType",)
    if got.id == _INTERVAL_MONTHS:
        return ("YearMonthIntervalType",)
    if pa.types.is_list(got) or pa.types.is_large_list(got) or pa.types.is_fixed_size_list(got):
        return _nested("ArrayType", got.value_type)
    if pa.types.is_map(got):
        return _nested("MapType", got.key_type, got.item_type)
    if pa.types.is_dictionary(got):
        return _arrow_shape(got.value_type)
    if pa.types.is_struct(got):
        return _struct_shape(got)
    return None


def _nested(kind: str, *children: pa.DataType) -> Shape | None:
    shapes = [_arrow_shape(child) for child in children]
    return None if None in shapes else (kind, *shapes)


def _struct_shape(got: pa.StructType) -> Shape | None:
    """Spark's variant, geometry and geography come as structs marked by field metadata; other structs field by
    field."""
    fields = [got.field(i) for i in range(got.num_fields)]
    names = {f.name for f in fields}
    if "value" in names and _marked(fields, "metadata", b"variant"):
        return ("VariantType",)
    for kind in ("geometry", "geography"):
        if "srid" in names and _marked(fields, "wkb", kind.encode()):
            return (f"{kind.capitalize()}Type",)
    shapes = [_arrow_shape(f.type) for f in fields]
    if None in shapes:
        return None
    return ("StructType", tuple((f.name.lower(), s) for f, s in zip(fields, shapes, strict=True)))


def _marked(fields: list[pa.Field], name: str, mark: bytes) -> bool:
    return any(f.name == name and (f.metadata or {}).get(mark) == b"true" for f in fields)


def _column_shape(col: Column) -> Shape:
    """The Spark type users see for the column, as a shape."""
    if col.type == "list":
        return ("ArrayType", _column_shape(col.children[0]))
    if col.type == "map":
        return ("MapType", _column_shape(col.children[0]), _column_shape(col.children[1]))
    if col.type == "struct":
        return ("StructType", tuple((c.name.lower(), _column_shape(c)) for c in col.children))
    match = types.DECIMAL_TYPE.fullmatch(col.type)
    if match:
        return ("DecimalType", int(match.group(1)), int(match.group(2)))
    if col.type in WIDE_INTEGER_DIGITS:
        return ("DecimalType", WIDE_INTEGER_DIGITS[col.type], 0)
    if col.type in SPARK_TYPE_NAMES:
        return (SPARK_TYPE_NAMES[col.type],)
    raise SchemaMismatchError(f"column {col.name!r}: DuckLake type {col.type!r} is not supported by spark-ducklake")


def _column_type_of(shape: Shape) -> str | None:
    """The DuckLake type of a column created from a Spark type (None: none, here or in a nested part)."""
    kind = shape[0]
    if kind == "DecimalType":
        return f"decimal({shape[1]},{shape[2]})"
    children = [s for _, s in shape[1]] if kind == "StructType" else list(shape[1:])
    if any(_column_type_of(child) is None for child in children):
        return None
    return _COLUMN_OF_SPARK.get(kind)
