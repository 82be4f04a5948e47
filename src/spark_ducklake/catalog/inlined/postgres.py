"""Inlined data in PostgreSQL catalogs, with the column types the reference creates there.

int8/int16 smallint, int32/uint8/uint16 integer, int64/uint32 bigint, float32 real, float64 double precision,
decimal numeric(p,s), boolean, varchar/json/blob bytea (UTF-8 bytes for text), uuid, time, timetz (`time with time
zone`), interval; date, timestamps, uint64, int128/uint128 and nested types varchar. Text cannot hold NUL, so
strings with NUL inside nested values are not inlined. A column name over 63 bytes would be truncated: such tables
are never inlined (the reference's choice too).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from ...spec.model import Column
from ...spec.names import fits_postgres
from ...spec.types import DECIMAL_TYPE, parse_pg_interval
from .storage import InlinedStorage
from .text import CastFromText

_CAST = {"uuid": "UUID", "time": "TIME", "timetz": "TIME WITH TIME ZONE", "interval": "INTERVAL"}
_SIMPLE = {"float32": postgresql.REAL, "float64": postgresql.DOUBLE_PRECISION, "boolean": sa.Boolean,
           "varchar": postgresql.BYTEA, "json": postgresql.BYTEA, "blob": postgresql.BYTEA}


class PostgresStorage(InlinedStorage):
    """The reference's PostgreSQL types (see the module docstring)."""

    text_holds_nul = False

    def column_type(self, col: Column) -> sa.types.TypeEngine[Any]:
        """The reference's PostgreSQL type."""
        if col.type in ("int8", "int16"):
            return sa.SmallInteger()
        if col.type in ("int32", "uint8", "uint16"):
            return sa.Integer()
        if col.type in ("int64", "uint32"):
            return sa.BigInteger()
        if (m := DECIMAL_TYPE.fullmatch(col.type)) is not None:
            return sa.Numeric(int(m.group(1)), int(m.group(2)))
        if col.type in _CAST:
            return CastFromText(_CAST[col.type])
        return _SIMPLE.get(col.type, sa.String)()

    def inlines_columns(self, columns: list[Column]) -> bool:
        """Not when a column name would be truncated (over 63 bytes)."""
        return self.creates_table(columns) and super().inlines_columns(columns)

    def creates_table(self, columns: list[Column]) -> bool:
        """Not when a column name would be truncated: the reference writes Parquet then."""
        return all(fits_postgres(c.name) for c in columns)

    def reads_as_text(self, col: Column) -> bool:
        """uuid, time, timetz and interval: in DuckDB's text form."""
        return col.type in _CAST

    def encode(self, col: Column, value: Any) -> Any:
        """Floats, decimals and text (as UTF-8 bytea) natively; the rest as the base does."""
        if col.type in ("float32", "float64"):
            return float(value)
        if col.type.startswith("decimal"):
            return Decimal(value)
        if col.type in ("varchar", "json"):
            return str(value).encode("utf-8")
        return super().encode(col, value)

    def read(self, col: Column, value: Any) -> Any:
        """Intervals from PostgreSQL's rendering to DuckDB's."""
        return parse_pg_interval(str(value)) if col.type == "interval" else value
