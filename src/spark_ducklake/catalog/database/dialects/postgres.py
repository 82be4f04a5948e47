"""PostgreSQL catalogs: a libpq connection string, writers queued on a transaction-scoped advisory lock."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from ....errors import CatalogError
from .base import Dialect

# Any 64-bit constant works; this one spells "ducklake" so it is recognisable in pg_locks.
_COMMIT_LOCK = int.from_bytes(b"ducklake", "big") - (1 << 63)


class PostgresDialect(Dialect):
    """A PostgreSQL database as the catalog (psycopg 3)."""

    name = "postgresql"
    kind = "postgres"
    prefixes = ("postgresql",)
    server = True

    def create_engine(self, target: str, *, read_only: bool = False) -> sa.Engine:
        """A small pooled engine connecting with the libpq connection string."""
        try:
            import psycopg
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise CatalogError("PostgreSQL catalogs need 'pip install spark-ducklake[postgres]'") from exc
        return sa.create_engine("postgresql+psycopg://", creator=lambda: psycopg.connect(target), pool_size=2,
                                max_overflow=4)  # stale connections: connection.ping_when_idle

    def printable_target(self, connection_string: str) -> str:
        """libpq's reading of the string as key=value pairs, the password shown as ***."""
        try:
            import psycopg  # noqa: F401
        except ImportError:  # pragma: no cover - depends on the install
            raise CatalogError("PostgreSQL catalogs need 'pip install spark-ducklake[postgres]'") from None
        params = _params(connection_string)
        if params is None:
            raise CatalogError(
                "the PostgreSQL catalog string is not a libpq connection string (key=value pairs, values with "
                "spaces in single quotes, or a postgresql:// URI); it is not shown as it may hold a password"
            )
        return " ".join(f"{k}={'***' if k == 'password' else _libpq_quote(v)}" for k, v in params.items())

    def password(self, connection_string: str) -> str | None:
        """The libpq `password` parameter."""
        params = _params(connection_string)
        return params.get("password") if params is not None else None

    def use_schema(self, dbapi_connection: Any, schema: str) -> None:
        """`search_path` set for the session (outside any transaction, so a rollback cannot undo it)."""
        from psycopg import sql

        autocommit = dbapi_connection.autocommit
        dbapi_connection.autocommit = True
        try:
            dbapi_connection.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        finally:
            dbapi_connection.autocommit = autocommit

    def create_schema(self, conn: sa.Connection, schema: str) -> None:
        """CREATE SCHEMA inside the bootstrap transaction; search_path already names it."""
        conn.execute(sa.schema.CreateSchema(schema, if_not_exists=True))

    def uuid_type(self) -> sa.types.TypeEngine[Any]:
        """PostgreSQL's UUID."""
        return postgresql.UUID(as_uuid=False)

    def lock_commits(self, conn: sa.Connection) -> None:
        """A transaction-scoped advisory lock: released by COMMIT or ROLLBACK."""
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_COMMIT_LOCK)))


def _params(conninfo: str) -> dict[str, str] | None:
    """libpq's reading of a connection string (key=value or URI); None when it is not one."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        return {k: str(v) for k, v in conninfo_to_dict(conninfo).items()}
    except Exception:  # noqa: BLE001 - libpq's message echoes the string, so the caller words its own
        return None


def _libpq_quote(value: str) -> str:
    if value and not any(c.isspace() or c in "'\\" for c in value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
