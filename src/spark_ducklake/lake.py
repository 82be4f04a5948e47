"""`DuckLake`: the user-facing handle on one lake (catalog database + data path)."""

from __future__ import annotations

from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, NamedTuple, overload

import sqlalchemy as sa

from .catalog.commit import CommitInfo, commit
from .catalog.database import bootstrap
from .catalog.database.connection import CatalogLocation, catalog_exists, create_engine, parse_catalog
from .catalog.inlined import tables as inlined_tables
from .catalog.operations.ddl import CreateSchema, CreateTable, DropSchema, DropTable, RenameTable
from .catalog.planners.pruning import prune_files
from .catalog.reads import options, reader
from .catalog.reads.file_columns import mark_absent_columns
from .error_causes import catalog_failure, is_driver_error, translate_methods
from .errors import AlreadyExistsError, CatalogError, NotFoundError, ReadOnlyError
from .spark.conform import plan_columns
from .spark.scan_plan import ScanPlan
from .spec.arguments import snapshot_time as check_time
from .spec.arguments import snapshot_version as check_version
from .spec.model import TableInfo
from .spec.names import parse_table_name
from .spec.paths import absolute_data_path
from .spec.snapshot_changes import display_changes

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from .catalog.reads.metadata_functions import FileRow, SettingsRow, TableInfoRow
    from .operations.maintenance.checkpoint import CheckpointResult
    from .operations.maintenance.cleanup import CleanupRow
    from .operations.maintenance.compaction import CompactionRow
    from .operations.maintenance.flush import FlushRow
    from .table import DuckLakeTable

DEFAULT_INLINING_ROW_LIMIT = 10
WRITE_MODES = ("append", "overwrite", "error", "errorifexists")


class SnapshotRow(NamedTuple):
    """A row of `snapshots()`, with the reference's columns."""

    snapshot_id: int
    snapshot_time: datetime
    schema_version: int
    changes: dict[str, list[str]]
    author: str | None
    commit_message: str | None
    commit_extra_info: str | None


def split_name(name: str | tuple[str, str]) -> tuple[str, str]:
    """'table' (schema main), 'schema.table', '"my.schema"."t"' (quoted) or a (schema, table) pair -> (schema,
    table); InvalidNameError names what does not parse."""
    return parse_table_name(name)


def _attached_data_path(stored: str, given: str | None, override: bool) -> str:
    """The data path an existing lake is attached with: the stored one, or `given` when told to override it."""
    resolved = absolute_data_path(stored)
    if given is None or absolute_data_path(given) == resolved:
        return resolved
    if override:
        return absolute_data_path(given)
    raise CatalogError(f"data_path {given!r} does not match the lake's data path {stored!r}; pass "
                       "override_data_path=True to use it for this attach (the catalog keeps its own)")


