"""Writing data files straight to their final names, for object stores (where a rename is a copy), and for
tables with list or map columns anywhere (Spark's writer cannot give their elements, keys and values the field ids
DuckDB matches files by: see `file_layout.uses_pyarrow_writer`).

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
from collections.abc import Sequence
from urllib.parse import quote

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from ..catalog import stats
from ..errors import SchemaMismatchError
from ..spec import types
from ..spec.model import Column, NewDataFile, PartitionSpec, TableInfo
from ..spec.uuid7 import new_uuid
from .encrypted.write import MODULES, KeptBuffer, encrypt_and_store, module_batch
from .file_layout import estimated_row_width
from .geometry_arrow import geometry_as_wkb, geometry_counts
from .partition import KEY_PREFIX, placement
from .paths import filesystem
from .variant_footer import AnnotatingSink, variant_ids
from .workers import require_python_workers

_RESULT = "path string, info binary"
_PA_CODECS = {"uncompressed": "none", "lz4_raw": "lz4"}
_FIELD_ID = b"PARQUET:field_id"


def arrow_schema(spark_schema, columns: Sequence[Column] = ()) -> pa.Schema:
    """The Arrow schema `mapInArrow` hands over for `spark_schema`, with the Parquet field ids its metadata
    carries (Spark's Arrow conversion drops field metadata) and, from the table's `columns`, those of list
    elements and map keys/values, which a Spark type cannot carry but DuckDB matches files by."""
    from pyspark.sql.pandas.types import to_arrow_schema

    plain = to_arrow_schema(spark_schema, timezone="UTC")
    by_id = {c.column_id: c for c in columns}
    return pa.schema([_field(plain.field(i), f, by_id.get(_spark_id(f)))  # type: ignore[arg-type]  # None: no column
                      for i, f in enumerate(spark_schema.fields)])


def _spark_id(spark_field) -> int | None:
    return (spark_field.metadata or {}).get(types.FIELD_ID_KEY)


def _field(arrow_field: pa.Field, spark_field, column: Column | None) -> pa.Field:
    field_id = _spark_id(spark_field)
    if field_id is None and column is not None:
        field_id = column.column_id
    return _with_id(pa.field(spark_field.name, _type(arrow_field.type, spark_field.dataType, column),
                             spark_field.nullable), field_id)


def _with_id(arrow_field: pa.Field, field_id: int | None) -> pa.Field:
    return arrow_field if field_id is None else arrow_field.with_metadata({_FIELD_ID: str(field_id)})


def _child(column: Column | None, index: int, name: str | None = None) -> Column | None:
    """The catalog's child column (by name for struct fields, else by position), None when unknown."""
    if column is None:
        return None
    if name is not None:
        return next((c for c in column.children if c.name == name), None)
    return column.children[index] if index < len(column.children) else None


def _inner(name: str, arrow_type: pa.DataType, spark_type, column: Column | None, nullable: bool) -> pa.Field:
    """A list element or map key/value field, with its catalog column's id when known."""
    field = pa.field(name, _type(arrow_type, spark_type, column), nullable)
    return _with_id(field, column.column_id if column is not None else None)


def _type(arrow_type: pa.DataType, spark_type, column: Column | None) -> pa.DataType:
    from pyspark.sql import types as T

    if isinstance(spark_type, T.StructType):
        return pa.struct([_field(arrow_type.field(i), f, _child(column, i, f.name))
                          for i, f in enumerate(spark_type.fields)])
    if type(spark_type).__name__ == "GeometryType" or getattr(column, "type", None) == "geometry":
        return types.GEOMETRY_WKB  # written as Parquet GEOMETRY, with its statistics (nested too, as DuckDB)
    if isinstance(spark_type, T.VariantType):  # struct<value, metadata>, unshredded: variant_footer.py annotates it
        return arrow_type
    if isinstance(spark_type, T.ArrayType):  # the element's id is the list's child column id, as DuckDB writes
        return pa.list_(_inner("element", arrow_type.value_type, spark_type.elementType, _child(column, 0), True))
    if isinstance(spark_type, T.MapType):  # keys and values: the map's two child column ids
        return pa.map_(_inner("key", arrow_type.key_type, spark_type.keyType, _child(column, 0), False),
                       _inner("value", arrow_type.item_type, spark_type.valueType, _child(column, 1),
                              arrow_type.item_field.nullable))
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
                         options, rows_per_file: int, row_width: int, hive: bool) -> list[NewDataFile]:
    """Write `frame` (the table's columns with field ids, then the partition `key_columns`, rows of one partition
    value adjacent within each Spark partition) as files under their final names; nothing committed. Returns
    the files written, described from the footers their writers produced."""
    place = partition_directories(table, spec, hive) if spec is not None else (lambda _values: ("", {}))
    return [f for _key, f in write_groups_in_place(frame, table, key_columns, place, options=options,
                                                   rows_per_file=rows_per_file, row_width=row_width)]


