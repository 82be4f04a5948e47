"""Catalog strings (`sqlite:...`, `duckdb:...`, `postgres:...`, `mysql:...`) to SQLAlchemy engines."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from typing import Any

import sqlalchemy as sa

from ...errors import CatalogError
from .dialects import Dialect, DuckDBDialect, SQLiteDialect, dialect_for, find_dialect


class Secret:
    """A string kept out of repr, str and logs (a catalog connection string may hold a password)."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The value itself: only for handing to a driver or to another process that attaches."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __reduce__(self) -> Any:
        return Secret, (self._value,)


@dataclass(frozen=True)
class CatalogLocation:
    """Where the catalog database lives: a dialect and a path or connection string (its password hidden)."""

    kind: str  # sqlite | duckdb | postgres | mysql
    target: str  # file path, or the server's connection string with any password shown as ***
    secret: Secret | None = field(default=None, repr=False)  # the full connection string of a server
    metadata_schema: str | None = None  # the reference's METADATA_SCHEMA: None is the database's default schema

    @property
    def dialect(self) -> Dialect:
        """The catalog database's behaviour."""
        return dialect_for(self.kind)

    @property
    def default_data_path(self) -> str | None:
        """DuckDB's default for file catalogs is `<catalog file>.files/`; servers need an explicit path."""
        if self.dialect.server:
            return None
        return os.path.abspath(self.target) + ".files/"

    def describe(self) -> str:
        """A printable description that never shows a password."""
        where = f" (metadata schema {self.metadata_schema!r})" if self.metadata_schema is not None else ""
        return f"{self.kind}:{self.target}{where}"

    def connection_string(self) -> str:
        """What the driver gets: the file path, or the full connection string (password included)."""
        return self.secret.reveal() if self.secret is not None else self.target

    def attach_string(self) -> str:
        """A catalog string another process can attach with (password included, file paths absolute)."""
        if self.dialect.server:
            return f"{self.kind}:{self.connection_string()}"
        return f"{self.kind}:{os.path.abspath(self.target)}"

    def redact(self, text: str) -> str:
        """`text` (say, a driver's error message) with this location's password masked."""
        password = self.dialect.password(self.connection_string())
        # Very short passwords are not masked: that would garble every message, and drivers do not echo them.
        return text.replace(password, "***") if password and len(password) >= 4 else text


def parse_catalog(catalog: str) -> CatalogLocation:
    """Parse the reference's ATTACH string (with or without the leading `ducklake:`)."""
    if not isinstance(catalog, str) or not catalog.strip():
        raise CatalogError("catalog must be a non-empty string such as 'sqlite:meta.sqlite'")
    text = catalog.strip()
    if text.startswith("ducklake:"):
        text = text[len("ducklake:"):]
    prefix, sep, rest = text.partition(":")
    dialect = find_dialect(prefix) if sep else None
    if dialect is not None:
        if not rest.strip():
            raise CatalogError(f"catalog string names {prefix} but no database")
        if dialect.server:  # the printable target masks the password; the secret keeps the whole string
            return CatalogLocation(dialect.kind, dialect.printable_target(rest.strip()), Secret(rest.strip()))
        return CatalogLocation(dialect.kind, rest.strip())
    if sep and len(prefix) > 1 and "/" not in prefix and "\\" not in prefix:
        raise CatalogError(
            f"unknown catalog type {prefix!r}; use sqlite:, duckdb:, postgres:, mysql: or a file path"
        )
    # A bare path: an existing file keeps its database; a new one named like DuckDB's files is one, as the
    # reference makes every bare path (so DuckDB opens what we create); anything else is the embedded SQLite default.
    if os.path.exists(text):
        return CatalogLocation(DuckDBDialect.kind if _is_duckdb_file(text) else SQLiteDialect.kind, text)
    new_kind = DuckDBDialect.kind if text.lower().endswith(DUCKDB_SUFFIXES) else SQLiteDialect.kind
    return CatalogLocation(new_kind, text)


DUCKDB_SUFFIXES = (".ducklake", ".duckdb")


def _is_duckdb_file(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError:
        return False
    return head[8:12] == b"DUCK"


def catalog_exists(location: CatalogLocation) -> bool:
    """Whether the catalog database is there at all (files only; servers always 'exist')."""
    return location.dialect.server or os.path.exists(location.target)


def with_metadata_schema(location: CatalogLocation, schema: str | None) -> CatalogLocation:
    """`location` with its catalog tables in `schema` (the reference's METADATA_SCHEMA); None keeps the default."""
    if schema is None:
        return location
    if not isinstance(schema, str) or not schema.strip():
        raise CatalogError(f"metadata_schema must be a non-empty schema name; got {schema!r}")
    location.dialect.check_metadata_schema(schema)
    return replace(location, metadata_schema=schema)


def create_engine(location: CatalogLocation, *, read_only: bool = False) -> sa.Engine:
    """A SQLAlchemy engine for the catalog database; with a metadata schema, every connection it opens reads and
    writes unqualified names there (raw SQL included), as the reference's metadata managers qualify them."""
    engine = location.dialect.create_engine(location.connection_string(), read_only=read_only)
    if location.kind == "postgres":
        ping_when_idle(engine)
    schema = location.metadata_schema
    if schema is not None and location.dialect.has_schemas:
        @sa.event.listens_for(engine, "connect", insert=True)
        def _use_schema(dbapi_connection: Any, _record: Any) -> None:  # noqa: ANN001 - SQLAlchemy event signature
            location.dialect.use_schema(dbapi_connection, schema)
    return engine


IDLE_PING_SECONDS = 5.0


def ping_when_idle(engine: sa.Engine, idle: float | None = None) -> None:
    """Test a pooled connection before handing it out only when it sat in the pool longer than `idle` seconds
    (default IDLE_PING_SECONDS).

    SQLAlchemy's pool_pre_ping tests every checkout: a round trip each, three per small commit. A connection the
    server dropped (restart, idle timeout) is replaced as with pre-ping; one dropped while in use within the last
    `idle` seconds fails that one operation (a commit then changes nothing), and the pool starts afresh."""

    @sa.event.listens_for(engine, "checkin")
    def _checked_in(_dbapi_connection: Any, record: Any) -> None:  # noqa: ANN001 - SQLAlchemy event signature
        record.info["idle_since"] = time.monotonic()

    @sa.event.listens_for(engine, "checkout")
    def _checked_out(dbapi_connection: Any, record: Any, _proxy: Any) -> None:  # noqa: ANN001 - SQLAlchemy event signature
        since = record.info.get("idle_since")
        if since is None or time.monotonic() - since <= (IDLE_PING_SECONDS if idle is None else idle):
            return
        try:
            alive = engine.dialect.do_ping(dbapi_connection)
        except Exception as exc:  # noqa: BLE001 - any failure: the pool replaces the connection
            raise sa.exc.DisconnectionError("catalog connection went stale in the pool") from exc
        if not alive:
            raise sa.exc.DisconnectionError("catalog connection went stale in the pool")
