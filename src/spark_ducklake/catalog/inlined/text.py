"""DuckDB's text forms of scalar values and its type names: what inlined columns hold in every catalog but DuckDB's
own (which stores native values), and what DuckDB casts from and renders.

Values Arrow/Python cannot hold fail loudly: BC or infinite dates/timestamps, hugeint/uhugeint beyond 38 digits.
timestamp_ns values are truncated to microseconds (their Arrow type).
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy.types import UserDefinedType

from ...spec.model import Column
from ...spec.types import DECIMAL_TYPE, float_text

SMALL_INTS = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"}
BIG_INTS = {"uint64", "int128", "uint128"}  # Arrow decimal, text outside DuckDB
TEXT_TYPES = {"varchar", "json", "uuid", "time", "timetz", "interval"}  # Arrow strings
TIMESTAMPS = {"timestamp", "timestamp_s", "timestamp_ms", "timestamp_ns"}

DUCK_NAMES = {
    "boolean": "BOOLEAN", "int8": "TINYINT", "int16": "SMALLINT", "int32": "INTEGER", "int64": "BIGINT",
    "uint8": "UTINYINT", "uint16": "USMALLINT", "uint32": "UINTEGER", "uint64": "UBIGINT", "int128": "HUGEINT",
    "uint128": "UHUGEINT", "float32": "FLOAT", "float64": "DOUBLE", "varchar": "VARCHAR", "json": "JSON",
    "blob": "BLOB", "date": "DATE", "time": "TIME", "timetz": "TIMETZ", "timestamp": "TIMESTAMP",
    "timestamptz": "TIMESTAMPTZ", "timestamp_s": "TIMESTAMP_S", "timestamp_ms": "TIMESTAMP_MS",
    "timestamp_ns": "TIMESTAMP_NS", "interval": "INTERVAL", "uuid": "UUID",
}


def has_duckdb_type(col: Column) -> bool:
    """Whether the column is nested or of a scalar type DuckDB names (types without one are never inlined)."""
    return col.type in DUCK_NAMES or col.is_nested or DECIMAL_TYPE.fullmatch(col.type) is not None


def duckdb_type_name(col: Column) -> str:
    """The DuckDB SQL type of a column (nested included)."""
    if col.type == "list":
        return duckdb_type_name(col.children[0]) + "[]"
    if col.type == "map":
        return f"MAP({duckdb_type_name(col.children[0])}, {duckdb_type_name(col.children[1])})"
    if col.type == "struct":
        inner = ", ".join(f'"{c.name.replace(chr(34), chr(34) * 2)}" {duckdb_type_name(c)}' for c in col.children)
        return f"STRUCT({inner})"
    if DECIMAL_TYPE.fullmatch(col.type) or col.type in ("variant", "geometry"):
        return col.type.upper()
    return DUCK_NAMES[col.type]


class CastFromText(UserDefinedType[Any]):
    """A column type given as SQL text; values are bound as text and cast by the database."""

    cache_ok = True

    def __init__(self, spec: str) -> None:
        self.spec = spec

    def get_col_spec(self, **kw: Any) -> str:
        return self.spec

    def bind_expression(self, bindvalue: Any) -> Any:
        return sa.cast(sa.cast(bindvalue, sa.String), self)


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


def scalar_text(col: Column, value: Any) -> str:
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


def parse_scalar(col: Column, text: str) -> Any:
    """DuckDB's text form of a scalar -> the Python value Arrow expects for the column."""
    kind = col.type
    if kind in SMALL_INTS:
        return int(text)
    if kind in BIG_INTS:
        return Decimal(int(text))
    if kind in ("float32", "float64"):
        return float(text)
    if kind.startswith("decimal"):
        return Decimal(text)
    if kind == "boolean":
        return text.strip().lower() in ("1", "true", "t")
    if kind == "date":
        return _parse_time_parts(text)[0].date()
    if kind in TIMESTAMPS:
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
