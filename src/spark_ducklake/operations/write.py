"""Orchestrating a write: conform the data, inline it or stage Parquet files on Spark, then commit once."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pyarrow as pa

from ..catalog.changes.data import AppendFiles, InlineInsert, ReplaceAll
from ..catalog.changes.ddl import CreateTable, TableRef
from ..catalog.changes.partitioning import current_spec
from ..catalog.changes.sorting import current_sort
from ..catalog.inlined import codec as inlined
from ..dataplane.arrow.conform import conform_arrow, not_null_message
from ..dataplane.arrow.file_layout import estimated_row_width
from ..dataplane.arrow.local_expressions import NotLocal
from ..dataplane.arrow.local_scan import read_new_files
from ..dataplane.arrow.local_write import sorted_rows
from ..dataplane.arrow.storage import delete_paths
from ..dataplane.arrow.threshold import threshold_of
from ..dataplane.arrow.write_options import WriteOptions
from ..dataplane.engine import ArrowEngine, engine_for
from ..dataplane.spark import write as spark_write
from ..dataplane.spark.columns import spark_col
from ..dataplane.spark.conform import conform_spark, plan_columns
from ..dataplane.spark.session import arrow_frame
from ..dataplane.spark.sorting import sort_column
from ..errors import ConstraintError
from ..spec import paths
from ..spec.model import PartitionSpec, TableInfo
from .staging import Staged

if TYPE_CHECKING:
    from .context import LakeContext


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


def load_layout(ctx: LakeContext, table: TableInfo, snapshot_id: int, conn=None) -> None:
    """Fill in the table's partitioning and sort keys as of the snapshot, unless this TableInfo has them; on
    `conn` if given (a write's one round of catalog reads)."""
    if table.partition is None or table.sort_keys is None:  # a transaction may have set one of them already
        if conn is None:
            with ctx.engine.connect() as conn:
                load_layout(ctx, table, snapshot_id, conn)
            return
        if table.partition is None:
            table.partition = current_spec(conn, table.table_id, snapshot_id)
        if table.sort_keys is None:
            table.sort_keys = current_sort(conn, table.table_id, snapshot_id)


def write_arrow_files(ctx: LakeContext, data: pa.Table, table: TableInfo, snapshot_id: int, *,
                      options_table: TableInfo | None, row_ids: pa.Array | None = None,
                      options: Callable[[str], str | None] | None = None,
                      any_size: bool = False) -> list | None:
    """Write Arrow rows (the table's columns) as data files in-process with pyarrow when they are small
    (dataplane/arrow/threshold.py) and the table's layout allows it; None: the caller writes on Spark.
    `options`: the lake options of `options_table` if the caller has read them (LakeContext.options_of).
    `any_size`: whatever their size (a caller without Spark that holds the rows already: the catalog service)."""
    engine = engine_for(ctx, extra_bytes=data.nbytes, any_size=any_size)
    if not isinstance(engine, ArrowEngine):
        return None
    load_layout(ctx, table, snapshot_id)
    try:
        return engine.write_data_files(data, table, _write_options(ctx, options_table, options), row_ids=row_ids)
    except NotLocal:  # encrypted lakes, layouts only Spark writes as the lake wants: the caller writes on Spark
        return None


# DuckDB's row group size: with `one_file_if_small` (lake.sql's duckdb dialect), a Spark DataFrame of at most this
# many rows (and at most the small-data threshold in bytes) is written in-process as one file, as DuckDB writes a
# small INSERT ... SELECT, instead of one file per Spark task. Bounded so the head fetched to find out stays cheap
# when the frame is large (it also answers the inlining check).
SMALL_FRAME_ROWS = 122_880


def small_frame_rows(ctx: LakeContext, table: TableInfo) -> int:
    """Rows up to which a Spark DataFrame is written in-process (0: never): SMALL_FRAME_ROWS, fewer when the
    table's rows are so wide that many would pass the small-data threshold."""
    return min(SMALL_FRAME_ROWS, threshold_of(ctx) // estimated_row_width(table.columns))


def write_files(ctx: LakeContext, frame, table: TableInfo, snapshot_id: int, *, options_table: TableInfo | None,
                row_ids: bool = False, options: Callable[[str], str | None] | None = None) -> list:
    """Write a conformed DataFrame as the table's Parquet files, partitioned and sorted as the table is at the
    snapshot (looked up once per TableInfo); nothing committed. `options_table` scopes the lake options (None for
    a table not yet created); `options`: those options if the caller has read them."""
    load_layout(ctx, table, snapshot_id)
    required = [c for c in table.columns if not c.nullable]
    try:
        return spark_write.write_data_files(ctx.spark, _not_null_guard(frame, table, required), table,
                                options=_write_options(ctx, options_table, options), row_ids=row_ids)
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
    # Spark's optimizer folds `IS NULL` of a column its schema says is never NULL to false (NullPropagation), so
    # a guard there checks nothing, yet building it costs py4j calls and a plan analysis on every write (a quarter
    # second on a busy driver): only the columns the frame may hold NULLs in are guarded.
    may_be_null = {f.name: f.nullable for f in frame.schema.fields}
    required = [c for c in required if may_be_null.get(c.name, True)]
    if not required:
        return frame
    from pyspark.sql import functions as F

    return frame.withColumns({
        c.name: F.when(spark_col(c.name).isNull(), F.raise_error(F.lit(not_null_message(table, c))))
        .otherwise(spark_col(c.name)) for c in required})


def schema_of(data):
    """The schema of a Spark DataFrame, a pyarrow Table or a pandas DataFrame."""
    if is_pandas(data):
        return pa.Schema.from_pandas(data, preserve_index=False)
    return data.schema


def stage_write(ctx: LakeContext, data, table: TableInfo, ref: TableRef | None, *, replace_all: bool,
                read_snapshot: int, replace_existing: bool, limit: int | None = None,
                one_file_if_small: bool = False, options: Callable[[str], str | None] | None = None) -> Staged[None]:
    """Conform `data`, then inline it or write its files on Spark (after ending every row of the table first when
    `replace_all`); returns the operations, nothing committed. `one_file_if_small`: a small Spark DataFrame is
    written in-process as one file, in its row order (SMALL_FRAME_ROWS); an Arrow table that goes to Spark is one
    file. `options`: the lake options in force for the table (LakeContext.options_of), if the caller has read them
    in its round of catalog reads; else they are read when needed."""
    if is_pandas(data):
        data = pa.Table.from_pandas(data, preserve_index=False)
    is_arrow = isinstance(data, pa.Table)
    staged: Staged[None] = Staged([], [], None)
    if replace_all:
        staged.ops.append(ReplaceAll(table))
    if limit is None:
        limit = ctx.inlining_limit(table if replace_existing else None)
    small = None
    options_table = table if ref is None else None
    if is_arrow:
        if data.num_rows <= limit:
            small = conform_arrow(data, table)
        else:
            local = write_arrow_files(ctx, data, table, read_snapshot, options_table=options_table, options=options)
            if local is not None:
                return _with_files(staged, local, table, ref)
            data = frame_of_arrow(ctx, data, one_file_if_small)
    if small is None:
        conformed = conform_spark(data, table)  # schema errors surface before any Spark job runs
        cap = small_frame_rows(ctx, table) if one_file_if_small and not is_arrow else 0
        if cap > 0:  # one job fetches the head both checks need
            head = conformed.limit(max(limit, cap) + 1).toArrow()
            if head.num_rows <= limit:
                small = conform_arrow(head, table)
            elif head.num_rows <= cap:  # a small frame: one file in-process, rows in the frame's order
                local = write_arrow_files(ctx, head, table, read_snapshot, options_table=options_table, options=options)
                if local is not None:
                    return _with_files(staged, local, table, ref)
        elif limit > 0 and not is_arrow and inlined.inlinable(table.columns, ctx.engine):
            # Written first, inlined after if few: a head fetched first would compute the frame twice.
            files = write_files(ctx, conformed, table, read_snapshot, options_table=options_table, options=options)
            small = _few_rows(files, conformed, table, limit)
            if small is None or not inlined.inlinable(table.columns, ctx.engine, small):
                return _with_files(staged, files, table, ref)
            delete_paths([f.path for f in files])
    if small is not None and not inlined.inlinable(table.columns, ctx.engine, small):
        small = None  # values DuckDB could not read back from this catalog's text form: write Parquet
        if is_arrow:
            local = write_arrow_files(ctx, data, table, read_snapshot, options_table=options_table, options=options)
            if local is not None:
                return _with_files(staged, local, table, ref)
            conformed = conform_spark(frame_of_arrow(ctx, data, one_file_if_small), table)
    if small is not None:
        if small.num_rows:
            small = _sorted_inline(ctx, small, table, read_snapshot, options_table, options)
            staged.ops.append(InlineInsert(table, small, ref))
        return staged
    files = write_files(ctx, conformed, table, read_snapshot, options_table=options_table, options=options)
    return _with_files(staged, files, table, ref)


def _few_rows(files: list, frame, table: TableInfo, limit: int) -> pa.Table | None:
    """The rows of just-written files if they are at most `limit` (None if more), in the table's Arrow types:
    read back from the files, or (files only Spark reads: encrypted, name-mapped) fetched again from `frame`."""
    if sum(f.record_count for f in files) > limit:
        return None
    if any(f.encryption_key or f.needs_name_mapping for f in files):
        return conform_arrow(frame.limit(limit + 1).toArrow(), table)
    return conform_arrow(read_new_files(files, table.columns), table)


def _sorted_inline(ctx: LakeContext, small: pa.Table, table: TableInfo, snapshot_id: int,
                   options_table: TableInfo | None, options: Callable[[str], str | None] | None) -> pa.Table:
    """Inlined rows in the table's sort order (SET SORTED BY, option sort_on_insert), as the reference inlines
    them and as Parquet files are written; expression keys are evaluated on Spark."""
    if small.num_rows < 2:
        return small
    load_layout(ctx, table, snapshot_id)
    if not table.sort_keys or not _write_options(ctx, options_table, options).sort_on_insert:
        return small
    try:
        return sorted_rows(small, table)
    except NotLocal:
        frame = frame_of_arrow(ctx, small).orderBy(*[sort_column(k) for k in table.sort_keys])
        return conform_arrow(frame.toArrow(), table)


def _with_files(staged: Staged[None], files: list, table: TableInfo, ref: TableRef | None) -> Staged[None]:
    staged.files.extend(f.path for f in files)
    if files:
        staged.ops.append(AppendFiles(table, files, ref))
    return staged


def _write_options(ctx: LakeContext, table: TableInfo | None, options: Callable[[str], str | None] | None = None):
    return WriteOptions.from_lake_options(options) if options else ctx.write_options(table)


def frame_of_arrow(ctx: LakeContext, data: pa.Table, one_file: bool = False):
    """A Spark DataFrame of Arrow data (dataplane/spark/session.py `arrow_frame`), in one partition when `one_file`
    (rows written out in a statement are one file, as the reference writes them)."""
    frame = arrow_frame(ctx.spark, data)
    return frame.coalesce(1) if one_file else frame


def is_pandas(data) -> bool:
    return type(data).__module__.startswith("pandas") and type(data).__name__ == "DataFrame"
