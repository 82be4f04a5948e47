"""Orchestrating a write: conform the data, inline it or stage Parquet files on Spark, then commit once."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import pyarrow as pa

from ..catalog.commit import CommitInfo, commit
from ..catalog.inlined import codec as inlined
from ..catalog.operations.data import AppendFiles, InlineInsert, ReplaceAll
from ..catalog.operations.ddl import CreateTable, TableRef
from ..catalog.reads import reader
from ..errors import AlreadyExistsError, ConstraintError
from ..spark.conform import conform_arrow, conform_spark, not_null_message, plan_columns
from ..spec import paths
from ..spec.model import PartitionSpec, TableInfo

if TYPE_CHECKING:
    from ..lake import DuckLake


def new_table(schema: str, name: str, source_schema, schema_id: int, schema_path: str,
              read_snapshot: int) -> tuple[CreateTable, TableInfo]:
    """The CREATE TABLE for data of `source_schema`, and the TableInfo writers use before it is committed."""
    columns = plan_columns(source_schema)
    for top in columns:  # like Spark's file sources: tables created from data are nullable
        for col in top.walk():
            col.nullable = True
    create = CreateTable(schema, name, columns)
    info = TableInfo(
        table_id=-1, table_uuid=create.table_uuid, schema_id=schema_id, schema_name=schema, name=name,
        path=schema_path + paths.dir_name_for(name, create.table_uuid), columns=create.columns,
        begin_snapshot=read_snapshot, partition=PartitionSpec(), sort_keys=[],
    )
    return create, info


def write_files(lake: DuckLake, frame, table: TableInfo, snapshot_id: int, *, options_table: TableInfo | None,
                row_ids: bool = False) -> list:
    """Write a conformed DataFrame as the table's Parquet files, partitioned and sorted as the table is at the
    snapshot (looked up once per TableInfo); nothing committed. `options_table` scopes the lake options (None for
    a table not yet created)."""
    from ..catalog.operations.partitioning import current_spec
    from ..catalog.operations.sorting import current_sort
    from ..spark.write import write_data_files

    if table.partition is None or table.sort_keys is None:
        with lake.engine.connect() as conn:
            table.partition = current_spec(conn, table.table_id, snapshot_id)
            table.sort_keys = current_sort(conn, table.table_id, snapshot_id)
    required = [c for c in table.columns if not c.nullable]
    try:
        return write_data_files(lake.spark, _not_null_guard(frame, table, required), table,
                                options=_write_options(lake, options_table), row_ids=row_ids)
    except Exception as exc:
        # The executors' raise_error: the staged files are gone with the failed job (write_data_files).
        broken = next((m for m in (not_null_message(table, c) for c in required) if m in str(exc)), None)
        if broken is None:
            raise
        raise ConstraintError(broken) from None


def _not_null_guard(frame, table: TableInfo, required: list):
    """`frame` whose NOT NULL columns fail the Spark job on a NULL (checked on the executors, in the same pass
    that writes the files)."""
    if not required:
        return frame
    from pyspark.sql import functions as F

    from ..spec.names import spark_col

    return frame.withColumns({
        c.name: F.when(spark_col(c.name).isNull(), F.raise_error(F.lit(not_null_message(table, c))))
        .otherwise(spark_col(c.name)) for c in required})


@dataclass
class StagedWrite:
    """Operations of a write, and the files it staged (deleted if the commit fails)."""

    ops: list = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def write_table(lake: DuckLake, data, schema: str, name: str, mode: str, info: CommitInfo, *, where=None,
                merge_schema: bool = False, guards: list | None = None) -> int:
    """Write `data` (Spark DataFrame, pyarrow Table or pandas DataFrame) into a table as one snapshot.

    `guards` are operations committed first that may refuse the commit (see stream_commits.GuardBatch)."""
    with lake.engine.connect() as conn:  # one round of catalog reads before the data moves
        latest = reader.latest_snapshot(conn)
        read_snapshot = latest.snapshot_id
        existing = lake.table_cache.find(conn, latest, lake.data_path, schema, name)
        if existing is not None and mode in ("error", "errorifexists"):
            raise AlreadyExistsError(f"table {schema}.{name} already exists (mode='error')")
        target, ref, create = existing, None, None
        if existing is None:
            sch = reader.find_schema(conn, read_snapshot, lake.data_path, schema)
            create, target = new_table(schema, name, _schema_of(data), sch.schema_id, sch.path, read_snapshot)
            ref = create.ref
        limit = lake.inlining_limit(existing, conn)
        if existing is not None:  # a copy: write_files fills in the layout, the cached record stays as it is
            existing = target = replace(existing)
    if merge_schema and existing is not None:
        from .schema_change import evolve_for

        create, target = evolve_for(lake, existing, _schema_of(data))
    staged = stage_write(lake, data, target, ref, mode, where=where, read_snapshot=read_snapshot,
                         replace_existing=existing is not None, limit=limit)
    ops = ([create] if create else []) + staged.ops
    if not ops:
        return read_snapshot
    return commit_staged(lake, (guards or []) + ops, read_snapshot, info, staged.files)


def commit_staged(lake: DuckLake, ops: list, read_snapshot: int, info: CommitInfo, files: list[str]) -> int:
    """Commit staged operations as one snapshot; if that fails, delete the files they staged (nobody saw them)."""
    try:
        lake.last_committed = commit(lake.engine, ops, read_snapshot=read_snapshot, data_path=lake.data_path,
                                     info=info)
        return lake.last_committed
    except BaseException:
        from ..spark.write import delete_paths

        delete_paths(files)
        raise


def _schema_of(data):
    if _is_pandas(data):
        return pa.Schema.from_pandas(data, preserve_index=False)
    return data.schema


def stage_write(lake: DuckLake, data, table: TableInfo, ref: TableRef | None, mode: str, *, where=None,
                read_snapshot: int, replace_existing: bool, limit: int | None = None) -> StagedWrite:
    """Conform `data`, then inline it or write its files on Spark; returns the operations, nothing committed."""
    if _is_pandas(data):
        data = pa.Table.from_pandas(data, preserve_index=False)
    is_arrow = isinstance(data, pa.Table)
    staged = StagedWrite()
    if replace_existing and mode == "overwrite":
        if where is None:
            staged.ops.append(ReplaceAll(table))
        else:
            from .delete_update import pruning_filter, stage_delete_op

            plan = lake.plan_scan((table.schema_name, table.name), version=read_snapshot,
                                  where=pruning_filter(where))
            delete_op, delete_files, _count = stage_delete_op(lake, plan, where)
            if delete_op is not None:
                staged.ops.append(delete_op)
                staged.files += delete_files
    if limit is None:
        limit = lake.inlining_limit(table if replace_existing else None)
    small = None
    if is_arrow:
        if data.num_rows <= limit:
            small = conform_arrow(data, table)
        else:
            data = _arrow_frame(lake, data)
    if small is None:
        conformed = conform_spark(data, table)  # schema errors surface before any Spark job runs
        if limit > 0:
            head = conformed.limit(limit + 1).toArrow()
            if head.num_rows <= limit:
                small = conform_arrow(head, table)
    if small is not None and not inlined.inlinable(table.columns, lake.engine.dialect.name, small):
        small = None  # values DuckDB could not read back from this catalog's text form: write Parquet
        if is_arrow:
            conformed = conform_spark(_arrow_frame(lake, data), table)
    if small is not None:
        if small.num_rows:
            staged.ops.append(InlineInsert(table, small, ref))
        return staged
    try:
        files = write_files(lake, conformed, table, read_snapshot, options_table=table if ref is None else None)
    except BaseException:
        from ..spark.write import delete_paths

        delete_paths(staged.files)
        raise
    staged.files += [f.path for f in files]
    if files:
        staged.ops.append(AppendFiles(table, files, ref))
    return staged


def _write_options(lake: DuckLake, table: TableInfo | None):
    from ..spark.write import WriteOptions

    return WriteOptions.from_lake_options(lambda key: lake.option(key, table))


def _arrow_frame(lake: DuckLake, data: pa.Table):
    """A Spark DataFrame of Arrow data; timestamps without a zone stay TIMESTAMP_NTZ (Spark's own inference makes
    them TIMESTAMP, which no longer fits a `timestamp` column)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return lake.spark.createDataFrame(data, schema=from_arrow_schema(data.schema, prefer_timestamp_ntz=True))


def _is_pandas(data) -> bool:
    return type(data).__module__.startswith("pandas") and type(data).__name__ == "DataFrame"
