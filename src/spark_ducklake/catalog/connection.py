"""Catalog strings (`sqlite:...`, `duckdb:...`, `postgres:...`, `mysql:...`) to SQLAlchemy engines."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from ..errors import CatalogError

_PREFIXES = {"sqlite": "sqlite", "duckdb": "duckdb", "postgres": "postgres", "postgresql": "postgres",
             "mysql": "mysql"}
_SERVERS = ("postgres", "mysql")


@dataclass(frozen=True)
class CatalogLocation:
    """Where the catalog database lives: a dialect and a path or libpq connection string."""

    kind: str  # sqlite | duckdb | postgres | mysql
    target: str  # file path, or "key=value ..." connection string for postgres (libpq) and mysql

    @property
    def default_data_path(self) -> str | None:
        """DuckDB's default for file catalogs is `<catalog file>.files/`; servers need an explicit path."""
        if self.kind in _SERVERS:
            return None
        return os.path.abspath(self.target) + ".files/"

    def describe(self) -> str:
        """A printable description that never shows a password."""
        if self.kind == "mysql":
            from .mysql_dsn import hide_password

            return "mysql:" + hide_password(self.target)
        if self.kind != "postgres":
            return f"{self.kind}:{self.target}"
        return "postgres:" + re.sub(r"password=\S+", "password=***", self.target)


def parse_catalog(catalog: str) -> CatalogLocation:
    """Parse the reference's ATTACH string (with or without the leading `ducklake:`)."""
    if not isinstance(catalog, str) or not catalog.strip():
        raise CatalogError("catalog must be a non-empty string such as 'sqlite:meta.sqlite'")
    text = catalog.strip()
    if text.startswith("ducklake:"):
        text = text[len("ducklake:"):]
    prefix, sep, rest = text.partition(":")
    if sep and prefix in _PREFIXES:
        kind = _PREFIXES[prefix]
        if not rest.strip():
            raise CatalogError(f"catalog string {catalog!r} names {prefix} but no database")
        return CatalogLocation(kind, rest.strip())
    if sep and len(prefix) > 1 and "/" not in prefix and "\\" not in prefix:
        raise CatalogError(
            f"unknown catalog type {prefix!r} in {catalog!r}; use sqlite:, duckdb:, postgres:, mysql: or a file path"
        )
    # A bare path: an existing DuckDB file stays DuckDB, anything else is the embedded SQLite default.
    if os.path.exists(text) and _is_duckdb_file(text):
        return CatalogLocation("duckdb", text)
    return CatalogLocation("sqlite", text)


def _is_duckdb_file(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError:
        return False
    return head[8:12] == b"DUCK"


def catalog_exists(location: CatalogLocation) -> bool:
    """Whether the catalog database is there at all (files only; servers always 'exist')."""
    if location.kind in _SERVERS:
        return True
    return os.path.exists(location.target)


def create_engine(location: CatalogLocation, *, read_only: bool = False) -> sa.Engine:
    """A SQLAlchemy engine for the catalog database."""
    if location.kind == "sqlite":
        path = os.path.abspath(location.target)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        engine = sa.create_engine(
            f"sqlite:///{path}", poolclass=NullPool, connect_args={"timeout": 60, "isolation_level": None}
        )
        _sqlite_explicit_transactions(engine)
        return engine
    if location.kind == "duckdb":
        try:
            import duckdb_engine  # noqa: F401
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise CatalogError("DuckDB catalogs need 'pip install spark-ducklake[duckdb]'") from exc
        path = os.path.abspath(location.target)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        # NullPool: a DuckDB file admits one writer process; never hold it between calls.
        return sa.create_engine(
            f"duckdb:///{path}", poolclass=NullPool, connect_args={"read_only": read_only}
        )
    if location.kind == "mysql":
        from .mysql_transactions import create_mysql_engine

        return create_mysql_engine(location.target)
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise CatalogError("PostgreSQL catalogs need 'pip install spark-ducklake[postgres]'") from exc
    conninfo = location.target
    return sa.create_engine(
        "postgresql+psycopg://",
        creator=lambda: psycopg.connect(conninfo),
        pool_size=2,
        max_overflow=4,
        pool_pre_ping=True,
    )


def _sqlite_explicit_transactions(engine: sa.Engine) -> None:
    # pysqlite's implicit transactions start too late for read-then-write commits; take the write lock
    # up front (BEGIN IMMEDIATE) so concurrent writers queue on the busy timeout instead of deadlocking.
    @sa.event.listens_for(engine, "begin")
    def _begin(conn):  # noqa: ANN001 - SQLAlchemy event signature
        mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
        conn.exec_driver_sql(f"BEGIN {mode}")
