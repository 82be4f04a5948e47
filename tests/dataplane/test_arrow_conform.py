"""`dataplane/arrow/conform.py` decides without pyspark what the Spark path decides with it.

`arrow_fits` writes out pyspark's Arrow -> Spark type mapping; the oracle here is the rule it replaced, which asked
pyspark itself (`from_arrow_type`) and compared Spark types. Every Arrow type below is tried against every column
type, nested ones included.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from spark_ducklake.dataplane.arrow.conform import arrow_fits, conform_arrow
from spark_ducklake.dataplane.spark import types as spark_types
from spark_ducklake.errors import SchemaMismatchError
from spark_ducklake.spec import types
from spark_ducklake.spec.model import Column, TableInfo

pytest.importorskip("pyspark")

PRIMITIVE_COLUMNS = [
    "boolean", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "int128", "uint128",
    "float32", "float64", "decimal(9,2)", "decimal(18,3)", "decimal(38,10)", "decimal(20,0)", "decimal(38,0)",
    "varchar", "json", "blob", "uuid", "date", "time", "timetz", "interval", "timestamp", "timestamptz",
    "timestamp_s", "timestamp_ms", "timestamp_ns", "variant", "geometry",
]

SCALARS = [
    pa.bool_(), pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64(),
    pa.float16(), pa.float32(), pa.float64(), pa.decimal128(9, 2), pa.decimal128(18, 3), pa.decimal128(38, 10),
    pa.decimal128(20, 0), pa.decimal128(5, 0), pa.decimal256(40, 2), pa.string(), pa.large_string(), pa.binary(),
    pa.large_binary(), pa.binary(16), pa.date32(), pa.date64(), pa.time32("s"), pa.time32("ms"), pa.time64("us"),
    pa.time64("ns"), pa.timestamp("s"), pa.timestamp("ms"), pa.timestamp("us"), pa.timestamp("ns"),
    pa.timestamp("us", tz="UTC"), pa.timestamp("ns", tz="Europe/Paris"), pa.duration("us"), pa.duration("s"),
    pa.month_day_nano_interval(), pa.null(), pa.dictionary(pa.int32(), pa.string()),
    pa.dictionary(pa.int8(), pa.int64()),
]


def _variant() -> pa.DataType:
    return pa.struct([pa.field("value", pa.binary(), False),
                      pa.field("metadata", pa.binary(), False, metadata={b"variant": b"true"})])


def _geometry(kind: str) -> pa.DataType:
    return pa.struct([pa.field("srid", pa.int32()), pa.field("wkb", pa.binary(), metadata={kind.encode(): b"true",
                                                                                         b"srid": b"4326"})])


def _arrow_types() -> list[pa.DataType]:
    nested = [
        pa.list_(pa.int32()), pa.list_(pa.int64()), pa.large_list(pa.string()), pa.list_(pa.uint8()),
        pa.list_(pa.time64("us")), pa.list_(pa.null()), pa.list_(pa.timestamp("us")), pa.list_(pa.int32(), 3),
        pa.map_(pa.string(), pa.int64()), pa.map_(pa.int32(), pa.string()), pa.map_(pa.string(), pa.uint32()),
        pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())]),
        pa.struct([pa.field("A", pa.int32()), pa.field("B", pa.string())]),
        pa.struct([pa.field("a", pa.int64()), pa.field("b", pa.string())]),
        pa.struct([pa.field("a", pa.int32())]), pa.struct([pa.field("a", pa.uint64()), pa.field("b", pa.string())]),
        pa.struct([pa.field("a", pa.null()), pa.field("b", pa.string())]),
        pa.struct([pa.field("a", pa.list_(pa.int32())), pa.field("b", pa.map_(pa.string(), pa.int32()))]),
        pa.list_(pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])),
        _variant(), _geometry("geometry"), _geometry("geography"),
        pa.struct([pa.field("value", pa.binary()), pa.field("metadata", pa.binary())]),
        types.to_arrow_type(Column(1, "g", "geometry")),
        pa.uuid() if hasattr(pa, "uuid") else pa.binary(16),
    ]
    return SCALARS + nested


def _columns() -> list[Column]:
    ids = iter(range(1, 10_000))
    columns = [Column(next(ids), "c", t) for t in PRIMITIVE_COLUMNS]

    def nested(kind: str, *children: tuple[str, str]) -> Column:
        return Column(next(ids), "c", kind, children=[Column(next(ids), n, t) for n, t in children])

    columns += [
        nested("list", ("element", "int32")), nested("list", ("element", "int64")),
        nested("list", ("element", "varchar")), nested("list", ("element", "time")),
        nested("list", ("element", "timestamp")), nested("list", ("element", "uint8")),
        nested("map", ("key", "varchar"), ("value", "int64")), nested("map", ("key", "int32"), ("value", "varchar")),
        nested("struct", ("a", "int32"), ("b", "varchar")), nested("struct", ("A", "int32"), ("b", "varchar")),
        nested("struct", ("a", "int64"), ("b", "varchar")), nested("struct", ("a", "int32")),
        nested("struct", ("value", "blob"), ("metadata", "blob")),
    ]
    inner = nested("struct", ("a", "int32"), ("b", "varchar"))
    columns.append(Column(next(ids), "c", "list", children=[inner]))
    deep = nested("struct", ("a", "int32"))
    deep.children = [nested("list", ("element", "int32")), nested("map", ("key", "varchar"), ("value", "int32"))]
    deep.children[0].name, deep.children[1].name = "a", "b"
    columns.append(deep)
    return columns


def _old_rule(name: str, got: pa.DataType, col: Column) -> bool:
    """The rule `arrow_fits` replaced: pyspark's Spark type for the Arrow type, compared with the column's."""
    from pyspark.sql.pandas.types import from_arrow_type
    from pyspark.sql.types import ArrayType, MapType, StructField, StructType

    def strip(t):
        if isinstance(t, StructType):
            return StructType([StructField(f.name.lower(), strip(f.dataType)) for f in t.fields])
        if isinstance(t, ArrayType):
            return ArrayType(strip(t.elementType))
        if isinstance(t, MapType):
            return MapType(strip(t.keyType), strip(t.valueType))
        return t

    def fits(incoming: str) -> bool:
        return incoming == col.type or types.fits(incoming, col.type)

    try:
        spark_type = from_arrow_type(got, prefer_timestamp_ntz=True)
        if strip(spark_type) == strip(spark_types.to_spark_type(col)):
            return True
        try:
            incoming = spark_types.columns_from_spark(StructType([StructField(name, spark_type)]))[0].type
        except SchemaMismatchError:
            return False
    except (TypeError, NotImplementedError):
        try:
            incoming = types.columns_from_arrow(pa.schema([pa.field(name, got)]))[0].type
        except SchemaMismatchError:
            return False
    return fits(incoming)


def test_the_rule_without_pyspark_agrees_with_pyspark_on_every_pair():
    arrow_types, columns = _arrow_types(), _columns()
    disagree = [(str(got), col.type, [c.type for c in col.children])
                for got in arrow_types for col in columns
                if arrow_fits("c", got, col) != _old_rule("c", got, col)]
    assert not disagree, disagree[:20]
    assert len(arrow_types) * len(columns) > 3_000
    accepted = sum(arrow_fits("c", got, col) for got in arrow_types for col in columns)
    assert 150 < accepted < len(arrow_types) * len(columns) // 2  # the grid holds both answers


def test_conform_refuses_what_spark_would_not_cast_and_casts_what_fits():
    table = TableInfo(table_id=1, table_uuid="u", schema_id=1, schema_name="main", name="t", path="",
                      columns=[Column(1, "n", "int64"), Column(2, "ts", "timestamp"), Column(3, "s", "varchar"),
                               Column(4, "d", "decimal(18,3)", default_value="1.5")],
                      begin_snapshot=1)
    rows = pa.table({"N": pa.array([1, 2], pa.int8()), "ts": pa.array([0, 1], pa.timestamp("ms")),
                     "s": pa.array(["a", None], pa.large_string())})
    out = conform_arrow(rows, table)
    assert out.schema == types.to_arrow_schema(table.columns)
    assert out.column("d").to_pylist() == [pytest.approx(1.5)] * 2
    with pytest.raises(SchemaMismatchError, match=r"ts \(bool into timestamp\)"):
        conform_arrow(pa.table({"n": [1], "ts": [True]}), table)
    with pytest.raises(SchemaMismatchError, match=r"n \(timestamp\[us\] into int64\)"):
        conform_arrow(pa.table({"n": pa.array([0], pa.timestamp("us"))}), table)
