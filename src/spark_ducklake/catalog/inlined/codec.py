"""Inlined data: per-dialect column types of `ducklake_inlined_data_*` tables and value (de)coding.

What the reference (DuckDB 1.5.5, ducklake d8a1881e) stores, observed in all three catalogs:

- DuckDB catalog: native DuckDB types, nested included. We bind scalars as text cast by DuckDB and read nested
  values natively, except nested values holding an INTERVAL (the Python driver turns months into 30 days), which
  we read as DuckDB's VARCHAR rendering.
- SQLite: integers and booleans (0/1) BIGINT, blob BLOB, everything else VARCHAR in DuckDB's text form
  (timestamptz in UTC with `+00`; floats `nan`/`inf`).
- PostgreSQL: int8/int16 smallint, int32/uint8/uint16 integer, int64/uint32 bigint, float32 real, float64 double
  precision, decimal numeric(p,s), boolean, varchar/json/blob bytea (UTF-8 bytes for text), uuid, time, timetz
  (`time with time zone`), interval; date, timestamps, uint64, int128/uint128 and nested types varchar.
- MySQL: see `inlined_mysql` (no nested types; values its columns cannot hold exactly are not inlined).

Nested values in SQLite/PostgreSQL are text in two styles. Lists and maps (and everything inside them) use DuckDB's
VARCHAR cast rendering: `[1, NULL]`, `{k=1}`, `{'a': 1}`, strings quoted only when needed with `\\'` and `\\\\`
escapes, blobs as `\\xNN` text. A top-level struct (and structs directly inside it) is written by the reference
as a SQL expression instead: `{'a': 'it''s', 'd': CAST('2024-01-01' AS DATE), 'f': CAST('nan' AS REAL)}`. DuckDB
itself cannot read that back for dates, timestamps, times, uuids, intervals, blobs, non-finite floats, strings with
`'` or `\\`, or field names with `'` (errors or silently altered values); we decode the intended values. What we
write is always the cast rendering, with struct field names in double quotes — a form the reference never writes,
so the two styles stay distinguishable and DuckDB reads our rows exactly.

Limits: `variant` is not inlined outside DuckDB catalogs (as in the reference), nor is any type without an Arrow
mapping. Values Arrow/Python cannot hold fail loudly: BC or infinite dates/timestamps, hugeint/uhugeint beyond 38
digits. timestamp_ns values are truncated to microseconds (their Arrow type). Inside nested values DuckDB's rendering
is ambiguous for JSON: a JSON `null` reads as SQL NULL and a JSON string loses its quotes (DuckDB reads it so too).
PostgreSQL text cannot hold NUL characters, so strings with NUL inside nested values cannot be inlined there.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal

import pyarrow as pa
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.types import UserDefinedType

from ...spec.model import Column
from ...spec.names import fits_postgres
from ...spec.types import _DECIMAL, float_text, parse_pg_interval, render_interval, to_arrow_type
from . import mysql as inlined_mysql

_SMALL_INTS = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"}
_BIG_INTS = {"uint64", "int128", "uint128"}  # Arrow decimal, text outside DuckDB
_TEXT_TYPES = {"varchar", "json", "uuid", "time", "timetz", "interval"}  # Arrow strings
_TIMESTAMPS = {"timestamp", "timestamp_s", "timestamp_ms", "timestamp_ns"}
_DUCK_NAMES = {
    "boolean": "BOOLEAN", "int8": "TINYINT", "int16": "SMALLINT", "int32": "INTEGER", "int64": "BIGINT",
    "uint8": "UTINYINT", "uint16": "USMALLINT", "uint32": "UINTEGER", "uint64": "UBIGINT", "int128": "HUGEINT",
    "uint128": "UHUGEINT", "float32": "FLOAT", "float64": "DOUBLE", "varchar": "VARCHAR", "json": "JSON",
    "blob": "BLOB", "date": "DATE", "time": "TIME", "timetz": "TIMETZ", "timestamp": "TIMESTAMP",
    "timestamptz": "TIMESTAMPTZ", "timestamp_s": "TIMESTAMP_S", "timestamp_ms": "TIMESTAMP_MS",
    "timestamp_ns": "TIMESTAMP_NS", "interval": "INTERVAL", "uuid": "UUID",
}
_PG_CAST = {"uuid": "UUID", "time": "TIME", "timetz": "TIME WITH TIME ZONE", "interval": "INTERVAL"}


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
        inner = ", ".join(f'"{c.name.replace(chr(34), chr(34) * 2)}" {duckdb_type_name(c)}' for c in col.children)
        return f"STRUCT({inner})"
    if _DECIMAL.fullmatch(col.type):
        return col.type.upper()
    return _DUCK_NAMES[col.type]


class CastFromText(UserDefinedType):
    """A column type given as SQL text; values are bound as text and cast by the database."""

    cache_ok = True

    def __init__(self, spec: str):
        self.spec = spec

    def get_col_spec(self, **kw) -> str:
        return self.spec

    def bind_expression(self, bindvalue):
        return sa.cast(sa.cast(bindvalue, sa.String), self)


# --------------------------------------------------------------------------------------------- tables
def _sql_type(col: Column, dialect: str):
    if dialect == "mysql":
        return inlined_mysql.sql_type(col)
    if dialect == "duckdb":
        native = {"boolean": sa.Boolean(), "int64": sa.BigInteger(), "float32": sa.Float(),
                  "float64": sa.Double(), "varchar": sa.String(), "blob": sa.LargeBinary()}
        return native.get(col.type) or CastFromText(duckdb_type_name(col))
    if dialect == "postgresql":
        if col.type in ("int8", "int16"):
            return sa.SmallInteger()
        if col.type in ("int32", "uint8", "uint16"):
            return sa.Integer()
        if col.type in ("int64", "uint32"):
            return sa.BigInteger()
        if (m := _DECIMAL.fullmatch(col.type)) is not None:
            return sa.Numeric(int(m.group(1)), int(m.group(2)))
        if col.type in _PG_CAST:
            return CastFromText(_PG_CAST[col.type])
        simple = {"float32": postgresql.REAL(), "float64": postgresql.DOUBLE_PRECISION(), "boolean": sa.Boolean(),
                  "varchar": postgresql.BYTEA(), "json": postgresql.BYTEA(), "blob": postgresql.BYTEA()}
        return simple.get(col.type) or sa.String()
    if col.type in _SMALL_INTS or col.type == "boolean":
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
    """ducklake_inlined_delete_<table_id>(file_id, row_id, begin_snapshot), BIGINT in every dialect."""
    return sa.Table(inlined_delete_table_name(table_id), metadata, sa.Column("file_id", sa.BigInteger),
                    sa.Column("row_id", sa.BigInteger), sa.Column("begin_snapshot", sa.BigInteger))


def _has_interval(col: Column) -> bool:
    return any(c.type == "interval" for c in col.walk())


def select_columns(table: sa.Table, columns: list[Column], dialect_name: str) -> list:
    """SELECT list (row_id, then the columns) whose results `decode_rows` expects."""
    out = [table.c.row_id]
    for col in columns:
        ref = table.c[col.name]
        as_text = False
        if dialect_name == "duckdb":
            as_text = col.type in _TEXT_TYPES or (col.is_nested and _has_interval(col))
        elif dialect_name == "postgresql":
            as_text = col.type in _PG_CAST
        out.append(sa.cast(ref, sa.String).label(col.name) if as_text else ref)
    return out


def inlinable(columns: list[Column], dialect_name: str, data: pa.Table | None = None) -> bool:
    """Whether rows of these columns (and, given `data`, these values) can be inlined in this catalog.

    Outside DuckDB catalogs DuckDB cannot read back a string holding `]` or `}` two or more levels deep in a
    nested value (its parser matches brackets there without regard to quotes), nor a NUL in PostgreSQL text.
    PostgreSQL would truncate a column name over 63 bytes: such tables are never inlined there (the reference's
    choice too).
    """
    if dialect_name == "postgresql" and not all(fits_postgres(c.name) for c in columns):
        return False
    for top in columns:
        for col in top.walk():
            if col.type == "variant" and dialect_name != "duckdb":
                return False
            if col.is_nested and dialect_name == "mysql":
                return False
            if col.type not in _DUCK_NAMES and not col.is_nested and not _DECIMAL.fullmatch(col.type):
                return False
    if data is None or dialect_name == "duckdb":
        return True
    if dialect_name == "mysql":
        return all(inlined_mysql.storable(col, v) for col in columns for v in data.column(col.name).to_pylist()
                   if v is not None)
    return not any(_unreadable(col, v, 0, dialect_name) for col in columns if col.is_nested
                   for v in data.column(col.name).to_pylist())


def _unreadable(col: Column, value, depth: int, dialect: str) -> bool:
    if value is None:
        return False
    if col.type == "list":
        return any(_unreadable(col.children[0], v, depth + 1, dialect) for v in value)
    if col.type == "struct":
        return any(_unreadable(c, value.get(c.name), depth + 1, dialect) for c in col.children)
    if col.type == "map":
        key, item = col.children
        return any(_unreadable(key, k, depth + 1, dialect) or _unreadable(item, v, depth + 1, dialect)
                   for k, v in value)
    if isinstance(value, str):
        return (depth >= 2 and ("]" in value or "}" in value)) or (dialect == "postgresql" and "\0" in value)
    return False


# --------------------------------------------------------------------------------------------- scalar text
def _format_time(value: dt.time) -> str:
    text = value.strftime("%H:%M:%S")
    if value.microsecond:
        text += f".{value.microsecond:06d}".rstrip("0")
    return text


def _format_offset(offset: dt.timedelta) -> str:
    seconds = int(offset.total_seconds())
    sign = "-" if seconds < 0 else "+"
    hours, rest = divmod(abs(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{sign}{hours:02d}"
    if minutes or secs:
        text += f":{minutes:02d}"
    if secs:
        text += f":{secs:02d}"
    return text


def _format_timestamp(value: dt.datetime) -> str:
    # Not strftime: its %Y writes year 1 as '1', which DuckDB reads but is no ISO date.
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d} " + _format_time(value.time())


def scalar_text(col: Column, value) -> str:
    """A non-NULL scalar in DuckDB's text form (what DuckDB renders and casts from)."""
    kind = col.type
    if kind == "boolean":
        return "true" if value else "false"
    if kind in ("float32", "float64"):
        return float_text(kind, value)
    if isinstance(value, Decimal):
        return format(value, "f")
    if kind == "blob":  # brackets too: DuckDB's parser matches them even inside quotes in deep values
        return "".join(chr(b) if 32 <= b < 127 and chr(b) not in "\"'\\[]{}" else f"\\x{b:02X}" for b in value)
    if kind == "timestamptz":
        utc = (value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)).astimezone(dt.timezone.utc)
        return _format_timestamp(utc.replace(tzinfo=None)) + "+00"
    if isinstance(value, dt.datetime):
        return _format_timestamp(value.replace(tzinfo=None))
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        text = _format_time(value)
        offset = value.utcoffset()
        return text + _format_offset(offset) if offset is not None else text
    return str(value)


