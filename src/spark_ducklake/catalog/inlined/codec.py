"""Inlined data: the `ducklake_inlined_data_*` tables as each catalog database holds them, and row (de)coding.

What the reference (DuckDB 1.5.5, ducklake d8a1881e) stores differs per catalog database, observed in each: an
`InlinedStorage` per database says how (column types, what it can hold, how values are bound and read back;
storage.py for SQLite, duckdb.py, postgres.py, mysql.py). Outside DuckDB catalogs values are mostly DuckDB's text
forms (text.py, nested.py).

Limits: `variant` is never inlined, nor is any type without an Arrow mapping.

Functions here take the catalog's `Dialect` or its name (callers outside the catalog pass the engine's name).
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import pyarrow as pa
import sqlalchemy as sa

from ...spec import variant
from ...spec.internal_columns import INLINED_ROW_ID
from ...spec.model import Column
from ...spec.types import to_arrow_type
from ..database.dialects import Dialect, DuckDBDialect, MySQLDialect, PostgresDialect, SQLiteDialect, dialect_for
from ..database.versions import engine_version, is_v11
from .duckdb import DuckDBStorage
from .mysql import MySQLStorage

# Re-exported (`x as x`): the value forms are used through this module's name outside it.
from .nested import parse_nested as parse_nested
from .nested import render as render
from .postgres import PostgresStorage
from .storage import InlinedStorage
from .text import BIG_INTS, TEXT_TYPES
from .text import CastFromText as CastFromText
from .text import duckdb_type_name as duckdb_type_name
from .text import parse_scalar as parse_scalar
from .text import scalar_text as scalar_text

_STORAGE: dict[type[Dialect], type[InlinedStorage]] = {
    SQLiteDialect: InlinedStorage, DuckDBDialect: DuckDBStorage, PostgresDialect: PostgresStorage,
    MySQLDialect: MySQLStorage,
}
_STORAGE_OF: dict[Dialect, InlinedStorage] = {}


def storage_for(dialect: Dialect | str | sa.Engine) -> InlinedStorage:
    """How the catalog database (its `Dialect` or name) holds inlined rows; one shared instance per database."""
    dialect = dialect_for(dialect)
    if dialect not in _STORAGE_OF:
        _STORAGE_OF[dialect] = _STORAGE[type(dialect)](dialect)
    return _STORAGE_OF[dialect]


def inlined_table_name(table_id: int, schema_version: int) -> str:
    """ducklake_inlined_data_<table_id>_<schema_version>"""
    return f"ducklake_inlined_data_{table_id}_{schema_version}"


def inlined_delete_table_name(table_id: int) -> str:
    """ducklake_inlined_delete_<table_id>"""
    return f"ducklake_inlined_delete_{table_id}"


# Keys (`table.c.<key>`) of an inlined data table's three system columns, whatever the catalog version names them:
# they cannot clash with a user column (1.1 inlines tables with user columns named row_id or begin_snapshot).
ROW_ID, BEGIN, END = INLINED_ROW_ID, "_dl_begin_snapshot", "_dl_end_snapshot"
_NAMES_V10 = ("row_id", "begin_snapshot", "end_snapshot")
_NAMES_V11 = ("_ducklake_row_id", "_ducklake_begin_snapshot", "_ducklake_end_snapshot")


def system_names(v11: bool) -> tuple[str, str, str]:
    """The row id, begin and end snapshot columns' names: unprefixed in 1.0, `_ducklake_`-prefixed in 1.1."""
    return _NAMES_V11 if v11 else _NAMES_V10


def system_name_clash(columns: list[Column], v11: bool) -> bool:
    """Whether a user column takes a system column's name (row_id, begin_snapshot, end_snapshot in a 1.0 catalog,
    case-insensitively): the reference then creates no inlined data table (it refuses the CREATE TABLE while
    inlining is on; we write the table's rows to Parquet instead)."""
    return not {c.name.lower() for c in columns}.isdisjoint(system_names(v11))


def system_table(name: str, v11: bool) -> sa.Table:
    """A handle on an inlined data table's system columns only (keys ROW_ID, BEGIN, END)."""
    return sa.Table(name, sa.MetaData(), *_system_columns(v11))


def _system_columns(v11: bool) -> list[sa.Column[Any]]:
    return [sa.Column(n, sa.BigInteger, key=k) for n, k in zip(system_names(v11), (ROW_ID, BEGIN, END), strict=True)]


def inlined_data_table(metadata: sa.MetaData, dialect: Dialect | str, table_id: int, schema_version: int,
                       columns: list[Column], *, v11: bool = False) -> sa.Table:
    """The inlined data table with the column types the reference creates in this catalog database; its system
    columns have the keys ROW_ID, BEGIN and END and the names of the catalog's version."""
    storage = storage_for(dialect)
    cols = _system_columns(v11)
    cols += [sa.Column(col.name, storage.column_type(col), quote=True) for col in columns]
    return sa.Table(inlined_table_name(table_id, schema_version), metadata, *cols)


