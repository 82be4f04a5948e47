"""`DuckLake`: the user-facing handle on one lake (catalog database + data path).

A facade: every method delegates to the catalog reads, the operations (operations/) or the SQL layer (sql/), and
every mutator runs as a one-operation transaction (operations/transaction.py), the one write path. Commit
metadata is one `CommitProperties` (author, commit_message, extra_info), given as `commit_properties=` or as
those three keywords.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, overload

import sqlalchemy as sa

from .catalog.attach import AttachOptions, check_ducklake_version, default_ducklake_version
from .catalog.changes.tags import COMMENT
from .catalog.reads import reader
from .catalog.reads.macros import MacroRow, list_macros
from .catalog.reads.metadata_functions import (
    SnapshotRow,
    list_files,
    option_rows,
    settings,
    snapshot_rows,
    table_sizes,
)
from .catalog.reads.options import OptionRow
from .catalog.retry_settings import retry_policy, retry_setting, with_retry_setting
from .catalog.write_settings import is_write_setting, with_write_setting, write_setting
from .dataplane.arrow.threshold import check_threshold, threshold_of
from .dataplane.spark.change_feed import changes, deletions, insertions
from .dataplane.spark.expressions import check_expression
from .dataplane.spark.scan_plan import ScanPlan
from .dataplane.spark.virtual_columns import check_virtual
from .errors import AlreadyExistsError, InvalidArgumentError, NotFoundError
from .operations.context import LakeContext
from .operations.error_causes import translate_methods
from .operations.history import change_plan, feed_arrow, restore_table
from .operations.maintenance.add_files import add_data_files
from .operations.maintenance.checkpoint import checkpoint
from .operations.maintenance.cleanup import cleanup_old_files, delete_orphaned_files
from .operations.maintenance.compaction import merge_adjacent_files, rewrite_data_files
from .operations.maintenance.expire import expire_snapshots
from .operations.maintenance.flush import flush_inlined_data
from .operations.read_arrow import read_arrow
from .operations.schema_change import SchemaUpdate
from .operations.streaming.sink import stream_writer, write_stream
from .operations.transaction import WRITE_MODES, Transaction, transaction
from .spec.arguments import OutputMode, SqlDialect, StreamWriteMode, WriteMode, update_arguments
from .spec.commit_properties import CommitProperties, resolve_commit_properties
from .spec.model import TableInfo
from .spec.names import parse_table_name, schema_key
from .sql.planning import close_plan_cache
from .sql.register import register
from .sql.statements import run
from .sql.tags import set_tag, tags
from .sql.views import check_dialect, create_view, drop_view, rename_view, views
from .table import DuckLakeTable

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from .catalog.reads.metadata_functions import FileRow, SettingsRow, TableInfoRow
    from .operations.maintenance.checkpoint import CheckpointResult
    from .operations.maintenance.cleanup import CleanupRow
    from .operations.maintenance.compaction import CompactionRow
    from .operations.maintenance.flush import FlushRow

__all__ = ["WRITE_MODES", "CommitProperties", "DuckLake", "SnapshotRow", "split_name"]


def split_name(name: str | tuple[str, str]) -> tuple[str, str]:
    """'table' (schema main), 'schema.table', '"my.schema"."t"' (quoted) or a (schema, table) pair -> (schema,
    table); InvalidNameError names what does not parse."""
    return parse_table_name(name)


@translate_methods  # raw driver/Spark errors leave every public method as DuckLakeErrors naming the cause
class DuckLake:
    """A DuckLake lake: catalog operations in pure Python, data movement on Spark."""

    def __init__(self, context: LakeContext):
        self.context = context

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
        metadata_schema: str | None = None,
        metadata_catalog: str | None = None,
        ducklake_max_retry_count: int | None = None,
        ducklake_retry_wait_ms: int | None = None,
        ducklake_retry_backoff: float | None = None,
        small_data_threshold: int | str | None = None,
        ducklake_version: str | None = None,
        encrypted: bool | None = None,
        write_deletion_vectors: bool | None = None,
    ) -> DuckLake:
        """Open (or create) a lake; `catalog` takes the reference's ATTACH strings. Never starts Spark.

        `automatic_migration=True` upgrades a DuckLake 0.3/0.4 catalog to 1.0 first, like the reference's
        AUTOMATIC_MIGRATION (one catalog transaction). An existing lake keeps the data path it stores: a different
        `data_path` is an error naming both, unless `override_data_path=True` (the reference's OVERRIDE_DATA_PATH)
        uses it for this handle only; the catalog keeps the stored one. Local paths are compared resolved, so
        `data`, `./data/` and its absolute form are the same path. `metadata_schema` (the reference's
        METADATA_SCHEMA) keeps the catalog tables in that schema of a PostgreSQL or DuckDB catalog; `metadata_catalog`
        names them in `lake.sql`; the `ducklake_*retry*` keywords are the reference's commit-retry settings
        (docs/catalogs.md). `small_data_threshold` (bytes, or a size like "16MB"; 0: always Spark) is where this
        handle stops moving data in-process with pyarrow (default SPARK_DUCKLAKE_SMALL_DATA_BYTES, else 64 MiB;
        docs/writing.md). `ducklake_version` (the reference's DUCKLAKE_VERSION) is the version of a new catalog: "1.1"
        (the default, as DuckDB 2.0), "1.0" (what DuckDB 1.5 opens), or "1.1-dev1" (what DuckDB's development
        builds of 1.1 write; docs/catalogs.md, "Versions"); an existing catalog keeps its own. Without it,
        SPARK_DUCKLAKE_DEFAULT_VERSION (the reference's `ducklake_default_version` setting) is asked for, of new
        and existing catalogs alike. `encrypted=True` (the
        reference's ENCRYPTED) creates an encrypted lake (every file gets its own key; docs/types.md, "Encrypted
        lakes"); on an existing lake an explicit value must match it. `write_deletion_vectors` (the reference's
        WRITE_DELETION_VECTORS) makes this handle's deletes write Puffin deletion vectors where no
        write_deletion_vectors option is set (docs/types.md, "Deletion vectors")."""
        version = default_ducklake_version() if ducklake_version is None else check_ducklake_version(ducklake_version)
        retry = retry_policy(
            ducklake_max_retry_count=ducklake_max_retry_count, ducklake_retry_wait_ms=ducklake_retry_wait_ms,
            ducklake_retry_backoff=ducklake_retry_backoff)
        # built once, here: every layer below takes this record, not the keywords
        options = AttachOptions(
            data_path=data_path, create_if_missing=create_if_missing, read_only=read_only,
            snapshot_version=snapshot_version, snapshot_time=snapshot_time, automatic_migration=automatic_migration,
            override_data_path=override_data_path, metadata_schema=metadata_schema, metadata_catalog=metadata_catalog,
            encrypted=encrypted, ducklake_version=version, data_inlining_row_limit=data_inlining_row_limit,
            author=author, retry=retry, small_data_threshold=small_data_threshold,
            write_deletion_vectors=write_deletion_vectors)
        return cls(LakeContext.attach(catalog, options, spark=spark))

    def close(self) -> None:
        """Release catalog connections (DuckDB catalog files can then be opened elsewhere) and the global temporary
        views `lake.sql` keeps for its cached plans."""
        close_plan_cache(self)
        self.context.close()

    def __enter__(self) -> DuckLake:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # The handle's state lives in its context; these read it.
    location = property(lambda self: self.context.location, doc="Where the catalog is (CatalogLocation).")
    engine = property(lambda self: self.context.engine, doc="The catalog's SQLAlchemy engine.")
    data_path = property(lambda self: self.context.data_path, doc="The data path in force for this handle.")
    read_only = property(lambda self: self.context.read_only, doc="Whether this handle may not change the lake.")
    pinned_snapshot = property(lambda self: self.context.pinned_snapshot, doc="The attached snapshot, if pinned.")
    author = property(lambda self: self.context.author, doc="The default author of this handle's commits.")
    last_committed = property(lambda self: self.context.last_committed,
                              doc="The newest snapshot this handle committed.")

    @property
    def spark(self) -> SparkSession:
        """The Spark session used to move data (the caller's, the active one, or one started on first use)."""
        return self.context.spark

    # ----------------------------------------------------------------------------------------- listing
    def current_snapshot(self) -> int:
        """Id of the snapshot reads see now."""
        with self.context.connect() as conn:
            return self.context.snapshot_id(conn)

    def snapshots(self) -> list[SnapshotRow]:
        """Every snapshot, like the reference's `snapshots()`."""
        with self.context.connect() as conn:
            snaps = reader.list_snapshots(conn)
        if self.pinned_snapshot is not None:
            snaps = [s for s in snaps if s.snapshot_id <= self.pinned_snapshot]
        return snapshot_rows(snaps)

    def schemas(self) -> list[str]:
        """Names of the schemas visible now."""
        with self.context.connect() as conn:
            return [s.name for s in reader.list_schemas(conn, self.context.snapshot_id(conn), self.data_path)]

    def tables(self, schema: str | None = None, *, version: int | None = None) -> list[TableInfo]:
        """Tables (with columns) visible now or at `version`."""
        with self.context.connect() as conn:
            return reader.list_tables(conn, self.context.snapshot_id(conn, version), self.data_path, schema=schema)

    @overload
    def table_info(self, table: str | tuple[str, str], *, version: int | None = None) -> TableInfo: ...

    @overload
    def table_info(self, table: None = None, *, version: int | None = None) -> list[TableInfoRow]: ...

    def table_info(self, table: str | tuple[str, str] | None = None, *, version: int | None = None):
        """One table's definition (TableInfo); without a table, the reference's `table_info()` rows.

        `table_info()` returns a `TableInfoRow` per table (table_name, schema_id, table_id, table_uuid, file_count,
        file_size_bytes, delete_file_count, delete_file_size_bytes), like DuckDB's `ducklake_table_info`.
        """
        if table is not None:
            return self.context.table_info(table, version=version)
        with self.context.connect() as conn:
            return table_sizes(conn, self.context.snapshot_id(conn, version))

    # ----------------------------------------------------------------------------------------- DDL
    def check_writable(self) -> None:
        """ReadOnlyError unless this handle may change the lake."""
        self.context.check_writable()

    @contextmanager
    def transaction(self, *, commit_properties: CommitProperties | None = None,
                    **commit_args: Any) -> Iterator[Transaction]:
        """`with lake.transaction() as tx:` groups DDL and DML into one atomic snapshot (operations/transaction.py)."""
        with transaction(self.context, resolve_commit_properties(commit_properties, commit_args)) as tx:
            yield tx

    def _one(self, action, commit_properties: CommitProperties | None, commit_args: dict[str, Any]):
        """Run `action(tx)` as a one-operation transaction; returns (its result, the new snapshot or None). Its
        snapshot is read by the operation's first catalog read, not by a read of its own."""
        with transaction(self.context, resolve_commit_properties(commit_properties, commit_args),
                         snapshot_at_first_read=True) as tx:
            result = action(tx)
        return result, tx.snapshot_id

    def create_schema(self, name: str | Sequence[str], *, if_not_exists: bool = False, commit_properties=None,
                      **commit_args: Any) -> int | None:
        """CREATE SCHEMA; returns the new snapshot id. On a DuckLake 1.1 catalog 'sales.europe' (or a
        ('sales', 'europe') tuple) is schema europe nested in sales, and '"a.b"' one schema named a.b; on 1.0
        catalogs a string is one name as written (docs/catalogs.md, "Nested schemas")."""
        key = schema_key(self.context.schema_path(name))
        if if_not_exists and key.lower() in {s.lower() for s in self.schemas()}:  # names are case-insensitive
            return None
        return self._one(lambda tx: tx.create_schema(name), commit_properties, commit_args)[1]

    def drop_schema(self, name: str | Sequence[str], *, cascade: bool = False, if_exists: bool = False,
                    commit_properties=None, **commit_args: Any) -> int | None:
        """DROP SCHEMA (empty unless cascade=True, which drops its nested schemas too)."""
        name = schema_key(self.context.schema_path(name))
        if name not in self.schemas():
            if if_exists:
                return None
            raise NotFoundError(f"schema {name!r} does not exist")
        return self._one(lambda tx: tx.drop_schema(name, cascade=cascade), commit_properties, commit_args)[1]

    def create_table(self, name: str | tuple[str, str], schema, *, if_not_exists: bool = False, commit_properties=None,
                     **commit_args: Any) -> int | None:
        """CREATE TABLE from a Spark StructType, a pyarrow Schema or a DDL string ('id INT, s STRING')."""
        if if_not_exists and self.context.find(*split_name(name)) is not None:
            return None
        try:
            return self._one(lambda tx: tx.create_table(name, schema), commit_properties, commit_args)[1]
        except AlreadyExistsError:  # the name taken in another case (names are case-insensitive)
            if if_not_exists:
                return None
            raise

    def drop_table(self, name: str | tuple[str, str], *, if_exists: bool = False, commit_properties=None,
                   **commit_args: Any) -> int | None:
        """DROP TABLE."""
        schema, table = split_name(name)
        if self.context.find(schema, table) is None:
            if if_exists:
                return None
            raise NotFoundError(f"table {schema}.{table} does not exist")
        return self._one(lambda tx: tx.drop_table(name), commit_properties, commit_args)[1]

    def update_schema(self, table: str | tuple[str, str], *, commit_properties=None, **commit_args: Any):
        """Several column changes committed as one snapshot: `with lake.update_schema(t) as u: u.add_column(...)`."""
        return SchemaUpdate(self.context, table, properties=resolve_commit_properties(commit_properties, commit_args))

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

    def set_partitioning(self, table: str, keys: list[str], *, commit_properties=None,
                         **commit_args: Any) -> int | None:
        """SET PARTITIONED BY: `['region', 'year(ts)', 'bucket(8, id)']`; new files follow it, old ones keep theirs.
        None (no snapshot) when the table already has these keys, as in the reference."""
        if not keys:
            raise ValueError("set_partitioning needs at least one key; use reset_partitioning to remove them")
        self.table_info(table)  # NotFoundError naming the table
        return self._one(lambda tx: tx.set_partitioning(table, keys), commit_properties, commit_args)[1]

    def reset_partitioning(self, table: str, *, commit_properties=None, **commit_args: Any) -> int | None:
        """RESET PARTITIONED BY: new files are no longer partitioned."""
        self.table_info(table)
        return self._one(lambda tx: tx.set_partitioning(table, []), commit_properties, commit_args)[1]

    def set_sorted_by(self, table: str, keys: list[str], *, commit_properties=None,
                      **commit_args: Any) -> int | None:
        """SET SORTED BY: `['ts DESC', 'b ASC NULLS FIRST', "date_trunc('hour', ts)"]` (DuckDB SQL expressions).
        None (no snapshot) when the table already has these keys, as in the reference."""
        if not keys:
            raise ValueError("set_sorted_by needs at least one key; use reset_sorted_by to remove them")
        self.table_info(table)
        return self._one(lambda tx: tx.set_sorted_by(table, keys), commit_properties, commit_args)[1]

    def reset_sorted_by(self, table: str, *, commit_properties=None, **commit_args: Any) -> int | None:
        """RESET SORTED BY."""
        self.table_info(table)
        return self._one(lambda tx: tx.set_sorted_by(table, []), commit_properties, commit_args)[1]

    def rename_table(self, name: str | tuple[str, str], new_name: str, *, commit_properties=None,
                     **commit_args: Any) -> int:
        """ALTER TABLE name RENAME TO new_name (same schema)."""
        self.table_info(name)
        return self._one(lambda tx: tx.rename_table(name, new_name), commit_properties, commit_args)[1]

    # ----------------------------------------------------------------------------------------- data
    def read(self, table: str | tuple[str, str], *, version: int | None = None, timestamp: datetime | None = None,
             where: str | None = None, virtual_columns: Sequence[str] = ()) -> DataFrame:
        """The table as a Spark DataFrame (latest, or at a snapshot id / timestamp).

        `where` (a SQL predicate on the table's columns) is applied to the result and, before Spark sees the
        files, used to skip files whose min/max statistics prove it false. `virtual_columns` appends DuckDB's
        virtual columns by name: rowid, snapshot_id, filename, file_row_number, file_index (docs/sql.md).
        """
        plan = self.context.plan_scan(table, version=version, timestamp=timestamp, where=where,
                                      inlined_sources=bool(virtual_columns))
        virtual = check_virtual(virtual_columns, [c.name for c in plan.table.columns])
        spark = self.spark
        if where:
            check_expression(spark, plan.table, where, "where")
        frame = plan.to_dataframe(spark, virtual=virtual)
        return frame.where(where) if where else frame

    def read_arrow(self, table: str, *, columns: list[str] | None = None, where: str | None = None,
                   version: int | None = None, timestamp: datetime | None = None) -> pa.Table:
        """The table as a pyarrow Table, read in-process with pyarrow: no Spark, no Java (small data; the same
        rows and types as `read(...).toArrow()`). `where` is a SQL predicate (a subset of Spark SQL: comparisons,
        AND/OR/NOT, IN, BETWEEN, IS NULL, LIKE, arithmetic); `columns` picks and orders the columns."""
        return read_arrow(self.context, table, columns=columns, where=where, version=version, timestamp=timestamp)

    def to_pandas(self, table: str, *, columns: list[str] | None = None, where: str | None = None,
                  version: int | None = None, timestamp: datetime | None = None):
        """`read_arrow(...)` as a pandas DataFrame (no Spark, no Java)."""
        return self.read_arrow(table, columns=columns, where=where, version=version,
                               timestamp=timestamp).to_pandas()

    @property
    def small_data_threshold(self) -> int:
        """Bytes up to which reads, writes, deletes and updates run in-process with pyarrow instead of on Spark
        (default 64 MiB or SPARK_DUCKLAKE_SMALL_DATA_BYTES; 0: always Spark). Settable: an int or '16MB'."""
        return threshold_of(self.context)

    @small_data_threshold.setter
    def small_data_threshold(self, value: int | str) -> None:
        self.context.small_data_threshold = check_threshold(value)

    def plan_scan(self, table: str | tuple[str, str], *, version: int | None = None,
                  timestamp: datetime | None = None, where: str | None = None) -> ScanPlan:
        """Everything a scan needs from the catalog (files after pruning, inlined rows), without Spark."""
        return self.context.plan_scan(table, version=version, timestamp=timestamp, where=where)

    def write(self, df, table: str | tuple[str, str], mode: WriteMode = "append", *, where=None,
              merge_schema: bool = False, commit_properties: CommitProperties | None = None, **commit_args: Any) -> int:
        """Append, overwrite or create (`error`) a table from a Spark DataFrame, a pyarrow Table or a pandas
        DataFrame; returns the snapshot id (the current one when there was nothing to write).

        With mode="overwrite" and `where` (SQL string or Column), only the rows matching it are replaced. With
        merge_schema=True, columns of the data the table lacks are added (and promotable types widened) in the
        same snapshot.
        """
        with transaction(self.context, resolve_commit_properties(commit_properties, commit_args),
                         snapshot_at_first_read=True) as tx:  # one catalog read before the data moves (_one)
            tx.write(df, table, mode, where=where, merge_schema=merge_schema)
        return tx.snapshot_id if tx.snapshot_id is not None else tx.read_snapshot

    def delete(self, table: str | tuple[str, str], condition=None, *, commit_properties: CommitProperties | None = None,
               **commit_args: Any) -> int:
        """DELETE FROM table WHERE condition (SQL string or Column; None deletes every row); returns rows deleted."""
        return self._one(lambda tx: tx.delete(table, condition), commit_properties, commit_args)[0]

    def update(self, table: str | tuple[str, str], condition=None, set: dict | None = None, *,  # noqa: A002 - delta's name
               commit_properties: CommitProperties | None = None, **commit_args: Any) -> int:
        """UPDATE table SET col = expr, ... WHERE condition (SQL strings or Columns); returns rows updated.

        The argument order is `DuckLakeTable.update`'s and delta-spark's; the old `update(table, set, condition)`
        still works and warns (a dict where the condition goes can only be the assignments).
        """
        condition, set = update_arguments(condition, set)  # noqa: A001
        return self._one(lambda tx: tx.update(table, condition, set), commit_properties, commit_args)[0]

    def table(self, name: str | tuple[str, str]) -> DuckLakeTable:
        """A handle with row-level operations, after delta-spark's DeltaTable."""
        self.table_info(name)  # fail early, naming what is missing
        return DuckLakeTable(self, name)

    def inlining_limit(self, table: TableInfo | None, conn: sa.Connection | None = None) -> int:
        """The data_inlining_row_limit in force: table, schema, global option, attach value, default 10."""
        return self.context.inlining_limit(table, conn)

    def set_option(self, name: str, value, *, table_name: str | None = None, schema: str | None = None) -> None:
        """Persist an option globally, for a schema, or for a table (reference: `set_option`)."""
        self.context.set_option(name, value, table_name=table_name, schema=schema)

    def options(self) -> list[OptionRow]:
        """Every option set in the lake, like the reference's `options()`."""
        with self.context.connect() as conn:
            return option_rows(conn, self.context.snapshot_id(conn), self.data_path)

    def option(self, key: str, table: TableInfo | None = None) -> str | None:
        """An option's value in the most specific scope that sets it."""
        return self.context.option(key, table)

    # ---- time travel, change feed and restore
    def last_committed_snapshot(self) -> int | None:
        """The newest snapshot this handle committed (None before its first commit), like the reference's."""
        return self.last_committed

    def set_setting(self, name: str, value: Any) -> None:
        """Change one of the reference's settings for this handle (`SET ducklake_max_retry_count = 5`): the retry
        settings, and `ducklake_target_file_size` / `ducklake_default_data_inlining_row_limit` /
        `ducklake_write_deletion_vectors` (value None resets those; docs/writing.md, "Session settings")."""
        if is_write_setting(name):
            self.context.write_settings = with_write_setting(self.context.write_settings, name, value)
        else:
            self.context.retry = with_retry_setting(self.context.retry, name, value)

    def current_setting(self, name: str) -> int | float | bool | None:
        """A setting's value for this handle (the reference's `current_setting('ducklake_retry_wait_ms')`)."""
        if is_write_setting(name):
            return write_setting(self.context.write_settings, name)
        return retry_setting(self.context.retry, name)

    def macros(self, schema: str | None = None, *, version: int | None = None) -> list[MacroRow]:
        """The lake's macros (scalar and table, with parameters and bodies), as the reference lists them."""
        with self.context.connect() as conn:
            return list_macros(conn, self.context.snapshot_id(conn, version), schema)

    def settings(self) -> list[SettingsRow]:
        """The reference's `settings()`: one row of catalog_type, extension_version (ours) and data_path."""
        return [settings(self.location.kind, self.data_path)]

    def list_files(self, table: str, schema: str | None = None, *, snapshot_version: int | None = None,
                   snapshot_time: datetime | None = None) -> list[FileRow]:
        """The reference's `ducklake_list_files`: each visible data file with its delete file (FileRow)."""
        if snapshot_version is not None and snapshot_time is not None:
            raise InvalidArgumentError("Either snapshot_version OR snapshot_time must be specified - not both")
        schema_name, name = (schema, table) if schema is not None else split_name(table)
        with self.context.connect() as conn:
            snap = self.context.snapshot_id(conn, snapshot_version, snapshot_time)
            return list_files(conn, reader.find_table(conn, snap, self.data_path, schema_name, name), snap)

    def table_changes(self, table: str, start: int | datetime, end: int | datetime) -> DataFrame:
        """Rows inserted, deleted and updated in snapshots start..end (ids or times, inclusive), as DuckDB's
        `table_changes`: snapshot_id, rowid, change_type (insert, delete, update_preimage, update_postimage),
        then the table's columns as of `end`."""
        return changes(self.spark, change_plan(self.context, table, start, end))

    def table_insertions(self, table: str, start: int | datetime, end: int | datetime) -> DataFrame:
        """Rows inserted in snapshots start..end: snapshot_id, rowid, then the table's columns as of `end`."""
        return insertions(self.spark, change_plan(self.context, table, start, end))

    def table_deletions(self, table: str, start: int | datetime, end: int | datetime) -> DataFrame:
        """Rows deleted in snapshots start..end: snapshot_id, rowid, then the table's columns as of `end`."""
        return deletions(self.spark, change_plan(self.context, table, start, end))

    def table_changes_arrow(self, table: str, start: int | datetime, end: int | datetime) -> pa.Table:
        """`table_changes` as a pyarrow Table: computed in-process with pyarrow (no Spark) when the files it reads
        are at most the small-data threshold, else on Spark and collected."""
        return feed_arrow(self.context, table, start, end, "changes")

    def table_insertions_arrow(self, table: str, start: int | datetime, end: int | datetime) -> pa.Table:
        """`table_insertions` as a pyarrow Table (in-process when small, as `table_changes_arrow`)."""
        return feed_arrow(self.context, table, start, end, "insertions")

    def table_deletions_arrow(self, table: str, start: int | datetime, end: int | datetime) -> pa.Table:
        """`table_deletions` as a pyarrow Table (in-process when small, as `table_changes_arrow`)."""
        return feed_arrow(self.context, table, start, end, "deletions")

    def restore(self, table: str, *, version: int | None = None, timestamp: datetime | None = None,
                commit_properties: CommitProperties | None = None, **commit_args: Any) -> int:
        """Roll a table back: a new snapshot holding the rows it held at `version` / `timestamp`."""
        return restore_table(self.context, table, version, timestamp,
                             resolve_commit_properties(commit_properties, commit_args))

    # ---- maintenance: snapshots, files, added files
    def expire_snapshots(self, older_than: datetime | timedelta | str | None = None, versions: list[int] | None = None,
                         dry_run: bool = False) -> list[SnapshotRow]:
        """The reference's `ducklake_expire_snapshots`: forget snapshots (by id, or older than a time / a timedelta
        / an interval such as '7 days'; default: option expire_older_than) and the rows only they needed, and
        schedule their files for deletion. Returns the expired snapshots as `snapshots()` rows."""
        return expire_snapshots(self.context, older_than, versions, dry_run)

    def cleanup_old_files(self, older_than: datetime | timedelta | str | None = None, cleanup_all: bool = False,
                          dry_run: bool = False) -> list[CleanupRow]:
        """The reference's `ducklake_cleanup_old_files`: delete files scheduled for deletion before `older_than`
        (default: option delete_older_than, else 2 days; cleanup_all=True: all). Returns their paths."""
        return cleanup_old_files(self.context, older_than, cleanup_all, dry_run)

    def delete_orphaned_files(self, older_than: datetime | timedelta | str | None = None, cleanup_all: bool = False,
                              dry_run: bool = False) -> list[CleanupRow]:
        """The reference's `ducklake_delete_orphaned_files`: delete Parquet files under the data path the catalog
        does not know, last modified before `older_than` (defaults as cleanup_old_files). Returns their paths."""
        return delete_orphaned_files(self.context, older_than, cleanup_all, dry_run)

    def add_data_files(self, table: str, paths: str | list[str], *, schema: str | None = None,
                       allow_missing: bool = False, ignore_extra_columns: bool = False,
                       hive_partitioning: bool | None = None,
                       commit_properties: CommitProperties | None = None, **commit_args: Any) -> list[str]:
        """The reference's `ducklake_add_data_files`: register existing Parquet files (paths or globs) in a table
        as one snapshot, matching columns by name; returns the registered paths. Many files have their footers
        read by one Spark job. The lake owns the files from then on (cleanup may delete them)."""
        return add_data_files(self.context, (schema, table) if schema else table, paths, allow_missing=allow_missing,
                              ignore_extra_columns=ignore_extra_columns, hive_partitioning=hive_partitioning,
                              info=resolve_commit_properties(commit_properties, commit_args))

    def checkpoint(self) -> CheckpointResult:
        """The reference's CHECKPOINT: flush_inlined_data, expire_snapshots, merge_adjacent_files,
        rewrite_data_files, cleanup_old_files, delete_orphaned_files, in that order with the lake's options
        (auto_compact, expire_older_than, rewrite_delete_threshold, delete_older_than). Returns each one's rows."""
        return checkpoint(self.context)

    # ---- maintenance: flush, compaction, rewrite
    def flush_inlined_data(self, schema_name: str | None = None, table_name: str | None = None, *,
                           commit_properties: CommitProperties | None = None, **commit_args: Any) -> list[FlushRow]:
        """The reference's `ducklake_flush_inlined_data`: inlined rows and deletes of one table, a schema's tables
        or every table (auto_compact not false) become Parquet files, time travel kept; one snapshot.
        Returns (schema_name, table_name, rows_flushed) per table that had inlined rows."""
        return flush_inlined_data(self.context, schema_name, table_name,
                                  resolve_commit_properties(commit_properties, commit_args))

    def merge_adjacent_files(self, table: str | None = None, schema: str | None = None, *, min_file_size=None,
                             max_file_size=None, max_compacted_files: int | None = None,
                             commit_properties: CommitProperties | None = None,
                             **commit_args: Any) -> list[CompactionRow]:
        """The reference's `ducklake_merge_adjacent_files`: merge small files (below max_file_size, default
        target_file_size) of one table or every table (auto_compact not false) into files near target_file_size,
        keeping every snapshot readable; one snapshot. Returns (schema_name, table_name, files_processed,
        files_created) per output file."""
        return merge_adjacent_files(self.context, table, schema, min_file_size=min_file_size,
                                    max_file_size=max_file_size,
                                    max_compacted_files=max_compacted_files,
                                    info=resolve_commit_properties(commit_properties, commit_args))

    def rewrite_data_files(self, table: str | None = None, schema: str | None = None, *, delete_threshold=None,
                           max_compacted_files: int | None = None,
                           commit_properties: CommitProperties | None = None,
                           **commit_args: Any) -> list[CompactionRow]:
        """The reference's `ducklake_rewrite_data_files`: rewrite files whose deleted fraction is at least
        delete_threshold (default: option rewrite_delete_threshold, else 0.95) without their deleted rows, row
        ids kept; one snapshot. Returns (schema_name, table_name, files_processed, files_created) per output."""
        return rewrite_data_files(self.context, table, schema, delete_threshold=delete_threshold,
                                  max_compacted_files=max_compacted_files,
                                  info=resolve_commit_properties(commit_properties, commit_args))

    # ---- structured streaming
    def read_stream(self, table: str, *, starting_snapshot: str | int = "earliest",
                    max_snapshots_per_trigger: int | None = None, include_changes: bool = False) -> DataFrame:
        """A streaming DataFrame of the rows the table's new snapshots insert (with include_changes: its
        `table_changes` rows), one micro-batch per range of snapshots; see operations/streaming/source.py."""
        from .operations.datasource import read_stream  # lazy: datasource.py imports pyspark; the facade must not

        return read_stream(self.context, table, starting_snapshot=starting_snapshot,
                           max_snapshots_per_trigger=max_snapshots_per_trigger, include_changes=include_changes)

    def stream_writer(self, table: str, *, query_id: str | None = None, checkpoint_location: str | None = None,
                      mode: StreamWriteMode = "append", merge_schema: bool = False, commit_message: str | None = None,
                      author: str | None = None):
        """A `foreachBatch` function writing each micro-batch into the table exactly once (batch ids recorded in
        the snapshots under `query_id`, or the query id in `checkpoint_location`); see operations/streaming/sink.py."""
        return stream_writer(self.context, table, query_id=query_id, checkpoint_location=checkpoint_location, mode=mode,
                             merge_schema=merge_schema, commit_message=commit_message, author=author)

    def write_stream(self, df: DataFrame, table: str, *, checkpoint_location: str, trigger=None,
                     query_id: str | None = None, query_name: str | None = None, output_mode: OutputMode = "append",
                     mode: StreamWriteMode = "append", merge_schema: bool = False, commit_message: str | None = None,
                     author: str | None = None):
        """Start a streaming query writing `df` into the table exactly once per batch; returns the StreamingQuery."""
        return write_stream(self.context, df, table, checkpoint_location=checkpoint_location, trigger=trigger,
                            query_id=query_id, query_name=query_name, output_mode=output_mode, mode=mode,
                            merge_schema=merge_schema, commit_message=commit_message, author=author)

    # ---- SQL
    def sql(self, text: str, dialect: SqlDialect = "spark", *, catalog_name: str = "lake",
            params: Sequence[Any] | dict[str, Any] | None = None):
        """Run SQL statements (Spark SQL, or DuckDB's with dialect="duckdb") on the lake; see docs/sql.md. Returns
        the last statement's result: a DataFrame for a query, a list of rows for a command or CALL. Tables may be
        qualified with `catalog_name`, as the reference's attached name. `params` binds placeholders as literals
        (`:name` / `$name` from a dict, `?` / `$1` from a list): the way to pass values. Only lake tables, views
        and the lake's functions are read (files and other table functions: ExternalReadError)."""
        return run(self, text, dialect, catalog_name, params)

    def register(self, spark: SparkSession | None = None, *, view_name: str = "{schema}_{table}") -> list:
        """Every table as a temporary view of plain `spark.sql`, reading the current snapshot (see docs/sql.md);
        also registers `spark.read.format("ducklake")` with this lake as its default catalog."""
        from .operations.datasource import register as register_source  # lazy: datasource.py imports pyspark

        register_source(spark if spark is not None else self.spark, self.context)
        return register(self, spark, view_name)

    # ---- views, comments and tags (sql/views.py, catalog/changes/tags.py)
    def views(self, schema: str | None = None, *, version: int | None = None) -> list:
        """The lake views (`ViewInfo`: name, dialect, sql, column_aliases, comment) visible now or at `version`."""
        return views(self, schema, version)

    def create_view(self, name: str, sql: str, *, dialect: str = "spark",
                    column_aliases: list[str] | None = None, replace: bool = False, if_not_exists: bool = False,
                    catalog_name: str = "lake",
                    **commit_args: Any) -> int | None:
        """CREATE VIEW from a query in `dialect` (stored as DuckDB SQL, so DuckDB can query it)."""
        return create_view(self, split_name(name), sql, dialect=check_dialect(dialect),
                           column_aliases=column_aliases, replace=replace, if_not_exists=if_not_exists,
                           catalog_name=catalog_name, **commit_args)

    def drop_view(self, name: str, *, if_exists: bool = False, **commit_args: Any) -> int | None:
        """DROP VIEW."""
        return drop_view(self, split_name(name), if_exists=if_exists, **commit_args)

    def rename_view(self, name: str, new_name: str, *, if_exists: bool = False, **commit_args: Any) -> int | None:
        """ALTER VIEW ... RENAME TO (the view keeps its id and comment)."""
        return rename_view(self, split_name(name), new_name, if_exists=if_exists, **commit_args)

    def set_comment(self, name: str, comment: str | None, *, column: str | None = None,
                    **commit_args: Any) -> int | None:
        """COMMENT ON a table, a view or (with `column`) a table's column; None clears it."""
        return set_tag(self, split_name(name), COMMENT, comment, column=column, **commit_args)

    def set_tag(self, name: str, key: str, value: str | None, *, column: str | None = None,
                **commit_args: Any) -> int | None:
        """Set tag `key` of a table, a view or (with `column`) a table's column; the comment is key 'comment'."""
        return set_tag(self, split_name(name), key, value, column=column, **commit_args)

    def tags(self, name: str, *, column: str | None = None, version: int | None = None) -> dict[str, str | None]:
        """The tags (key -> value; the comment is 'comment') of a table, view or column, now or at `version`."""
        return tags(self, split_name(name), column=column, version=version)