def _parse_time_parts(text: str) -> tuple[dt.datetime, int]:
    """'YYYY-MM-DD HH:MM:SS[.fffffffff]' -> (datetime to the microsecond, characters consumed)."""
    # Years of any width: DuckDB reads '1-01-01' (what strftime wrote for year 1 in older lakes) as year 1.
    match = re.match(r"(-?\d+)-(\d\d)-(\d\d)(?:[ T](\d\d):(\d\d):(\d\d)(?:\.(\d+))?)?", text)
    if not match or text[match.end():].strip().startswith("(BC)"):
        raise ValueError(f"date/timestamp {text!r} is outside what Python and Arrow here can hold")
    year, month, day, hour, minute, sec, frac = match.groups()
    micros = int((frac or "0")[:6].ljust(6, "0"))
    value = dt.datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(sec or 0), micros)
    return value, match.end()


def _parse_offset(text: str) -> dt.timedelta:
    match = re.fullmatch(r"\s*([+-])(\d\d)(?::?(\d\d))?(?::?(\d\d))?\s*", text)
    if not match:
        raise ValueError(f"not a time zone offset: {text!r}")
    sign, hours, minutes, seconds = match.groups()
    offset = dt.timedelta(hours=int(hours), minutes=int(minutes or 0), seconds=int(seconds or 0))
    return -offset if sign == "-" else offset


