"""DuckLake columns <-> Spark types: what users see, what Spark's Parquet reader is asked for, incoming schemas.

The pure type-string side (Arrow mapping, literals, promotions) lives in spec/types.py; this module is the part
that needs pyspark. Types Spark's Parquet reader cannot read natively are flagged by `native_read_type` returning
None; the scan then reads those files on executors with pyarrow and converts (see dataplane/spark/arrow_files.py).
"""

from __future__ import annotations

from ...errors import SchemaMismatchError
from ...spec.model import Column
from ...spec.types import DECIMAL_TYPE, FIELD_ID_KEY
from ..arrow.conform import SPARK_TYPE_NAMES, WIDE_INTEGER_DIGITS
from ..arrow.native_types import NOT_NATIVE


def _spark_types():
    # Imported lazily, like pyspark elsewhere in the package: importing this module does not load pyspark.
    from pyspark.sql import types as T

    return T


def to_spark_type(col: Column):
    """The Spark type users see for a column."""
    T = _spark_types()
    if col.type == "list":
        return T.ArrayType(to_spark_type(col.children[0]), True)
    if col.type == "map":
        return T.MapType(to_spark_type(col.children[0]), to_spark_type(col.children[1]), True)
    if col.type == "struct":  # fields always nullable: DuckDB marks renamed or added fields NOT NULL regardless
        return T.StructType([to_spark_field(child, nullable=True) for child in col.children])
    match = DECIMAL_TYPE.fullmatch(col.type)
    if match:
        return T.DecimalType(int(match.group(1)), int(match.group(2)))
    if col.type in WIDE_INTEGER_DIGITS:
        return T.DecimalType(WIDE_INTEGER_DIGITS[col.type], 0)
    if col.type in SPARK_TYPE_NAMES:
        return getattr(T, SPARK_TYPE_NAMES[col.type])()
    raise SchemaMismatchError(f"column {col.name!r}: DuckLake type {col.type!r} is not supported by spark-ducklake")


def to_spark_field(col: Column, nullable: bool | None = None):
    """A StructField carrying the column id as Parquet field id."""
    T = _spark_types()
    return T.StructField(col.name, to_spark_type(col), col.nullable if nullable is None else nullable,
                         {FIELD_ID_KEY: col.column_id})


def to_spark_schema(columns: list[Column]):
    """StructType of the table's top-level columns, with field ids."""
    return _spark_types().StructType([to_spark_field(col) for col in columns])






def columns_from_spark(schema, first_id: int = 1) -> list[Column]:
    """New columns from a Spark StructType, ids depth first (parent, then children) like the reference."""
    counter = iter(range(first_id, 1 << 62))
    return [_from_spark(field.name, field.dataType, field.nullable, counter) for field in schema.fields]


def _from_spark(name: str, dtype, nullable: bool, counter) -> Column:
    T = _spark_types()
    col = Column(column_id=next(counter), name=name, type="", nullable=nullable)
    if isinstance(dtype, T.ArrayType):
        col.type = "list"
        col.children = [_from_spark("element", dtype.elementType, True, counter)]
    elif isinstance(dtype, T.MapType):
        col.type = "map"
        col.children = [_from_spark("key", dtype.keyType, False, counter),
                        _from_spark("value", dtype.valueType, True, counter)]
    elif isinstance(dtype, T.StructType):
        col.type = "struct"
        col.children = [_from_spark(f.name, f.dataType, f.nullable, counter) for f in dtype.fields]
    elif isinstance(dtype, T.DecimalType):
        col.type = f"decimal({dtype.precision},{dtype.scale})"
    else:
        simple = {
            T.BooleanType: "boolean", T.ByteType: "int8", T.ShortType: "int16", T.IntegerType: "int32",
            T.LongType: "int64", T.FloatType: "float32", T.DoubleType: "float64", T.StringType: "varchar",
            T.BinaryType: "blob", T.DateType: "date", T.TimestampType: "timestamptz",
            T.TimestampNTZType: "timestamp",
        }
        for klass, name_ in simple.items():
            if isinstance(dtype, klass):
                col.type = name_
                break
        else:
            if type(dtype).__name__ in ("CharType", "VarcharType"):
                col.type = "varchar"
            elif type(dtype).__name__ in ("VariantType", "GeometryType"):  # Spark 4.0 / 4.1 types
                col.type = type(dtype).__name__[:-4].lower()
            else:
                raise SchemaMismatchError(
                    f"column {name!r}: Spark type {dtype.simpleString()} has no DuckLake equivalent here"
                )
    return col


def conform_column(col: Column, expr, got):
    """`expr` (of Spark type `got`) as the column's Spark type; a Spark GEOMETRY into a geometry column as WKB."""
    if col.type == "geometry" and type(got).__name__ == "GeometryType":
        from pyspark.sql import functions as F

        return F.call_function("st_asbinary", expr)
    return expr.cast(to_spark_type(col))


def write_column(col: Column, expr):
    """`expr` (of the column's Spark type) as Spark writes it: a geometry's WKB (inside lists, structs and maps too)
    as Spark's GEOMETRY, so the file has Parquet's GEOMETRY type and bounding-box statistics, which DuckDB needs (it
    casts no BLOB to GEOMETRY)."""
    if not any(c.type == "geometry" for c in col.walk()):
        return expr.cast(to_spark_type(col))
    from pyspark.sql import functions as F

    # Geometries inside lists, structs and maps too, as DuckDB writes them (Parquet GEOMETRY at any depth)
    if col.type == "geometry":
        return F.call_function("st_geomfromwkb", expr.cast(to_spark_type(col)))
    if col.type == "list":
        return F.transform(expr, lambda e: write_column(col.children[0], e))
    if col.type == "map":
        key, value = col.children
        keyed = F.transform_keys(expr, lambda k, _v: write_column(key, k)) if key.type == "geometry" else expr
        return F.transform_values(keyed, lambda _k, v: write_column(value, v))
    fields = [write_column(c, expr.getField(c.name)).alias(c.name, metadata={FIELD_ID_KEY: c.column_id})
              for c in col.children]  # struct: its fields keep their ids, as the cast gives them
    return F.when(expr.isNotNull(), F.struct(*fields))


# Read natively as one type, then cast to the logical type.
_READ_AS = {"uint64", "int128", "uint128"}


def native_read_type(col: Column):
    """The type to ask Spark's Parquet reader for, or None when Spark cannot read the column natively."""
    T = _spark_types()
    if col.type in NOT_NATIVE:
        return None
    if col.type in _READ_AS:
        return T.DecimalType(20, 0) if col.type == "uint64" else T.DoubleType()
    if col.type == "list":
        inner = native_read_type(col.children[0])
        return None if inner is None else T.ArrayType(inner, True)
    if col.type == "map":
        key, value = native_read_type(col.children[0]), native_read_type(col.children[1])
        return None if key is None or value is None else T.MapType(key, value, True)
    if col.type == "struct":
        fields = []
        for child in col.children:
            inner = native_read_type(child)
            if inner is None:
                return None
            fields.append(T.StructField(child.name, inner, True, {FIELD_ID_KEY: child.column_id}))
        return T.StructType(fields)
    return to_spark_type(col)
