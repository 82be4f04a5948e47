"""Write commits: Spark's writer writes a statement's Parquet files to a staging folder (`begin_write` says where
and how: the table's Spark schema with field ids, the lake's Parquet options), and `commit_write` makes them one
snapshot (append, INSERT OVERWRITE, overwrite by condition, CTAS / RTAS), inlining few rows and writing again with
pyarrow what Spark's writer cannot lay out as DuckLake does (partitioned tables, list and map columns)."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any, Literal

import pyarrow.fs as pafs

from ..catalog.changes.data import AppendFiles
from ..dataplane.arrow.local_scan import read_new_files
from ..dataplane.arrow.native_types import is_native
from ..dataplane.arrow.storage import delete_paths, filesystem
from ..dataplane.spark.conform import plan_columns
from ..dataplane.spark.types import to_spark_schema
from ..dataplane.spark.write import describe_file, writer_options
from ..errors import InvalidArgumentError
from ..lake import DuckLake
from ..operations.write import load_layout, write_arrow_here
from ..spec.model import Column, NewDataFile, TableInfo
from ..spec.uuid7 import new_uuid
from .fields import UnsupportedRequestError, request_table, request_text, spark_struct
from .filters import overwrite_predicate
from .partitioning import partition_keys


def begin_write(lake: DuckLake, request: dict[str, Any]) -> dict[str, Any]:
    """Where the JVM writes a statement's files and how: the table's Spark schema with field ids (a table
    CTAS / RTAS creates: the columns it will get), the lake's Parquet options. Refused, naming the cause, for
    tables whose files Spark's plain Parquet writer cannot produce yet."""
    name = request_table(request)
    create = request.get("create")
    if create is not None:
        columns = plan_columns(spark_struct(create.get("schema")))
        partition_keys(create.get("partitioning") or [])  # unknown transforms refused before Spark writes
        info = None
        staging_root = lake.context.data_path
    else:
        info = lake.context.table_info(name)
        columns = info.columns
        staging_root = info.path
    # DELETE writes only positions, UPDATE's new row versions are written here (write_arrow_here, partitioned
    # as DuckLake.update writes them): Spark's writer adds no data file of the table for either. Rows Spark
    # writes into a partitioned table are partitioned here at commit (rewritten_files).
    row_level = request.get("row_level")
    causes = []
    if row_level != "delete" and not all(_spark_writes(c) for c in columns):
        causes.append("a column type Spark's plain Parquet writer cannot write with DuckLake field ids")
    options = lake.context.write_options(info)
    if options.encrypted or not isinstance(filesystem(staging_root)[0], pafs.LocalFileSystem):
        causes.append("encrypted files or object storage")
    if causes:
        raise UnsupportedRequestError(f"the lake catalog cannot write {name[0]}.{name[1]} in Spark SQL yet: it has "
                                   f"{', '.join(causes)}")
    staging = f"{staging_root.rstrip('/')}/_spark_staging-{uuid.uuid4().hex}/"
    return {"staging": staging, "schema": to_spark_schema(columns).json(),
            "options": writer_options(columns, options)}


def commit_write(lake: DuckLake, request: dict[str, Any]) -> dict[str, Any]:
    """Commit the files one statement wrote (`files`, under `staging`) as one snapshot: `mode` append,
    truncate (INSERT OVERWRITE, replace everything) or `overwrite` with `filters` (the rows they match are
    replaced); `create` {schema, partitioning, replace} creates (or replaces) the table in the same snapshot
    (CTAS, RTAS). Few rows are inlined as DuckLake.write inlines them. Nothing is committed on any error and
    the files are deleted."""
    name = request_table(request)
    staging = request_text(request, "staging")
    paths = [p for p in request.get("files") or [] if isinstance(p, str) and staging and p.startswith(staging)]
    try:
        snapshot = _commit_files(lake, request, name, paths)
    except BaseException:
        delete_paths(paths)
        raise
    finally:
        if staging:  # a CTAS whose query ran no write stages nothing
            delete_paths([staging], directories=True)
    return {"snapshot": snapshot}


