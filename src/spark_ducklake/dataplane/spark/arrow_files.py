"""Reading data files with pyarrow on the executors, for column types Spark's Parquet reader cannot decode.

Used only when a table has uuid, time, timetz, timestamp_ns or interval columns: each task opens its files with
pyarrow, maps columns by field id and converts values to the Spark types users see (the README's type table). Rows never
pass through the driver.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from ...spec import types, variant_unshred
from ...spec.internal_columns import ROW_ID_COLUMN, SNAPSHOT_ID_COLUMN
from ...spec.model import Column, DataFile
from ..arrow.arrow_values import PER_VALUE, spark_value
from ..arrow.native_types import is_native
from ..arrow.scan_columns import ScanColumns
from ..arrow.storage import filesystem, spark_file_uri
from . import types as spark_types
from .workers import require_python_workers


def read_with_arrow(spark, files: Sequence[DataFile], present: list[Column], internal: dict[int, str],
                    extra: ScanColumns, *, name_map=None):
    """DataFrame of the files' rows (internal column names, the snapshot and row id columns, and the position
    columns when `extra` asks); files with a `name_map` (catalog.name_maps) are matched by top-level name, their
    hive-path columns from `hive_values`."""
    from pyspark.sql import types as T

    out_fields = [T.StructField(internal[c.column_id], spark_types.to_spark_type(c), True) for c in present]
    out_fields += [T.StructField(SNAPSHOT_ID_COLUMN, T.LongType(), True),
                   T.StructField(ROW_ID_COLUMN, T.LongType(), True),
                   T.StructField("_dl_path", T.StringType(), True), T.StructField("_dl_pos", T.LongType(), True)]
    schema = T.StructType(out_fields)
    jobs = spark.createDataFrame([(f.path,) for f in files], "path string").repartition(
        max(1, min(len(files), 64)))
    wanted = [(c, internal[c.column_id]) for c in present]
    arrow_schema = pa.schema([pa.field(f.name, _arrow_of(f.dataType)) for f in schema.fields])
    names = {m.column_id: m.source for m in name_map} if name_map is not None else None
    hive = {f.path: f.hive_values for f in files if f.hive_values} if name_map is not None else {}

    def run(batches):
        for batch in batches:
            for path in batch.column(0).to_pylist():
                yield from _read_file(path, wanted, arrow_schema, names, hive.get(path))

    if files:
        require_python_workers(spark)
    frame = spark.createDataFrame([], schema) if not files else jobs.mapInArrow(run, schema)
    if not extra.positions:
        frame = frame.drop("_dl_path", "_dl_pos")
    return frame


def _arrow_of(spark_type) -> pa.DataType:
    from pyspark.sql.pandas.types import to_arrow_type

    return to_arrow_type(spark_type, timezone="UTC")


def _read_file(path: str, wanted, arrow_schema: pa.Schema, names: dict[int, str] | None = None,
               hive: dict[int, object] | None = None):
    fs, inner = filesystem(path)
    with fs.open_input_file(inner) as fh:
        table = pq.read_table(fh)
    yield from arrow_rows(table, path, wanted, arrow_schema, names, hive)


def arrow_rows(table: pa.Table, path: str, wanted, arrow_schema: pa.Schema, names: dict[int, str] | None = None,
               hive: dict[int, object] | None = None, *, vectorized: bool = False):
    """Batches of one file's rows (read as `table`) in `arrow_schema`: columns by field id (or `names`), values
    converted for Spark; `vectorized` casts plain columns in Arrow instead of value by value."""
    by_id = {}
    if names is not None:  # name mapping: match top-level columns by name, case-insensitively
        position = {field.name.lower(): i for i, field in enumerate(table.schema)}
        by_id = {cid: position[src.lower()] for cid, src in names.items() if src.lower() in position}
    for i, field in enumerate(table.schema if names is None else ()):
        raw = (field.metadata or {}).get(b"PARQUET:field_id")
        if raw is not None:
            by_id[int(raw)] = i
    arrays = []
    n = table.num_rows
    for col, name in wanted:
        target = arrow_schema.field(name).type
        if hive and col.column_id in hive:
            value = hive[col.column_id]
            arrays.append(pa.array([types.convert_nested(col, value, spark_value)] * n, type=target))
            continue
        if col.column_id not in by_id:
            default = None if col.is_nested else types.parse_literal(col.type, col.initial_default)
            arrays.append(pa.array([types.convert_nested(col, default, spark_value)] * n, type=target))
            continue
        if vectorized and not col.is_nested and is_native(col) and col.type not in PER_VALUE:
            try:  # Arrow's cast is exact for plain types Spark reads natively; anything else converts per value
                arrays.append(table.column(by_id[col.column_id]).cast(target))
                continue
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass
        column = table.column(by_id[col.column_id])
        values = column.to_pylist()
        if any(c.type == "variant" for c in col.walk()):  # DuckDB shreds them: rebuilt as Spark's reader would
            values = [variant_unshred.unshred_values(col, column.type, v) for v in values]
        arrays.append(pa.array([types.convert_nested(col, v, spark_value) for v in values], type=target))
    for extra in (SNAPSHOT_ID_COLUMN, ROW_ID_COLUMN):
        arrays.append(table.column(extra).cast(pa.int64()) if extra in table.column_names
                      else pa.nulls(n, pa.int64()))
    arrays.append(pa.array([spark_file_uri(path)] * n, pa.string()))
    arrays.append(pa.array(range(n), pa.int64()))
    result = pa.Table.from_arrays(arrays, schema=arrow_schema)
    yield from result.to_batches(max_chunksize=65536)




