"""One `Dialect` per catalog database (SQLite, DuckDB, PostgreSQL, MySQL/MariaDB), found by name or connection.

- base.py      the base `Dialect`: what a catalog database contributes to a lake; subclasses override what differs
- sqlite.py    a file, the reference's storage of booleans and timestamps, writers queued on the write lock
- duckdb.py    a file one process writes at a time, native types, UPDATE without a row count
- postgres.py  a libpq connection string, writers queued on a transaction-scoped advisory lock
- mysql.py     MySQL/MariaDB: what they need around a commit, and the reference's types there"""

from __future__ import annotations

from typing import Any

from ....errors import CatalogError
from .base import Dialect
from .duckdb import DuckDBDialect
from .mysql import MySQLDialect
from .postgres import PostgresDialect
from .sqlite import SQLiteDialect

__all__ = ["Dialect", "DuckDBDialect", "MySQLDialect", "PostgresDialect", "SQLiteDialect", "dialect_for",
           "find_dialect"]

_BY_NAME: dict[str, Dialect] = {}
for _dialect in (SQLiteDialect(), DuckDBDialect(), PostgresDialect(), MySQLDialect()):
    for _name in (_dialect.name, _dialect.kind, *_dialect.prefixes):
        _BY_NAME[_name] = _dialect


def find_dialect(name: str) -> Dialect | None:
    """The dialect a catalog-string prefix or SQLAlchemy dialect name stands for; None for any other name."""
    return _BY_NAME.get(name)


def dialect_for(source: Any) -> Dialect:
    """The dialect of an engine, connection, SQLAlchemy dialect or name (one shared instance per database)."""
    if isinstance(source, Dialect):
        return source
    name = source if isinstance(source, str) else getattr(source, "dialect", source).name
    dialect = _BY_NAME.get(name)
    if dialect is None:
        raise CatalogError(f"unsupported catalog database {name!r}")
    return dialect