def write_groups_in_place(frame, table: TableInfo, key_columns: list[str], place, *, options, rows_per_file: int,
                          row_width: int) -> list[tuple[tuple, NewDataFile]]:
    """The engine of `write_files_in_place`: rows are grouped by `key_columns` (cast to strings, adjacent within
    each Spark partition); `place(key values)` gives a group's (directory under the table, partition values).
    Returns (key values, file) for every file written."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    require_python_workers(frame.sparkSession)

    for key in key_columns:  # the text Spark's partitionBy would have put in the path
        frame = frame.withColumn(key, F.col(key).cast("string"))
    target = arrow_schema(T.StructType([f for f in frame.schema.fields if f.name not in key_columns]),
                          table.columns)
    columns, table_path = table.columns, table.path
    kw = writer_options(options, row_width)
    group_rows = row_group_rows(options, row_width)

    encrypt = getattr(options, "encrypted", False)
    if encrypt:  # files are built in executor memory first: keep them moderate
        rows_per_file = min(rows_per_file, max(1000, ENCRYPTED_FILE_BYTES // max(1, row_width)))

    def task(batches):
        if encrypt:  # ENCRYPTED lakes: each file written to memory, then cut into modules for aes_encrypt
            yield from _encrypting_task(batches, table_path, target, kw, group_rows, rows_per_file, columns,
                                        key_columns, place)
            return
        out = TaskWriter(table_path, target, kw, group_rows, rows_per_file, columns)
        for batch in batches:
            for values, part in key_runs(batch, key_columns):
                out.write(place(values), values, part.select(target.names))
        out.close()
        if out.files:
            yield pa.record_batch({"path": [f.path for _k, f in out.files],
                                   "info": [pickle.dumps(item) for item in out.files]})

    if encrypt:
        return encrypt_and_store(frame.mapInArrow(task, MODULES))
    return [pickle.loads(row["info"]) for row in frame.mapInArrow(task, _RESULT).collect()]


ENCRYPTED_FILE_BYTES = 128 * 2**20  # an encrypted file is built in executor memory: at most about this size


def _encrypting_task(batches, table_path, target, kw, group_rows, rows_per_file, columns, key_columns, place):
    """A write task of an encrypted lake: `MODULES` rows (encrypted/write.py) of each file as soon as it is done."""
    buffers: dict[str, KeptBuffer] = {}
    out = TaskWriter(table_path, target, kw, group_rows, rows_per_file, columns,
                      open_stream=lambda path: buffers.setdefault(path, KeptBuffer()))

    def drain():
        while out.files:
            key, described = out.files.pop(0)
            yield module_batch(described.path, buffers.pop(described.path).kept, (key, described))

    for batch in batches:
        for values, part in key_runs(batch, key_columns):
            out.write(place(values), values, part.select(target.names))
            yield from drain()
    out.close()
    yield from drain()




def write_arrow_groups(groups, table: TableInfo, *, options, rows_per_file: int,
                       row_width: int) -> list[NewDataFile]:
    """Write conformed Arrow rows, given as ((directory, partition values), key, rows) groups, as files under
    their final names (the data source's tasks and planner); nothing committed."""
    if getattr(options, "encrypted", False):  # DuckLakeBatchSource.writer refuses first (catalog/encryption.py)
        raise SchemaMismatchError("format('ducklake') cannot write to an ENCRYPTED lake: use lake.write "
                                  "(docs/types.md, 'Encrypted lakes')")
    schema = types.to_parquet_schema(table.columns)  # geometry (at any depth) as Parquet GEOMETRY
    out = TaskWriter(table.path, schema, writer_options(options, row_width), row_group_rows(options, row_width),
                      rows_per_file, table.columns)
    for where, key, rows in groups:
        for batch in rows.cast(schema).to_batches():
            out.write(where, key, batch)
    out.close()
    return [f for _key, f in out.files]


def key_runs(batch: pa.RecordBatch, key_columns: list[str]):
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


def partition_directories(table: TableInfo, spec: PartitionSpec, hive: bool):
    """key values -> (directory under the table, partition values by key index), as `partition.placement`."""
    def directory(values: tuple) -> tuple[str, dict]:
        segments = "".join(f"{KEY_PREFIX}{i}={'__HIVE_DEFAULT_PARTITION__' if v is None else quote(v, safe='')}/"
                           for i, v in enumerate(values))
        return placement(segments + "f.parquet", table, spec, hive)

    return directory


class TaskWriter:
    """One open Parquet file at a time per task: rolls over at `rows_per_file` rows or a new partition value."""

    def __init__(self, table_path, schema, kw, group_rows, rows_per_file, columns, open_stream=None):
        self.open_stream = open_stream  # path -> a writable file (encrypted lakes: memory); default: the path
        self.table_path, self.schema, self.kw, self.group_rows = table_path, schema, kw, group_rows
        self.rows_per_file, self.columns = rows_per_file, columns
        self.variants = variant_ids(columns)  # their groups get Parquet's VARIANT type in the footer
        self.files: list[tuple[tuple, NewDataFile]] = []
        self._pending: list[pa.RecordBatch] = []
        self._pending_rows = 0
        self._key = None
        self._open = None  # (path, stream, writer, partition values, rows so far, non-NULL geometries by field id)

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
            geometry_counts(table, self._open[5])  # pyarrow writes no GEOMETRY statistics: counted here
            self._open[2].write_table(table, row_group_size=self.group_rows)
        self._pending, self._pending_rows = [], 0

    def _start(self, directory: str, values: dict) -> None:
        path = f"{self.table_path}{directory}ducklake-{new_uuid()}.parquet"
        fs, inner = filesystem(path)
        if isinstance(fs, pafs.LocalFileSystem):  # object stores have no directories to make
            fs.create_dir(inner.rsplit("/", 1)[0], recursive=True)
        stream = self.open_stream(path) if self.open_stream else fs.open_output_stream(inner)
        if self.variants:
            stream = AnnotatingSink(stream, self.variants)
        self._open = [path, stream, pq.ParquetWriter(stream, self.schema, **self.kw), dict(values), 0, {}]

    def _finish(self) -> None:
        self._flush()
        path, stream, writer, values, _rows, geometries = self._open
        self._open = None
        body = stream.tell()
        if isinstance(stream, AnnotatingSink):
            stream.hold()  # what the writer writes as it closes: the footer
        writer.close()
        if isinstance(stream, AnnotatingSink):
            stream.close()  # writes the annotated footer: the file's size is known after
        size = stream.tell()
        stream.close()
        footer = getattr(stream, "footer_size", None)  # AnnotatingSink: pyarrow buffered the last pages past `body`
        meta = writer.writer.metadata  # the writer's own: its serialized_size is not set, the stream tells
        # every field id written: no name mapping
        self.files.append((self._key, NewDataFile(path=path, record_count=meta.num_rows, file_size_bytes=size,
                                      footer_size=size - body - 8 if footer is None else footer,
                                      column_stats=stats.file_column_stats(meta, self.columns,
                                                                           non_null=geometries),
                                      partition_values=values, row_group_count=meta.num_row_groups)))

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
                                    row_width=estimated_row_width(table.columns))
    out: list[list[NewDataFile]] = [[] for _ in units]
    for key, f in written:
        out[int(key[0])].append(f)
    return out