def _sql_interval(text: str) -> str:
    """'12 months 3 days 1500000 microseconds' (the reference's SQL form) in DuckDB's rendering."""
    months, days, micros = (int(x) for x in re.fullmatch(r"(-?\d+) months (-?\d+) days (-?\d+) microseconds",
                                                          text.strip()).groups())
    return render_interval(months, days, micros)


def parse_scalar(col: Column, text: str):
    """DuckDB's text form of a scalar -> the Python value Arrow expects for the column."""
    kind = col.type
    if kind in _SMALL_INTS:
        return int(text)
    if kind in _BIG_INTS:
        return Decimal(int(text))
    if kind in ("float32", "float64"):
        return float(text)
    if kind.startswith("decimal"):
        return Decimal(text)
    if kind == "boolean":
        return text.strip().lower() in ("1", "true", "t")
    if kind == "date":
        return _parse_time_parts(text)[0].date()
    if kind in _TIMESTAMPS:
        return _parse_time_parts(text)[0]
    if kind == "timestamptz":
        value, end = _parse_time_parts(text)
        offset = _parse_offset(text[end:]) if text[end:].strip() else dt.timedelta(0)
        return (value - offset).replace(tzinfo=dt.timezone.utc)
    if kind == "blob":
        return _unescape_blob(text)
    return text