@translate_methods  # raw driver/Spark errors leave every public method as DuckLakeErrors naming the cause
class DuckLake:
    """A DuckLake lake: catalog operations in pure Python, data movement on Spark."""

    def __init__(self, location: CatalogLocation, engine: sa.Engine, data_path: str, *, spark=None,
                 read_only: bool = False, data_inlining_row_limit: int | None = None,
                 pinned_snapshot: int | None = None, author: str | None = None):
        self.location = location
        self.engine = engine
        self.data_path = data_path
        self.read_only = read_only or pinned_snapshot is not None
        self.data_inlining_row_limit = data_inlining_row_limit
        self.pinned_snapshot = pinned_snapshot
        self.author = author
        self._spark = spark
        self.table_cache = reader.TableCache()
        self.last_committed: int | None = None  # the newest snapshot this handle committed

    def __repr__(self) -> str:
        mode = " read_only" if self.read_only else ""
        return f"DuckLake({self.location.describe()!r}, data_path={self.data_path!r}{mode})"

    # ----------------------------------------------------------------------------------------- attaching
    @classmethod
    def attach(
        cls,
        catalog: str,
        data_path: str | None = None,
        *,
        spark: SparkSession | None = None,
        create_if_missing: bool = True,
        read_only: bool = False,
        data_inlining_row_limit: int | None = None,
        snapshot_version: int | None = None,
        snapshot_time: datetime | None = None,
        author: str | None = None,
        automatic_migration: bool = False,
        override_data_path: bool = False,
    ) -> DuckLake:
        """Open (or create) a lake; `catalog` takes the reference's ATTACH strings. Never starts Spark.

        `automatic_migration=True` upgrades a DuckLake 0.3/0.4 catalog to 1.0 first, like the reference's
        AUTOMATIC_MIGRATION (one catalog transaction). An existing lake keeps the data path it stores: a different
        `data_path` is an error naming both, unless `override_data_path=True` (the reference's OVERRIDE_DATA_PATH)
        uses it for this handle only; the catalog keeps the stored one. Local paths are compared resolved, so
        `data`, `./data/` and its absolute form are the same path."""
        location = parse_catalog(catalog)
        snapshot_version = check_version(snapshot_version, "snapshot_version")
        snapshot_time = check_time(snapshot_time, "snapshot_time")
        if not catalog_exists(location) and (read_only or not create_if_missing):
            raise CatalogError(f"no DuckLake catalog at {location.describe()} (create_if_missing is off)")
        engine = create_engine(location)
        try:
            with engine.begin() as conn:
                if bootstrap.lake_exists(conn):
                    metadata = bootstrap.read_global_metadata(conn)
                    if automatic_migration:
                        from .catalog.database.migration import migrate_if_needed

                        metadata = migrate_if_needed(conn, metadata, read_only=read_only)
                    bootstrap.check_version(metadata)
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
                    bootstrap.create_lake(conn, data_path)
                pinned = None
                if snapshot_version is not None:
                    pinned = reader.get_snapshot(conn, snapshot_version).snapshot_id
                elif snapshot_time is not None:
                    pinned = reader.snapshot_at(conn, snapshot_time).snapshot_id
        except Exception as exc:
            engine.dispose()
            if not is_driver_error(exc):
                raise
            failure = catalog_failure(exc, location)
            if location.kind == "sqlite" and "not a database" in failure:
                failure += " (the file is not a SQLite database, or it is corrupt)"
        else:
            failure = None
        if failure is not None:  # raised outside the handler: the driver's error (and its text) stays unchained
            raise CatalogError(f"cannot open catalog {location.describe()}: {failure}")
        return cls(location, engine, data_path, spark=spark, read_only=read_only,
                   data_inlining_row_limit=data_inlining_row_limit, pinned_snapshot=pinned, author=author)

    def close(self) -> None:
        """Release catalog connections (DuckDB catalog files can then be opened elsewhere)."""
        self.engine.dispose()

    def __enter__(self) -> DuckLake:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def spark(self) -> SparkSession:
        """The Spark session used to move data (the caller's, the active one, or one started on first use),
        re-checked on every use: our confs may have been changed by the user since (spark.session.prepare)."""
        from .spark.session import get_or_create_spark, prepare

        if self._spark is None:
            self._spark = get_or_create_spark()
            return self._spark
        return prepare(self._spark)

    @contextmanager
    def _read(self):
        with self.engine.connect() as conn:
            yield conn

    def _snapshot_id(self, conn, version: int | None = None, timestamp: datetime | str | None = None) -> int:
        version, timestamp = check_version(version), check_time(timestamp)
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

    # ----------------------------------------------------------------------------------------- listing
    def current_snapshot(self) -> int:
        """Id of the snapshot reads see now."""
        with self._read() as conn:
            return self._snapshot_id(conn)

    def snapshots(self) -> list[SnapshotRow]:
        """Every snapshot, like the reference's `snapshots()`."""
        with self._read() as conn:
            snaps = reader.list_snapshots(conn)
        if self.pinned_snapshot is not None:
            snaps = [s for s in snaps if s.snapshot_id <= self.pinned_snapshot]
        return [
            SnapshotRow(s.snapshot_id, s.snapshot_time, s.schema_version, display_changes(s.changes), s.author,
                        s.commit_message, s.commit_extra_info)
            for s in snaps
        ]

    def schemas(self) -> list[str]:
        """Names of the schemas visible now."""
        with self._read() as conn:
            return [s.name for s in reader.list_schemas(conn, self._snapshot_id(conn), self.data_path)]

    def tables(self, schema: str | None = None, *, version: int | None = None) -> list[TableInfo]:
        """Tables (with columns) visible now or at `version`."""
        with self._read() as conn:
            return reader.list_tables(conn, self._snapshot_id(conn, version), self.data_path, schema=schema)

    @overload
    def table_info(self, table: str, *, version: int | None = None) -> TableInfo: ...

    @overload
    def table_info(self, table: None = None, *, version: int | None = None) -> list[TableInfoRow]: ...

    def table_info(self, table: str | None = None, *, version: int | None = None):
        """One table's definition (TableInfo); without a table, the reference's `table_info()` rows.

        `table_info()` returns a `TableInfoRow` per table (table_name, schema_id, table_id, table_uuid, file_count,
        file_size_bytes, delete_file_count, delete_file_size_bytes), like DuckDB's `ducklake_table_info`.
        """
        with self._read() as conn:
            snap = self._snapshot_id(conn, version)
            if table is None:
                from .catalog.reads.metadata_functions import table_sizes

                return table_sizes(conn, snap)
            schema, name = split_name(table)
            return reader.find_table(conn, snap, self.data_path, schema, name)

    # ----------------------------------------------------------------------------------------- DDL
    def check_writable(self) -> None:
        """ReadOnlyError unless this handle may change the lake."""
        if self.read_only:
            raise ReadOnlyError("this lake is attached read-only (or at a past snapshot)")

    def _commit(self, operations, *, read_snapshot: int | None = None, commit_message: str | None = None,
                author: str | None = None, extra_info: str | None = None) -> int:
        self.check_writable()
        if read_snapshot is None:
            with self._read() as conn:
                read_snapshot = reader.latest_snapshot(conn).snapshot_id
        info = CommitInfo(author=author or self.author, message=commit_message, extra_info=extra_info)
        self.last_committed = commit(self.engine, operations, read_snapshot=read_snapshot,
                                     data_path=self.data_path, info=info)
        return self.last_committed

    def create_schema(self, name: str, *, if_not_exists: bool = False, **commit_args: Any) -> int | None:
        """CREATE SCHEMA; returns the new snapshot id."""
        if if_not_exists and name.lower() in {s.lower() for s in self.schemas()}:  # names are case-insensitive
            return None
        return self._commit([CreateSchema(name)], **commit_args)

    def drop_schema(self, name: str, *, cascade: bool = False, if_exists: bool = False,
                    **commit_args: Any) -> int | None:
        """DROP SCHEMA (empty unless cascade=True)."""
        if name not in self.schemas():
            if if_exists:
                return None
            raise NotFoundError(f"schema {name!r} does not exist")
        return self._commit([DropSchema(name, cascade)], **commit_args)

    def create_table(self, name: str, schema, *, if_not_exists: bool = False, **commit_args: Any) -> int | None:
        """CREATE TABLE from a Spark StructType, a pyarrow Schema or a DDL string ('id INT, s STRING')."""
        schema_name, table = split_name(name)
        if if_not_exists and self._find(schema_name, table) is not None:
            return None
        columns = plan_columns(schema)
        try:
            return self._commit([CreateTable(schema_name, table, columns)], **commit_args)
        except AlreadyExistsError:  # the name taken in another case (names are case-insensitive)
            if if_not_exists:
                return None
            raise

    def drop_table(self, name: str, *, if_exists: bool = False, **commit_args: Any) -> int | None:
        """DROP TABLE."""
        schema, table = split_name(name)
        info = self._find(schema, table)
        if info is None:
            if if_exists:
                return None
            raise NotFoundError(f"table {schema}.{table} does not exist")
        return self._commit([DropTable(info.table_id)], **commit_args)

    def update_schema(self, table: str, **commit_args: Any):
        """Several column changes committed as one snapshot: `with lake.update_schema(t) as u: u.add_column(...)`."""
        from .operations.schema_change import SchemaUpdate

        return SchemaUpdate(self, table, **commit_args)

    def add_column(self, table: str, column: str, type_: Any, *, default: Any = None, nullable: bool = True,
                   **commit_args: Any) -> int:
        """ALTER TABLE ADD COLUMN (dotted path: a struct field); existing rows read `default`."""
        return self.update_schema(table, **commit_args).add_column(column, type_, default=default,
                                                                   nullable=nullable).commit()

    def drop_column(self, table: str, column: str, **commit_args: Any) -> int:
        """ALTER TABLE DROP COLUMN (dotted path: a struct field)."""
        return self.update_schema(table, **commit_args).drop_column(column).commit()

    def rename_column(self, table: str, column: str, new_name: str, **commit_args: Any) -> int:
        """ALTER TABLE RENAME COLUMN (dotted path: a struct field)."""
        return self.update_schema(table, **commit_args).rename_column(column, new_name).commit()

    def alter_column_type(self, table: str, column: str, type_: Any, **commit_args: Any) -> int:
        """ALTER COLUMN ... TYPE: the spec's lossless promotions only."""
        return self.update_schema(table, **commit_args).update_column_type(column, type_).commit()

    def set_nullable(self, table: str, column: str, nullable: bool, **commit_args: Any) -> int:
        """ALTER COLUMN ... SET NOT NULL (nullable=False) / DROP NOT NULL (nullable=True)."""
        return self.update_schema(table, **commit_args).set_nullable(column, nullable).commit()

    def set_column_default(self, table: str, column: str, value: Any, **commit_args: Any) -> int:
        """ALTER COLUMN ... SET DEFAULT (None: DROP DEFAULT) for rows inserted from now on."""
        return self.update_schema(table, **commit_args).set_default(column, value).commit()

    def set_partitioning(self, table: str, keys: list[str], **commit_args: Any) -> int:
        """SET PARTITIONED BY: `['region', 'year(ts)', 'bucket(8, id)']`; new files follow it, old ones keep theirs."""
        from .catalog.operations.partitioning import SetPartitioning, parse_keys

        info = self.table_info(table)
        if not keys:
            raise ValueError("set_partitioning needs at least one key; use reset_partitioning to remove them")
        return self._commit([SetPartitioning(info.table_id, parse_keys(info, list(keys)))], **commit_args)

    def reset_partitioning(self, table: str, **commit_args: Any) -> int:
        """RESET PARTITIONED BY: new files are no longer partitioned."""
        from .catalog.operations.partitioning import SetPartitioning

        return self._commit([SetPartitioning(self.table_info(table).table_id, [])], **commit_args)

    def set_sorted_by(self, table: str, keys: list[str], **commit_args: Any) -> int:
        """SET SORTED BY: `['ts DESC', 'b ASC NULLS FIRST', "date_trunc('hour', ts)"]` (DuckDB SQL expressions)."""
        from .catalog.operations.sorting import SetSorting, parse_sort_keys

        info = self.table_info(table)
        if not keys:
            raise ValueError("set_sorted_by needs at least one key; use reset_sorted_by to remove them")
        return self._commit([SetSorting(info.table_id, parse_sort_keys(info, list(keys)))], **commit_args)

    def reset_sorted_by(self, table: str, **commit_args: Any) -> int:
        """RESET SORTED BY."""
        from .catalog.operations.sorting import SetSorting

        return self._commit([SetSorting(self.table_info(table).table_id, [])], **commit_args)

    def rename_table(self, name: str, new_name: str, **commit_args: Any) -> int:
        """ALTER TABLE name RENAME TO new_name (same schema)."""
        info = self.table_info(name)
        return self._commit([RenameTable(info.table_id, info.schema_name, new_name)], **commit_args)

    def _find(self, schema: str, table: str) -> TableInfo | None:
        with self._read() as conn:
            found = reader.list_tables(conn, self._snapshot_id(conn), self.data_path, schema=schema, name=table)
        return found[0] if found else None

    # ----------------------------------------------------------------------------------------- data
    def read(self, table: str, *, version: int | None = None, timestamp: datetime | None = None,
             where: str | None = None) -> DataFrame:
        """The table as a Spark DataFrame (latest, or at a snapshot id / timestamp).

        `where` (a SQL predicate) is applied to the result and, before Spark sees the files, used to skip
        files whose min/max statistics prove it false.
        """
        from .spark.expressions import check_expression

        plan = self.plan_scan(table, version=version, timestamp=timestamp, where=where)
        if where:
            check_expression(self.spark, plan.table, where, "where")
        frame = plan.to_dataframe(self.spark)
        return frame.where(where) if where else frame

    def plan_scan(self, table: str, *, version: int | None = None, timestamp: datetime | None = None,
                  where: str | None = None) -> ScanPlan:
        """Everything a scan needs from the catalog (files after pruning, inlined rows), without Spark."""
        schema, name = split_name(table)
        with self._read() as conn:
            snap = self._snapshot_id(conn, version, timestamp)
            info = reader.find_table(conn, snap, self.data_path, schema, name)
            files = reader.data_files(conn, info, snap)
            mark_absent_columns(conn, info, files)
            pruned = prune_files(conn, info, files, where)
            return ScanPlan(
                table=info, snapshot_id=snap, files=pruned, total_files=len(files),
                inlined=inlined_tables.read_rows(conn, info.table_id, info.columns, snap),
                inlined_deletes=inlined_tables.inlined_deletes(conn, info.table_id, snap),
                names_stable=reader.column_names_stable(conn, info.table_id),
            )

    def write(self, df, table: str, mode: str = "append", *, where=None, merge_schema: bool = False,
              commit_message: str | None = None, author: str | None = None, extra_info: str | None = None) -> int:
        """Append, overwrite or create (`error`) a table from a Spark DataFrame or a pyarrow Table.

        With mode="overwrite" and `where` (SQL string or Column), only the rows matching it are replaced. With
        merge_schema=True, columns of the data the table lacks are added (and promotable types widened) in the
        same snapshot.
        """
        from .operations.write import write_table

        if mode not in WRITE_MODES:
            raise ValueError(f"mode must be one of {', '.join(WRITE_MODES)}; got {mode!r}")
        self.check_writable()
        if where is not None and mode != "overwrite":
            raise ValueError("where= only applies to mode='overwrite'")
        schema, name = split_name(table)
        return write_table(self, df, schema, name, mode, CommitInfo(author or self.author, commit_message, extra_info),
                           where=where, merge_schema=merge_schema)

    def delete(self, table: str, condition=None, *, commit_message: str | None = None, author: str | None = None,
               extra_info: str | None = None) -> int:
        """DELETE FROM table WHERE condition (SQL string or Column; None deletes every row); returns rows deleted."""
        from .operations.delete_update import delete_rows

        return delete_rows(self, table, condition, CommitInfo(author or self.author, commit_message, extra_info))

    def update(self, table: str, set: dict, condition=None, *, commit_message: str | None = None,  # noqa: A002
               author: str | None = None, extra_info: str | None = None) -> int:
        """UPDATE table SET col = expr, ... WHERE condition (SQL strings or Columns); returns rows updated."""
        from .operations.delete_update import update_rows

        return update_rows(self, table, set, condition, CommitInfo(author or self.author, commit_message, extra_info))

    @contextmanager
    def transaction(self, *, commit_message: str | None = None, author: str | None = None,
                    extra_info: str | None = None):
        """`with lake.transaction() as tx:` groups DDL and DML into one atomic snapshot (operations/transaction.py)."""
        from .operations.transaction import Transaction

        tx = Transaction(self, CommitInfo(author or self.author, commit_message, extra_info))
        try:
            yield tx
        except BaseException:
            tx.abort()
            raise
        tx.commit()

    def table(self, name: str) -> DuckLakeTable:
        """A handle with row-level operations, after delta-spark's DeltaTable."""
        from .table import DuckLakeTable

        self.table_info(name)  # fail early, naming what is missing
        return DuckLakeTable(self, name)

    def inlining_limit(self, table: TableInfo | None, conn: sa.Connection | None = None) -> int:
        """The data_inlining_row_limit in force: table, schema, global option, attach value, default 10."""
        if conn is None:
            with self._read() as conn:
                return self.inlining_limit(table, conn)
        rows = reader.options(conn)
        value = reader.option_value(rows, "data_inlining_row_limit",
                                    table_id=table.table_id if table else None,
                                    schema_id=table.schema_id if table else None)
        if value is not None:
            return int(value)
        if self.data_inlining_row_limit is not None:
            return int(self.data_inlining_row_limit)
        return DEFAULT_INLINING_ROW_LIMIT

    def set_option(self, name: str, value, *, table_name: str | None = None, schema: str | None = None) -> None:
        """Persist an option globally, for a schema, or for a table (reference: `set_option`)."""
        self.check_writable()
        scope, scope_id = None, None
        if table_name is not None:
            info = self.table_info((schema, table_name) if schema else table_name)
            scope, scope_id = "table", info.table_id
        elif schema is not None:
            with self._read() as conn:
                scope, scope_id = "schema", reader.find_schema(
                    conn, self._snapshot_id(conn), self.data_path, schema).schema_id
        with self.engine.begin() as conn:
            options.set_option(conn, name, value, scope=scope, scope_id=scope_id)

    def options(self) -> list[options.OptionRow]:
        """Every option set in the lake, like the reference's `options()`."""
        with self._read() as conn:
            rows = reader.options(conn)
            snap = self._snapshot_id(conn)
            names = {("schema", s.schema_id): s.name for s in reader.list_schemas(conn, snap, self.data_path)}
            names.update({("table", t.table_id): t.qualified_name
                          for t in reader.list_tables(conn, snap, self.data_path)})
        out = [
            options.OptionRow(key, options.DESCRIPTIONS.get(key, ""), value, (scope or "global").upper(),
                              names.get((scope, scope_id)) if scope else None)
            for key, value, scope, scope_id in rows
        ]
        return sorted(out)

    def option(self, key: str, table: TableInfo | None = None) -> str | None:
        """An option's value in the most specific scope that sets it."""
        with self._read() as conn:
            rows = reader.options(conn)
        return reader.option_value(rows, key, table_id=table.table_id if table else None,
                                   schema_id=table.schema_id if table else None)


    # ---- time travel, change feed and restore
    def last_committed_snapshot(self) -> int | None:
        """The newest snapshot this handle committed (None before its first commit), like the reference's."""
        return self.last_committed

    def settings(self) -> list[SettingsRow]:
        """The reference's `settings()`: one row of catalog_type, extension_version (ours) and data_path."""
        from .catalog.reads.metadata_functions import settings

        return [settings(self.location.kind, self.data_path)]

    def list_files(self, table: str, schema: str | None = None, *, snapshot_version: int | None = None,
                   snapshot_time: datetime | None = None) -> list[FileRow]:
        """The reference's `ducklake_list_files`: each visible data file with its delete file (FileRow)."""
        from .catalog.reads.metadata_functions import list_files

        schema_name, name = (schema, table) if schema is not None else split_name(table)
        with self._read() as conn:
            snap = self._snapshot_id(conn, snapshot_version, snapshot_time)
            return list_files(conn, reader.find_table(conn, snap, self.data_path, schema_name, name), snap)

    def table_changes(self, table: str, start: int | datetime, end: int | datetime) -> DataFrame:
        """Rows inserted, deleted and updated in snapshots start..end (ids or times, inclusive), as DuckDB's
        `table_changes`: snapshot_id, rowid, change_type (insert, delete, update_preimage, update_postimage),
        then the table's columns as of `end`."""
        from .operations.history import change_plan
        from .spark.change_feed import changes

        return changes(self.spark, change_plan(self, table, start, end))

    def table_insertions(self, table: str, start: int | datetime, end: int | datetime) -> DataFrame:
        """Rows inserted in snapshots start..end: snapshot_id, rowid, then the table's columns as of `end`."""
        from .operations.history import change_plan
        from .spark.change_feed import insertions

        return insertions(self.spark, change_plan(self, table, start, end))

    def table_deletions(self, table: str, start: int | datetime, end: int | datetime) -> DataFrame:
        """Rows deleted in snapshots start..end: snapshot_id, rowid, then the table's columns as of `end`."""
        from .operations.history import change_plan
        from .spark.change_feed import deletions

        return deletions(self.spark, change_plan(self, table, start, end))

    def restore(self, table: str, *, version: int | None = None, timestamp: datetime | None = None,
                commit_message: str | None = None, author: str | None = None, extra_info: str | None = None) -> int:
        """Roll a table back: a new snapshot holding the rows it held at `version` / `timestamp`."""
        from .operations.history import restore_table

        return restore_table(self, table, version, timestamp, CommitInfo(author or self.author, commit_message,
                                                                         extra_info))

    # ---- maintenance: snapshots, files, added files
    def expire_snapshots(self, older_than: datetime | timedelta | str | None = None, versions: list[int] | None = None,
                         dry_run: bool = False) -> list[SnapshotRow]:
        """The reference's `ducklake_expire_snapshots`: forget snapshots (by id, or older than a time / a timedelta
        / an interval such as '7 days'; default: option expire_older_than) and the rows only they needed, and
        schedule their files for deletion. Returns the expired snapshots as `snapshots()` rows."""
        from .operations.maintenance.expire import expire_snapshots

        return expire_snapshots(self, older_than, versions, dry_run)

    def cleanup_old_files(self, older_than: datetime | timedelta | str | None = None, cleanup_all: bool = False,
                          dry_run: bool = False) -> list[CleanupRow]:
        """The reference's `ducklake_cleanup_old_files`: delete files scheduled for deletion before `older_than`
        (default: option delete_older_than, else 2 days; cleanup_all=True: all). Returns their paths."""
        from .operations.maintenance.cleanup import cleanup_old_files

        return cleanup_old_files(self, older_than, cleanup_all, dry_run)

    def delete_orphaned_files(self, older_than: datetime | timedelta | str | None = None, cleanup_all: bool = False,
                              dry_run: bool = False) -> list[CleanupRow]:
        """The reference's `ducklake_delete_orphaned_files`: delete Parquet files under the data path the catalog
        does not know, last modified before `older_than` (defaults as cleanup_old_files). Returns their paths."""
        from .operations.maintenance.cleanup import delete_orphaned_files

        return delete_orphaned_files(self, older_than, cleanup_all, dry_run)

    def add_data_files(self, table: str, paths: str | list[str], *, schema: str | None = None,
                       allow_missing: bool = False, ignore_extra_columns: bool = False,
                       hive_partitioning: bool | None = None, commit_message: str | None = None,
                       author: str | None = None, extra_info: str | None = None) -> list[str]:
        """The reference's `ducklake_add_data_files`: register existing Parquet files (paths or globs) in a table
        as one snapshot, matching columns by name; returns the registered paths. Many files have their footers
        read by one Spark job. The lake owns the files from then on (cleanup may delete them)."""
        from .operations.maintenance.add_files import add_data_files

        return add_data_files(self, (schema, table) if schema else table, paths, allow_missing=allow_missing,
                              ignore_extra_columns=ignore_extra_columns, hive_partitioning=hive_partitioning,
                              info=CommitInfo(author or self.author, commit_message, extra_info))

    def checkpoint(self) -> CheckpointResult:
        """The reference's CHECKPOINT: flush_inlined_data, expire_snapshots, merge_adjacent_files,
        rewrite_data_files, cleanup_old_files, delete_orphaned_files, in that order with the lake's options
        (auto_compact, expire_older_than, rewrite_delete_threshold, delete_older_than). Returns each one's rows."""
        from .operations.maintenance.checkpoint import checkpoint

        return checkpoint(self)

    # ---- maintenance: flush, compaction, rewrite
    def flush_inlined_data(self, schema_name: str | None = None, table_name: str | None = None, *,
                           commit_message: str | None = None, author: str | None = None,
                           extra_info: str | None = None) -> list[FlushRow]:
        """The reference's `ducklake_flush_inlined_data`: inlined rows and deletes of one table, a schema's tables
        or every table (auto_compact not false) become Parquet files, time travel kept; one snapshot.
        Returns (schema_name, table_name, rows_flushed) per table that had inlined rows."""
        from .operations.maintenance.flush import flush_inlined_data

        return flush_inlined_data(self, schema_name, table_name,
                                  CommitInfo(author or self.author, commit_message, extra_info))

    def merge_adjacent_files(self, table: str | None = None, schema: str | None = None, *, min_file_size=None,
                             max_file_size=None, max_compacted_files: int | None = None,
                             commit_message: str | None = None, author: str | None = None,
                             extra_info: str | None = None) -> list[CompactionRow]:
        """The reference's `ducklake_merge_adjacent_files`: merge small files (below max_file_size, default
        target_file_size) of one table or every table (auto_compact not false) into files near target_file_size,
        keeping every snapshot readable; one snapshot. Returns (schema_name, table_name, files_processed,
        files_created) per output file."""
        from .operations.maintenance.compaction import merge_adjacent_files

        return merge_adjacent_files(self, table, schema, min_file_size=min_file_size, max_file_size=max_file_size,
                                    max_compacted_files=max_compacted_files,
                                    info=CommitInfo(author or self.author, commit_message, extra_info))

    def rewrite_data_files(self, table: str | None = None, schema: str | None = None, *, delete_threshold=None,
                           max_compacted_files: int | None = None, commit_message: str | None = None,
                           author: str | None = None, extra_info: str | None = None) -> list[CompactionRow]:
        """The reference's `ducklake_rewrite_data_files`: rewrite files whose deleted fraction is at least
        delete_threshold (default: option rewrite_delete_threshold, else 0.95) without their deleted rows, row
        ids kept; one snapshot. Returns (schema_name, table_name, files_processed, files_created) per output."""
        from .operations.maintenance.compaction import rewrite_data_files

        return rewrite_data_files(self, table, schema, delete_threshold=delete_threshold,
                                  max_compacted_files=max_compacted_files,
                                  info=CommitInfo(author or self.author, commit_message, extra_info))

    # ---- structured streaming
    def read_stream(self, table: str, *, starting_snapshot: str | int = "earliest",
                    max_snapshots_per_trigger: int | None = None, include_changes: bool = False) -> DataFrame:
        """A streaming DataFrame of the rows the table's new snapshots insert (with include_changes: its
        `table_changes` rows), one micro-batch per range of snapshots; see operations/streaming/source.py."""
        from .operations.streaming.source import read_stream

        return read_stream(self, table, starting_snapshot=starting_snapshot,
                           max_snapshots_per_trigger=max_snapshots_per_trigger, include_changes=include_changes)

    def stream_writer(self, table: str, *, query_id: str | None = None, checkpoint_location: str | None = None,
                      mode: str = "append", merge_schema: bool = False, commit_message: str | None = None,
                      author: str | None = None):
        """A `foreachBatch` function writing each micro-batch into the table exactly once (batch ids recorded in
        the snapshots under `query_id`, or the query id in `checkpoint_location`); see operations/streaming/sink.py."""
        from .operations.streaming.sink import stream_writer

        return stream_writer(self, table, query_id=query_id, checkpoint_location=checkpoint_location, mode=mode,
                             merge_schema=merge_schema, commit_message=commit_message, author=author)

    def write_stream(self, df: DataFrame, table: str, *, checkpoint_location: str, trigger=None,
                     query_id: str | None = None, query_name: str | None = None, output_mode: str = "append",
                     mode: str = "append", merge_schema: bool = False, commit_message: str | None = None,
                     author: str | None = None):
        """Start a streaming query writing `df` into the table exactly once per batch; returns the StreamingQuery."""
        from .operations.streaming.sink import write_stream

        return write_stream(self, df, table, checkpoint_location=checkpoint_location, trigger=trigger,
                            query_id=query_id, query_name=query_name, output_mode=output_mode, mode=mode,
                            merge_schema=merge_schema, commit_message=commit_message, author=author)

    # ---- SQL
    def sql(self, text: str, dialect: str = "spark", *, catalog_name: str = "lake"):
        """Run SQL statements (Spark SQL, or DuckDB's with dialect="duckdb") on the lake; see docs/sql.md. Returns
        the last statement's result: a DataFrame for a query, a list of rows for a command or CALL. Tables may be
        qualified with `catalog_name`, as the reference's attached name."""
        from .sql.statements import run

        return run(self, text, dialect, catalog_name)

    def register(self, spark: SparkSession | None = None, *, view_name: str = "{schema}_{table}") -> list:
        """Every table as a temporary view of plain `spark.sql`, reading the current snapshot (see docs/sql.md);
        also registers `spark.read.format("ducklake")` with this lake as its default catalog."""
        from .datasource import register as register_source
        from .sql.register import register

        register_source(spark if spark is not None else self.spark, self)
        return register(self, spark, view_name)

    # ---- views, comments and tags (sql/views.py, catalog/operations/tags.py)
    def views(self, schema: str | None = None, *, version: int | None = None) -> list:
        """The lake views (`ViewInfo`: name, dialect, sql, column_aliases, comment) visible now or at `version`."""
        from .sql.views import views

        return views(self, schema, version)

    def create_view(self, name: str, sql: str, *, dialect: str = "spark", column_aliases: list[str] | None = None,
                    replace: bool = False, if_not_exists: bool = False, catalog_name: str = "lake",
                    **commit_args: Any) -> int | None:
        """CREATE VIEW from a query in `dialect` (stored as DuckDB SQL, so DuckDB can query it)."""
        from .sql.views import check_dialect, create_view

        return create_view(self, split_name(name), sql, dialect=check_dialect(dialect),
                           column_aliases=column_aliases, replace=replace, if_not_exists=if_not_exists,
                           catalog_name=catalog_name, **commit_args)

    def drop_view(self, name: str, *, if_exists: bool = False, **commit_args: Any) -> int | None:
        """DROP VIEW."""
        from .sql.views import drop_view

        return drop_view(self, split_name(name), if_exists=if_exists, **commit_args)

    def set_comment(self, name: str, comment: str | None, *, column: str | None = None,
                    **commit_args: Any) -> int:
        """COMMENT ON a table, a view or (with `column`) a table's column; None clears it."""
        from .catalog.operations.tags import COMMENT
        from .sql.tags import set_tag

        return set_tag(self, split_name(name), COMMENT, comment, column=column, **commit_args)

    def set_tag(self, name: str, key: str, value: str | None, *, column: str | None = None,
                **commit_args: Any) -> int:
        """Set tag `key` of a table, a view or (with `column`) a table's column; the comment is key 'comment'."""
        from .sql.tags import set_tag

        return set_tag(self, split_name(name), key, value, column=column, **commit_args)

    def tags(self, name: str, *, column: str | None = None, version: int | None = None) -> dict[str, str | None]:
        """The tags (key -> value; the comment is 'comment') of a table, view or column, now or at `version`."""
        from .sql.tags import tags

        return tags(self, split_name(name), column=column, version=version)