def inlined_delete_table(metadata: sa.MetaData, dialect: Dialect | str, table_id: int) -> sa.Table:
    """ducklake_inlined_delete_<table_id>(file_id, row_id, begin_snapshot), BIGINT in every catalog database."""
    return sa.Table(inlined_delete_table_name(table_id), metadata, sa.Column("file_id", sa.BigInteger),
                    sa.Column("row_id", sa.BigInteger), sa.Column("begin_snapshot", sa.BigInteger))


def select_columns(table: sa.Table, columns: list[Column], dialect: Dialect | str) -> list[Any]:
    """SELECT list (row id labelled ROW_ID, then the columns) whose results `decode_rows` expects."""
    storage = storage_for(dialect)
    out: list[Any] = [table.c[ROW_ID].label(ROW_ID)]
    for col in columns:
        ref = table.c[col.name]
        if col.type == "variant":  # DuckDB catalogs only: its JSON text, encoded as a variant by _decode
            out.append(sa.cast(sa.cast(ref, sa.JSON), sa.String).label(col.name))
            continue
        out.append(sa.cast(ref, sa.String).label(col.name) if storage.reads_as_text(col) else ref)
    return out


def inlinable(columns: list[Column], dialect: Dialect | str | sa.Engine, data: pa.Table | None = None) -> bool:
    """Whether rows of these columns (and, given `data`, these values) can be inlined in this catalog."""
    if isinstance(dialect, sa.Engine) and system_name_clash(columns, is_v11(engine_version(dialect))):
        return False
    storage = storage_for(dialect)
    return storage.inlines_columns(columns) and (data is None or storage.inlines_values(columns, data))


def creates_table(columns: list[Column], dialect: Dialect | str) -> bool:
    """Whether the reference creates an inlined data table for these columns in this catalog (on DDL)."""
    storage = storage_for(dialect)
    kinds = {c.type for top in columns for c in top.walk()}
    # Observed: never with a geometry column; with a variant column only where the catalog has a VARIANT type.
    if "geometry" in kinds or ("variant" in kinds and type(storage).__name__ != "DuckDBStorage"):
        return False
    return storage.creates_table(columns)


def encode_rows(table: pa.Table, columns: list[Column], dialect: Dialect | str) -> list[dict[Any, Any]]:
    """Arrow rows -> parameter dicts for the inlined data table (without row_id / snapshots)."""
    storage = storage_for(dialect)
    encoded = []
    for col in columns:
        values = table.column(col.name).to_pylist()
        encoded.append([None if v is None else render(col, v) if col.is_nested else storage.encode(col, v)
                        for v in values])
    names = [col.name for col in columns]
    return [dict(zip(names, row, strict=True)) for row in zip(*encoded, strict=True)] if columns else \
        [{} for _ in range(table.num_rows)]


def decode_rows(rows: Sequence[Mapping[Any, Any]], columns: list[Column], dialect: Dialect | str) -> pa.Table:
    """Rows read from an inlined data table (with `select_columns`) -> Arrow table of the columns' types."""
    storage = storage_for(dialect)
    arrays = []
    for col in columns:
        values = [_decode(col, row[col.name], storage) for row in rows]
        arrays.append(pa.array(values, type=to_arrow_type(col)))
    return pa.Table.from_arrays(arrays, schema=pa.schema([pa.field(c.name, to_arrow_type(c)) for c in columns]))


def _decode(col: Column, value: Any, storage: InlinedStorage) -> Any:
    if value is None:
        return None
    if isinstance(value, memoryview | bytearray):
        value = bytes(value)
    if col.type == "variant":
        return variant.from_json(value.decode("utf-8") if isinstance(value, bytes) else value)
    if col.is_nested:
        if isinstance(value, bytes):
            value = value.decode("utf-8")
        if isinstance(value, str):
            return parse_nested(col, value, reference_sql_structs=storage.reference_sql_structs)
        return _from_driver(col, value)
    return _from_driver(col, storage.read(col, value))


def _from_driver(col: Column, value: Any) -> Any:
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
    if col.type in TEXT_TYPES:
        if isinstance(value, dt.time | uuid.UUID):
            return scalar_text(col, value)
        return str(value)
    if col.type in BIG_INTS:
        return Decimal(int(value))
    if col.type == "boolean":
        return bool(value)
    if col.type == "timestamptz" and isinstance(value, dt.datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
        return aware.astimezone(dt.timezone.utc)
    return value