def _unescape_blob(text: str) -> bytes:
    out, i = bytearray(), 0
    while i < len(text):
        if text.startswith("\\x", i) and re.fullmatch(r"[0-9a-fA-F]{2}", text[i + 2:i + 4]):
            out.append(int(text[i + 2:i + 4], 16))
            i += 4
        else:
            out.extend(text[i].encode("utf-8"))
            i += 1
    return bytes(out)


# --------------------------------------------------------------------------------------------- nested text
def _quote(text: str, mark: str = "'") -> str:
    return mark + text.replace("\\", "\\\\").replace(mark, "\\" + mark) + mark


def render(col: Column, value) -> str:
    """A (nested) value in DuckDB's VARCHAR cast form, as DuckDB parses it back; struct names double-quoted."""
    if value is None:
        return "NULL"
    if col.type == "list":
        return "[" + ", ".join(render(col.children[0], v) for v in value) + "]"
    if col.type == "struct":
        get = value.get if isinstance(value, Mapping) else dict(zip([c.name for c in col.children], value,
                                                                    strict=False)).get
        return "{" + ", ".join(f"{_quote(c.name, chr(34))}: {render(c, get(c.name))}" for c in col.children) + "}"
    if col.type == "map":
        key, item = col.children
        pairs = value.items() if isinstance(value, Mapping) else value
        return "{" + ", ".join(f"{render(key, k)}={render(item, v)}" for k, v in pairs) + "}"
    text = scalar_text(col, value)
    if col.type in ("boolean", "float32", "float64") or col.type in _SMALL_INTS | _BIG_INTS \
            or col.type.startswith("decimal"):
        return text
    return _quote(text)


_SPACE = " \t\n\r\v\f"


