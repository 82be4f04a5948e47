"""Every row version a data file holds, read in-process: what compaction and the change feed need without Spark.

Unlike a scan (scan.py), nothing is filtered: deleted rows and rows of partial files newer than some snapshot are
all returned, each with its row id (`_ducklake_internal_row_id`, else row_id_start + position) and the snapshot
that inserted it (`_ducklake_internal_snapshot_id`, else the file's begin snapshot), as `spark.scan.read_files`
gives them with `snapshots=True, lineage=True`. Columns are read by field id (or name mapping) in the types Spark
shows; a column a file predates reads its default. Imports no pyspark.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.compute as pc

from ...spark.arrow_files import _spark_value
from ...spark.scan import FILE, POS
from ...spec import types
from ...spec.internal_columns import ROW_ID_COLUMN, SNAPSHOT_ID_COLUMN
from ...spec.model import Column, DataFile
from ..streaming.arrow_rows import _default, _positions, conform
from .scan import ROWID, read_file_columns, visible_schema

INSERTED = "_dl_inserted"
_READERS = 8  # files read at once (pyarrow decodes without the GIL)


def versions_schema(columns: list[Column]) -> pa.Schema:
    """The schema `read_versions` returns for these columns."""
    return pa.schema(list(visible_schema(columns)) + [
        pa.field(ROWID, pa.int64()), pa.field(INSERTED, pa.int64()), pa.field(FILE, pa.int64()),
        pa.field(POS, pa.int64())])


def read_versions(files: list[DataFile], columns: list[Column]) -> pa.Table:
    """All rows of `files` (in file order, then position): `columns`, `rowid`, `_dl_inserted`, `_dl_file`,
    `_dl_pos`."""
    schema = versions_schema(columns)
    if len(files) > 1:
        with ThreadPoolExecutor(max_workers=min(_READERS, len(files))) as pool:
            parts = list(pool.map(lambda f: _read_one(f, columns, schema), files))
    else:
        parts = [_read_one(f, columns, schema) for f in files]
    return pa.concat_tables(parts) if parts else schema.empty_table()


def _read_one(f: DataFile, columns: list[Column], schema: pa.Schema) -> pa.Table:
    data, found, extras = read_file_columns(f, columns)
    n = data.num_rows
    pos = _positions(n)
    rowid = pc.add(pos, pa.scalar(f.row_id_start or 0, pa.int64()))
    if ROW_ID_COLUMN in extras:
        rowid = pc.coalesce(data.column(ROW_ID_COLUMN).combine_chunks().cast(pa.int64()), rowid)
    inserted = pa.repeat(pa.scalar(f.begin_snapshot, pa.int64()), n)
    if SNAPSHOT_ID_COLUMN in extras:
        inserted = pc.coalesce(data.column(SNAPSHOT_ID_COLUMN).combine_chunks().cast(pa.int64()), inserted)
    arrays = []
    for col, field in zip(columns, schema, strict=False):
        if f.hive_values and col.column_id in f.hive_values and col.column_id not in found:
            value = types.convert_nested(col, f.hive_values[col.column_id], _spark_value)
            arrays.append(pa.array([value] * n, field.type))
        elif col.column_id in found:
            raw = data.column(found[col.column_id]).combine_chunks()
            arrays.append(conform(raw, col, field.type))
        else:
            arrays.append(_default(col, field.type, n))
    arrays += [rowid, inserted, pa.repeat(pa.scalar(f.data_file_id, pa.int64()), n), pos]
    return pa.Table.from_arrays(arrays, schema=schema)
