"""Inlined data: per-dialect column types of `ducklake_inlined_data_*` tables and value (de)coding.

The reference stores inlined rows natively in a DuckDB catalog; in SQLite and PostgreSQL most non-integer values
are text, and nested values are DuckDB's text rendering (`[1, 2]`, `{'a': 1}`, `{k=1}`), which we both parse and
produce. Limits: blobs inside nested values are not inlined (DuckDB's rendering of them is not reversible), and
neither is `variant` outside DuckDB catalogs — `inlinable()` says so and the writer uses Parquet instead.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from decimal import Decimal

import pyarrow as pa
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.types import UserDefinedType

from .model import Column
from .types import _DECIMAL, convert_nested, parse_literal, parse_pg_interval, to_arrow_type

_INTS = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"}
_STRINGLIKE = {"uuid", "time", "timetz", "interval", "json"}
_DUCK_NAMES = {
    "boolean": "BOOLEAN", "int8": "TINYINT", "int16": "SMALLINT", "int32": "INTEGER", "int64": "BIGINT",
    "uint8": "UTINYINT", "uint16": "USMALLINT", "uint32": "UINTEGER", "uint64": "UBIGINT", "int128": "HUGEINT",
    "uint128": "UHUGEINT", "float32": "FLOAT", "float64": "DOUBLE", "varchar": "VARCHAR", "json": "JSON",
    "blob": "BLOB", "date": "DATE", "time": "TIME", "timetz": "TIMETZ", "timestamp": "TIMESTAMP",
    "timestamptz": "TIMESTAMPTZ", "timestamp_s": "TIMESTAMP_S", "timestamp_ms": "TIMESTAMP_MS",
    "timestamp_ns": "TIMESTAMP_NS", "interval": "INTERVAL", "uuid": "UUID",
}


def inlined_table_name(table_id: int, schema_version: int) -> str:
    """ducklake_inlined_data_<table_id>_<schema_version>"""
    return f"ducklake_inlined_data_{table_id}_{schema_version}"


def inlined_delete_table_name(table_id: int) -> str:
    """ducklake_inlined_delete_<table_id>"""
    return f"ducklake_inlined_delete_{table_id}"


def duckdb_type_name(col: Column) -> str:
    """The DuckDB SQL type of a column (nested included)."""
    if col.type == "list":
        return duckdb_type_name(col.children[0]) + "[]"
    if col.type == "map":
        return f"MAP({duckdb_type_name(col.children[0])}, {duckdb_type_name(col.children[1])})"
    if col.type == "struct":
        inner = ", ".join(f'"{c.name}" {duckdb_type_name(c)}' for c in col.children)
        return f"STRUCT({inner})"
    if _DECIMAL.fullmatch(col.type):
        return col.type.upper()
    return _DUCK_NAMES[col.type]


class DuckDBType(UserDefinedType):
    """A DuckDB column type given as SQL text; values are bound as text and cast by DuckDB."""

    cache_ok = True

    def __init__(self, spec: str, cast_bind: bool = True):
        self.spec = spec
        self.cast_bind = cast_bind

    def get_col_spec(self, **kw) -> str:
        return self.spec

    def bind_expression(self, bindvalue):
        if not self.cast_bind:
            return bindvalue
        return sa.cast(sa.cast(bindvalue, sa.String), self)


def _sql_type(col: Column, dialect: str):
    if dialect == "duckdb":
        if col.type in _INTS | {"int64", "float32", "float64", "boolean", "blob", "varchar"}:
            return {"float32": sa.Float(), "float64": sa.Double(), "boolean": sa.Boolean(),
                    "blob": sa.LargeBinary(), "varchar": sa.String()}.get(
                        col.type, DuckDBType(_DUCK_NAMES[col.type], cast_bind=False))
        return DuckDBType(duckdb_type_name(col))
    if dialect == "postgresql":
        if col.type in ("int8", "int16"):
            return sa.SmallInteger()
        if col.type in ("int32", "uint8", "uint16"):
            return sa.Integer()
        if col.type in ("int64", "uint32"):
            return sa.BigInteger()
        if col.type == "float32":
            return postgresql.REAL()
        if col.type == "float64":
            return postgresql.DOUBLE_PRECISION()
        if (m := _DECIMAL.fullmatch(col.type)) is not None:
            return sa.Numeric(int(m.group(1)), int(m.group(2)))
        if col.type == "boolean":
            return sa.Boolean()
        if col.type in ("varchar", "json", "blob"):
            return postgresql.BYTEA()
        if col.type == "uuid":
            return postgresql.UUID(as_uuid=False)
        if col.type == "time":
            return sa.Time()
        if col.type == "interval":
            return postgresql.INTERVAL()
        return sa.String()
    # sqlite
    if col.type in _INTS or col.type == "boolean":
        return sa.BigInteger()
    if col.type == "blob":
        return sa.LargeBinary()
    return sa.String()


def inlined_data_table(metadata: sa.MetaData, dialect_name: str, table_id: int, schema_version: int,
                       columns: list[Column]) -> sa.Table:
    """The inlined data table with the column types the reference creates in this dialect."""
    cols = [sa.Column("row_id", sa.BigInteger), sa.Column("begin_snapshot", sa.BigInteger),
            sa.Column("end_snapshot", sa.BigInteger)]
    cols += [sa.Column(col.name, _sql_type(col, dialect_name), quote=True) for col in columns]
    return sa.Table(inlined_table_name(table_id, schema_version), metadata, *cols)


def inlined_delete_table(metadata: sa.MetaData, dialect_name: str, table_id: int) -> sa.Table:
    """ducklake_inlined_delete_<table_id>(file_id, row_id, begin_snapshot)."""
    return sa.Table(inlined_delete_table_name(table_id), metadata, sa.Column("file_id", sa.BigInteger),
                    sa.Column("row_id", sa.BigInteger), sa.Column("begin_snapshot", sa.BigInteger))


def select_columns(table: sa.Table, columns: list[Column], dialect_name: str) -> list:
    """SELECT list for an inlined data table; DuckDB renders the string-mapped types itself."""
    out = [table.c.row_id]
    for col in columns:
        ref = table.c[col.name]
        if dialect_name == "duckdb" and col.type in _STRINGLIKE:
            ref = sa.cast(ref, sa.String).label(col.name)
        elif dialect_name == "postgresql" and col.type in ("interval", "time", "timetz", "uuid"):
            ref = sa.cast(ref, sa.String).label(col.name)
        out.append(ref)
    return out


def inlinable(columns: list[Column], dialect_name: str) -> bool:
    """Whether rows of these columns can be inlined in this catalog (else the writer uses Parquet)."""
    for top in columns:
        for col in top.walk():
            if col.type == "variant" and dialect_name != "duckdb":
                return False
            if col is not top and col.type == "blob" and dialect_name != "duckdb":
                return False
            if col.type not in _DUCK_NAMES and col.type not in ("list", "map", "struct") \
                    and not _DECIMAL.fullmatch(col.type):
                return False
    return True


# ----------------------------------------------------------------------------------------- encoding
def encode_rows(table: pa.Table, columns: list[Column], dialect_name: str) -> list[dict]:
    """Arrow rows -> parameter dicts for the inlined data table (without row_id / snapshots)."""
    pylists = [table.column(col.name).to_pylist() for col in columns]
    rows = []
    for i in range(table.num_rows):
        rows.append({col.name: _encode(col, pylists[j][i], dialect_name) for j, col in enumerate(columns)})
    return rows


def _encode(col: Column, value, dialect: str):
    if value is None:
        return None
    if col.type in _INTS or col.type == "int64":
        return int(value)
    if col.type == "boolean":
        return int(value) if dialect == "sqlite" else bool(value)
    if col.type == "blob":
        return bytes(value)
    if col.is_nested:
        return render(col, value)
    if dialect == "postgresql":
        if col.type in ("float32", "float64"):
            return float(value)
        if _DECIMAL.fullmatch(col.type):
            return Decimal(value)
        if col.type in ("varchar", "json"):
            return str(value).encode("utf-8")
    if dialect == "duckdb" and col.type in ("float32", "float64", "varchar"):
        return value
    return _scalar_text(col, value)


def _scalar_text(col: Column, value) -> str:
    if isinstance(value, float):
        if value != value:
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, dt.datetime):
        if col.type == "timestamptz":
            value = (value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)).astimezone(dt.timezone.utc)
            return value.replace(tzinfo=None).isoformat(sep=" ") + "+00"
        return value.replace(tzinfo=None).isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def render(col: Column, value) -> str:
    """DuckDB's VARCHAR rendering of a nested value, as DuckDB parses it back."""
    if value is None:
        return "NULL"
    if col.type == "list":
        return "[" + ", ".join(render(col.children[0], v) for v in value) + "]"
    if col.type == "struct":
        names = [c.name for c in col.children]
        items = value.items() if isinstance(value, Mapping) else zip(names, value, strict=False)
        by_name = dict(items)
        return "{" + ", ".join(f"{_quote(c.name)}: {render(c, by_name.get(c.name))}" for c in col.children) + "}"
    if col.type == "map":
        pairs = value.items() if isinstance(value, Mapping) else value
        key, val = col.children
        return "{" + ", ".join(f"{render(key, k)}={render(val, v)}" for k, v in pairs) + "}"
    text = _scalar_text(col, value)
    if col.type in ("varchar", "json", "uuid", "date", "time", "timetz", "interval") or \
            col.type.startswith("timestamp"):
        return _quote(text)
    return text


