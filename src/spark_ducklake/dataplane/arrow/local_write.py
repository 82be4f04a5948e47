"""Data files written in-process with pyarrow: the layout Spark's writer gives them, without a JVM.

Rows are written under the table's Parquet field ids (plus `_ducklake_internal_row_id` when an update keeps row
ids), partitioned into the same hive-style folders with the same partition values (identity keys on integer,
string, date and boolean columns; year/month/day/hour; bucket(N) with the spec's hash), sorted by the table's
plain-column sort keys, cut at the target file size, row groups and codec from the lake options, and described
from their footers (`task_writer.TaskWriter`, the writer Spark tasks use on object stores). A layout this
module cannot reproduce exactly (identity keys on floats, timestamps or decimals, expression sort keys) raises
`NotLocal`, and the write goes to Spark.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import sqlglot
from sqlglot import exp

from ...spec import types
from ...spec.bucket_hash import bucket_int64, bucket_many
from ...spec.epoch import EPOCH_TRANSFORMS, epoch_ordinals
from ...spec.internal_columns import ROW_ID_COLUMN, ROW_ID_FIELD_ID
from ...spec.model import NewDataFile, PartitionKey, PartitionSpec, TableInfo
from .file_layout import estimated_row_width
from .local_expressions import NotLocal
from .storage import delete_paths
from .task_writer import TaskWriter, key_runs, partition_directories, row_group_rows, writer_options
from .write_options import WriteOptions, rows_per_file

KEY_PREFIX = "_dl_p"
SPARK_ONLY_TYPES = {"variant"}  # Parquet VARIANT type: Spark's writer sets it (geometry: types.to_parquet_schema)
_IDENTITY_TYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "varchar", "date", "boolean")


def check_layout(table: TableInfo, sort_on_insert: bool) -> None:
    """NotLocal unless this module writes the table's partitioning and sort order as Spark's writer does."""
    spark_only = [c.name for top in table.columns for c in top.walk() if c.type in SPARK_ONLY_TYPES]
    if spark_only:
        raise NotLocal(f"columns Spark writes with their own Parquet types: {', '.join(spark_only)}")
    by_id = {c.column_id: c for c in table.columns}
    for key in _keys(table):
        col = by_id[key.column_id]
        if key.transform == "identity" and col.type not in _IDENTITY_TYPES:
            raise NotLocal(f"identity partition key on a {col.type} column")
    if sort_on_insert and table.sort_keys:
        sort_order(table)


def write_table_files(data: pa.Table, table: TableInfo, options: WriteOptions, *, row_ids: pa.Array | None = None
                      ) -> list[NewDataFile]:
    """Write `data` (the table's columns in its Arrow types) as the table's data files; nothing committed. On
    failure no file is left behind."""
    check_layout(table, options.sort_on_insert)
    target = types.to_arrow_schema(table.columns)
    data = pa.Table.from_arrays([data.column(i) for i in range(len(table.columns))], schema=target)
    if row_ids is not None:
        field = pa.field(ROW_ID_COLUMN, pa.int64(), metadata={b"PARQUET:field_id": str(ROW_ID_FIELD_ID)})
        data = data.append_column(field, row_ids.cast(pa.int64()))
    # geometry (at any depth) written as Parquet GEOMETRY; the row id column after the table's
    schema = pa.schema([*types.to_parquet_schema(table.columns), *list(data.schema)[len(table.columns):]])
    keys = _keys(table)
    names = [f"{KEY_PREFIX}{i}" for i in range(len(keys))]
    for name, values in zip(names, _key_values(data, table, keys), strict=True):
        data = data.append_column(name, values)
    order = [(name, "ascending") for name in names]
    placement = "at_end"
    if options.sort_on_insert and table.sort_keys:
        sort_keys, placement = sort_order(table)
        order += sort_keys
    if order and data.num_rows:
        data = data.take(sort_indices(data, order, placement))
    width = estimated_row_width(table.columns)
    place = partition_directories(table, PartitionSpec(keys=keys), options.hive_file_pattern) if keys else (
        lambda _values: ("", {}))
    writer = TaskWriter(table.path, schema, writer_options(options, width), row_group_rows(options, width),
                         rows_per_file(table, options), table.columns)
    try:
        for batch in data.to_batches():
            for values, part in key_runs(batch, names):
                writer.write(place(values), values, part.select(schema.names))
        writer.close()
    except BaseException:
        opened = [writer.current.path] if writer.current is not None else []
        delete_paths([f.path for _k, f in writer.files] + opened)
        raise
    return [f for _k, f in writer.files if f.record_count > 0]


def sorted_rows(data: pa.Table, table: TableInfo) -> pa.Table:
    """`data` in the order of the table's sort keys; NotLocal when a key is not a plain column."""
    order, placement = sort_order(table)
    return data.take(sort_indices(data, order, placement)) if order and data.num_rows > 1 else data


def sort_indices(data: pa.Table, order: list[tuple[str, str]], placement: str) -> pa.Array:
    """Row order for `order`, NULLs at `placement` (per sort key from pyarrow 25, one option before)."""
    if int(pa.__version__.split(".")[0]) >= 25:
        return pc.sort_indices(data, sort_keys=[(name, how, placement) for name, how in order])
    return pc.sort_indices(data, sort_keys=order, null_placement=placement)


def _keys(table: TableInfo) -> list[PartitionKey]:
    return list(table.partition.keys) if table.partition is not None else []


def sort_order(table: TableInfo) -> tuple[list[tuple[str, str]], str]:
    """pyarrow sort keys and null placement for the table's sort keys (plain columns, one NULLS order)."""
    names = {c.name.lower(): c.name for c in table.columns if not c.is_nested}  # pyarrow sorts no nested values
    order, placements = [], set()
    for key in table.sort_keys:  # type: ignore[union-attr]  # loaded by writers (TableInfo.sort_keys)
        try:
            node = sqlglot.parse_one(key.expression, read="duckdb")
        except sqlglot.errors.SqlglotError as exc:
            raise NotLocal(f"sort key {key.expression!r}") from exc
        if not isinstance(node, exp.Column) or node.table or node.name.lower() not in names:
            raise NotLocal(f"sort key {key.expression!r} is not a plain column of a primitive type")
        order.append((names[node.name.lower()], "descending" if key.direction == "DESC" else "ascending"))
        placements.add("at_start" if key.null_order == "NULLS_FIRST" else "at_end")
    if len(placements) > 1:
        raise NotLocal("sort keys with different NULLS orders")
    return order, placements.pop() if placements else "at_end"


def _key_values(data: pa.Table, table: TableInfo, keys: list[PartitionKey]) -> list[pa.Array]:
    """Each partition key's value per row, as the text Spark's partitionBy writes into the staged path."""
    by_id = {c.column_id: c for c in table.columns}
    out = []
    for key in keys:
        col = by_id[key.column_id]
        values = data.column(col.name).combine_chunks()
        if key.transform == "identity":
            if pa.types.is_boolean(values.type):
                text = pc.if_else(values, "true", "false")
            else:
                text = pc.cast(values, pa.string())
        elif key.transform in ("year", "month", "day", "hour"):
            part = {"year": pc.year, "month": pc.month, "day": pc.day, "hour": pc.hour}[key.transform](values)
            text = pc.cast(part, pa.string())
        elif key.transform in EPOCH_TRANSFORMS:
            text = pc.cast(epoch_ordinals(values, key.transform), pa.string())
        elif (buckets := key.buckets) is not None:
            text = _bucket_text(values, col.type, buckets)
        else:  # no transform DuckLake has: Spark's path reports it
            raise NotLocal(f"partition transform {key.transform}")
        out.append(text)
    return out


def _bucket_text(values: pa.Array, type_str: str, buckets: int) -> pa.Array:
    """bucket(N) of each value (the spec's murmur3 hash, as the Spark path's UDF computes it) as text."""
    present = pc.is_valid(values).to_numpy(zero_copy_only=False)
    result = np.zeros(len(values), dtype=np.int64)
    if present.any():
        kept = values.filter(pa.array(present))
        if type_str.startswith(("int", "uint")) or type_str == "timestamptz":  # the latter as UTC micros
            raw = kept.cast(pa.timestamp("us", tz="UTC")).cast(pa.int64()) if type_str == "timestamptz" else kept
            hashed = bucket_int64(raw.cast(pa.int64()).to_numpy(zero_copy_only=False), buckets)
        else:
            hashed = bucket_many(kept.to_pylist(), type_str, buckets)
        result[present] = np.asarray(hashed, dtype=np.int64)
    return pc.cast(pa.array(result, mask=~present), pa.string())
