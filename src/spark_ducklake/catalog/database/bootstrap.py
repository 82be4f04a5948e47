"""Creating a new lake in an empty catalog database, and checking an existing one."""

from __future__ import annotations

from datetime import datetime, timezone

import sqlalchemy as sa

from ...errors import CatalogError, UnsupportedVersionError
from ...spec.uuid7 import new_uuid
from ...version import __version__
from .dialects import dialect_for
from .migration import is_migratable
from .spec_tables import LAYOUTS, SPEC_VERSION, T
from .versions import SUPPORTED, layout_of, remember_version

CREATED_BY = f"spark-ducklake {__version__}"


def lake_exists(conn: sa.Connection, schema: str | None = None) -> bool:
    """Whether the catalog database (in `schema`, the metadata schema, when given) already holds DuckLake tables."""
    dialect = dialect_for(conn)
    if not dialect.has_schemas:
        schema = None  # SQLite's only schema, `main`, is the default one
    schema = schema if schema is not None else dialect.default_metadata_schema
    return sa.inspect(conn).has_table("ducklake_metadata", schema=schema)


def read_global_metadata(conn: sa.Connection) -> dict[str, str]:
    """Global-scope ducklake_metadata rows as a dict."""
    md = T["ducklake_metadata"]
    rows = conn.execute(sa.select(md.c.key, md.c.value).where(md.c.scope.is_(None))).all()
    return {key: value for key, value in rows}


def check_version(metadata: dict[str, str]) -> None:
    """Refuse catalogs of another spec version, before anything is written."""
    version = metadata.get("version")
    if version is None:
        raise CatalogError("catalog has a ducklake_metadata table but no 'version' entry")
    if version not in SUPPORTED:
        hint = (
            f"; attach with automatic_migration=True to upgrade it to {SPEC_VERSION} in place (the DuckDB "
            "versions that wrote it can then no longer open it)" if is_migratable(version) else ""
        )
        raise UnsupportedVersionError(
            f"catalog is DuckLake spec {version}; spark-ducklake reads and writes spec {', '.join(SUPPORTED)} "
            f"only{hint}"
        )


def normalize_data_path(path: str) -> str:
    """Data paths always end with a separator, as the spec requires."""
    return path if path.endswith("/") else path + "/"


def create_lake(conn: sa.Connection, data_path: str, *, encrypted: bool = False,
                metadata_schema: str | None = None, version: str = SPEC_VERSION) -> None:
    """Create every spec table of the version's layout and snapshot 0 (schema `main`) inside the caller's
    transaction, in the metadata schema when one is given (created if missing, as the reference does). `encrypted`:
    the reference's ENCRYPTED (every file written to the lake gets its own key: docs/types.md, "Encrypted lakes")."""
    if metadata_schema is not None and dialect_for(conn).has_schemas:
        dialect_for(conn).create_schema(conn, metadata_schema)
    # No checkfirst: lake_exists said there is none here, and DuckDB's has_table would see the tables of a lake
    # in another schema of the same file.
    LAYOUTS[layout_of(version)].create_all(conn, checkfirst=False)
    now = datetime.now(timezone.utc)
    conn.execute(
        T["ducklake_metadata"].insert(),
        [
            {"key": "version", "value": version, "scope": None, "scope_id": None},
            {"key": "created_by", "value": CREATED_BY, "scope": None, "scope_id": None},
            {"key": "data_path", "value": normalize_data_path(data_path), "scope": None, "scope_id": None},
            {"key": "encrypted", "value": "true" if encrypted else "false", "scope": None, "scope_id": None},
        ],
    )
    conn.execute(
        T["ducklake_snapshot"].insert().values(
            snapshot_id=0, snapshot_time=now, schema_version=0, next_catalog_id=1, next_file_id=0
        )
    )
    conn.execute(
        T["ducklake_snapshot_changes"].insert().values(snapshot_id=0, changes_made='created_schema:"main"')
    )
    conn.execute(
        T["ducklake_schema"].insert().values(
            schema_id=0, schema_uuid=new_uuid(), begin_snapshot=0, end_snapshot=None, schema_name="main",
            path="main/", path_is_relative=True,
        )
    )
    remember_version(conn, version)
