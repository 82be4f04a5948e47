"""Arrow values as Spark shows them (intervals as text, ...): what the pyarrow readers return where a column's
Spark stand-in type differs from its Arrow type."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any

from ...spec import types
from ...spec.model import Column

PER_VALUE = {"uint64", "int128", "uint128", "variant"}  # stored as another Parquet type, or shredded


def spark_value(col: Column, value: Any) -> Any:
    """A scalar as pyarrow read it, converted to what the column's Spark type expects."""
    if col.type == "uuid":
        return str(uuid.UUID(bytes=value)) if isinstance(value, bytes) else str(value)
    if col.type in ("time", "timetz"):
        text = value.isoformat() if isinstance(value, dt.time) else str(value)
        if "." in text:  # DuckDB's rendering: fractional seconds without trailing zeros
            text = text.rstrip("0").rstrip(".")
        return text + "+00" if col.type == "timetz" and isinstance(value, dt.time) else text  # stored in UTC
    if col.type == "interval":
        return _interval_text(value)
    if col.type in ("int128", "uint128", "uint64"):
        return Decimal(int(value))  # DuckDB stores int128 as DOUBLE in Parquet
    if col.type == "timestamp_ns" and hasattr(value, "to_pydatetime"):
        return value.to_pydatetime(warn=False)
    if col.type == "json" and isinstance(value, bytes):
        return value.decode("utf-8")
    return value


def _interval_text(value: Any) -> str:
    """A Parquet INTERVAL (months, days, millis little endian) in DuckDB's rendering."""
    if isinstance(value, bytes) and len(value) == 12:
        months, days, millis = (int.from_bytes(value[i:i + 4], "little", signed=True) for i in (0, 4, 8))
        return types.render_interval(months, days, millis * 1000)
    if hasattr(value, "months"):  # pyarrow MonthDayNano
        return types.render_interval(value.months, value.days, value.nanoseconds // 1000)
    return str(value)
