"""Comparing table contents read by Spark and by DuckDB, value for value."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from decimal import Decimal


def normalize(value):
    """A comparable, hashable form of a value from either engine."""
    if value is None:
        return None
    if hasattr(value, "asDict"):
        value = value.asDict(recursive=True)
    if isinstance(value, dict):
        return tuple(sorted((str(k), normalize(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(normalize(v) for v in value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return value
    if isinstance(value, float):
        return "nan" if math.isnan(value) else round(value, 9)
    if isinstance(value, Decimal):
        return value.normalize()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    return value


def spark_rows(df) -> list[tuple]:
    """Rows of a Spark DataFrame, normalized and sorted."""
    return sorted((tuple(normalize(v) for v in row) for row in df.collect()), key=repr)


def duckdb_rows(con, sql: str) -> list[tuple]:
    """Rows of a DuckDB query, normalized and sorted."""
    return sorted((tuple(normalize(v) for v in row) for row in con.execute(sql).fetchall()), key=repr)


# DuckDB types spark-ducklake shows as strings (docs/types.md): compare their text forms.
_AS_TEXT = ("UUID", "TIME", "TIME WITH TIME ZONE", "INTERVAL")


def duckdb_select(con, relation: str) -> str:
    """SELECT list for a relation with the string-mapped types cast to VARCHAR, as we expose them."""
    cols = con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()
    parts = [f'"{name}"::VARCHAR' if dtype in _AS_TEXT else f'"{name}"' for name, dtype, *_ in cols]
    return f"SELECT {', '.join(parts)} FROM {relation}"
