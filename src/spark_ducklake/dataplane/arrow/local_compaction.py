"""`merge_adjacent_files` of small files in-process: each unit's source files read and written as one file with
pyarrow, as `dataplane/spark/compaction_units.py` writes it on Spark.

Every row keeps its row id and the snapshot that inserted it (`_ducklake_internal_row_id`,
`_ducklake_internal_snapshot_id` with their field ids), rows stay in their old order (files in the unit's order,
then position) unless the table has sort keys (then by those, ties by row id), and the file goes to the unit's
partition folder with its partition values, described from its footer. Sort keys that are expressions and
columns Spark writes with its own Parquet types raise `NotLocal`: the merge then runs on Spark.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import pyarrow as pa

from ...catalog.planners.compaction import TablePlan
from ...spec import types
from ...spec.internal_columns import ROW_ID_COLUMN, ROW_ID_FIELD_ID, SNAPSHOT_ID_COLUMN, SNAPSHOT_ID_FIELD_ID
from ...spec.model import NewDataFile
from .file_layout import estimated_row_width
from .local_expressions import NotLocal
from .local_scan import ROWID
from .local_write import SPARK_ONLY_TYPES, sort_indices, sort_order
from .row_versions import INSERTED, read_versions
from .storage import delete_paths
from .task_writer import TaskWriter, row_group_rows, writer_options
from .write_options import WriteOptions

if TYPE_CHECKING:  # a type only: the catalog's sorting module is its commit side (sqlalchemy)
    from ...catalog.changes.sorting import SortKey


def check_units(plan: TablePlan, sort_keys: list[SortKey]) -> None:
    """NotLocal unless this module writes the plan's units as the Spark path does."""
    spark_only = [c.name for top in plan.table.columns for c in top.walk() if c.type in SPARK_ONLY_TYPES]
    if spark_only:
        raise NotLocal(f"columns Spark writes with their own Parquet types: {', '.join(spark_only)}")
    if any(f.encryption_key for unit in plan.units for f in unit.files):
        raise NotLocal("encrypted files are decrypted by Spark only")
    if sort_keys:
        sort_order(dataclasses.replace(plan.table, sort_keys=sort_keys))


def merge_units(plan: TablePlan, options: WriteOptions, sort_keys: list[SortKey]) -> list[list[NewDataFile]]:
    """The file written for each unit of `plan` (its rows with row ids and inserting snapshots), nothing
    committed; on failure no file is left behind."""
    check_units(plan, sort_keys)
    table = plan.table
    order: list[tuple[str, str]]
    order, placement = [], "at_end"
    if sort_keys:
        order, placement = sort_order(dataclasses.replace(table, sort_keys=sort_keys))
        order = [*order, (ROWID, "ascending")]
    schema = pa.schema(list(types.to_parquet_schema(table.columns)) + [  # geometry as Parquet GEOMETRY
        pa.field(ROW_ID_COLUMN, pa.int64(), metadata={b"PARQUET:field_id": str(ROW_ID_FIELD_ID)}),
        pa.field(SNAPSHOT_ID_COLUMN, pa.int64(), metadata={b"PARQUET:field_id": str(SNAPSHOT_ID_FIELD_ID)})])
    width = estimated_row_width(table.columns)
    writer = TaskWriter(table.path, schema, writer_options(options, width), row_group_rows(options, width), 2**62,
                         table.columns)
    try:
        for index, unit in enumerate(plan.units):
            rows = read_versions(unit.files, table.columns)
            if order and rows.num_rows:
                rows = rows.take(sort_indices(rows, order, placement))
            arrays = [rows.column(i).cast(field.type) for i, field in enumerate(schema) if i < len(table.columns)]
            out = pa.Table.from_arrays(arrays + [rows.column(ROWID), rows.column(INSERTED)], schema=schema)
            for batch in out.to_batches():
                writer.write((unit.directory, dict(unit.partition_values)), (index,), batch)
        writer.close()
    except BaseException:
        opened = [writer.current.path] if writer.current is not None else []
        delete_paths([f.path for _k, f in writer.files] + opened)
        raise
    written: list[list[NewDataFile]] = [[] for _ in plan.units]
    for key, f in writer.files:
        written[key[0]].append(f)
    return written
