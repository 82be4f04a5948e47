"""Column lists in SQL DDL ('id INT, tags ARRAY<STRING>') to Spark types, parsed with sqlglot (no JVM)."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from ...errors import SchemaMismatchError

_SIMPLE = {
    "BOOLEAN": "BooleanType", "TINYINT": "ByteType", "SMALLINT": "ShortType", "INT": "IntegerType",
    "BIGINT": "LongType", "FLOAT": "FloatType", "DOUBLE": "DoubleType", "TEXT": "StringType",
    "VARCHAR": "StringType", "CHAR": "StringType", "NVARCHAR": "StringType", "BINARY": "BinaryType",
    "VARBINARY": "BinaryType", "BLOB": "BinaryType", "DATE": "DateType", "TIMESTAMP": "TimestampNTZType",
    "TIMESTAMPTZ": "TimestampType", "TIMESTAMPLTZ": "TimestampType", "DATETIME": "TimestampNTZType",
}


def parse_columns_ddl(ddl: str):
    """'a INT, b STRUCT<x: STRING>' -> StructType. Spark's TIMESTAMP (with local time zone) -> TimestampType.

    Anything but a plain column list (other statements, AS SELECT, table options, constraints other than
    [NOT] NULL) is refused with a SchemaMismatchError naming it."""
    from pyspark.sql.types import StructField, StructType

    if not isinstance(ddl, str) or not ddl.strip():
        raise SchemaMismatchError(f"a column list needs at least one column, got {ddl!r}")
    try:
        statements = [s for s in sqlglot.parse(f"CREATE TABLE _t ({backquoted(ddl)})", read="spark")
                      if s is not None and not isinstance(s, exp.Semicolon)]
    except sqlglot.errors.SqlglotError as exc:
        raise SchemaMismatchError(f"cannot parse column list {ddl!r}: {_first_line(exc)}") from exc
    create = statements[0] if len(statements) == 1 else None
    if (not isinstance(create, exp.Create) or not isinstance(create.this, exp.Schema)
            or any(create.args.get(k) for k in ("expression", "properties", "indexes"))):
        raise SchemaMismatchError(f"not a column list: {ddl!r} (only 'name TYPE [NOT NULL], ...' is accepted)")
    fields = []
    for col in create.this.expressions:
        if not isinstance(col, exp.ColumnDef):
            raise SchemaMismatchError(f"not a column definition: {col.sql(dialect='spark')!r} in {ddl!r}")
        if col.args.get("kind") is None:
            raise SchemaMismatchError(f"column {col.name!r} has no type in {ddl!r}")
        fields.append(StructField(col.name, _to_spark(col.args["kind"], ddl), nullable=_nullable(col, ddl)))
    if not fields:
        raise SchemaMismatchError(f"a column list needs at least one column, got {ddl!r}")
    return StructType(fields)


def backquoted(ddl: str) -> str:
    """`ddl` with DuckDB's double-quoted identifiers ("a""b": the name a"b) as Spark's backquoted ones (`a"b`):
    to Spark a double-quoted token is a string, and two adjacent ones are a concatenation with no name."""
    out, i = [], 0
    while i < len(ddl):
        ch = ddl[i]
        if ch not in "'`\"":
            out.append(ch)
            i += 1
            continue
        end = i + 1
        while end < len(ddl) and (ddl[end] != ch or ddl[end + 1:end + 2] == ch):  # a doubled quote is escaped
            end += 2 if ddl[end] == ch else 1
        if end >= len(ddl):  # unterminated: the parser names it
            out.append(ddl[i:])
            break
        body = ddl[i + 1:end]
        out.append(f"`{body.replace(ch * 2, ch).replace('`', '``')}`" if ch == '"' else ddl[i:end + 1])
        i = end + 1
    return "".join(out)


def parse_type(text: str):
    """One type string ('DECIMAL(10, 2)', 'ARRAY<STRING>') -> Spark DataType; anything more is refused."""
    if not isinstance(text, str) or not text.strip():
        raise SchemaMismatchError(f"a type string must be non-empty, got {text!r}")
    fields = parse_columns_ddl(f"_c {text}").fields
    if len(fields) != 1 or not fields[0].nullable:
        raise SchemaMismatchError(f"not a single type: {text!r}")
    return fields[0].dataType


def _nullable(col: exp.ColumnDef, ddl: str) -> bool:
    """False for NOT NULL; other constraints (DEFAULT, PRIMARY KEY, ...) are not taken here."""
    nullable = True
    for constraint in col.constraints:
        kind = constraint.kind
        if not isinstance(kind, exp.NotNullColumnConstraint):
            raise SchemaMismatchError(f"column {col.name!r}: {constraint.sql(dialect='spark')} is not supported in "
                                      f"a column list (only NOT NULL; defaults: set_column_default) in {ddl!r}")
        nullable = bool(kind.args.get("allow_null"))  # `NULL` parses as the same constraint, allowing nulls
    return nullable


def _first_line(exc: Exception) -> str:
    """sqlglot's message, with the token it stopped at (for 'x FOO': FOO, the type it does not know)."""
    errors = getattr(exc, "errors", None) or [{}]
    message = errors[0].get("description") or (str(exc).splitlines() or [type(exc).__name__])[0]
    return f"at {errors[0]['highlight']!r}: {message}" if errors[0].get("highlight") else message


def _to_spark(dtype: exp.DataType, ddl: str):
    from pyspark.sql import types as T

    name = dtype.this.name if hasattr(dtype.this, "name") else str(dtype.this)
    params = dtype.expressions
    arity = {"ARRAY": 1, "MAP": 2}.get(name)
    if arity is not None and len(params) != arity:
        raise SchemaMismatchError(f"bad type {dtype.sql(dialect='spark')} in {ddl!r}: {name} takes {arity} type(s)")
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
        try:
            precision, scale = (*(int(p.name) for p in params), 0)[:2] if params else (10, 0)  # DECIMAL(p): scale 0
            if len(params) > 2:
                raise ValueError("DECIMAL takes (precision[, scale])")
            if not 1 <= precision <= 38 or not 0 <= scale <= precision:  # DuckDB's (and Spark's) limits
                raise ValueError(f"precision 1..38 and scale 0..precision, got ({precision}, {scale})")
            return T.DecimalType(precision, scale)
        except ValueError as exc:  # DECIMAL(a, b), DECIMAL(1, 2, 3), DECIMAL(5, 9)
            raise SchemaMismatchError(f"bad type {dtype.sql(dialect='spark')} in {ddl!r}: {exc}") from exc
    if name in ("TIMESTAMP", "TIMESTAMPLTZ") and dtype.sql(dialect="spark").upper() == "TIMESTAMP":
        return T.TimestampType()  # Spark's TIMESTAMP is the local-time-zone kind
    if name == "TIMESTAMPNTZ":
        return T.TimestampNTZType()
    if name == "VARIANT":
        return T.VariantType()
    if name == "GEOMETRY":  # DuckLake's geometry (no CRS kept): Spark's GEOMETRY stands for it in a schema
        return T.GeometryType(0)
    if name in _SIMPLE:
        return getattr(T, _SIMPLE[name])()
    raise SchemaMismatchError(f"unsupported column type {dtype.sql(dialect='spark')} in {ddl!r}")
