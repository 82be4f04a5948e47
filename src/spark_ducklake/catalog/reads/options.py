"""DuckLake options (ducklake_metadata rows) with global, schema and table scopes, as `set_option` stores them."""

from __future__ import annotations

import math
import re
from typing import Any, NamedTuple

import sqlalchemy as sa

from ...errors import DuckLakeError, InvalidArgumentError
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
DEFAULT_INLINING_ROW_LIMIT = 10  # data_inlining_row_limit when no option and no attach value sets it
SIZE_OPTIONS = {"target_file_size", "parquet_row_group_size_bytes"}
GLOBAL_ONLY = {"require_commit_message", "delete_older_than", "expire_older_than", "per_thread_output"}
BOOLEAN_OPTIONS = {"auto_compact", "hive_file_pattern", "per_thread_output", "require_commit_message",
                   "sort_on_insert", "write_deletion_vectors"}
INTERVAL_OPTIONS = {"delete_older_than", "expire_older_than"}
UINT64_MAX = 2**64 - 1
# whole-number options: (lowest, highest) value. The reference's type is UINT64; its Parquet writer refuses a row
# group of 0 rows, and zstd (the one codec taking a level) levels above 22.
UNSIGNED_OPTIONS = {"data_inlining_row_limit": (0, UINT64_MAX), "parquet_row_group_size": (1, UINT64_MAX),
                    "parquet_compression_level": (0, 22)}
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


def parse_size(text: str | int) -> int:
    """'10MB' -> 10000000, '1GiB' -> 1073741824, '42' -> 42."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(text))
    if not match or match.group(2).lower() not in _UNITS:
        raise InvalidArgumentError(f"not a size: {text!r} (use e.g. 512MB, 1GiB or a number of bytes)")
    number, unit = match.group(1), _UNITS[match.group(2).lower()]
    return int(number) * unit if "." not in number else int(float(number) * unit)  # big whole sizes stay exact


def normalize(name: str, value: Any) -> str:
    """Validate an option and render its value as stored; InvalidArgumentError naming the option and what it takes.

    The reference casts the value to the option's type when it is set (UINT64, BOOL, DOUBLE, a size, a codec, an
    interval): a value it cannot cast is refused then, and one it stores must be one every DuckDB writer reads, so
    a range the writers refuse later (a zstd level above 22, a row group of 0 rows) is refused here too."""
    if name not in DESCRIPTIONS:
        raise InvalidArgumentError(f"unknown DuckLake option {name!r}; known: {', '.join(sorted(DESCRIPTIONS))}")
    if name in READ_ONLY:
        raise InvalidArgumentError(f"option {name!r} is fixed when the lake is created")
    if name in SIZE_OPTIONS:
        return str(_size(name, value))
    if name in BOOLEAN_OPTIONS:
        return _boolean(name, value)
    if name in INTERVAL_OPTIONS:
        if not isinstance(value, str):
            raise InvalidArgumentError(f"option {name!r} takes an interval such as '7 days', got {value!r}")
        try:
            parse_interval(value)  # stored as written, like the reference; must parse when used
        except DuckLakeError as exc:
            raise InvalidArgumentError(f"option {name!r}: {exc}") from None
        return value
    if name == "parquet_version":
        if isinstance(value, bool) or str(value).strip() not in ("1", "2"):
            raise InvalidArgumentError(f"option 'parquet_version' must be 1 or 2, got {value!r}")
        return str(value).strip()
    if name == "parquet_compression":
        if not isinstance(value, str) or value.strip().lower() not in CODECS:
            raise InvalidArgumentError(f"unsupported parquet_compression {value!r}; use one of {', '.join(CODECS)}")
        return value.strip().lower()
    if name == "rewrite_delete_threshold":
        return str(_fraction(name, value))
    low, high = UNSIGNED_OPTIONS[name]
    return str(_whole(name, value, low, high))


def _whole(name: str, value: Any, low: int, high: int) -> int:
    """A whole number from `low` to `high` (the reference's UINT64, narrowed where its writers need it)."""
    number = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and re.fullmatch(r"\s*[-+]?\d+\s*", value):
        number = int(value)
    if number is None:
        raise InvalidArgumentError(f"option {name!r} takes a whole number from {low} to {high}, got {value!r}")
    if not low <= number <= high:
        raise InvalidArgumentError(f"option {name!r} must be from {low} to {high}, got {value!r}")
    return number


def _size(name: str, value: Any) -> int:
    """Bytes, from a number or a size like '512MB', at most the reference's UINT64."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise InvalidArgumentError(f"option {name!r} takes a size such as '512MB' or a number of bytes, got {value!r}")
    try:
        size = parse_size(value)
    except InvalidArgumentError as exc:
        raise InvalidArgumentError(f"option {name!r}: {exc}") from None
    if size > UINT64_MAX:
        raise InvalidArgumentError(f"option {name!r} must be from 0 to {UINT64_MAX} bytes, got {value!r}")
    return size


def _fraction(name: str, value: Any) -> float:
    number = None
    if isinstance(value, int | float | str) and not isinstance(value, bool):
        try:
            number = float(value)
        except ValueError:
            number = None
    if number is None or not 0 <= number <= 1:  # NaN fails the comparison too
        raise InvalidArgumentError(f"{name} must be between 0 and 1, got {value!r}")
    return number


def checked_option(name: str, value: Any) -> Any:
    """An attach-time value checked as `set_option` checks the option's (data_inlining_row_limit: an int;
    encrypted, write_deletion_vectors: a bool), for options a handle holds without storing them."""
    if name in ("encrypted", "write_deletion_vectors"):
        return parse_boolean(f"option {name!r}", value)
    return int(normalize(name, value))


def _boolean(name: str, value: Any) -> str:
    return "true" if parse_boolean(f"option {name!r}", value) else "false"


def parse_boolean(what: str, value: Any) -> bool:
    """`value` as DuckDB casts it to BOOL (true/false, t/f, 1/0, yes/no, y/n in any case; a bool); else an
    InvalidArgumentError naming `what` (an option, a setting) with DuckDB's conversion message."""
    text = str(value).strip().lower() if isinstance(value, str | int) else None
    if isinstance(value, bool) or text in ("true", "false", "t", "f", "1", "0", "yes", "no", "y", "n"):
        return value is True or text in ("true", "t", "1", "yes", "y")
    raise InvalidArgumentError(f"{what} takes true or false: Could not convert string '{value}' to BOOL")


def set_option(conn: sa.Connection, name: str, value: Any, *, scope: str | None, scope_id: int | None) -> None:
    """Upsert one option row (no snapshot, as the reference does)."""
    if scope is not None and name in GLOBAL_ONLY:
        raise InvalidArgumentError(f"option {name!r} can only be set globally")
    text = normalize(name, value)
    md = T["ducklake_metadata"]
    match = [md.c.key == name,
             md.c.scope.is_(None) if scope is None else md.c.scope == scope,
             md.c.scope_id.is_(None) if scope_id is None else md.c.scope_id == scope_id]
    conn.execute(md.delete().where(*match))
    conn.execute(md.insert().values(key=name, value=text, scope=scope, scope_id=scope_id))
