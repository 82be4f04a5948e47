"""Attaching a catalog: what an attach asks for (`AttachOptions`), then connect, create or check (and migrate)
the lake, pin a snapshot."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from ..errors import CatalogError
from ..spec.paths import absolute_data_path
from .commit import RetryPolicy
from .database import bootstrap
from .database.connection import CatalogLocation, catalog_exists, create_engine
from .database.migration import migrate_if_needed
from .database.versions import CREATABLE, LATEST, DucklakeVersion, is_v11, remember_version
from .encryption import is_encrypted
from .reads import reader

DEFAULT_VERSION_ENV = "SPARK_DUCKLAKE_DEFAULT_VERSION"


@dataclass(frozen=True)
class AttachOptions:
    """What one attach asks for, below the `DuckLake.attach` facade (which builds it once from its keywords; the
    stream and data-source writers build their own): the reference's ATTACH options and this handle's defaults.
    `LakeContext.attach` checks the values it is given (operations/context.py), so `attach_catalog` and the
    context see checked ones. The catalog string and the Spark session travel beside it, not in it."""

    data_path: str | None = None  # the reference's DATA_PATH (None: the stored one, or the catalog's default)
    create_if_missing: bool = True
    read_only: bool = False
    snapshot_version: int | None = None  # pin the handle to a snapshot (at most one of version and time)
    snapshot_time: datetime | None = None
    automatic_migration: bool = False  # AUTOMATIC_MIGRATION: upgrade an older catalog in place
    override_data_path: bool = False  # OVERRIDE_DATA_PATH: data_path wins over the stored one, for this handle
    metadata_schema: str | None = None  # METADATA_SCHEMA: the catalog tables' schema (PostgreSQL, DuckDB)
    metadata_catalog: str | None = None  # METADATA_CATALOG: the name lake.sql reads the catalog tables under
    encrypted: bool | None = None  # ENCRYPTED (None: as the lake says)
    ducklake_version: DucklakeVersion | None = None  # DUCKLAKE_VERSION of a new catalog (check_ducklake_version)
    # The handle's defaults: inlining limit, commit author and retries, the in-process size limit, deletion vectors.
    data_inlining_row_limit: int | None = None
    author: str | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)  # the ducklake_*retry* settings
    small_data_threshold: int | str | None = None  # bytes or a size such as "16MB" (dataplane/arrow/threshold.py)
    write_deletion_vectors: bool | None = None  # WRITE_DELETION_VECTORS, below a stored option of that name


@dataclass
class AttachedCatalog:
    """An open catalog: where it is, its engine, the data path in force and the pinned snapshot (if any)."""

    location: CatalogLocation
    engine: sa.Engine
    data_path: str
    pinned_snapshot: int | None


def attach_catalog(location: CatalogLocation, options: AttachOptions) -> AttachedCatalog:
    """Open (or create) the lake behind an ATTACH string as `options` (checked) ask; raw driver errors propagate
    (error_causes names them). `options.encrypted` creates an encrypted lake, and must match an existing lake's
    setting. `options.ducklake_version` is a new catalog's version, and an existing one's migration target."""
    if not catalog_exists(location) and (options.read_only or not options.create_if_missing):
        raise CatalogError(f"no DuckLake catalog at {location.describe()} (create_if_missing is off)")
    engine = create_engine(location)
    try:
        with engine.begin() as conn:
            if bootstrap.lake_exists(conn, location.metadata_schema):
                metadata = bootstrap.read_global_metadata(conn)
                if options.automatic_migration:
                    metadata = migrate_if_needed(conn, metadata, read_only=options.read_only,
                                                 target=options.ducklake_version)
                bootstrap.check_version(metadata)
                remember_version(conn, metadata["version"])  # later version checks need no catalog read
                check_requested_version(metadata["version"], options.ducklake_version)
                check_encryption(metadata, options.encrypted)
                stored = metadata.get("data_path")
                if stored is None:
                    raise CatalogError("catalog has no data_path in ducklake_metadata")
                data_path = _attached_data_path(stored, options.data_path, options.override_data_path)
            elif options.read_only or not options.create_if_missing:
                raise CatalogError(f"{location.describe()} holds no DuckLake catalog")
            else:
                given = options.data_path or location.default_data_path
                if given is None:
                    raise CatalogError(f"a new lake on {location.kind} needs data_path=")
                data_path = absolute_data_path(given)
                bootstrap.create_lake(conn, data_path, encrypted=bool(options.encrypted),
                                      metadata_schema=location.metadata_schema,
                                      version=options.ducklake_version or LATEST)
            pinned = None
            if options.snapshot_version is not None:
                pinned = reader.get_snapshot(conn, options.snapshot_version).snapshot_id
            elif options.snapshot_time is not None:
                pinned = reader.snapshot_at(conn, options.snapshot_time).snapshot_id
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


def check_ducklake_version(version: str | None) -> DucklakeVersion | None:
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
    for creatable in CREATABLE:
        if text == creatable:
            return creatable  # the Literal, which `text` (a str) is not to the type checker
    raise CatalogError(f"Unsupported ducklake_version {text!r}: spark-ducklake creates DuckLake "
                       f"{', '.join(CREATABLE)} catalogs")


def default_ducklake_version() -> DucklakeVersion | None:
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
