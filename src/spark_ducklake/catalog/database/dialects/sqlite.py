"""SQLite catalogs: a file, the reference's storage of booleans and timestamps, writers queued on the write lock."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from typing import Any

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from ....errors import CatalogError
from .base import Dialect


class SQLiteDialect(Dialect):
    """The embedded default catalog."""

    name = kind = "sqlite"
    # BEGIN IMMEDIATE: take the write lock up front (see `create_engine`).
    write_options = {"sqlite_begin": "IMMEDIATE"}
    keeps_column_defaults = False  # the reference's SQLite scanner drops column defaults
    has_schemas = False

    def check_metadata_schema(self, schema: str) -> None:
        """Only `main`: the reference fails to create any other ('SQLite databases do not support creating new
        schemas')."""
        if schema.lower() != "main":
            raise CatalogError(f"metadata_schema {schema!r}: SQLite catalogs have no schemas but 'main' (the "
                               "reference extension refuses it too: SQLite cannot create schemas)")

    def create_engine(self, target: str, *, read_only: bool = False) -> sa.Engine:
        """A SQLite engine on the file (created with its directory when missing), one connection per use."""
        path = os.path.abspath(target)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        engine = sa.create_engine(
            f"sqlite:///{path}", poolclass=NullPool, connect_args={"timeout": 60, "isolation_level": None}
        )
        _explicit_transactions(engine)
        return engine

    def bool_type(self) -> sa.types.TypeEngine[Any]:
        """BIGINT 0/1, as the reference stores BOOLEAN in SQLite."""
        return sa.BigInteger()

    def bind_bool(self, value: Any) -> int:
        """0 or 1."""
        return int(bool(value))

    def timestamp_type(self) -> sa.types.TypeEngine[Any]:
        """Text in the reference's form (`format_timestamp`)."""
        return sa.String()

    def bind_timestamp(self, value: datetime) -> str:
        """The reference's text form of the timestamp."""
        return format_timestamp(value)


def format_timestamp(value: datetime) -> str:
    """The reference's text form: microseconds only when non-zero, trimmed, offset '+00'."""
    text = value.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    if value.microsecond:
        text += f".{value.microsecond:06d}".rstrip("0")
    return text + "+00"


def _explicit_transactions(engine: sa.Engine) -> None:
    # pysqlite's implicit transactions start too late for read-then-write commits; take the write lock
    # up front (BEGIN IMMEDIATE) so concurrent writers queue on the busy timeout instead of deadlocking.
    @sa.event.listens_for(engine, "begin")
    def _begin(conn: sa.Connection) -> None:  # noqa: ANN001 - SQLAlchemy event signature
        mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
        conn.exec_driver_sql(f"BEGIN {mode}")
