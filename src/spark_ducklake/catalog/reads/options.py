"""DuckLake options (ducklake_metadata rows) with global, schema and table scopes, as `set_option` stores them."""

from __future__ import annotations

import re
from typing import NamedTuple

import sqlalchemy as sa

from ...errors import DuckLakeError
from ...spec.intervals import parse_interval
from ..database.spec_tables import T

DESCRIPTIONS = {
    "auto_compact": "Whether compaction functions run on a table",
    "created_by": "Tool used to write the DuckLake",
    "data_inlining_row_limit": "Maximum amount of rows to inline in a single insert",
    "data_path": "Path to data files",
    "delete_older_than": "How old unused files must be to be removed by cleanup functions",
    "encrypted": "Whether or not to encrypt Parquet files written to the data path",
    "expire_older_than": "How old snapshots must be to be expired by default",
    "hive_file_pattern": "If partitioned data should be written in a Hive-style folder structure",
    "parquet_compression": "Compression algorithm for Parquet files (uncompressed, snappy, gzip, zstd, brotli, lz4, "
                           "lz4_raw)",
    "parquet_compression_level": "Compression level for Parquet files",
    "parquet_row_group_size": "Number of rows per row group in Parquet files",
    "parquet_row_group_size_bytes": "Number of bytes per row group in Parquet files",
    "parquet_version": "Parquet format version (1 or 2)",
    "per_thread_output": "Whether to create separate output files per thread during parallel insertion",
    "require_commit_message": "If an explicit commit message is required for a snapshot commit",
    "rewrite_delete_threshold": "Minimum fraction of data removed from a file before a rewrite is warranted (0...1)",
    "sort_on_insert": "Whether to sort data on INSERT according to SET SORTED BY",
    "target_file_size": "The target data file size for insertion and compaction operations",
    "version": "DuckLake format version",
    "write_deletion_vectors": "Write Iceberg V3 deletion vectors (puffin) instead of positional delete files "
                              "(parquet)",
}
READ_ONLY = {"version", "created_by", "data_path", "encrypted"}
SIZE_OPTIONS = {"target_file_size", "parquet_row_group_size_bytes"}
GLOBAL_ONLY = {"require_commit_message", "delete_older_than", "expire_older_than", "per_thread_output"}
BOOLEAN_OPTIONS = {"auto_compact", "hive_file_pattern", "per_thread_output", "require_commit_message",
                   "sort_on_insert", "write_deletion_vectors"}
INTERVAL_OPTIONS = {"delete_older_than", "expire_older_than"}
CODECS = ("uncompressed", "snappy", "gzip", "zstd", "brotli", "lz4", "lz4_raw")
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


class OptionRow(NamedTuple):
    """A row of `options()`, with the reference's columns."""

    option_name: str
    description: str
    value: str
    scope: str
    scope_entry: str | None


def parse_size(text: str) -> int:
    """'10MB' -> 10000000, '1GiB' -> 1073741824, '42' -> 42."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(text))
    if not match or match.group(2).lower() not in _UNITS:
        raise DuckLakeError(f"not a size: {text!r} (use e.g. 512MB, 1GiB or a number of bytes)")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def normalize(name: str, value) -> str:
    """Validate an option and render its value as stored."""
    if name not in DESCRIPTIONS:
        raise DuckLakeError(f"unknown DuckLake option {name!r}; known: {', '.join(sorted(DESCRIPTIONS))}")
    if name in READ_ONLY:
        raise DuckLakeError(f"option {name!r} is fixed when the lake is created")
    if name in SIZE_OPTIONS:
        return str(parse_size(value))
    if name in BOOLEAN_OPTIONS:
        return _boolean(name, value)
    if name in INTERVAL_OPTIONS:
        parse_interval(str(value))  # stored as written, like the reference; must parse when used
        return str(value)
    if name == "parquet_version" and str(value) not in ("1", "2"):
        raise DuckLakeError(f"parquet_version must be 1 or 2, got {value!r}")
    if name == "parquet_compression" and str(value).lower() not in CODECS:
        raise DuckLakeError(f"unsupported parquet_compression {value!r}; use one of {', '.join(CODECS)}")
    if isinstance(value, bool):
        return "true" if value else "false"
    if name == "rewrite_delete_threshold" and not 0 <= float(value) <= 1:
        raise DuckLakeError("rewrite_delete_threshold must be between 0 and 1")
    if name in ("data_inlining_row_limit", "parquet_row_group_size", "parquet_compression_level"):
        if int(value) < 0:
            raise DuckLakeError(f"{name} must not be negative")
        return str(int(value))
    return str(value)


def _boolean(name: str, value) -> str:
    text = str(value).strip().lower()
    if isinstance(value, bool) or text in ("true", "false", "t", "f", "1", "0", "yes", "no", "y", "n"):
        return "true" if value is True or text in ("true", "t", "1", "yes", "y") else "false"
    raise DuckLakeError(f"option {name!r} takes true or false: Could not convert string '{value}' to BOOL")


def set_option(conn: sa.Connection, name: str, value, *, scope: str | None, scope_id: int | None) -> None:
    """Upsert one option row (no snapshot, as the reference does)."""
    if scope is not None and name in GLOBAL_ONLY:
        raise DuckLakeError(f"option {name!r} can only be set globally")
    text = normalize(name, value)
    md = T["ducklake_metadata"]
    match = [md.c.key == name,
             md.c.scope.is_(None) if scope is None else md.c.scope == scope,
             md.c.scope_id.is_(None) if scope_id is None else md.c.scope_id == scope_id]
    conn.execute(md.delete().where(*match))
    conn.execute(md.insert().values(key=name, value=text, scope=scope, scope_id=scope_id))
