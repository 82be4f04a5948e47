"""`df.write.format("ducklake")`: what the tasks write and what the planner commits, as `lake.write` would.

Each task conforms its rows to the table's columns. A task with more rows than the table's inlining limit writes
them with pyarrow as Parquet files (field ids, catalog stats), split by the table's partition keys into hive
directories with the partition values `lake.write` records (the same text Spark's partitionBy gives a key); a task
with at most that many rows hands them back as Arrow IPC bytes in its commit message. The planner then inlines
those rows into the catalog when the whole write is that small (and the catalog can hold the values), else writes
them as files itself; one snapshot either way. Executor side: pyarrow and the pure spec modules only.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any
from urllib.parse import quote

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

from ..dataplane.arrow.conform import match_fields
from ..dataplane.arrow.file_layout import estimated_row_width
from ..dataplane.arrow.placement import placement
from ..dataplane.arrow.storage import delete_paths
from ..dataplane.spark.write_in_place import write_arrow_groups
from ..spec import types
from ..spec.bucket_hash import bucket_int64, bucket_many
from ..spec.epoch import EPOCH_TRANSFORMS, epoch_ordinals
from ..spec.model import Column, NewDataFile, PartitionSpec, TableInfo


class FilesWritten(WriterCommitMessage):
    """The data files one write task left (not yet part of the lake), or its few rows as Arrow IPC bytes."""

    def __init__(self, files: list, rows: bytes | None = None):
        self.files, self.rows = files, rows


class DuckLakeWriter(DataSourceArrowWriter):
    """Tasks write Parquet files (partitioned as the table is) or return small row batches; `commit` adds them
    in one snapshot (after ending every row first when overwriting); `abort` deletes the files."""

    def __init__(self, settings, table: TableInfo, read_snapshot: int, overwrite: bool, *, limit: int,
                 options, rows_per_file: int):
        self.settings, self.table, self.read_snapshot, self.overwrite = settings, table, read_snapshot, overwrite
        self.limit, self.options, self.rows_per_file = limit, options, rows_per_file

    def write(self, iterator) -> FilesWritten:
        """The task's rows as files, or as IPC bytes when there are at most `limit` of them."""
        data = conform(list(iterator), self.table)
        if not data.num_rows:
            return FilesWritten([])
        if data.num_rows <= self.limit:
            return FilesWritten([], to_ipc(data))
        return FilesWritten(write_files(data, self.table, self.options, self.rows_per_file))

    def commit(self, messages) -> None:
        """One snapshot: the tasks' files, and their small batches inlined (or written here as files)."""
        # lazy: the driver commits; executors import this module for the writer and lack sqlalchemy
        from ..catalog.changes.data import AppendFiles, InlineInsert, ReplaceAll
        from ..catalog.inlined.codec import inlinable

        messages = [m for m in messages if m is not None]
        files = [f for m in messages for f in m.files]
        batches = [from_ipc(m.rows) for m in messages if m.rows is not None]
        small = pa.concat_tables(batches) if batches else None
        lake = attach_writable(self.settings)
        written: list[NewDataFile] = []
        try:
            ops: list = [ReplaceAll(self.table)] if self.overwrite else []
            if small is not None:
                if not files and small.num_rows <= self.limit and inlinable(self.table.columns, lake.engine, small):
                    ops.append(InlineInsert(self.table, small, None))
                else:
                    written = write_files(small, self.table, self.options, self.rows_per_file)
            if files or written:
                ops.append(AppendFiles(self.table, files + written))
            if ops:
                lake.commit(ops, read_snapshot=self.read_snapshot)
        except BaseException:
            delete_paths([f.path for f in written])
            raise
        finally:
            lake.close()

    def abort(self, messages) -> None:
        """Remove the files the tasks wrote."""
        delete_paths([f.path for m in messages if m is not None for f in m.files])


def attach_writable(settings):
    """The lake to commit to, catalog only."""
    # lazy: executors import this module and lack sqlalchemy and sqlglot
    from ..catalog.attach import AttachOptions
    from .context import LakeContext

    return LakeContext.attach(settings.attach_string(), AttachOptions(
        data_path=settings.data_path, create_if_missing=False, override_data_path=True,
        metadata_schema=settings.metadata_schema))


# ------------------------------------------------------------------------------------------------ rows
def conform(batches: list, table: TableInfo) -> pa.Table:
    """The batches' columns (matched by name, any case) cast to the table's Arrow types, in table order."""
    target = types.to_arrow_schema(table.columns)
    if not batches:
        return target.empty_table()
    data = pa.Table.from_batches(batches)
    by_name = {name.lower(): name for name in data.column_names}
    arrays = []
    for col, field in zip(table.columns, target, strict=True):
        values = match_fields(data.column(by_name[col.name.lower()]), col)  # struct fields by name, as lake.write
        if not col.nullable and values.null_count:
            raise ValueError(f"NOT NULL column {col.name!r} of {table.schema_name}.{table.name} got "
                             f"{values.null_count} nulls")
        arrays.append(values.cast(field.type))
    return pa.Table.from_arrays(arrays, schema=target)


