"""Reading data files with pyarrow on the executors, for column types Spark's Parquet reader cannot decode.

Used only when a table has uuid, time, timetz, timestamp_ns or interval columns: each task opens its files with
pyarrow, maps columns by field id and converts values to the Spark types users see (the README's type table). Rows never
pass through the driver.
"""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq

from ..spec import types, variant_unshred
from ..spec.internal_columns import ROW_ID_COLUMN, SNAPSHOT_ID_COLUMN
from ..spec.model import Column, DataFile
from . import types as spark_types
from .paths import filesystem, spark_file_uri
from .workers import require_python_workers

_PER_VALUE = {"uint64", "int128", "uint128", "variant"}  # stored as another Parquet type, or shredded


def read_with_arrow(spark, files: list[DataFile], present: list[Column], internal: dict[int, str], need_pos: bool,
                    *, name_map=None):
    """DataFrame of the files' rows (internal column names, plus position columns when asked); files with a
    `name_map` (catalog.name_maps) are matched by top-level name, their hive-path columns from `hive_values`."""
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
    if not need_pos:
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
        if vectorized and not col.is_nested and spark_types.is_native(col) and col.type not in _PER_VALUE:
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


def spark_value(col: Column, value):
    """A scalar as pyarrow read it, converted to what the column's Spark type expects."""
    if col.type == "uuid":
        return str(uuid.UUID(bytes=value)) if isinstance(value, bytes) else str(value)
    if col.type in ("time", "timetz"):
        text = value.isoformat() if isinstance(value, dt.time) else str(value)
        if "." in text:  # DuckDB's rendering: fractional seconds without trailing zeros
            text = text.rstrip("0").rstrip(".")
        return text + "+00" if col.type == "timetz" and isinstance(value, dt.time) else text  # stored in UTC
    if col.type == "interval":
        return _interval_text(value)
    if col.type in ("int128", "uint128", "uint64"):
        return Decimal(int(value))  # DuckDB stores int128 as DOUBLE in Parquet
    if col.type == "timestamp_ns" and hasattr(value, "to_pydatetime"):
        return value.to_pydatetime(warn=False)
    if col.type == "json" and isinstance(value, bytes):
        return value.decode("utf-8")
    return value


def _interval_text(value) -> str:
    """A Parquet INTERVAL (months, days, millis little endian) in DuckDB's rendering."""
    if isinstance(value, bytes) and len(value) == 12:
        months, days, millis = (int.from_bytes(value[i:i + 4], "little", signed=True) for i in (0, 4, 8))
        return types.render_interval(months, days, millis * 1000)
    if hasattr(value, "months"):  # pyarrow MonthDayNano
        return types.render_interval(value.months, value.days, value.nanoseconds // 1000)
    return str(value)
