"""Writing data files straight to their final names, for object stores (where a rename is a copy).

Spark's own Parquet writer always commits through a rename (task attempt dir -> job dir -> our staging move): on
S3 that is two or three copies of every byte. Here each Spark task streams its rows (Arrow batches, via
`mapInArrow`) into pyarrow Parquet writers that write `ducklake-<uuid>.parquet` under the table directory
directly, and returns the file's description (path, sizes, footer stats). The commit records exactly the files
the tasks returned: a failed or duplicate (speculative) task attempt leaves at most unreferenced files, which
`delete_orphaned_files` removes. Field ids, codec, row groups and file size follow the lake options as for
Spark's writer. Runs on executors: imports nothing beyond pyarrow and the catalog's pure modules.
"""

from __future__ import annotations

import pickle
from urllib.parse import quote

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from ..catalog import stats
from ..errors import SchemaMismatchError
from ..spec import types
from ..spec.model import NewDataFile, PartitionSpec, TableInfo
from ..spec.uuid7 import new_uuid
from .file_layout import estimated_row_width, needs_name_mapping
from .paths import filesystem
from .types import geometry_as_wkb

_RESULT = "path string, info binary"
_PA_CODECS = {"uncompressed": "none", "lz4_raw": "lz4"}
_FIELD_ID = b"PARQUET:field_id"


def arrow_schema(spark_schema) -> pa.Schema:
    """The Arrow schema `mapInArrow` hands over for `spark_schema`, with the Parquet field ids its metadata
    carries (Spark's Arrow conversion drops field metadata)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    plain = to_arrow_schema(spark_schema, timezone="UTC")
    return pa.schema([_field(plain.field(i), f) for i, f in enumerate(spark_schema.fields)])


def _field(arrow_field: pa.Field, spark_field) -> pa.Field:
    field_id = (spark_field.metadata or {}).get(types.FIELD_ID_KEY)
    metadata = {_FIELD_ID: str(field_id)} if field_id is not None else None
    return pa.field(spark_field.name, _type(arrow_field.type, spark_field.dataType), spark_field.nullable, metadata)


def _type(arrow_type: pa.DataType, spark_type) -> pa.DataType:
    from pyspark.sql import types as T

    if isinstance(spark_type, T.StructType):
        return pa.struct([_field(arrow_type.field(i), f) for i, f in enumerate(spark_type.fields)])
    if type(spark_type).__name__ == "GeometryType":  # written as Parquet GEOMETRY, with its statistics
        return types.GEOMETRY_WKB
    if isinstance(spark_type, T.VariantType):
        raise SchemaMismatchError("variant columns cannot be written to object storage yet: its Parquet writer "
                                  "(pyarrow) has no VARIANT type (docs/types.md)")
    if isinstance(spark_type, T.ArrayType):  # Spark writes no ids for elements: neither do we
        return pa.list_(pa.field("element", _type(arrow_type.value_type, spark_type.elementType)))
    return arrow_type


def writer_options(options, row_width: int) -> dict:
    """pyarrow ParquetWriter keywords for the lake's write options."""
    kw: dict = {"compression": _PA_CODECS.get(options.compression, options.compression),
                "store_decimal_as_integer": True}  # as Spark and DuckDB store small decimals
    if options.compression == "zstd" and options.compression_level is not None:
        kw["compression_level"] = options.compression_level
    if options.parquet_version:
        kw["data_page_version"] = f"{options.parquet_version}.0"
    return kw


DEFAULT_ROW_GROUP_BYTES = 128 * 2**20  # Spark's parquet.block.size
DEFAULT_ROW_GROUP_ROWS = 2**20  # pyarrow's default


