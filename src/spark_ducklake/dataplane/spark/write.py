"""Writing a DataFrame's rows as DuckLake data files on Spark executors (native Parquet writer, field ids)."""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor

import pyarrow.fs as pafs
import pyarrow.parquet as pq

from ...catalog import stats
from ...spec import types
from ...spec.internal_columns import ROW_ID_COLUMN, ROW_ID_FIELD_ID, SNAPSHOT_ID_COLUMN, SNAPSHOT_ID_FIELD_ID
from ...spec.model import Column, NewDataFile, TableInfo
from ...spec.names import spark_name
from ...spec.uuid7 import new_uuid
from ..arrow.file_layout import estimated_row_width, lacks_field_ids, uses_pyarrow_writer
from ..arrow.placement import KEY_PREFIX, placement
from ..arrow.storage import delete_paths, filesystem, is_connect, spark_path
from ..arrow.write_options import WriteOptions, row_group_bytes, rows_per_file
from . import types as spark_types
from .partition import with_partition_keys
from .sorting import sort_column
from .write_in_place import write_files_in_place

_CODECS = {"uncompressed": "none", "snappy": "snappy", "gzip": "gzip", "zstd": "zstd", "brotli": "brotli",
           "lz4": "lz4", "lz4_raw": "lz4raw"}

# A column's expression costs pyspark ~6 py4j calls (the function, the alias's metadata, the call-site checks),
# ~100 ms for a 16-column table on every write. The expressions depend only on the session, the table's columns
# and the frame's types, so appends of the same shape reuse them.
_PROJECTIONS: OrderedDict[tuple, list] = OrderedDict()
_PROJECTIONS_LOCK = threading.Lock()
PROJECTIONS_KEPT = 64


def with_field_ids(df, table: TableInfo, *, row_ids: bool = False, snapshot_ids: bool = False):
    """The DataFrame with the table's schema (field ids in the metadata) so Spark writes them.

    With `row_ids`, the DataFrame's `rowid` column is written as `_ducklake_internal_row_id`, as the reference
    does for rows that keep their identity (updates): row lineage. With `snapshot_ids`, its
    `_ducklake_internal_snapshot_id` column is kept (the snapshot that inserted each row: flushed and compacted
    files hold rows of several snapshots).
    """
    from pyspark.sql import functions as F

    # A cast costs py4j calls per column on every write: skipped where the type is already right. Over Spark
    # Connect casts cost nothing and the schema a round trip, so they stay. Nested columns always cast: the cast
    # puts their fields' ids on them.
    connect = is_connect(df.sparkSession)
    got = {} if connect else {f.name: f.dataType.simpleString() for f in df.schema.fields}
    key = (df.sparkSession, repr(table.columns), tuple(got.items()), row_ids, snapshot_ids)
    kept = None if connect else _kept_projection(key)
    if kept is not None:
        return df.select(*kept)

    def written(col: Column):
        expr = F.col(spark_name(col.name))
        if not col.children and col.type != "geometry" and \
                got.get(col.name) == spark_types.to_spark_type(col).simpleString():
            return expr
        return spark_types.write_column(col, expr)

    cols = [written(col).alias(col.name, metadata={types.FIELD_ID_KEY: col.column_id}) for col in table.columns]
    if row_ids:
        cols.append(F.col("rowid").cast("long").alias(ROW_ID_COLUMN, metadata={types.FIELD_ID_KEY: ROW_ID_FIELD_ID}))
    if snapshot_ids:
        cols.append(F.col(SNAPSHOT_ID_COLUMN).cast("long").alias(
            SNAPSHOT_ID_COLUMN, metadata={types.FIELD_ID_KEY: SNAPSHOT_ID_FIELD_ID}))
    if not connect:
        _keep_projection(key, cols)
    return df.select(*cols)


def _kept_projection(key: tuple) -> list | None:
    with _PROJECTIONS_LOCK:
        if key in _PROJECTIONS:
            _PROJECTIONS.move_to_end(key)
        return _PROJECTIONS.get(key)


def _keep_projection(key: tuple, cols: list) -> None:
    with _PROJECTIONS_LOCK:
        _PROJECTIONS[key] = cols
        while len(_PROJECTIONS) > PROJECTIONS_KEPT:
            _PROJECTIONS.popitem(last=False)


def configure_writer(writer, table: TableInfo, options: WriteOptions):
    """A DataFrameWriter with the lake's Parquet options (codec, row groups, format version) applied."""
    for key, value in writer_options(table.columns, options).items():
        writer = writer.option(key, value)
    return writer


