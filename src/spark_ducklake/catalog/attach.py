"""Attaching a catalog: parse the ATTACH string, connect, create or check (and migrate) the lake, pin a snapshot."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from ..errors import CatalogError
from ..spec.paths import absolute_data_path
from .database import bootstrap
from .database.connection import CatalogLocation, catalog_exists, create_engine
from .database.migration import migrate_if_needed
from .database.versions import CREATABLE, LATEST, is_v11, remember_version
from .encryption import is_encrypted
from .reads import reader

DEFAULT_VERSION_ENV = "SPARK_DUCKLAKE_DEFAULT_VERSION"

@dataclass
class AttachedCatalog:
    """An open catalog: where it is, its engine, the data path in force and the pinned snapshot (if any)."""

    location: CatalogLocation
    engine: sa.Engine
    data_path: str
    pinned_snapshot: int | None


def attach_catalog(location: CatalogLocation, data_path: str | None, *, create_if_missing: bool, read_only: bool,
                   snapshot_version: int | None, snapshot_time: datetime | None, automatic_migration: bool,
                   override_data_path: bool, encrypted: bool | None = None,
                   ducklake_version: str | None = None) -> AttachedCatalog:
    """Open (or create) the lake behind an ATTACH string; raw driver errors propagate (error_causes names them).
    `encrypted` (the reference's ENCRYPTED; None: as the lake says) creates an encrypted lake, and must match an
    existing lake's setting. `ducklake_version` (checked by check_ducklake_version) is a new catalog's version."""
    if not catalog_exists(location) and (read_only or not create_if_missing):
        raise CatalogError(f"no DuckLake catalog at {location.describe()} (create_if_missing is off)")
    engine = create_engine(location)
    try:
        with engine.begin() as conn:
            if bootstrap.lake_exists(conn, location.metadata_schema):
                metadata = bootstrap.read_global_metadata(conn)
                if automatic_migration:
                    metadata = migrate_if_needed(conn, metadata, read_only=read_only, target=ducklake_version)
                bootstrap.check_version(metadata)
                remember_version(conn, metadata["version"])  # later version checks need no catalog read
                check_requested_version(metadata["version"], ducklake_version)
                check_encryption(metadata, encrypted)
                stored = metadata.get("data_path")
                if stored is None:
                    raise CatalogError("catalog has no data_path in ducklake_metadata")
                data_path = _attached_data_path(stored, data_path, override_data_path)
            elif read_only or not create_if_missing:
                raise CatalogError(f"{location.describe()} holds no DuckLake catalog")
            else:
                data_path = data_path or location.default_data_path
                if data_path is None:
                    raise CatalogError(f"a new lake on {location.kind} needs data_path=")
                data_path = absolute_data_path(data_path)
                bootstrap.create_lake(conn, data_path, encrypted=bool(encrypted),
                                      metadata_schema=location.metadata_schema,
                                      version=ducklake_version or LATEST)
            pinned = None
            if snapshot_version is not None:
                pinned = reader.get_snapshot(conn, snapshot_version).snapshot_id
            elif snapshot_time is not None:
                pinned = reader.snapshot_at(conn, snapshot_time).snapshot_id
    except BaseException:
        engine.dispose()
        raise
    return AttachedCatalog(location, engine, data_path, pinned)


def check_encryption(metadata: dict[Any, Any], encrypted: bool | None) -> None:
    """An explicit ENCRYPTED setting must match the existing lake's, as the reference requires."""
    if encrypted is None or bool(encrypted) == is_encrypted(metadata):
        return
    if encrypted:
        raise CatalogError("Failed to set encryption - the database is not encrypted but we requested an encrypted "
                           "database (encrypted=True on a lake created without ENCRYPTED)")
    raise CatalogError("Failed to set encryption - the database is encrypted but we requested an unencrypted "
                       "database (encrypted=False on an ENCRYPTED lake)")


def check_metadata_catalog(name: str | None) -> str | None:
    """The reference's METADATA_CATALOG: the name its DuckDB gives the attached catalog database. Nothing stored
    depends on it; here it is the name `lake.sql` reads the catalog tables under (`name.ducklake_snapshot`)."""
    if name is None:
        return None
    if not isinstance(name, str) or not name.strip() or "." in name:
        raise CatalogError(f"metadata_catalog must be a plain database name (no dots); got {name!r}")
    return name.strip()


def check_ducklake_version(version: str | None) -> str | None:
    """The reference's DUCKLAKE_VERSION: the spec version a new catalog is created at ('1.0', '1.1', or the
    reference's development string '1.1-dev1'); returned stripped (None: the default)."""
    if version is None:
        return None
    text = str(version).strip()
    try:
        parts = tuple(int(p) for p in text.split("-", 1)[0].split("."))
    except ValueError:
        raise CatalogError(f"Unsupported ducklake_version {text!r}: expected a version such as '1.0'") from None
    if parts < (1, 0):
        raise CatalogError(f"ducklake_version must be >= '1.0'; got {text!r} (older catalogs are migrated with "
                           "automatic_migration=True)")
    if text not in CREATABLE:
        raise CatalogError(f"Unsupported ducklake_version {text!r}: spark-ducklake creates DuckLake "
                           f"{', '.join(CREATABLE)} catalogs")
    return text


def default_ducklake_version() -> str | None:
    """The reference's `ducklake_default_version` setting, here SPARK_DUCKLAKE_DEFAULT_VERSION: the version asked
    for when an attach gives no ducklake_version (None: unset; new catalogs are then 1.1, existing ones keep theirs)."""
    text = os.environ.get(DEFAULT_VERSION_ENV, "").strip()
    if not text:
        return None
    try:
        return check_ducklake_version(text)
    except CatalogError as exc:
        raise CatalogError(f"{DEFAULT_VERSION_ENV}: {exc}") from None


def check_requested_version(version: str, requested: str | None) -> None:
    """An explicit DUCKLAKE_VERSION on an existing catalog: a newer catalog is never downgraded, an older one is
    only upgraded by a migration (the reference's rules; '1.1' and '1.1-dev1' are one layout family here)."""
    if requested is None or is_v11(requested) == is_v11(version):
        return
    if is_v11(version):
        raise CatalogError(f"Cannot downgrade a DuckLake catalog from version {version} to {requested}")
    raise CatalogError(f"DuckLake catalog version mismatch: the catalog is version {version} but "
                       f"ducklake_version={requested!r} was requested; attach with automatic_migration=True to "
                       "migrate it")


def _attached_data_path(stored: str, given: str | None, override: bool) -> str:
    """The data path an existing lake is attached with: the stored one, or `given` when told to override it."""
    resolved = absolute_data_path(stored)
    if given is None or absolute_data_path(given) == resolved:
        return resolved
    if override:
        return absolute_data_path(given)
    raise CatalogError(f"DATA_PATH parameter {given!r} does not match existing data path in the catalog "
                       f"{stored!r}; pass override_data_path=True to use it for this attach (the catalog keeps "
                       "its own)")
