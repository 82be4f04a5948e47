"""Rewriting groups of data files into one file each, in one Spark job for all groups of a column layout.

Every source file of every unit is read by one native Parquet scan (field ids, `_metadata.row_index`); each row
carries its row id (the file's `_ducklake_internal_row_id`, else row_id_start + position) and, for merges, the
snapshot that inserted it. A shuffle by unit puts each unit's rows in one task, sorted by the table's sort keys
(else in their old order), and Spark's writer partitions by unit: one file per unit, moved to its final name in
the unit's partition folder and described from its footer.
"""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pyarrow as pa
import pyarrow.fs as pafs

from ...catalog.planners.compaction import TablePlan
from ...spec import types
from ...spec.internal_columns import ROW_ID_COLUMN, ROW_ID_FIELD_ID, SNAPSHOT_ID_COLUMN, SNAPSHOT_ID_FIELD_ID
from ...spec.model import NewDataFile
from ...spec.names import spark_name
from ...spec.uuid7 import new_uuid
from ..arrow.file_layout import uses_pyarrow_writer
from ..arrow.scan_columns import BEGIN, FILE, POS, ROW_START, ScanColumns
from ..arrow.storage import filesystem, spark_path
from ..arrow.write_options import WriteOptions
from . import types as spark_types
from .scan import broadcast_if_small, deleted_positions, read_files
from .sorting import sort_column
from .write import configure_writer, delete_paths, describe_file
from .write_in_place import write_units_in_place

UNIT, SEQ = "dl_unit", "_dl_seq"
# Many tiny files: list them in a few tasks (Spark's default is one task per path) and put more of them in
# each read task (Spark's default open cost of 4 MB per file spreads tiny files thinly).
MANY_FILES_CONF = {"spark.sql.sources.parallelPartitionDiscovery.parallelism": "16",
                   "spark.sql.files.openCostInBytes": str(1 << 20)}


@contextmanager
def session_conf(spark, conf: dict[str, str]):
    """Runtime SQL confs set for the duration of a block, then restored."""
    saved = {key: spark.conf.get(key, None) for key in conf}
    for key, value in conf.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in saved.items():
            spark.conf.unset(key) if value is None else spark.conf.set(key, value)


def _write_units(spark, plan: TablePlan, options: WriteOptions, *, sort_keys: list, snapshot_ids: bool,
                 live_at: int | None = None, inlined_deletes: dict[int, list[int]] | None = None):
    from pyspark.sql import functions as F

    table, units = plan.table, plan.units
    files = [f for unit in units for f in unit.files]
    internal = {c.column_id: c.name for c in table.columns}  # nothing is filtered: names cannot mislead
    data = read_files(spark, table, files, internal,
                      ScanColumns(positions=True, snapshots=snapshot_ids, lineage=True))
    if live_at is not None:
        inlined_deletes = {fid: pos for fid, pos in (inlined_deletes or {}).items() if pos}
        known = sum(f.delete_file.delete_count or 0 for f in files if f.delete_file) + sum(
            len(inlined_deletes.get(f.data_file_id, ())) for f in files)
        if known:
            deleted = deleted_positions(spark, files, inlined_deletes, live_at)
            data = data.join(broadcast_if_small(deleted, known), [FILE, POS], "left_anti")
    ids, unit_of, offsets = [], [], []  # offset: rows of earlier files of the unit (keeps their old order)
    for index, unit in enumerate(units):
        seen = 0
        for f in unit.files:
            ids.append(f.data_file_id)
            unit_of.append(index)
            offsets.append(seen)
            seen += f.record_count
    lookup = spark.createDataFrame(pa.table({FILE: pa.array(ids, pa.int64()), UNIT: pa.array(unit_of, pa.int32()),
                                             "_dl_offset": pa.array(offsets, pa.int64())}))
    data = data.join(F.broadcast(lookup), FILE)
    cols = [spark_types.write_column(c, F.col(spark_name(internal[c.column_id]))).alias(  # geometry: as GEOMETRY
        c.name, metadata={types.FIELD_ID_KEY: c.column_id}) for c in table.columns]
    cols.append(F.coalesce(F.col(ROW_ID_COLUMN), F.col(ROW_START) + F.col(POS)).alias(
        ROW_ID_COLUMN, metadata={types.FIELD_ID_KEY: ROW_ID_FIELD_ID}))
    if snapshot_ids:
        cols.append(F.coalesce(F.col(SNAPSHOT_ID_COLUMN), F.col(BEGIN)).alias(
            SNAPSHOT_ID_COLUMN, metadata={types.FIELD_ID_KEY: SNAPSHOT_ID_FIELD_ID}))
    cols += [F.col(UNIT), (F.col("_dl_offset") + F.col(POS)).alias(SEQ)]
    order = [sort_column(k) for k in sort_keys] + [F.col(ROW_ID_COLUMN)] if sort_keys else [F.col(SEQ)]
    partitions = max(1, min(len(units), int(spark.conf.get("spark.sql.shuffle.partitions") or 200)))
    # Sorting by the unit first satisfies the writer's required order, so dropping SEQ afterwards keeps it.
    frame = data.select(*cols).repartition(partitions, UNIT).sortWithinPartitions(F.col(UNIT), *order).drop(SEQ)
    # Object stores: no staging rename (a copy there); encrypted files are stored by their tasks too.
    if uses_pyarrow_writer(table.path, table.columns, encrypted=options.encrypted):  # write_in_place.py
        return write_units_in_place(frame, plan, options, UNIT)
    writer = configure_writer(frame.write.mode("error").partitionBy(UNIT), table, options)
    return _write(writer.option("maxRecordsPerFile", 0), plan)


def write_units(spark, plan: TablePlan, options: WriteOptions, **kwargs) -> list[list[NewDataFile]]:
    """The written files of each unit of `plan` (usually one; none when no row is left), nothing committed.

    `snapshot_ids` keeps each row's inserting snapshot (merges); `live_at` drops the rows deleted as of that
    snapshot, by delete files and `inlined_deletes` (rewrites); `sort_keys` orders each output.
    """
    with session_conf(spark, MANY_FILES_CONF):
        return _write_units(spark, plan, options, **kwargs)


def _write(writer, plan: TablePlan) -> list[list[NewDataFile]]:
    table, units = plan.table, plan.units
    staging = f"{table.path}_staging-{uuid.uuid4().hex}/"
    fs, staging_path = filesystem(staging)
    moved: list[tuple[int, str]] = []
    try:
        writer.parquet(spark_path(staging))
        for info in fs.get_file_info(pafs.FileSelector(staging_path, recursive=True)):
            if info.type != pafs.FileType.File or not info.base_name.endswith(".parquet"):
                continue
            segment = info.path[len(staging_path):].lstrip("/").split("/")[0]
            index = int(segment.partition("=")[2])
            dst = f"{table.path}{units[index].directory}ducklake-{new_uuid()}.parquet"
            fs.create_dir(filesystem(dst)[1].rsplit("/", 1)[0], recursive=True)
            fs.move(info.path, filesystem(dst)[1])
            moved.append((index, dst))
        with ThreadPoolExecutor(max_workers=8) as pool:
            described = list(pool.map(lambda item: describe_file(item[1], table.columns), moved))
    except BaseException:
        delete_paths([dst for _, dst in moved])
        raise
    finally:
        delete_paths([staging], directories=True)
    out: list[list[NewDataFile]] = [[] for _ in units]
    for (index, _), written in zip(moved, described, strict=True):
        written.partition_values = dict(units[index].partition_values)
        out[index].append(written)
    return out