def writer_options(columns: list[Column], options: WriteOptions) -> dict[str, str]:
    """The lake's Parquet options as Spark Parquet writer options (also what the catalog plugin's JVM writer is
    handed: catalog_service/writes.py)."""
    out = {"compression": _CODECS.get(options.compression, options.compression),
           # String statistics whole, never a truncated prefix, whatever the Hadoop configuration says: the catalog
           # then records them as exact (DuckLake 1.1 min_is_exact / max_is_exact).
           "parquet.statistics.truncate.length": str(2**31 - 1)}
    block_size = row_group_bytes(columns, options)
    if block_size:
        out["parquet.block.size"] = str(block_size)
    if options.parquet_version:
        out["parquet.writer.version"] = f"PARQUET_{options.parquet_version}_0"
    if options.compression == "zstd" and options.compression_level is not None:
        out["parquet.compression.codec.zstd.level"] = str(options.compression_level)
    return out


def write_data_files(spark, df, table: TableInfo, *, options: WriteOptions | None = None,
                     row_ids: bool = False, snapshot_ids: bool = False) -> list[NewDataFile]:
    """Write `df` (already conformed to the table) as Parquet files in the table's directory; nothing committed."""
    options = options or WriteOptions()
    staging = f"{table.path}_staging-{uuid.uuid4().hex}/"
    spec = table.partition if table.partition is not None and table.partition.keys else None
    frame = with_field_ids(df, table, row_ids=row_ids, snapshot_ids=snapshot_ids)
    if spec is not None:
        frame = with_partition_keys(frame, table, spec)
    if table.sort_keys and options.sort_on_insert:  # partition keys first: Spark's writer needs them grouped
        from pyspark.sql import functions as F

        order = [F.col(f"{KEY_PREFIX}{i}") for i in range(len(spec.keys))] if spec is not None else []
        frame = frame.sortWithinPartitions(*order, *[sort_column(k) for k in table.sort_keys])
    # Object stores, encrypted files: final names at once; list/map columns: element ids only pyarrow writes.
    if uses_pyarrow_writer(table.path, table.columns, encrypted=options.encrypted):
        return _write_in_place(frame, table, spec, options)
    writer = frame.write.mode("error")
    if spec is not None:  # one file per partition per task; the key columns stay out of the files
        writer = writer.partitionBy(*[f"{KEY_PREFIX}{i}" for i in range(len(spec.keys))])
    writer = configure_writer(writer, table, options).option("maxRecordsPerFile", rows_per_file(table, options))
    fs, staging_path = filesystem(staging)
    moved: list[str] = []
    try:
        writer.parquet(spark_path(staging))
        # In task order (part-00000, part-00001, ...): file ids, and so DuckDB's insertion order, follow the rows'.
        parts = sorted((info.path for info in fs.get_file_info(pafs.FileSelector(staging_path, recursive=True))
                        if info.type == pafs.FileType.File and info.base_name.endswith(".parquet")),
                       key=lambda path: path.rsplit("/", 1)[-1])
        partition_values = {}
        for src in parts:
            directory, values = ("", {}) if spec is None else placement(
                src[len(staging_path):].lstrip("/"), table, spec, options.hive_file_pattern)
            dst = f"{table.path}{directory}ducklake-{new_uuid()}.parquet"
            fs.create_dir(filesystem(dst)[1].rsplit("/", 1)[0], recursive=True)
            fs.move(src, filesystem(dst)[1])
            moved.append(dst)
            partition_values[dst] = values
        with ThreadPoolExecutor(max_workers=8) as pool:
            files = list(pool.map(lambda p: describe_file(p, table.columns), moved))
        for f in files:
            f.partition_values = partition_values[f.path]
    except BaseException:
        delete_paths(moved)
        raise
    finally:
        delete_paths([staging], directories=True)
    delete_paths([f.path for f in files if f.record_count == 0])
    return [f for f in files if f.record_count > 0]


def _write_in_place(frame, table: TableInfo, spec, options: WriteOptions) -> list[NewDataFile]:
    keys = [f"{KEY_PREFIX}{i}" for i in range(len(spec.keys))] if spec is not None else []
    if keys and not (table.sort_keys and options.sort_on_insert):  # rows of one partition value adjacent
        frame = frame.sortWithinPartitions(*keys)
    return write_files_in_place(frame, table, spec, keys, options=options, rows_per_file=rows_per_file(table, options),
                                row_width=estimated_row_width(table.columns),
                                hive=options.hive_file_pattern)


def describe_file(path: str, columns: list[Column]) -> NewDataFile:
    """Record count, sizes and column stats of a written file, from its footer only."""
    fs, inner = filesystem(path)
    size = fs.get_file_info(inner).size
    with fs.open_input_file(inner) as fh:
        meta = pq.ParquetFile(fh).metadata
    return NewDataFile(path=path, record_count=meta.num_rows, file_size_bytes=size,
                       footer_size=meta.serialized_size,
                       # our Spark writes keep string statistics whole (`configure_writer`)
                       column_stats=stats.file_column_stats(meta, columns, whole_bounds=True),
                       needs_name_mapping=lacks_field_ids(meta.schema.to_arrow_schema(), columns),
                       row_group_count=meta.num_row_groups)