def _quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


# ----------------------------------------------------------------------------------------- decoding
def decode_rows(rows: Sequence[Mapping], columns: list[Column], dialect_name: str) -> pa.Table:
    """Rows read from an inlined data table -> Arrow table of the columns' Arrow types."""
    arrays = []
    for col in columns:
        values = [_decode(col, row[col.name], dialect_name) for row in rows]
        arrays.append(pa.array(values, type=to_arrow_type(col)))
    return pa.Table.from_arrays(arrays, names=[c.name for c in columns])


def _decode(col: Column, value, dialect: str):
    if value is None:
        return None
    if dialect == "postgresql" and col.type == "interval":
        return parse_pg_interval(str(value))
    if col.is_nested and isinstance(value, str | bytes):
        value = parse_nested(value.decode() if isinstance(value, bytes) else value)
    return convert_nested(col, value, _convert)


def _convert(col: Column, value):
    """A raw scalar (text from a nested rendering, or a driver value) as the Python value Arrow expects."""
    if value is None:
        return None
    if isinstance(value, bytes | memoryview | bytearray):
        value = bytes(value)
        return value if col.type == "blob" else value.decode("utf-8")
    if col.type in _STRINGLIKE:
        if isinstance(value, dt.time):
            return value.isoformat()
        return str(value)
    if isinstance(value, str):
        if col.type == "varchar":
            return value
        if col.type in ("uint64", "int128", "uint128"):
            return Decimal(value)
        return parse_literal(col.type, value)
    if col.type in ("uint64", "int128", "uint128"):
        return Decimal(int(value))
    if col.type == "boolean":
        return bool(value)
    if col.type == "timestamptz" and isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.replace(tzinfo=dt.timezone.utc)
    return value