def row_group_rows(options, row_width: int) -> int:
    """Rows per row group for the lake options (Spark sizes them in bytes; pyarrow counts rows)."""
    if options.row_group_size:
        return options.row_group_size
    size = options.row_group_size_bytes or DEFAULT_ROW_GROUP_BYTES
    return max(1, min(DEFAULT_ROW_GROUP_ROWS, size // max(1, row_width)))


def write_files_in_place(frame, table: TableInfo, spec: PartitionSpec | None, key_columns: list[str], *,
                         options, rows_per_file: int, row_width: int, hive: bool,
                         needs_name_mapping: bool) -> list[NewDataFile]:
    """Write `frame` (the table's columns with field ids, then the partition `key_columns`, rows of one partition
    value adjacent within each Spark partition) as files under their final names; nothing committed. Returns
    the files written, described from the footers their writers produced."""
    place = _directories(table, spec, hive) if spec is not None else (lambda _values: ("", {}))
    return [f for _key, f in write_groups_in_place(frame, table, key_columns, place, options=options,
                                                   rows_per_file=rows_per_file, row_width=row_width,
                                                   needs_name_mapping=needs_name_mapping)]


def write_groups_in_place(frame, table: TableInfo, key_columns: list[str], place, *, options, rows_per_file: int,
                          row_width: int, needs_name_mapping: bool) -> list[tuple[tuple, NewDataFile]]:
    """The engine of `write_files_in_place`: rows are grouped by `key_columns` (cast to strings, adjacent within
    each Spark partition); `place(key values)` gives a group's (directory under the table, partition values).
    Returns (key values, file) for every file written."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    for key in key_columns:  # the text Spark's partitionBy would have put in the path
        frame = frame.withColumn(key, F.col(key).cast("string"))
    target = arrow_schema(T.StructType([f for f in frame.schema.fields if f.name not in key_columns]))
    columns, table_path = table.columns, table.path
    kw = writer_options(options, row_width)
    group_rows = row_group_rows(options, row_width)

    encrypt = getattr(options, "encrypted", False)
    if encrypt:  # files are built in executor memory first: keep them moderate
        rows_per_file = min(rows_per_file, max(1000, ENCRYPTED_FILE_BYTES // max(1, row_width)))

    def task(batches):
        if encrypt:  # ENCRYPTED lakes: each file written to memory, then cut into modules for aes_encrypt
            yield from _encrypting_task(batches, table_path, target, kw, group_rows, rows_per_file, columns,
                                        needs_name_mapping, key_columns, place)
            return
        out = _TaskWriter(table_path, target, kw, group_rows, rows_per_file, columns, needs_name_mapping)
        for batch in batches:
            for values, part in _runs(batch, key_columns):
                out.write(place(values), values, part.select(target.names))
        out.close()
        if out.files:
            yield pa.record_batch({"path": [f.path for _k, f in out.files],
                                   "info": [pickle.dumps(item) for item in out.files]})

    if encrypt:
        from .encrypted.write import MODULES, encrypt_and_store

        return encrypt_and_store(frame.mapInArrow(task, MODULES))
    return [pickle.loads(row["info"]) for row in frame.mapInArrow(task, _RESULT).collect()]


ENCRYPTED_FILE_BYTES = 128 * 2**20  # an encrypted file is built in executor memory: at most about this size


def _encrypting_task(batches, table_path, target, kw, group_rows, rows_per_file, columns, needs_name_mapping,
                     key_columns, place):
    """A write task of an encrypted lake: `MODULES` rows (encrypted/write.py) of each file as soon as it is done."""
    from .encrypted.write import KeptBuffer, module_batch

    buffers: dict[str, KeptBuffer] = {}
    out = _TaskWriter(table_path, target, kw, group_rows, rows_per_file, columns, needs_name_mapping,
                      open_stream=lambda path: buffers.setdefault(path, KeptBuffer()))

    def drain():
        while out.files:
            key, described = out.files.pop(0)
            yield module_batch(described.path, buffers.pop(described.path).kept, (key, described))

    for batch in batches:
        for values, part in _runs(batch, key_columns):
            out.write(place(values), values, part.select(target.names))
            yield from drain()
    out.close()
    yield from drain()




def write_arrow_groups(groups, table: TableInfo, *, options, rows_per_file: int, row_width: int,
                       needs_name_mapping: bool) -> list[NewDataFile]:
    """Write conformed Arrow rows, given as ((directory, partition values), key, rows) groups, as files under
    their final names (the data source's tasks and planner); nothing committed."""
    if getattr(options, "encrypted", False):
        raise SchemaMismatchError("format('ducklake') cannot write to an ENCRYPTED lake yet: use lake.write "
                                  "(docs/types.md, 'Encrypted lakes')")
    schema = types.to_arrow_schema(table.columns)
    out = _TaskWriter(table.path, schema, writer_options(options, row_width), row_group_rows(options, row_width),
                      rows_per_file, table.columns, needs_name_mapping)
    for where, key, rows in groups:
        for batch in rows.cast(schema).to_batches():
            out.write(where, key, batch)
    out.close()
    return [f for _key, f in out.files]


def _runs(batch: pa.RecordBatch, key_columns: list[str]):
    """(partition key values, rows) for each run of equal keys in the batch (the whole batch when unpartitioned)."""
    if not key_columns:
        yield (), batch
        return
    keys = [batch.column(k).to_pylist() for k in key_columns]
    start = 0
    for i in range(1, batch.num_rows + 1):
        if i == batch.num_rows or any(k[i] != k[start] for k in keys):
            yield tuple(k[start] for k in keys), batch.slice(start, i - start)
            start = i


def _directories(table: TableInfo, spec: PartitionSpec, hive: bool):
    """key values -> (directory under the table, partition values by key index), as `partition.placement`."""
    from .partition import KEY_PREFIX, placement

    def directory(values: tuple) -> tuple[str, dict]:
        segments = "".join(f"{KEY_PREFIX}{i}={'__HIVE_DEFAULT_PARTITION__' if v is None else quote(v, safe='')}/"
                           for i, v in enumerate(values))
        return placement(segments + "f.parquet", table, spec, hive)

    return directory


class _TaskWriter:
    """One open Parquet file at a time per task: rolls over at `rows_per_file` rows or a new partition value."""

    def __init__(self, table_path, schema, kw, group_rows, rows_per_file, columns, needs_name_mapping,
                 open_stream=None):
        self.open_stream = open_stream  # path -> a writable file (encrypted lakes: memory); default: the path
        self.table_path, self.schema, self.kw, self.group_rows = table_path, schema, kw, group_rows
        self.rows_per_file, self.columns, self.needs_name_mapping = rows_per_file, columns, needs_name_mapping
        self.files: list[tuple[tuple, NewDataFile]] = []
        self._pending: list[pa.RecordBatch] = []
        self._pending_rows = 0
        self._key = None
        self._open = None  # (path, stream, writer, partition values, rows so far)

    def write(self, where: tuple[str, dict], key: tuple, rows: pa.RecordBatch) -> None:
        """Append rows of partition `key` (placed at `where`: directory, partition values)."""
        directory, values = where
        if self._open is not None and key != self._key:
            self._finish()
        self._key = key
        offset = 0
        while offset < rows.num_rows:
            if self._open is None:
                self._start(directory, values)
            chunk = rows.slice(offset, self.rows_per_file - self._open[4])
            self._pending.append(chunk)  # row groups of group_rows, not one per Arrow batch
            self._pending_rows += chunk.num_rows
            self._open[4] += chunk.num_rows
            offset += chunk.num_rows
            if self._pending_rows >= self.group_rows:
                self._flush()
            if self._open[4] >= self.rows_per_file:
                self._finish()

    def _flush(self) -> None:
        if self._pending:
            table = geometry_as_wkb(pa.Table.from_batches(self._pending), self.schema).cast(self.schema)
            self._open[2].write_table(table, row_group_size=self.group_rows)
        self._pending, self._pending_rows = [], 0

    def _start(self, directory: str, values: dict) -> None:
        path = f"{self.table_path}{directory}ducklake-{new_uuid()}.parquet"
        fs, inner = filesystem(path)
        if isinstance(fs, pafs.LocalFileSystem):  # object stores have no directories to make
            fs.create_dir(inner.rsplit("/", 1)[0], recursive=True)
        stream = self.open_stream(path) if self.open_stream else fs.open_output_stream(inner)
        self._open = [path, stream, pq.ParquetWriter(stream, self.schema, **self.kw), dict(values), 0]

    def _finish(self) -> None:
        self._flush()
        path, stream, writer, values, _rows = self._open
        self._open = None
        body = stream.tell()
        writer.close()
        size = stream.tell()
        stream.close()
        meta = writer.writer.metadata  # the writer's own: its serialized_size is not set, the stream tells
        self.files.append((self._key, NewDataFile(path=path, record_count=meta.num_rows, file_size_bytes=size,
                                      footer_size=size - body - 8,  # footer, then its length and "PAR1"
                                      column_stats=stats.file_column_stats(meta, self.columns),
                                      partition_values=values, needs_name_mapping=self.needs_name_mapping)))

    def close(self) -> None:
        if self._open is not None:
            self._finish()


def write_units_in_place(frame, plan, options, unit_column: str) -> list[list[NewDataFile]]:
    """Compaction's writer (maintenance/units.py) on object stores: one file per unit of `plan` (rows of a unit
    adjacent, `unit_column` its index), in the unit's folder with its partition values; files by unit."""
    units, table = plan.units, plan.table

    def place(values: tuple) -> tuple[str, dict]:
        unit = units[int(values[0])]
        return unit.directory, dict(unit.partition_values)

    written = write_groups_in_place(frame, table, [unit_column], place, options=options, rows_per_file=2**62,
                                    row_width=estimated_row_width(table.columns),
                                    needs_name_mapping=needs_name_mapping(table.columns))
    out: list[list[NewDataFile]] = [[] for _ in units]
    for key, f in written:
        out[int(key[0])].append(f)
    return out
