"""What a catalog database contributes to a lake: the base `Dialect`, whose subclasses (one per database, like the
reference's metadata managers in the DuckDB extension's src/metadata_manager/) override what differs.

The defaults are the plainest SQL catalog: native BOOLEAN/TIMESTAMPTZ/text, DDL inside transactions, no commit
lock. How each database holds inlined data is `catalog.inlined`'s (it builds on this layer).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar

import sqlalchemy as sa


class Dialect:
    """One kind of catalog database: how it connects, stores the spec's types and queues writers."""

    name: ClassVar[str]  # SQLAlchemy's name for it
    kind: ClassVar[str]  # its catalog-string prefix (`sqlite:`, `duckdb:`, `postgres:`, `mysql:`)
    prefixes: ClassVar[tuple[str, ...]] = ()  # further prefixes catalog strings may use for it
    server: ClassVar[bool] = False  # reached by a connection string (else: a file path)

    # --------------------------------------------------------------------------------------------- connecting
    def create_engine(self, target: str, *, read_only: bool = False) -> sa.Engine:
        """A SQLAlchemy engine for the catalog at `target` (a file path, or a server's full connection string)."""
        raise NotImplementedError

    def printable_target(self, connection_string: str) -> str:
        """A server's connection string with its password masked; malformed ones are refused without echoing
        them (they may hold a password)."""
        return connection_string

    def password(self, connection_string: str) -> str | None:
        """The password a server's connection string carries, if any (to mask it in messages)."""
        return None

    # ---------------------------------------------------------------------------------- the metadata schema
    has_schemas: ClassVar[bool] = True  # whether catalog tables can live in a schema other than the default
    default_metadata_schema: ClassVar[str | None] = None  # where they live without one (None: the session's)

    def check_metadata_schema(self, schema: str) -> None:
        """Refuse a METADATA_SCHEMA this database cannot hold (before anything connects)."""

    def use_schema(self, dbapi_connection: Any, schema: str) -> None:
        """Make `schema` the default of a new driver connection (a missing schema is created at bootstrap)."""
        raise NotImplementedError

    def create_schema(self, conn: sa.Connection, schema: str) -> None:
        """Create `schema` if missing and make it `conn`'s default, inside the bootstrap transaction."""
        conn.execute(sa.schema.CreateSchema(schema, if_not_exists=True))
        self.use_schema(conn.connection.dbapi_connection, schema)

    # ------------------------------------------------------------------------------------ storing the spec's types
    def bool_type(self) -> sa.types.TypeEngine[Any]:
        """The column type of the spec's BOOLEAN."""
        return sa.Boolean()

    def bind_bool(self, value: Any) -> bool | int:
        """A boolean as bound to `bool_type`."""
        return bool(value)

    def uuid_type(self) -> sa.types.TypeEngine[Any]:
        """The column type of the spec's UUID (values are always handed to Python as str)."""
        return sa.String()

    def text_type(self) -> sa.types.TypeEngine[Any]:
        """The column type of the spec's VARCHAR."""
        return sa.String()

    def timestamp_type(self) -> sa.types.TypeEngine[Any]:
        """The column type of the spec's TIMESTAMPTZ."""
        return sa.DateTime(timezone=True)

    def bind_timestamp(self, value: datetime) -> datetime | str:
        """A UTC timestamp as bound to `timestamp_type`."""
        return value

    # Whether ALTER TABLE ... ADD COLUMN ... DEFAULT keeps the default as the reference's migration sees it.
    keeps_column_defaults: ClassVar[bool] = True

    # --------------------------------------------------------------------------------------------- writing
    # Connection execution options of a write transaction (a commit, or maintenance that must not interleave).
    write_options: ClassVar[Mapping[str, str]] = {}
    reports_update_rowcount: ClassVar[bool] = True  # whether an UPDATE's rowcount counts the rows it matched
    compares_text_exactly: ClassVar[bool] = True  # whether `=` on text is case- and accent-sensitive

    @property
    def detects_stale_updates(self) -> bool:
        """Whether an UPDATE guarded by the values read before tells, by its row count, that they changed."""
        return self.reports_update_rowcount and self.compares_text_exactly

    def lock_commits(self, conn: sa.Connection) -> None:
        """Wait until our other writers have committed (called inside the write transaction)."""

    def unlock_commits(self, conn: sa.Connection) -> None:
        """Let the next writer go, once the write transaction has ended however it ended."""

    def create_table(self, conn: sa.Connection, table: sa.Table, *, keep_existing: bool) -> None:
        """Create `table` if missing, as part of `conn`'s open transaction.

        `keep_existing`: an existing table is the real thing; else it may be the leftover of a rolled-back attempt
        (only where DDL cannot be part of the transaction)."""
        table.create(conn, checkfirst=True)