def parse_nested(text: str):
    """Parse DuckDB's rendering of a nested value into lists, dicts (struct), list-of-pairs (map), scalars.

    Scalars come back as strings (None for NULL); `_convert` types them by the column.
    """
    value, pos = _parse(text, 0)
    return value


_MAP_MARK = object()


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] == " ":
        pos += 1
    return pos


def _parse(text: str, pos: int):
    pos = _skip(text, pos)
    ch = text[pos]
    if ch == "[":
        items, pos = [], _skip(text, pos + 1)
        if text[pos] == "]":
            return items, pos + 1
        while True:
            item, pos = _parse(text, pos)
            items.append(item)
            pos = _skip(text, pos)
            if text[pos] == ",":
                pos += 1
                continue
            return items, pos + 1  # ']'
    if ch == "{":
        entries, pos = [], _skip(text, pos + 1)
        is_map = False
        if text[pos] == "}":
            return {}, pos + 1
        while True:
            key, pos = _scalar(text, pos, stops=":=")
            pos = _skip(text, pos)
            is_map = text[pos] == "="
            value, pos = _parse(text, pos + 1)
            entries.append((key, value))
            pos = _skip(text, pos)
            if text[pos] == ",":
                pos += 1
                continue
            pos += 1  # '}'
            return (entries if is_map else dict(entries)), pos
    return _scalar(text, pos, stops=",]}")


def _scalar(text: str, pos: int, stops: str):
    pos = _skip(text, pos)
    if text[pos] == "'":
        out, pos = [], pos + 1
        while text[pos] != "'":
            if text[pos] == "\\" and pos + 1 < len(text):
                pos += 1
            out.append(text[pos])
            pos += 1
        return "".join(out), pos + 1
    start = pos
    depth = 0
    while pos < len(text) and (depth or text[pos] not in stops):
        if text[pos] in "[{":
            depth += 1
        elif text[pos] in "]}":
            depth -= 1
        pos += 1
    raw = text[start:pos].strip()
    return (None if raw == "NULL" else raw), pos
