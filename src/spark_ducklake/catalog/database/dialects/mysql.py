"""MySQL/MariaDB catalogs: what they need around a commit, and the reference's types there.

- Isolation READ COMMITTED (InnoDB defaults to REPEATABLE READ): a commit that queued behind another writer must
  see that writer's snapshot when it reads the newest one, as on PostgreSQL.
- Writers queue on a named lock (GET_LOCK), MySQL's counterpart of PostgreSQL's advisory lock. It belongs to the
  session, not the transaction, so the commit releases it after COMMIT or ROLLBACK.
- MySQL commits the open transaction before any CREATE/DROP TABLE. Inlined data tables, which a commit may need,
  are therefore created on a second connection in autocommit mode: the commit stays one atomic transaction, and
  an attempt that rolls back leaves at most an empty, unregistered table behind. Such a leftover is dropped and
  created afresh when a commit holding the lock needs that name (a table id may be handed out again).
- Text is TEXT (VARCHAR needs a length), UUIDs too; timestamps are DATETIME in UTC, whole seconds (as the reference
  creates them); the catalog's collation compares text case-insensitively.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

from ....errors import CatalogError, ConflictError
from ..mysql_dsn import connect_args, parse_dsn, printable
from .base import Dialect

_LOCK_HELD = "ducklake_commit_lock"  # key in Connection.info while this session holds the commit lock
LOCK_TIMEOUT_S = 600
_DDL_LOCK_WAIT_S = 30  # a side-connection DDL never waits long on a metadata lock: fail instead of hanging


class MySQLDialect(Dialect):
    """A MySQL or MariaDB database as the catalog (PyMySQL)."""

    name = kind = "mysql"
    server = True
    compares_text_exactly = False  # the catalog's default collation is case-insensitive

    def use_schema(self, dbapi_connection: Any, schema: str) -> None:
        """A MySQL schema is a database: switch to it once it exists (bootstrap creates it, as the reference does)."""
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("SELECT count(*) FROM information_schema.schemata WHERE schema_name = %s", (schema,))
            exists = cursor.fetchone()[0] > 0
        finally:
            cursor.close()
        if exists:
            dbapi_connection.select_db(schema)

    def create_engine(self, target: str, *, read_only: bool = False) -> sa.Engine:
        """A pooled engine for a `mysql:` catalog string (key=value pairs as DuckDB's mysql extension reads)."""
        try:
            import pymysql
            from pymysql.constants import CLIENT
        except ImportError as exc:  # the driver comes with the `mysql` extra
            raise CatalogError("MySQL/MariaDB catalogs need 'pip install spark-ducklake[mysql]'") from exc
        # FOUND_ROWS: rowcount counts matched rows, as SQLAlchemy's MySQL dialect expects.
        args = {**connect_args(target), "client_flag": CLIENT.FOUND_ROWS, "init_command": "SET time_zone = '+00:00'"}
        return sa.create_engine(
            "mysql+pymysql://",
            creator=lambda: pymysql.connect(**args),
            isolation_level="READ COMMITTED",
            pool_size=2,
            max_overflow=4,
            pool_pre_ping=True,
            pool_recycle=3600,
        )

    def printable_target(self, connection_string: str) -> str:
        """The parsed key=value pairs, the password shown as ***."""
        return printable(parse_dsn(connection_string))

    def password(self, connection_string: str) -> str | None:
        """The `password`/`passwd` parameter."""
        return parse_dsn(connection_string).get("password")

    def uuid_type(self) -> sa.types.TypeEngine[Any]:
        """TEXT, as the reference creates it."""
        return mysql.TEXT()

    def text_type(self) -> sa.types.TypeEngine[Any]:
        """TEXT (VARCHAR needs a length)."""
        return mysql.TEXT()

    def bind_timestamp(self, value: datetime) -> datetime:
        """Naive UTC, whole seconds: MariaDB truncates the fraction, MySQL 8 rounds it, so truncate everywhere."""
        return value.replace(tzinfo=None, microsecond=0)

    def lock_commits(self, conn: sa.Connection) -> None:
        """Wait for the catalog's named lock (other writers of this library hold it while they commit)."""
        got = conn.execute(sa.select(sa.func.get_lock(_lock_name(), LOCK_TIMEOUT_S))).scalar()
        if got != 1:
            raise ConflictError(f"waited {LOCK_TIMEOUT_S} s for the MySQL catalog's commit lock; another writer "
                                "holds it")
        conn.info[_LOCK_HELD] = True

    def unlock_commits(self, conn: sa.Connection) -> None:
        """Release the named lock; a connection that cannot is discarded (ending its session)."""
        if not conn.info.pop(_LOCK_HELD, False):
            return
        try:
            conn.exec_driver_sql("DO RELEASE_LOCK(CONCAT('ducklake_commit_', MD5(DATABASE())))")
            conn.rollback()  # the DO above began a transaction of its own
        except sa.exc.SQLAlchemyError:
            conn.invalidate()

    def create_table(self, conn: sa.Connection, table: sa.Table, *, keep_existing: bool) -> None:
        """Create `table` on a side connection, so `conn`'s transaction is not committed half-way (see the module
        docstring); an existing leftover is replaced while we hold the commit lock (no writer of ours can be
        creating it then)."""
        with conn.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as side:
            side.exec_driver_sql(f"SET SESSION lock_wait_timeout = {_DDL_LOCK_WAIT_S}")
            try:
                if not keep_existing and conn.info.get(_LOCK_HELD):
                    table.drop(side, checkfirst=True)
                table.create(side, checkfirst=True)
            finally:
                side.exec_driver_sql("SET SESSION lock_wait_timeout = DEFAULT")  # the connection goes back to the pool


def _lock_name() -> Any:
    # One lock per catalog database; GET_LOCK names are limited to 64 characters, database names are not shorter.
    return sa.func.concat("ducklake_commit_", sa.func.md5(sa.func.database()))