class _NestedReader:
    """Type-directed parser of DuckDB's nested text; `sql_structs` marks the reference's SQL-style structs."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def fail(self, what: str):
        raise ValueError(f"cannot parse inlined value {self.text!r} at {self.pos}: expected {what}")

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in _SPACE:
            self.pos += 1

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            self.fail(repr(char))
        self.pos += 1

    def null(self) -> bool:
        self.skip()
        if self.text[self.pos:self.pos + 4].upper() == "NULL":
            rest = self.text[self.pos + 4:].lstrip(_SPACE)
            if not rest or rest[0] in ",]}=:)":
                self.pos += 4
                return True
        return False

    def value(self, col: Column, sql_style: bool):
        if self.null():
            return None
        if col.type == "list":
            return self.items("[", "]", lambda: self.value(col.children[0], False))
        if col.type == "map":
            key, item = col.children

            def pair():
                k = self.value(key, False)
                self.expect("=")
                return k, self.value(item, False)
            return self.items("{", "}", pair)
        if col.type == "struct":
            return self.struct(col, sql_style)
        if sql_style:
            return self.sql_scalar(col)
        return self.scalar(col, ",]}=")

    def items(self, open_: str, close: str, item) -> list:
        self.expect(open_)
        out = []
        if self.peek() == close:
            self.pos += 1
            return out
        while True:
            out.append(item())
            if self.peek() == ",":
                self.pos += 1
                continue
            self.expect(close)
            return out

    def struct(self, col: Column, sql_style: bool) -> dict:
        by_name = {c.name: c for c in col.children}
        self.expect("{")
        sql_style = sql_style and self.peek() == "'"  # what we write has double-quoted names
        out = {c.name: None for c in col.children}
        if self.peek() == "}":
            self.pos += 1
            return out
        while True:
            name = self.sql_string() if sql_style else self.scalar(None, ":")
            self.expect(":")
            child = by_name.get(name) or next((c for c in col.children if c.name.lower() == str(name).lower()), None)
            if child is None:
                self.fail(f"a field of {[c.name for c in col.children]}")
            out[child.name] = self.value(child, sql_style)
            if self.peek() == ",":
                self.pos += 1
                continue
            self.expect("}")
            return out

    def quoted(self) -> str:
        mark, out = self.text[self.pos], []
        self.pos += 1
        while self.pos < len(self.text) and self.text[self.pos] != mark:
            if self.text[self.pos] == "\\" and self.pos + 1 < len(self.text):
                self.pos += 1
            out.append(self.text[self.pos])
            self.pos += 1
        self.expect(mark)
        return "".join(out)

    def scalar(self, col: Column | None, stops: str):
        """A cast-style scalar: quoted with backslash escapes, or bare up to a separator (JSON may nest)."""
        if self.peek() in ("'", '"'):
            text = self.quoted()
        else:
            start, depth = self.pos, 0
            while self.pos < len(self.text):
                ch = self.text[self.pos]
                if depth == 0 and ch in stops:
                    break
                if ch in "[{":
                    depth += 1
                elif ch in "]}":
                    depth -= 1
                elif ch == '"':  # a JSON string inside a bare JSON value
                    self.quoted()
                    continue
                self.pos += 1
            text = self.text[start:self.pos].strip(_SPACE)
        return text if col is None else parse_scalar(col, text)

    def sql_string(self) -> str:
        """'...' with doubled quotes (the reference's SQL literals)."""
        self.expect("'")
        out = []
        while True:
            end = self.text.find("'", self.pos)
            if end < 0:
                self.fail("closing quote")
            out.append(self.text[self.pos:end])
            self.pos = end + 1
            if self.text.startswith("'", self.pos):
                out.append("'")
                self.pos += 1
                continue
            return "".join(out)

    def sql_scalar(self, col: Column):
        """A scalar of the reference's SQL-style struct: literal, CONCAT(...chr(0)...) or CAST('..' AS type)."""
        self.skip()
        if self.peek() == "'":
            return parse_scalar(col, self.sql_string())
        if self.text.startswith("CONCAT(", self.pos):
            self.pos += len("CONCAT(")
            parts = []
            while self.peek() != ")":
                parts.append(self.sql_string() if self.peek() == "'" else self.chr_call())
                if self.peek() == ",":
                    self.pos += 1
            self.pos += 1
            return parse_scalar(col, "".join(parts))
        if self.text.startswith("CAST(", self.pos):
            self.pos += len("CAST(")
            text = self.sql_string()
            match = re.compile(r"\s+AS\s+([^)]*)\)").match(self.text, self.pos)
            if not match:
                self.fail("AS <type>)")
            self.pos = match.end()
            return parse_scalar(col, _sql_interval(text) if col.type == "interval" else text)
        return self.scalar(col, ",}")

    def chr_call(self) -> str:
        match = re.compile(r"chr\((\d+)\)").match(self.text, self.pos)
        if not match:
            self.fail("chr(n)")
        self.pos = match.end()
        return chr(int(match.group(1)))


def parse_nested(col: Column, text: str, reference_sql_structs: bool = True):
    """DuckDB's text of a nested value -> Python value for Arrow (lists, dicts, lists of (key, value) pairs).

    `reference_sql_structs`: a top-level struct may be the reference's SQL-style rendering (SQLite/PostgreSQL).
    """
    reader = _NestedReader(text)
    value = reader.value(col, reference_sql_structs and col.type == "struct")
    if reader.peek():
        reader.fail("end of value")
    return value


# --------------------------------------------------------------------------------------------- rows
def encode_rows(table: pa.Table, columns: list[Column], dialect_name: str) -> list[dict]:
    """Arrow rows -> parameter dicts for the inlined data table (without row_id / snapshots)."""
    encoded = []
    for col in columns:
        values = table.column(col.name).to_pylist()
        encoded.append([None if v is None else _encode(col, v, dialect_name) for v in values])
    names = [col.name for col in columns]
    return [dict(zip(names, row, strict=True)) for row in zip(*encoded, strict=True)] if columns else \
        [{} for _ in range(table.num_rows)]


def _encode(col: Column, value, dialect: str):
    kind = col.type
    if col.is_nested:
        return render(col, value)
    if dialect == "mysql":
        return inlined_mysql.encode(col, value, scalar_text)
    if kind in _SMALL_INTS:
        return int(value)
    if kind == "boolean":
        return int(value) if dialect == "sqlite" else bool(value)
    if kind == "blob":
        return bytes(value)
    if dialect == "postgresql":
        if kind in ("float32", "float64"):
            return float(value)
        if kind.startswith("decimal"):
            return Decimal(value)
        if kind in ("varchar", "json"):
            return str(value).encode("utf-8")
    if dialect == "duckdb" and kind in ("float32", "float64", "varchar"):
        return value
    return scalar_text(col, value)


def decode_rows(rows: Sequence[Mapping], columns: list[Column], dialect_name: str) -> pa.Table:
    """Rows read from an inlined data table (with `select_columns`) -> Arrow table of the columns' types."""
    arrays = []
    for col in columns:
        values = [_decode(col, row[col.name], dialect_name) for row in rows]
        arrays.append(pa.array(values, type=to_arrow_type(col)))
    return pa.Table.from_arrays(arrays, schema=pa.schema([pa.field(c.name, to_arrow_type(c)) for c in columns]))


def _decode(col: Column, value, dialect: str):
    if value is None:
        return None
    if isinstance(value, memoryview | bytearray):
        value = bytes(value)
    if col.is_nested:
        if isinstance(value, bytes):
            value = value.decode("utf-8")
        if isinstance(value, str):
            return parse_nested(col, value, reference_sql_structs=dialect != "duckdb")
        return _from_driver(col, value)
    if dialect == "postgresql" and col.type == "interval":
        return parse_pg_interval(str(value))
    return _from_driver(col, value)


def _from_driver(col: Column, value):
    """A driver value (possibly nested Python lists/dicts) as the Python value Arrow expects."""
    if value is None:
        return None
    if col.type == "list":
        return [_from_driver(col.children[0], v) for v in value]
    if col.type == "struct":
        return {c.name: _from_driver(c, value.get(c.name)) for c in col.children}
    if col.type == "map":
        key, item = col.children
        pairs = value.items() if isinstance(value, Mapping) else value
        return [(_from_driver(key, k), _from_driver(item, v)) for k, v in pairs]
    if isinstance(value, bytes):
        return value if col.type == "blob" else parse_scalar(col, value.decode("utf-8"))
    if isinstance(value, str):
        return parse_scalar(col, value)
    if col.type in _TEXT_TYPES:
        if isinstance(value, dt.time | uuid.UUID):
            return scalar_text(col, value)
        return str(value)
    if col.type in _BIG_INTS:
        return Decimal(int(value))
    if col.type == "boolean":
        return bool(value)
    if col.type == "timestamptz" and isinstance(value, dt.datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
        return aware.astimezone(dt.timezone.utc)
    return value
