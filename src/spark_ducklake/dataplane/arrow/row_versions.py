"""Every row version a data file holds, read in-process: what compaction and the change feed need without Spark.

Unlike a scan (scan.py), nothing is filtered: deleted rows and rows of partial files newer than some snapshot are
all returned, each with its row id (`_ducklake_internal_row_id`, else row_id_start + position) and the snapshot
that inserted it (`_ducklake_internal_snapshot_id`, else the file's begin snapshot), as `spark.scan.read_files`
gives them when its `ScanColumns` asks for snapshots and lineage. Columns are read by field id (or name mapping)
in the types Spark shows; a column a file predates reads its default. Imports no pyspark.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...spec import types
from ...spec.internal_columns import ROW_ID_COLUMN, SNAPSHOT_ID_COLUMN
from ...spec.model import Column, DataFile
from .arrow_rows import conform, default_array
from .arrow_values import spark_value
from .local_scan import ROWID, read_file_columns, visible_schema
from .scan_columns import FILE, POS

INSERTED = "_dl_inserted"
_READERS = 8  # files read at once (pyarrow decodes without the GIL)
_THREADED_BYTES = 8 * 2**20  # sources read one at a time below this total size


def versions_schema(columns: list[Column]) -> pa.Schema:
    """The schema `read_versions` returns for these columns."""
    return pa.schema(list(visible_schema(columns)) + [
        pa.field(ROWID, pa.int64()), pa.field(INSERTED, pa.int64()), pa.field(FILE, pa.int64()),
        pa.field(POS, pa.int64())])


def read_versions(files: list[DataFile], columns: list[Column]) -> pa.Table:
    """All rows of `files` (in file order, then position): `columns`, `rowid`, `_dl_inserted`, `_dl_file`,
    `_dl_pos`."""
    schema = versions_schema(columns)
    if not files:
        return schema.empty_table()
    # threads pay off for big files only: on hundreds of tiny ones their hand-offs cost more than the reads
    if len(files) > 1 and sum(f.file_size_bytes for f in files) > _THREADED_BYTES:
        with ThreadPoolExecutor(max_workers=min(_READERS, len(files))) as pool:
            raw = list(pool.map(lambda f: read_file_columns(f, columns), files))
    else:
        raw = [read_file_columns(f, columns) for f in files]
    first = raw[0]
    if len(files) > 1 and all(not f.hive_values for f in files) and all(
            r[1] == first[1] and r[2] == first[2] and r[0].schema == first[0].schema for r in raw):
        # one layout: the version columns are built once over all files (per-file compute calls dominate
        # merging many small files)
        return _build(files, columns, schema, [r[0] for r in raw], first[1], first[2])
    return pa.concat_tables([_build([f], columns, schema, [r[0]], r[1], r[2]) for f, r in zip(files, raw, strict=True)])


def _build(files: list[DataFile], columns: list[Column], schema: pa.Schema, parts: list[pa.Table],
           found: dict[int, str], extras: list[str]) -> pa.Table:
    """The version rows of `files` whose raw columns (`parts`, one per file) share one layout."""
    counts = np.array([t.num_rows for t in parts], dtype=np.int64)
    data = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    n = data.num_rows
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    pos = pa.array(np.arange(n, dtype=np.int64) - starts)

    def per_file(values: list[int]) -> pa.Array:
        return pa.array(np.repeat(np.array(values, dtype=np.int64), counts))

    rowid = pc.add(pos, per_file([f.row_id_start or 0 for f in files]))
    if ROW_ID_COLUMN in extras:
        rowid = pc.coalesce(data.column(ROW_ID_COLUMN).combine_chunks().cast(pa.int64()), rowid)
    inserted = per_file([f.begin_snapshot for f in files])
    if SNAPSHOT_ID_COLUMN in extras:
        inserted = pc.coalesce(data.column(SNAPSHOT_ID_COLUMN).combine_chunks().cast(pa.int64()), inserted)
    arrays = []
    for col, field in zip(columns, schema, strict=False):
        f = files[0]  # hive values only on single-file calls (read_versions groups no files that have them)
        if f.hive_values and col.column_id in f.hive_values and col.column_id not in found:
            value = types.convert_nested(col, f.hive_values[col.column_id], spark_value)
            arrays.append(pa.array([value] * n, field.type))
        elif col.column_id in found:
            raw = data.column(found[col.column_id]).combine_chunks()
            arrays.append(conform(raw, col, field.type))
        else:
            arrays.append(default_array(col, field.type, n))
    arrays += [rowid, inserted, per_file([f.data_file_id for f in files]), pos]
    return pa.Table.from_arrays(arrays, schema=schema)
