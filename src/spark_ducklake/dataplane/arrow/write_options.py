"""The lake's write options (target file size, codec, row groups, layout) and the sizes they give; no Spark."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...catalog.reads.options import parse_size
from ...spec.model import Column, TableInfo
from .file_layout import estimated_row_width


@dataclass
class WriteOptions:
    """The lake options a writer honours (defaults are the reference's)."""

    target_file_size: int = 512 * 10**6
    compression: str = "snappy"
    compression_level: int | None = None
    row_group_size_bytes: int | None = None
    row_group_size: int | None = None
    parquet_version: int | None = None
    hive_file_pattern: bool = True  # partitioned files under key=value/ directories, as the reference
    sort_on_insert: bool = True  # sort each task's rows by the table's SET SORTED BY keys
    encrypted: bool = False  # an ENCRYPTED lake: every file encrypted with a key of its own (spark/encrypted/)

    @classmethod
    def from_lake_options(cls, get: Callable[[str], str | None]) -> WriteOptions:
        """Options resolved through `get(key)` (table, schema, global scope)."""
        opts = cls()
        if (v := get("target_file_size")) is not None:
            opts.target_file_size = parse_size(v)
        if (v := get("parquet_compression")) is not None:
            opts.compression = v.lower()
        if (v := get("parquet_compression_level")) is not None:
            opts.compression_level = int(v)
        if (v := get("parquet_row_group_size_bytes")) is not None:
            opts.row_group_size_bytes = parse_size(v)
        if (v := get("parquet_row_group_size")) is not None:
            opts.row_group_size = int(v)
        if (v := get("parquet_version")) is not None:
            opts.parquet_version = int(v)
        if (v := get("hive_file_pattern")) is not None:
            opts.hive_file_pattern = str(v).lower() not in ("false", "0")
        if (v := get("sort_on_insert")) is not None:
            opts.sort_on_insert = str(v).lower() not in ("false", "0")
        if (v := get("encrypted")) is not None:
            opts.encrypted = str(v).strip().lower() in ("true", "1")
        if opts.encrypted and get("hive_file_pattern") is None:  # as the reference: key=value/ paths leak values
            opts.hive_file_pattern = False
        return opts


def rows_per_file(table: TableInfo, options: WriteOptions) -> int:
    """maxRecordsPerFile for the target file size (compression makes files smaller, never bigger)."""
    return max(1000, options.target_file_size // estimated_row_width(table.columns))


def row_group_bytes(columns: list[Column], options: WriteOptions) -> int | None:
    """Spark sizes row groups in bytes only: a row count is turned into bytes with the estimated row width."""
    if options.row_group_size_bytes:
        return options.row_group_size_bytes
    if options.row_group_size:
        return options.row_group_size * estimated_row_width(columns)
    return None
