"""Orchestrating a write: conform the data, inline it or stage Parquet files on Spark, then commit once."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from .catalog import paths, reader
from .catalog.commit import CommitInfo, commit
from .catalog.data_ops import AppendFiles, InlineInsert, ReplaceAll
from .catalog.ddl_ops import CreateTable
from .catalog.model import TableInfo
from .write_plan import conform_arrow, conform_spark, plan_columns

if TYPE_CHECKING:
    from .lake import DuckLake


def _new_table(lake: DuckLake, conn, schema: str, name: str, source_schema) -> tuple[CreateTable, TableInfo]:
    snap = reader.latest_snapshot(conn).snapshot_id
    sch = reader.find_schema(conn, snap, lake.data_path, schema)
    columns = plan_columns(source_schema)
    for top in columns:  # like Spark's file sources: tables created from data are nullable
        for col in top.walk():
            col.nullable = True
    create = CreateTable(schema, name, columns)
    info = TableInfo(
        table_id=-1, table_uuid=create.table_uuid, schema_id=sch.schema_id, schema_name=schema, name=name,
        path=sch.path + paths.dir_name_for(name, create.table_uuid), columns=create.columns,
        begin_snapshot=snap,
    )
    return create, info


def write_table(lake: DuckLake, data, schema: str, name: str, existing: TableInfo | None, mode: str,
                info: CommitInfo, *, where=None) -> int:
    """Write `data` (Spark DataFrame, pyarrow Table or pandas DataFrame) into a table as one snapshot."""
    if _is_pandas(data):
        data = pa.Table.from_pandas(data, preserve_index=False)
    is_arrow = isinstance(data, pa.Table)
    staged_deletes: list = []
    with lake.engine.connect() as conn:
        read_snapshot = reader.latest_snapshot(conn).snapshot_id
        ops: list = []
        if existing is None:
            create, table = _new_table(lake, conn, schema, name, data.schema)
            ops.append(create)
            ref = create.ref
        else:
            table, ref = existing, None
            if mode == "overwrite" and where is None:
                ops.append(ReplaceAll(existing))
    limit = lake.inlining_limit(existing)
    small = None
    if is_arrow:
        if data.num_rows <= limit:
            small = conform_arrow(data, table)
        else:
            data = lake.spark.createDataFrame(data)
    if small is None and not is_arrow:
        conformed = conform_spark(data, table)  # schema errors surface before any Spark job runs
        if limit > 0:
            head = conformed.limit(limit + 1).toArrow()
            if head.num_rows <= limit:
                small = conform_arrow(head, table)
    staged = []
    if existing is not None and mode == "overwrite" and where is not None:
        from .row_changes import stage_delete_op

        delete_op, delete_files = stage_delete_op(lake, f"{schema}.{name}", where, read_snapshot)
        if delete_op is not None:
            ops.append(delete_op)
            staged_deletes = delete_files
    if small is not None:
        if small.num_rows:
            ops.append(InlineInsert(table, small, ref))
    else:
        from .spark.write import write_data_files

        conformed = conform_spark(data, table)
        staged = write_data_files(lake.spark, conformed, table, options=_write_options(lake, existing))
        if staged:
            ops.append(AppendFiles(table, staged, ref))
    if not ops:
        return read_snapshot
    try:
        return commit(lake.engine, ops, read_snapshot=read_snapshot, data_path=lake.data_path, info=info)
    except BaseException:
        from .spark.write import delete_paths

        delete_paths([f.path for f in staged] + [d.path for d in staged_deletes])
        raise


def _write_options(lake: DuckLake, table: TableInfo | None):
    from .spark.write import WriteOptions

    return WriteOptions.from_lake_options(lambda key: lake.option(key, table))


def _is_pandas(data) -> bool:
    return type(data).__module__.startswith("pandas") and type(data).__name__ == "DataFrame"
