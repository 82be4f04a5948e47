"""Inlined data in MySQL/MariaDB catalogs: the column types the reference creates there, and what they can hold.

The reference (DuckDB 1.5.5 with the mysql extension) creates `ducklake_inlined_data_*` columns as: int8 TINYINT,
int16 SMALLINT, int32 INT, int64 BIGINT, uint8..uint64 the UNSIGNED variants, int128 DOUBLE, uint128 TEXT,
float32 FLOAT, float64 DOUBLE, decimal(p,s) DECIMAL(p,s), boolean TINYINT(1), date DATE, every timestamp type
DATETIME (whole seconds; timestamptz in UTC), blob BLOB, and varchar/json/uuid/time/timetz/interval TEXT in
DuckDB's text form. It cannot create one for nested or variant columns at all (CREATE TABLE fails), so neither do
we, and such tables never inline.

Those columns lose what they cannot hold: fractions of seconds, NaN and infinities (MySQL has none), integers
beyond 2^53 in DOUBLE, and more than 65,535 bytes of TEXT/BLOB. Rows with such values are written to Parquet
instead of inlined, so nothing is silently altered.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import Any

import pyarrow as pa
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

from ...errors import DuckLakeError
from ...spec.model import Column
from ...spec.types import DECIMAL_TYPE
from .storage import InlinedStorage
from .text import scalar_text

_INTS = {
    "int8": mysql.TINYINT(), "int16": mysql.SMALLINT(), "int32": mysql.INTEGER(), "int64": mysql.BIGINT(),
    "uint8": mysql.TINYINT(unsigned=True), "uint16": mysql.SMALLINT(unsigned=True),
    "uint32": mysql.INTEGER(unsigned=True), "uint64": mysql.BIGINT(unsigned=True),
}
_DATETIMES = {"timestamp", "timestamp_s", "timestamp_ms", "timestamp_ns", "timestamptz"}
_MAX_TEXT_BYTES = 65_535  # TEXT and BLOB
_EXACT_DOUBLE = 2**53


def sql_type(col: Column) -> sa.types.TypeEngine[Any]:
    """The inlined-data column type the reference creates for a (non-nested) column."""
    kind = col.type
    if kind in _INTS:
        return _INTS[kind]
    if (m := DECIMAL_TYPE.fullmatch(kind)) is not None:
        return mysql.DECIMAL(int(m.group(1)), int(m.group(2)))
    if kind == "float32":
        return mysql.FLOAT()
    if kind in ("float64", "int128"):
        return mysql.DOUBLE(asdecimal=False)
    if kind == "boolean":
        return sa.Boolean()
    if kind == "date":
        return sa.Date()
    if kind in _DATETIMES:
        return mysql.DATETIME()
    if kind == "blob":
        return mysql.BLOB()
    return mysql.TEXT()


def encode(col: Column, value: Any, text_form: Any) -> Any:
    """A non-NULL Arrow scalar as bound for the column; `text_form` renders DuckDB's text form."""
    if not storable(col, value):  # writers check `storable` first; never let MySQL alter a value silently
        raise DuckLakeError(f"{value!r} cannot be inlined exactly into a MySQL catalog's {col.type} column")
    kind = col.type
    if kind in _INTS or kind == "int128":
        return int(value)
    if kind in ("float32", "float64"):
        return float(value)
    if kind == "boolean":
        return bool(value)
    if kind.startswith("decimal"):
        return Decimal(value)
    if kind == "blob":
        return bytes(value)
    if kind == "date":
        return value
    if kind in _DATETIMES:
        if kind == "timestamptz" and value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc)
        return value.replace(tzinfo=None)
    return text_form(col, value)


def storable(col: Column, value: Any) -> bool:
    """Whether the reference's column for `col` holds this non-NULL value exactly."""
    kind = col.type
    if kind in ("float32", "float64"):
        return math.isfinite(value)
    if kind in _DATETIMES:
        return value.microsecond == 0
    if kind == "int128":
        return abs(int(value)) <= _EXACT_DOUBLE
    if kind == "blob":
        return len(value) <= _MAX_TEXT_BYTES
    if isinstance(value, str):
        return len(value.encode("utf-8")) <= _MAX_TEXT_BYTES
    return True


class MySQLStorage(InlinedStorage):
    """The reference's MySQL types; no nested columns, and no values those types would alter."""

    def column_type(self, col: Column) -> sa.types.TypeEngine[Any]:
        """The reference's MySQL type."""
        return sql_type(col)

    def inlines_column(self, col: Column) -> bool:
        """Not nested columns: the reference cannot create them here."""
        return not col.is_nested and super().inlines_column(col)

    def creates_table(self, columns: list[Column]) -> bool:
        """Only for columns it can hold (CREATE TABLE fails for nested ones in the reference)."""
        return self.inlines_columns(columns)

    def inlines_values(self, columns: list[Column], data: pa.Table) -> bool:
        """Values the reference's columns hold exactly (see `storable`)."""
        return all(storable(col, v) for col in columns for v in data.column(col.name).to_pylist() if v is not None)

    def encode(self, col: Column, value: Any) -> Any:
        """As the reference's column takes it (refusing values it would alter)."""
        return encode(col, value, scalar_text)
