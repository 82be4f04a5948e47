"""Which DuckLake types Spark's Parquet reader reads as they are stored (the others are read with pyarrow);
no pyspark, so the in-process reader asks it too."""

from __future__ import annotations

from ...spec.model import Column

# Types whose Parquet encoding Spark's reader rejects; those files are read with pyarrow on executors.
NOT_NATIVE = {"uuid", "time", "timetz", "timestamp_ns", "interval"}


def is_native(col: Column) -> bool:
    """Whether Spark's Parquet reader can read this column (and all its children); needs no pyspark, as
    `native_read_type` is None exactly then (the in-process reader asks it without Spark)."""
    return col.type not in NOT_NATIVE and all(is_native(child) for child in col.children)
