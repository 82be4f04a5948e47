"""`LakeContext`: what every operation needs of an attached lake, and `CommitProperties`, what a commit records.

Operations (write, delete/update, merge, schema change, maintenance, streaming) take a context, never the
`DuckLake` facade: the catalog engine, the data path, the Spark session, the commit defaults, the pinned snapshot,
and the few catalog reads and the one commit path they share.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from ..catalog.attach import AttachedCatalog, AttachOptions, attach_catalog, check_metadata_catalog
from ..catalog.changes.ddl import check_can_enable_inlining
from ..catalog.commit import commit
from ..catalog.database.connection import parse_catalog, with_metadata_schema
from ..catalog.database.versions import catalog_is_v11
from ..catalog.inlined import tables as inlined_tables
from ..catalog.planners.pruning import prune_files
from ..catalog.reads import reader
from ..catalog.reads.file_cache import FileListCache
from ..catalog.reads.file_columns import mark_absent_columns
from ..catalog.reads.options import DEFAULT_INLINING_ROW_LIMIT, checked_option, normalize, set_option
from ..catalog.write_settings import WriteSettings
from ..dataplane.arrow.storage import delete_paths
from ..dataplane.arrow.threshold import check_threshold
from ..dataplane.arrow.write_options import WriteOptions
from ..dataplane.spark.scan_plan import ScanPlan
from ..dataplane.spark.session import get_or_create_spark, prepare
from ..errors import CatalogError, InvalidArgumentError, NotFoundError, ReadOnlyError
from ..spec.arguments import one_snapshot
from ..spec.arguments import snapshot_time as check_time
from ..spec.arguments import snapshot_version as check_version
from ..spec.commit_properties import CommitProperties
from ..spec.model import TableInfo
from ..spec.names import check_name, parse_table_name, split_schema_path
from .error_causes import catalog_failure, is_driver_error

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from pyspark.sql import SparkSession


class LakeContext:
    """One attached lake, as operations see it."""

    def __init__(self, opened: AttachedCatalog, options: AttachOptions, *, spark=None):
        self.location = opened.location
        self.engine = opened.engine
        self.data_path = opened.data_path
        self.read_only = options.read_only or opened.pinned_snapshot is not None
        self.data_inlining_row_limit = options.data_inlining_row_limit
        # the reference's write settings (SET ducklake_target_file_size, ...; catalog/write_settings.py); the
        # WRITE_DELETION_VECTORS attach option sets the same as the setting: below a stored option
        self.write_settings = WriteSettings(write_deletion_vectors=options.write_deletion_vectors)
        self.pinned_snapshot = opened.pinned_snapshot
        self.author = options.author
        self.retry = options.retry  # the ducklake_*retry* settings; lake.sql's SET changes them
        self.metadata_catalog = options.metadata_catalog
        # bytes up to which data moves in-process with pyarrow (dataplane/arrow); None: the process default
        self.small_data_threshold: int | None = (None if options.small_data_threshold is None
                                                 else check_threshold(options.small_data_threshold))
        self._spark = spark
        self.table_cache = reader.TableCache()
        self.file_cache = FileListCache()  # big tables' file lists, per snapshot
        self.last_committed: int | None = None  # the newest snapshot this handle committed

    @classmethod
    def attach(cls, catalog: str, options: AttachOptions, *, spark=None) -> LakeContext:
        """Open (or create) a lake from an ATTACH string as `options` ask, checked here (before the catalog is
        opened: a bad value changes nothing); a driver error becomes a CatalogError naming its cause."""
        location = with_metadata_schema(parse_catalog(catalog), options.metadata_schema)
        metadata_catalog = check_metadata_catalog(options.metadata_catalog)
        snapshot_version = check_version(options.snapshot_version, "snapshot_version")
        snapshot_time = check_time(options.snapshot_time, "snapshot_time")
        one_snapshot(snapshot_version, snapshot_time, ("snapshot_version", "snapshot_time"))
        if options.small_data_threshold is not None:
            check_threshold(options.small_data_threshold)
        options = replace(
            options, metadata_catalog=metadata_catalog, snapshot_version=snapshot_version,
            snapshot_time=snapshot_time,
            data_inlining_row_limit=_checked("data_inlining_row_limit", options.data_inlining_row_limit),
            encrypted=_checked("encrypted", options.encrypted),
            write_deletion_vectors=_checked("write_deletion_vectors", options.write_deletion_vectors))
        try:
            opened = attach_catalog(location, options)
        except Exception as exc:
            if not is_driver_error(exc):
                raise
            failure = catalog_failure(exc, location)
            if location.kind == "sqlite" and "not a database" in failure:
                failure += " (the file is not a SQLite database, or it is corrupt)"
        else:
            return cls(opened, options, spark=spark)
        # raised outside the handler: the driver's error (and its text, which may hold a password) stays unchained
        raise CatalogError(f"cannot open catalog {location.describe()}: {failure}")

    def close(self) -> None:
        """Release catalog connections."""
        self.engine.dispose()

    @property
    def spark(self) -> SparkSession:
        """The Spark session that moves data (the caller's, the active one, or one started on first use),
        re-checked on every use: our confs may have been changed by the user since (spark.session.prepare)."""
        if self._spark is None:
            self._spark = get_or_create_spark()
            return self._spark
        return prepare(self._spark)

    @property
    def spark_started(self) -> bool:
        """Whether this handle has a Spark session yet (catalog-only work never needs one)."""
        return self._spark is not None

    def use_spark(self, spark: SparkSession) -> None:
        """Move data with `spark` from now on; InvalidArgumentError if the handle already uses another session."""
        if self._spark is None:
            self._spark = spark
        elif self._spark is not spark:
            raise InvalidArgumentError("this lake already moves its data with another Spark session")

    # ----------------------------------------------------------------------------------------- catalog reads
    @contextmanager
    def connect(self):
        """A catalog connection for reads."""
        with self.engine.connect() as conn:
            yield conn

    def snapshot_id(self, conn: sa.Connection, version: int | None = None,
                    timestamp: datetime | str | None = None) -> int:
        """The snapshot a read addresses: `version`, the one at `timestamp`, the pinned one, or the latest."""
        version, timestamp = check_version(version), check_time(timestamp)
        one_snapshot(version, timestamp)
        if version is not None:
            snap = reader.get_snapshot(conn, version).snapshot_id
        elif timestamp is not None:
            snap = reader.snapshot_at(conn, timestamp).snapshot_id
        elif self.pinned_snapshot is not None:
            snap = self.pinned_snapshot
        else:
            snap = reader.latest_snapshot(conn).snapshot_id
        if self.pinned_snapshot is not None and snap > self.pinned_snapshot:
            raise NotFoundError(f"snapshot {snap} is newer than the attached snapshot {self.pinned_snapshot}")
        return snap

    def find(self, schema: str, table: str) -> TableInfo | None:
        """The table visible now, or None."""
        with self.connect() as conn:
            found = reader.list_tables(conn, self.snapshot_id(conn), self.data_path, schema=schema, name=table)
        return found[0] if found else None

    def schema_path(self, name: str | Sequence[str]) -> tuple[str, ...]:
        """The names of a schema from the top level down, as `create_schema` / `drop_schema` read `name`: a tuple
        as given; a string, on catalogs with nested schemas (DuckLake 1.1), split at its unquoted dots
        ('sales.europe'; '"a.b"' is one name); on the others, one name as written (their behaviour before 1.1)."""
        if not isinstance(name, str):
            return split_schema_path(name)
        with self.connect() as conn:
            nested = reader.nested_schemas(conn)
        return split_schema_path(name) if nested else (check_name(name, "schema"),)

    def table_info(self, table: str | tuple[str, str], *, version: int | None = None) -> TableInfo:
        """A table's definition now or at `version`; NotFoundError names what is missing."""
        schema, name = parse_table_name(table)
        with self.connect() as conn:
            return reader.find_table(conn, self.snapshot_id(conn, version), self.data_path, schema, name)

    def plan_scan(self, table: str | tuple[str, str], *, version: int | None = None,
                  timestamp: datetime | str | None = None, where: str | None = None,
                  inlined_sources: bool = False) -> ScanPlan:
        """Everything a scan needs from the catalog (files after pruning, inlined rows), without Spark;
        `inlined_sources` gives inlined rows their table and begin snapshot (for the virtual columns)."""
        schema, name = parse_table_name(table)
        with self.connect() as conn:
            snap = self.snapshot_id(conn, version, timestamp)
            info = reader.find_table(conn, snap, self.data_path, schema, name)
            files = self.file_cache.data_files(conn, info, snap)
            mark_absent_columns(conn, info, files)
            pruned = prune_files(conn, info, files, where)
            return ScanPlan(
                table=info, snapshot_id=snap, files=pruned, total_files=len(files),
                inlined=inlined_tables.read_rows(conn, info.table_id, info.columns, snap,
                                                 with_snapshots=inlined_sources, with_source=inlined_sources),
                inlined_deletes=inlined_tables.inlined_deletes(conn, info.table_id, snap),
                names_stable=reader.column_names_stable(conn, info.table_id),
                deletion_vectors=self.writes_deletion_vectors(conn, info),
                vector_history=catalog_is_v11(conn),
            )

    def writes_deletion_vectors(self, conn: sa.Connection, table: TableInfo) -> bool:
        """Whether new delete files of `table` are Puffin deletion vectors: the write_deletion_vectors option of the
        table, its schema or the lake, else this handle's attach-time value (the reference's precedence)."""
        value = reader.option_value(reader.options(conn), "write_deletion_vectors", table_id=table.table_id,
                                    schema_id=table.schema_id)
        if value is None:
            return bool(self.write_settings.write_deletion_vectors)
        return value.lower() in ("true", "1")

    def option(self, key: str, table: TableInfo | None = None) -> str | None:
        """An option's value in the most specific scope that sets it."""
        with self.connect() as conn:
            return self.options_of(table, conn)(key)

    def options_of(self, table: TableInfo | None = None,
                   conn: sa.Connection | None = None) -> Callable[[str], str | None]:
        """`option(key, table)` for many keys on one catalog read (a writer resolves ten of them), on `conn` if
        given (a write's one round of reads)."""
        if conn is None:
            with self.connect() as conn:
                return self.options_of(table, conn)
        rows = reader.options(conn)
        target = self.write_settings.target_file_size  # SET ducklake_target_file_size: above every scope's option

        def lookup(key: str) -> str | None:
            if key == "target_file_size" and target is not None:
                return str(target)
            return reader.option_value(rows, key, table_id=table.table_id if table else None,
                                       schema_id=table.schema_id if table else None)
        return lookup

    def write_options(self, table: TableInfo | None, conn: sa.Connection | None = None) -> WriteOptions:
        """The options a writer of `table` honours, on one catalog read (`conn` if given), the handle's
        `ducklake_target_file_size` setting above them."""
        return WriteOptions.from_lake_options(self.options_of(table, conn))

    def inlining_limit(self, table: TableInfo | None, conn: sa.Connection | None = None, *,
                       options: Callable[[str], str | None] | None = None) -> int:
        """The data_inlining_row_limit in force: table, schema, global option, attach value, default 10.
        `options`: the lookup `options_of(table)` returned, when the caller has read the options already."""
        if options is None:
            options = self.options_of(table, conn)
        value = options("data_inlining_row_limit")
        if value is not None:
            return int(value)
        if self.data_inlining_row_limit is not None:
            return int(self.data_inlining_row_limit)
        if self.write_settings.default_inlining_row_limit is not None:
            return self.write_settings.default_inlining_row_limit
        return DEFAULT_INLINING_ROW_LIMIT

    # ----------------------------------------------------------------------------------------- the commit path
    def check_writable(self) -> None:
        """ReadOnlyError unless this handle may change the lake."""
        if self.read_only:
            raise ReadOnlyError("this lake is attached read-only (or at a past snapshot)")

    def set_option(self, name: str, value, *, table_name: str | None = None, schema: str | None = None) -> None:
        """Persist an option globally, for a schema, or for a table (options change no snapshot)."""
        self.check_writable()
        scope, scope_id, found = None, None, None
        with self.connect() as conn:
            snap = self.snapshot_id(conn)
            if table_name is not None:
                table = (schema, table_name) if schema else table_name
                found = reader.find_table(conn, snap, self.data_path, *parse_table_name(table))
                scope, scope_id = "table", found.table_id
            elif schema is not None:
                scope, scope_id = "schema", reader.find_schema(conn, snap, self.data_path, schema).schema_id
            if name.lower() == "data_inlining_row_limit" and int(normalize(name, value)) > 0:
                self._check_can_inline(conn, snap, found, scope_id if scope == "schema" else None)
        with self.engine.begin() as conn:
            set_option(conn, name, value, scope=scope, scope_id=scope_id)

    def _check_can_inline(self, conn: sa.Connection, snap: int, table: TableInfo | None,
                          schema_id: int | None) -> None:
        """InvalidNameError when turning inlining on for `table`, a schema or the lake would cover a table with a
        column named like the inlined tables' system columns (as the reference's set_option); for a schema or the
        lake, tables whose own option (for the lake: or their schema's) keeps inlining off are skipped."""
        v11 = catalog_is_v11(conn)
        if table is not None:
            check_can_enable_inlining(table.name, table.columns, v11)
            return
        off = {(where, where_id) for key, value, where, where_id in reader.options(conn)
               if key == "data_inlining_row_limit" and value == "0"}
        for each in reader.list_tables(conn, snap, self.data_path):
            if schema_id is not None and each.schema_id != schema_id:
                continue
            if ("table", each.table_id) in off or (schema_id is None and ("schema", each.schema_id) in off):
                continue
            check_can_enable_inlining(each.name, each.columns, v11)

    def latest_snapshot(self) -> int:
        """The newest snapshot id (what a new commit reads from)."""
        with self.connect() as conn:
            return reader.latest_snapshot(conn).snapshot_id

    def commit(self, operations: list, *, read_snapshot: int | None = None,
               properties: CommitProperties | None = None, staged_files: list[str] | None = None) -> int:
        """Commit operations as one snapshot (conflict rules and retries in catalog/commit.py); if that fails,
        delete the files they staged, which no reader has seen."""
        try:
            self.check_writable()
            if read_snapshot is None:
                read_snapshot = self.latest_snapshot()
            info = (properties or CommitProperties()).with_default_author(self.author)
            self.last_committed = commit(self.engine, operations, read_snapshot=read_snapshot,
                                         data_path=self.data_path, info=info, retry=self.retry,
                                         inlining_limit=self.data_inlining_row_limit)
            return self.last_committed
        except BaseException:
            if staged_files:
                delete_paths(staged_files)
            raise


def _checked(name: str, value: Any) -> Any:
    """An attach-time value checked as `set_option` checks the lake option of that name (None: not given)."""
    return None if value is None else checked_option(name, value)
