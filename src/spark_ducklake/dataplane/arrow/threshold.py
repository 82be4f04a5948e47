"""When data is small enough to move in-process with pyarrow instead of on Spark: the small-data threshold.

The rule: an operation runs on the driver with pyarrow when the bytes it touches (the Parquet files it reads plus
their delete files, or the Arrow data it writes) are at most the threshold; anything larger, and any Spark
DataFrame input, goes to Spark (but for a small DuckDB-dialect INSERT ... SELECT result, written as one file:
operations/write.py SMALL_FRAME_ROWS). The default, 64 MiB, is where one driver core stops beating Spark's fixed costs:
pyarrow reads and writes a 64 MiB Parquet table in about half a second here, about what one Spark job costs with
a warm session (and a session start costs 6-30 s), while a few hundred MB decoded stays far from driver memory
limits. Override it per handle (`DuckLake.attach(..., small_data_threshold=n)` or `lake.small_data_threshold = n`,
n a byte count or a size like "16MB") or for a process (`SPARK_DUCKLAKE_SMALL_DATA_BYTES`); 0 sends everything to
Spark.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Protocol

from ...catalog.reads.options import parse_size
from ...errors import InvalidArgumentError
from ...spec.model import DataFile

DEFAULT_SMALL_DATA_BYTES = 64 * 2**20
ENV = "SPARK_DUCKLAKE_SMALL_DATA_BYTES"


class HasThreshold(Protocol):
    """What the threshold is read from: a lake handle's context (operations/context.py's `LakeContext`, a layer
    above this one)."""

    small_data_threshold: int | None  # None: the process default


def default_threshold() -> int:
    """The threshold a new handle starts with: SPARK_DUCKLAKE_SMALL_DATA_BYTES, else 64 MiB."""
    raw = os.environ.get(ENV)
    return DEFAULT_SMALL_DATA_BYTES if raw in (None, "") else check_threshold(raw, ENV)


def check_threshold(value: object, what: str = "small_data_threshold") -> int:
    """A threshold in bytes (an int, or a size like '64MB'); InvalidArgumentError naming a bad one."""
    if isinstance(value, bool):
        raise InvalidArgumentError(f"{what} must be a number of bytes, got {value!r}")
    try:
        size = int(value) if isinstance(value, int) else parse_size(str(value))
    except Exception:  # noqa: BLE001 - any unparsable text is the same user error
        raise InvalidArgumentError(f"{what} must be a number of bytes or a size like '64MB', got {value!r}") from None
    if size < 0:
        raise InvalidArgumentError(f"{what} must not be negative, got {value!r}")
    return size


def threshold_of(ctx: HasThreshold) -> int:
    """The threshold in force for a lake handle's context: set on the handle (or at attach), else the process
    default."""
    value = ctx.small_data_threshold
    return default_threshold() if value is None else value


def scan_bytes(files: Sequence[DataFile]) -> int:
    """Bytes a scan of these files reads: data files plus their delete files."""
    total = 0
    for f in files:
        total += f.file_size_bytes or 0
        if f.delete_file is not None:
            total += f.delete_file.file_size_bytes or 0
    return total


def is_small(threshold: int, nbytes: int) -> bool:
    """Whether `nbytes` of data goes in-process under `threshold` (0 sends everything to Spark)."""
    return threshold > 0 and nbytes <= threshold


def files_in_process(ctx: HasThreshold, files: Sequence[DataFile], extra_bytes: int = 0) -> bool:
    """Whether an operation over these files (plus `extra_bytes` of other input) runs in-process: small enough,
    and none encrypted (only Spark decrypts: dataplane/spark/encrypted/)."""
    if any(f.encryption_key for f in files):
        return False
    return is_small(threshold_of(ctx), scan_bytes(files) + extra_bytes)
