"""Column lists in SQL DDL ('id INT, tags ARRAY<STRING>') to Spark types, parsed with sqlglot (no JVM)."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from ..errors import SchemaMismatchError

_SIMPLE = {
    "BOOLEAN": "BooleanType", "TINYINT": "ByteType", "SMALLINT": "ShortType", "INT": "IntegerType",
    "BIGINT": "LongType", "FLOAT": "FloatType", "DOUBLE": "DoubleType", "TEXT": "StringType",
    "VARCHAR": "StringType", "CHAR": "StringType", "NVARCHAR": "StringType", "BINARY": "BinaryType",
    "VARBINARY": "BinaryType", "BLOB": "BinaryType", "DATE": "DateType", "TIMESTAMP": "TimestampNTZType",
    "TIMESTAMPTZ": "TimestampType", "TIMESTAMPLTZ": "TimestampType", "DATETIME": "TimestampNTZType",
}


def parse_columns_ddl(ddl: str):
    """'a INT, b STRUCT<x: STRING>' -> StructType. Spark's TIMESTAMP (with local time zone) -> TimestampType."""
    from pyspark.sql.types import StructField, StructType

    try:
        create = sqlglot.parse_one(f"CREATE TABLE _t ({ddl})", read="spark")
    except sqlglot.errors.ParseError as exc:
        raise SchemaMismatchError(f"cannot parse column list {ddl!r}: {exc}") from exc
    fields = []
    for col in create.this.expressions:
        if not isinstance(col, exp.ColumnDef) or col.args.get("kind") is None:
            raise SchemaMismatchError(f"column definition without a type in {ddl!r}")
        not_null = any(isinstance(c.kind, exp.NotNullColumnConstraint) for c in col.constraints)
        fields.append(StructField(col.name, _to_spark(col.args["kind"], ddl), nullable=not not_null))
    return StructType(fields)


def _to_spark(dtype: exp.DataType, ddl: str):
    from pyspark.sql import types as T

    name = dtype.this.name if hasattr(dtype.this, "name") else str(dtype.this)
    params = dtype.expressions
    if name == "ARRAY":
        return T.ArrayType(_to_spark(params[0], ddl))
    if name == "MAP":
        return T.MapType(_to_spark(params[0], ddl), _to_spark(params[1], ddl))
    if name == "STRUCT":
        fields = []
        for p in params:
            fields.append(T.StructField(p.name, _to_spark(p.args["kind"], ddl)))
        return T.StructType(fields)
    if name == "DECIMAL":
        precision, scale = (int(p.name) for p in params) if params else (10, 0)
        return T.DecimalType(precision, scale)
    if name in ("TIMESTAMP", "TIMESTAMPLTZ") and dtype.sql(dialect="spark").upper() == "TIMESTAMP":
        return T.TimestampType()  # Spark's TIMESTAMP is the local-time-zone kind
    if name == "TIMESTAMPNTZ":
        return T.TimestampNTZType()
    if name in _SIMPLE:
        return getattr(T, _SIMPLE[name])()
    raise SchemaMismatchError(f"unsupported column type {dtype.sql(dialect='spark')} in {ddl!r}")
