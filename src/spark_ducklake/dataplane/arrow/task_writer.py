"""The task writer: rows streamed into pyarrow Parquet writers that write `ducklake-<uuid>.parquet` files under the
table directory directly, rolling over at a row count or a new partition value, each file described from its footer.
Spark tasks run it (`spark/write_in_place.py`), and so does the in-process writer (`local_write.py`). Imports no
pyspark."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO
from urllib.parse import quote

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from ...catalog import stats
from ...spec.model import Column, NewDataFile, PartitionSpec, TableInfo
from ...spec.uuid7 import new_uuid
from .geometry_arrow import geometry_as_wkb, geometry_counts
from .placement import KEY_PREFIX, placement
from .storage import filesystem
from .variant_footer import AnnotatingSink, variant_ids

if TYPE_CHECKING:  # write_options needs the catalog layer, which executors lack (sqlalchemy)
    from .write_options import WriteOptions

_PA_CODECS = {"uncompressed": "none", "lz4_raw": "lz4"}

# A group's key: its partition key values as text (None: NULL), or what a caller groups by (compaction: the unit's
# index). Only compared and handed back with the files written.
Key = tuple[Any, ...]
Placement = tuple[str, dict[int, str | None]]  # (directory under the table, partition values by key index)


def writer_options(options: WriteOptions, row_width: int) -> dict[str, object]:
    """pyarrow ParquetWriter keywords for the lake's write options."""
    kw: dict[str, object] = {"compression": _PA_CODECS.get(options.compression, options.compression),
                "store_decimal_as_integer": True}  # as Spark and DuckDB store small decimals
    if options.compression == "zstd" and options.compression_level is not None:
        kw["compression_level"] = options.compression_level
    if options.parquet_version:
        kw["data_page_version"] = f"{options.parquet_version}.0"
    return kw


DEFAULT_ROW_GROUP_BYTES = 128 * 2**20  # Spark's parquet.block.size


DEFAULT_ROW_GROUP_ROWS = 2**20  # pyarrow's default


def row_group_rows(options: WriteOptions, row_width: int) -> int:
    """Rows per row group for the lake options (Spark sizes them in bytes; pyarrow counts rows)."""
    if options.row_group_size:
        return options.row_group_size
    size = options.row_group_size_bytes or DEFAULT_ROW_GROUP_BYTES
    return max(1, min(DEFAULT_ROW_GROUP_ROWS, size // max(1, row_width)))


def key_runs(batch: pa.RecordBatch, key_columns: list[str]) -> Iterator[tuple[Key, pa.RecordBatch]]:
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


def partition_directories(table: TableInfo, spec: PartitionSpec, hive: bool) -> Callable[[Key], Placement]:
    """key values -> (directory under the table, partition values by key index), as `partition.placement`."""
    def directory(values: Key) -> Placement:
        segments = "".join(f"{KEY_PREFIX}{i}={'__HIVE_DEFAULT_PARTITION__' if v is None else quote(v, safe='')}/"
                           for i, v in enumerate(values))
        return placement(segments + "f.parquet", table, spec, hive)

    return directory


@dataclass
class OpenFile:
    """The file a TaskWriter is writing."""

    path: str
    stream: BinaryIO | AnnotatingSink  # AnnotatingSink around the file's stream when the table has variants
    writer: pq.ParquetWriter
    key: Key  # of the rows it holds
    values: dict[int, str | None]  # partition values by key index
    rows: int = 0  # written so far
    geometries: dict[int, int] = field(default_factory=dict)  # non-NULL geometries by field id


class TaskWriter:
    """One open Parquet file at a time per task: rolls over at `rows_per_file` rows or a new partition value."""

    def __init__(self, table_path: str, schema: pa.Schema, kw: dict[str, object], group_rows: int,
                 rows_per_file: int, columns: list[Column],
                 open_stream: Callable[[str], BinaryIO] | None = None) -> None:
        self.open_stream = open_stream  # path -> a writable file (encrypted lakes: memory); default: the path
        self.table_path, self.schema, self.kw, self.group_rows = table_path, schema, kw, group_rows
        self.rows_per_file, self.columns = rows_per_file, columns
        self.variants = variant_ids(columns)  # their groups get Parquet's VARIANT type in the footer
        self.files: list[tuple[Key, NewDataFile]] = []
        self._pending: list[pa.RecordBatch] = []
        self._pending_rows = 0
        self.current: OpenFile | None = None  # callers delete its file when a write fails

    def write(self, where: Placement, key: Key, rows: pa.RecordBatch) -> None:
        """Append rows of partition `key` (placed at `where`: directory, partition values)."""
        directory, values = where
        if self.current is not None and key != self.current.key:
            self._finish(self.current)
        offset = 0
        while offset < rows.num_rows:
            current = self.current if self.current is not None else self._start(directory, key, values)
            chunk = rows.slice(offset, self.rows_per_file - current.rows)
            self._pending.append(chunk)  # row groups of group_rows, not one per Arrow batch
            self._pending_rows += chunk.num_rows
            current.rows += chunk.num_rows
            offset += chunk.num_rows
            if self._pending_rows >= self.group_rows:
                self._flush(current)
            if current.rows >= self.rows_per_file:
                self._finish(current)

    def _flush(self, current: OpenFile) -> None:
        if self._pending:
            table = geometry_as_wkb(pa.Table.from_batches(self._pending), self.schema).cast(self.schema)
            geometry_counts(table, current.geometries)  # pyarrow writes no GEOMETRY statistics: counted here
            current.writer.write_table(table, row_group_size=self.group_rows)
        self._pending, self._pending_rows = [], 0

    def _start(self, directory: str, key: Key, values: dict[int, str | None]) -> OpenFile:
        path = f"{self.table_path}{directory}ducklake-{new_uuid()}.parquet"
        fs, inner = filesystem(path)
        if isinstance(fs, pafs.LocalFileSystem):  # object stores have no directories to make
            fs.create_dir(inner.rsplit("/", 1)[0], recursive=True)
        raw = self.open_stream(path) if self.open_stream else fs.open_output_stream(inner)
        stream = AnnotatingSink(raw, self.variants) if self.variants else raw
        self.current = OpenFile(path, stream, pq.ParquetWriter(stream, self.schema, **self.kw), key, dict(values))
        return self.current

    def _finish(self, current: OpenFile) -> None:
        self._flush(current)
        self.current = None
        stream, writer = current.stream, current.writer
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
        self.files.append((current.key, NewDataFile(path=current.path, record_count=meta.num_rows,
                                                    file_size_bytes=size,
                                                    footer_size=size - body - 8 if footer is None else footer,
                                                    column_stats=stats.file_column_stats(
                                                        meta, self.columns, non_null=current.geometries),
                                                    partition_values=current.values,
                                                    row_group_count=meta.num_row_groups)))

    def close(self) -> None:
        """Finish the open file, if any."""
        if self.current is not None:
            self._finish(self.current)