def _commit_files(lake: DuckLake, request: dict[str, Any], name: tuple[str, str], paths: list[str]) -> int | None:
    mode = request.get("mode", "append")
    if mode not in ("append", "truncate", "overwrite", "dynamic"):
        raise InvalidArgumentError(f"unknown write mode {mode!r}")
    where = overwrite_predicate(request.get("filters") or []) if mode == "overwrite" else None
    create = request.get("create")
    qualified = f"{name[0]}.{name[1]}"
    ctx = lake.context
    with lake.transaction() as tx:
        if create is not None:
            if create.get("replace") and ctx.find(*name) is not None:
                tx.drop_table(qualified)
            tx.create_table(qualified, spark_struct(create.get("schema")))
            keys = partition_keys(create.get("partitioning") or [])
            if keys:
                tx.set_partitioning(qualified, keys)
            created = tx.created(name)
            assert created is not None  # create_table above staged it
            info, ref = created
            partitioned = bool(keys)
        else:
            info, ref = dataclasses.replace(tx.table_info(qualified)), None  # a copy: the layout is loaded in
            load_layout(ctx, info, tx.read_snapshot)
            partitioned = bool(info.partition and info.partition.keys)
        if mode == "dynamic" and partitioned:
            raise UnsupportedRequestError(f"the lake catalog cannot overwrite the partitions of {qualified} "
                                          "dynamically (overwritePartitions, partitionOverwriteMode=dynamic): "
                                          "use INSERT OVERWRITE (every row) or writeTo(...).overwrite(condition)")
        # Footers only: each file's rows and column stats, as our Spark writer describes its files.
        files = [f for f in (describe_file(p, info.columns) for p in sorted(paths)) if f.record_count]
        limit = ctx.inlining_limit(info if create is None else None)
        # what tx.write does: INSERT OVERWRITE and overwrite replace rows, a table created here takes an append
        how: Literal["append", "overwrite"] = "overwrite" if mode != "append" and create is None else "append"
        # Few rows are inlined as DuckLake.write inlines them; a new partitioned table's rows are partitioned by
        # DuckLake.write's own path (pyarrow in the service up to the small-data threshold, its Spark above).
        if sum(f.record_count for f in files) <= limit or (partitioned and create is not None):
            tx.write(read_new_files(files, info.columns), qualified, how, where=where)
        else:
            if how == "overwrite":  # stages the delete of the rows replaced (all, or those matched)
                tx.write(read_new_files([], info.columns), qualified, "overwrite", where=where)
            written = rewritten_files(lake, info, files, tx.read_snapshot) if is_rewritten(info, partitioned) \
                else adopt_files(files, info.path)
            tx.stage(AppendFiles(info, written, ref), files=[f.path for f in written])
    return tx.snapshot_id


def rewritten_files(lake: DuckLake, table: TableInfo, files: list[NewDataFile], snapshot: int) -> list[NewDataFile]:
    """The rows of Spark's staged files written again as the table's files (`is_rewritten`: Spark's writer does
    not split rows by DuckLake's partition values, bucket() included, nor give list elements and map keys and
    values their field ids): with pyarrow in the service, whatever their size, as the new versions of an
    UPDATE are."""
    written = write_arrow_here(lake.context, read_new_files(files, table.columns), table, snapshot)
    if written is None:
        raise UnsupportedRequestError(f"the lake catalog cannot write the table {table.qualified_name} in Spark "
                                      "SQL: its layout is written by Spark (use DuckLake.write)")
    return written


def _spark_writes(col: Column) -> bool:
    """Whether Spark's writer writes a column the plugin lets it write: a type Spark decodes, and inside nested
    columns none it would write unlike DuckDB (geometry, variant; the service rewrites nested columns, `is_rewritten`,
    with pyarrow, which has no variant type)."""
    if not is_native(col):
        return False
    return not col.children or not any(c.type in ("geometry", "variant") for c in col.walk())


def is_rewritten(table: TableInfo, partitioned: bool) -> bool:
    """Whether Spark's staged files are written again by the service rather than adopted: partitioned tables, and
    tables with list or map columns anywhere (Spark's writer gives elements, keys and values no field ids)."""
    return partitioned or any(c.type in ("list", "map") for top in table.columns for c in top.walk())


def adopt_files(files: list[NewDataFile], table_path: str) -> list[NewDataFile]:
    """The staged files moved to their final names in the table's folder (as dataplane/spark/write.py names them)."""
    fs = pafs.LocalFileSystem()
    moved = []
    try:
        for f in files:
            dst = f"{table_path}ducklake-{new_uuid()}.parquet"
            fs.create_dir(dst.rsplit("/", 1)[0], recursive=True)
            fs.move(f.path, dst)
            moved.append(dst)
            f.path = dst
    except BaseException:
        delete_paths(moved)
        raise
    return files
