"""Catalog format versions: which we read and write, and the version of the catalog a connection is on.

DuckLake 1.1 (released with DuckDB 2.0) writes `ducklake_metadata.version` = '1.1'; the reference's development
builds wrote '1.1-dev1' for the same layout (minus columns added late: docs/catalogs.md, "Versions"). Both are read
and written in the 1.1 layout; an existing catalog keeps the version string it has.
"""

from __future__ import annotations

import weakref
from typing import Any, Final, Literal

import sqlalchemy as sa

from ...errors import CatalogError
from .spec_tables import LAYOUT_V10, LAYOUT_V11, LAYOUT_V11_DEV, LAYOUTS, SPEC_VERSION, T

# A catalog version we read and write (a mode: `ducklake_version=` of an attach is one, checked).
DucklakeVersion = Literal["1.0", "1.1", "1.1-dev1"]
V10: Final = SPEC_VERSION
V11: Final = "1.1"
V11_DEV: Final = "1.1-dev1"
SUPPORTED: tuple[DucklakeVersion, ...] = (V10, V11, V11_DEV)
# What `ducklake_version=` accepts for a new catalog.
CREATABLE = SUPPORTED
# The reference's DUCKLAKE_LATEST_VERSION: what a new catalog gets, and what `automatic_migration=True` migrates to,
# when neither `ducklake_version=` nor the default-version setting asks for another (DuckDB 2.0 creates 1.1).
LATEST = V11

# Per engine (one engine = one catalog): asked once, not on every connection (SQLite and DuckDB connect per use).
_BY_ENGINE: weakref.WeakKeyDictionary[sa.Engine, str] = weakref.WeakKeyDictionary()


def layout_of(version: str) -> str:
    """The table layout (spec_tables.LAYOUTS key) of a catalog of this version."""
    return {V10: LAYOUT_V10, V11_DEV: LAYOUT_V11_DEV, V11: LAYOUT_V11}[version]


def catalog_table(conn: sa.Connection, name: str) -> sa.Table | None:
    """A catalog table with exactly the columns the connection's catalog has (None: its layout has no such table),
    for queries that take every column."""
    return LAYOUTS[layout_of(catalog_version(conn))].tables.get(name)


def is_v11(version: str | None) -> bool:
    """Whether a catalog of this version has the 1.1 layout."""
    return version in (V11, V11_DEV)


def catalog_version(conn: sa.Connection) -> str:
    """The `version` of the catalog this connection reaches, read once per engine (a migration run elsewhere while
    this engine is open is not seen: attach again)."""
    version = _BY_ENGINE.get(conn.engine)
    if version is None:
        md = T["ducklake_metadata"]
        version = conn.execute(sa.select(md.c.value).where(md.c.key == "version", md.c.scope.is_(None))).scalar()
        if version is None:
            raise CatalogError("catalog has a ducklake_metadata table but no 'version' entry")
        _BY_ENGINE[conn.engine] = version
    return version


def engine_version(engine: sa.Engine) -> str:
    """`catalog_version` of an engine's catalog: remembered since the attach, read only if it was not."""
    version = _BY_ENGINE.get(engine)
    if version is None:
        with engine.connect() as conn:
            version = catalog_version(conn)
    return version


def remember_version(conn: sa.Connection, version: str) -> None:
    """Record the version just written (creation, migration) so `catalog_version` need not read it."""
    _BY_ENGINE[conn.engine] = version


def catalog_is_v11(conn: sa.Connection) -> bool:
    """Whether the connection's catalog has the 1.1 layout."""
    return is_v11(catalog_version(conn))


def v11_values(conn: sa.Connection, **values: Any) -> dict[Any, Any]:
    """The values of columns only 1.1 catalogs have (`row_group_count`), or nothing on a 1.0 catalog: spread into
    a row's values."""
    return values if catalog_is_v11(conn) else {}


def layout_values(conn: sa.Connection, table: str, **values: Any) -> dict[Any, Any]:
    """Those of `values` whose columns `table` has in the connection's catalog layout: spread into a row's values
    for columns not every layout has (the stats exactness flags are in 1.1, not in '1.1-dev1' or 1.0)."""
    columns = LAYOUTS[layout_of(catalog_version(conn))].tables[table].c
    return {key: value for key, value in values.items() if key in columns}