def to_ipc(data: pa.Table) -> bytes:
    """Arrow IPC stream bytes of a table."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, data.schema) as out:
        out.write_table(data)
    return sink.getvalue().to_pybytes()


def from_ipc(blob: bytes) -> pa.Table:
    """Inverse of to_ipc."""
    return pa.ipc.open_stream(blob).read_all()


def write_files(data: pa.Table, table: TableInfo, options, rows_per_file: int) -> list[NewDataFile]:
    """Parquet files of conformed rows in the table's directory (one group per partition value); nothing
    committed."""
    spec = table.partition if table.partition is not None and table.partition.keys else None
    if spec is None:
        groups: list[tuple[Any, Any, Any]] = [(("", {}), (), data)]
    else:
        keys = partition_keys(data, table, spec)
        rows: dict[tuple, list[int]] = {}
        for index, key in enumerate(zip(*keys, strict=True)):
            rows.setdefault(key, []).append(index)
        groups = []
        for key, indices in rows.items():
            segments = "".join(f"_dl_p{i}={'__HIVE_DEFAULT_PARTITION__' if v is None else quote(v, safe='')}/"
                               for i, v in enumerate(key))
            where = placement(segments + "f.parquet", table, spec, options.hive_file_pattern)
            groups.append((where, key, data.take(pa.array(indices, pa.int64()))))
    return write_arrow_groups(groups, table, options=options, rows_per_file=rows_per_file,
                              row_width=estimated_row_width(table.columns))


# ------------------------------------------------------------------------------------------------ partition keys
def partition_keys(data: pa.Table, table: TableInfo, spec: PartitionSpec) -> list[list[str | None]]:
    """Per key, every row's partition value as the text Spark's partitionBy gives it in `lake.write` (calendar
    parts of timestamps in UTC, as a session in UTC computes them)."""
    import pyarrow.compute as pc

    by_id = {c.column_id: c for c in table.columns}
    out = []
    for key in spec.keys:
        col = by_id[key.column_id]
        values = data.column(col.name)
        if key.transform in ("year", "month", "day", "hour"):
            if pa.types.is_timestamp(values.type) and values.type.tz is not None:
                values = values.cast(pa.timestamp(values.type.unit, "UTC"))
            part = getattr(pc, key.transform)(values)
            out.append([None if v is None else str(v) for v in part.to_pylist()])
        elif key.transform in EPOCH_TRANSFORMS:
            out.append([None if v is None else str(v) for v in epoch_ordinals(values, key.transform).to_pylist()])
        elif key.buckets:
            present = [v for v in values.to_pylist() if v is not None]
            if col.type.startswith(("int", "uint")) or col.type == "timestamptz":
                ints = values.cast(pa.timestamp("us", "UTC")).cast(pa.int64()) if col.type == "timestamptz" \
                    else values.cast(pa.int64())
                hashed = iter(bucket_int64(ints.drop_null().to_numpy(), key.buckets).tolist())
            else:
                hashed = iter(bucket_many(present, col.type, key.buckets).tolist())
            out.append([None if v is None else str(next(hashed)) for v in values.to_pylist()])
        else:
            out.append([identity_text(col, v) for v in values.to_pylist()])
    return out


def identity_text(col: Column, value) -> str | None:
    """A value as Spark casts it to a string (what its partitionBy writes in the path)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_float_text(value, single=col.type == "float32")
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        text = value.strftime("%Y-%m-%d %H:%M:%S")
        return text + (f".{value.microsecond:06d}".rstrip("0") if value.microsecond else "")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def java_float_text(value: float, *, single: bool = False) -> str:
    """Java's Float/Double.toString (what Spark's cast to string gives): shortest digits, `1.0E10` outside
    [1e-3, 1e7)."""
    import math

    import numpy as np

    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    shortest = str(np.float32(value)) if single else repr(value)  # the shortest digits that read back the same
    sign, digits, exponent = Decimal(shortest).normalize().as_tuple()
    text = "".join(map(str, digits))
    power = exponent + len(digits) - 1  # type: ignore[operator]  # a finite value: an int exponent
    if -3 <= power < 7:
        if power >= 0:
            whole, frac = text[:power + 1].ljust(power + 1, "0"), text[power + 1:]
        else:
            whole, frac = "0", "0" * (-power - 1) + text
        body = f"{whole}.{frac or '0'}"
    else:
        body = f"{text[0]}.{text[1:] or '0'}E{power}"
    return ("-" if sign else "") + body
