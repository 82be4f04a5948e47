"""Catalog strings (`sqlite:...`, `duckdb:...`, `postgres:...`, `mysql:...`) to SQLAlchemy engines."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from ...errors import CatalogError

_PREFIXES = {"sqlite": "sqlite", "duckdb": "duckdb", "postgres": "postgres", "postgresql": "postgres",
             "mysql": "mysql"}
_SERVERS = ("postgres", "mysql")


class Secret:
    """A string kept out of repr, str and logs (a catalog connection string may hold a password)."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
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

    def __reduce__(self):
        return Secret, (self._value,)


@dataclass(frozen=True)
class CatalogLocation:
    """Where the catalog database lives: a dialect and a path or connection string (its password hidden)."""

    kind: str  # sqlite | duckdb | postgres | mysql
    target: str  # file path, or the server's connection string with any password shown as ***
    secret: Secret | None = field(default=None, repr=False)  # the full connection string of a server

    @property
    def default_data_path(self) -> str | None:
        """DuckDB's default for file catalogs is `<catalog file>.files/`; servers need an explicit path."""
        if self.kind in _SERVERS:
            return None
        return os.path.abspath(self.target) + ".files/"

    def describe(self) -> str:
        """A printable description that never shows a password."""
        return f"{self.kind}:{self.target}"

    def connection_string(self) -> str:
        """What the driver gets: the file path, or the full connection string (password included)."""
        return self.secret.reveal() if self.secret is not None else self.target

    def attach_string(self) -> str:
        """A catalog string another process can attach with (password included, file paths absolute)."""
        if self.kind in _SERVERS:
            return f"{self.kind}:{self.connection_string()}"
        return f"{self.kind}:{os.path.abspath(self.target)}"

    def redact(self, text: str) -> str:
        """`text` (say, a driver's error message) with this location's password masked."""
        password = _password(self)
        # Very short passwords are not masked: that would garble every message, and drivers do not echo them.
        return text.replace(password, "***") if password and len(password) >= 4 else text


def _password(location: CatalogLocation) -> str | None:
    if location.kind == "mysql":
        from .mysql_dsn import parse_dsn

        return parse_dsn(location.connection_string()).get("password")
    if location.kind == "postgres":
        params = _postgres_params(location.connection_string())
        return params.get("password") if params is not None else None
    return None


def _postgres_params(conninfo: str) -> dict[str, str] | None:
    """libpq's reading of a connection string (key=value or URI); None when it is not one."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        return {k: str(v) for k, v in conninfo_to_dict(conninfo).items()}
    except Exception:  # noqa: BLE001 - libpq's message echoes the string, so the caller words its own
        return None


def _server_location(kind: str, text: str) -> CatalogLocation:
    """A server location whose printable target has the password masked; malformed strings are refused
    without echoing them (they may hold a password)."""
    if kind == "mysql":
        from .mysql_dsn import parse_dsn, printable

        return CatalogLocation(kind, printable(parse_dsn(text)), Secret(text))
    try:
        import psycopg  # noqa: F401
    except ImportError:  # pragma: no cover - depends on the install
        raise CatalogError("PostgreSQL catalogs need 'pip install spark-ducklake[postgres]'") from None
    params = _postgres_params(text)
    if params is None:
        raise CatalogError(
            "the PostgreSQL catalog string is not a libpq connection string (key=value pairs, values with spaces "
            "in single quotes, or a postgresql:// URI); it is not shown as it may hold a password"
        )
    shown = " ".join(f"{k}={'***' if k == 'password' else _libpq_quote(v)}" for k, v in params.items())
    return CatalogLocation(kind, shown, Secret(text))


def _libpq_quote(value: str) -> str:
    if value and not any(c.isspace() or c in "'\\" for c in value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


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
            raise CatalogError(f"catalog string names {prefix} but no database")
        if kind in _SERVERS:
            return _server_location(kind, rest.strip())
        return CatalogLocation(kind, rest.strip())
    if sep and len(prefix) > 1 and "/" not in prefix and "\\" not in prefix:
        raise CatalogError(
            f"unknown catalog type {prefix!r}; use sqlite:, duckdb:, postgres:, mysql: or a file path"
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

        return create_mysql_engine(location.connection_string())
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise CatalogError("PostgreSQL catalogs need 'pip install spark-ducklake[postgres]'") from exc
    conninfo = location.connection_string()
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
