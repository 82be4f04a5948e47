"""Orchestrating a write: conform the data, inline it or stage Parquet files on the plane `engine_for` picks (pyarrow
on the driver for small Arrow rows, else Spark), then commit once."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

import pyarrow as pa

from ..catalog.changes.data import AppendFiles, InlineInsert, ReplaceAll
from ..catalog.changes.ddl import CreateTable, TableRef
from ..catalog.changes.partitioning import current_spec
from ..catalog.changes.sorting import current_sort
from ..catalog.inlined import codec as inlined
from ..dataplane.arrow.conform import conform_arrow
from ..dataplane.arrow.file_layout import estimated_row_width
from ..dataplane.arrow.local_scan import read_new_files
from ..dataplane.arrow.storage import delete_paths
from ..dataplane.arrow.threshold import threshold_of
from ..dataplane.arrow.write_options import WriteOptions
from ..dataplane.engine import ArrowEngine, engine_for
from ..dataplane.spark.conform import conform_spark, plan_columns
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


def write_rows(ctx: LakeContext, rows, table: TableInfo, snapshot_id: int, *, options_table: TableInfo | None,
               options: Callable[[str], str | None] | None = None, keep_ids: bool = False,
               one_file: bool = False) -> list:
    """Rows written as the table's files, partitioned and sorted as the table is at the snapshot (looked up once per
    TableInfo); nothing committed. `rows`: Arrow rows (the table's columns, with `rowid` kept as their ids with
    `keep_ids`; one file with `one_file` if written on Spark) or a Spark DataFrame conformed to the table. The
    plane is `engine_for`'s for their size. `options_table` scopes the lake options (None for a table not yet
    created); `options`: those options if the caller has read them (LakeContext.options_of)."""
    load_layout(ctx, table, snapshot_id)
    engine = engine_for(ctx, extra_bytes=rows.nbytes if isinstance(rows, pa.Table) else 0)
    return engine.write_data_files(rows, table, _write_options(ctx, options_table, options), keep_ids=keep_ids,
                                   one_file=one_file)


def write_arrow_here(ctx: LakeContext, rows: pa.Table, table: TableInfo, snapshot_id: int, *,
                     keep_ids: bool = False) -> list | None:
    """`write_rows` of Arrow rows with pyarrow in this process whatever their size, for a caller without Spark (the
    catalog service); None when only Spark writes them as the lake wants (`ArrowEngine.writes_in_process`)."""
    load_layout(ctx, table, snapshot_id)
    engine = engine_for(ctx, any_size=True)
    options = ctx.write_options(table)
    if not isinstance(engine, ArrowEngine) or not engine.writes_in_process(table, options):
        return None
    return engine.write_data_files(rows, table, options, keep_ids=keep_ids)


# DuckDB's row group size: with `one_file_if_small` (lake.sql's duckdb dialect), a Spark DataFrame of at most this
# many rows (and at most the small-data threshold in bytes) is written in-process as one file, as DuckDB writes a
# small INSERT ... SELECT, instead of one file per Spark task. Bounded so the head fetched to find out stays cheap
# when the frame is large (it also answers the inlining check).
SMALL_FRAME_ROWS = 122_880


def small_frame_rows(ctx: LakeContext, table: TableInfo) -> int:
    """Rows up to which a Spark DataFrame is written in-process (0: never): SMALL_FRAME_ROWS, fewer when the
    table's rows are so wide that many would pass the small-data threshold."""
    return min(SMALL_FRAME_ROWS, threshold_of(ctx) // estimated_row_width(table.columns))


def schema_of(data):
    """The schema of a Spark DataFrame, a pyarrow Table or a pandas DataFrame."""
    if is_pandas(data):
        return pa.Schema.from_pandas(data, preserve_index=False)
    return data.schema


def stage_write(ctx: LakeContext, data, table: TableInfo, ref: TableRef | None, *, replace_all: bool,
                read_snapshot: int, replace_existing: bool, limit: int | None = None,
                one_file_if_small: bool = False, options: Callable[[str], str | None] | None = None) -> Staged[None]:
    """Conform `data`, then inline it or write its files (`write_rows`, after ending every row of the table first when
    `replace_all`); returns the operations, nothing committed. `one_file_if_small`: a small Spark DataFrame is
    written in-process as one file, in its row order (SMALL_FRAME_ROWS); an Arrow table that goes to Spark is one
    file. `options`: the lake options in force for the table (LakeContext.options_of), if the caller has read them
    in its round of catalog reads; else they are read when needed."""
    if is_pandas(data):
        data = pa.Table.from_pandas(data, preserve_index=False)
    staged: Staged[None] = Staged([ReplaceAll(table)] if replace_all else [], [], None)
    if limit is None:
        limit = ctx.inlining_limit(table if replace_existing else None)
    options_table = table if ref is None else None
    files_of = partial(write_rows, ctx, table=table, snapshot_id=read_snapshot, options_table=options_table,
                       options=options, one_file=one_file_if_small)
    if isinstance(data, pa.Table):
        small = conform_arrow(data, table) if data.num_rows <= limit else None
        unless_inlined = data
    else:
        conformed = conform_spark(data, table)  # schema errors surface before any Spark job runs
        small, unless_inlined = None, conformed
        cap = small_frame_rows(ctx, table) if one_file_if_small else 0
        if cap > 0:  # one job fetches the head both checks need
            head = conformed.limit(max(limit, cap) + 1).toArrow()
            small = conform_arrow(head, table) if head.num_rows <= limit else None
            unless_inlined = head if head.num_rows <= cap else conformed  # a small frame: one file, rows in order
        elif limit > 0 and inlined.inlinable(table.columns, ctx.engine):
            # Written first, inlined after if few: a head fetched first would compute the frame twice.
            files = files_of(conformed)
            small = _few_rows(files, conformed, table, limit)
            if small is None or not inlined.inlinable(table.columns, ctx.engine, small):
                return _with_files(staged, files, table, ref)
            delete_paths([f.path for f in files])
    # Values DuckDB could not read back from this catalog's text form are written as Parquet too.
    if small is None or not inlined.inlinable(table.columns, ctx.engine, small):
        return _with_files(staged, files_of(unless_inlined), table, ref)
    if small.num_rows:
        staged.ops.append(InlineInsert(table, _sorted_inline(ctx, small, table, read_snapshot, options_table, options),
                                       ref))
    return staged


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
    # Inlined rows are few by definition: sorted in-process whatever the small-data threshold (Spark for sort
    # expressions pyarrow does not evaluate).
    return engine_for(ctx, any_size=True).sort_rows(small, table)


def _with_files(staged: Staged[None], files: list, table: TableInfo, ref: TableRef | None) -> Staged[None]:
    staged.files.extend(f.path for f in files)
    if files:
        staged.ops.append(AppendFiles(table, files, ref))
    return staged


def _write_options(ctx: LakeContext, table: TableInfo | None, options: Callable[[str], str | None] | None = None):
    return WriteOptions.from_lake_options(options) if options else ctx.write_options(table)


def is_pandas(data) -> bool:
    return type(data).__module__.startswith("pandas") and type(data).__name__ == "DataFrame"
