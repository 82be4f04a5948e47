"""DuckLake 1.1's epoch partition transforms: years, months, days or hours since 1970-01-01 (Iceberg's year, month,
day and hour), floored, a `timestamptz` on its UTC instant, nanoseconds floored to microseconds first.

Pure pyarrow/numpy: Spark tasks and the in-process writer compute the same values.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

EPOCH_TRANSFORMS = ("epoch_year", "epoch_month", "epoch_day", "epoch_hour")
_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def epoch_ordinals(values: pa.Array | pa.ChunkedArray, transform: str) -> pa.Array:
    """The transform of each date or timestamp (int64; NULL stays NULL)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    valid = values.is_valid().to_numpy(zero_copy_only=False)
    if pa.types.is_timestamp(values.type):
        unit = values.type.unit
        ticks = values.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
        if unit == "ns":
            ticks = np.floor_divide(ticks, 1_000)
            unit = "us"
        per_hour = 3600 * _PER_SECOND[unit]
        hours = np.floor_divide(ticks, per_hour)
        days = np.floor_divide(ticks, 24 * per_hour)
    elif pa.types.is_date(values.type):
        days = values.cast(pa.date32()).cast(pa.int32()).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        hours = None
    else:
        raise ValueError(f"{transform} needs a date or timestamp, got {values.type}")
    if transform == "epoch_hour":
        if hours is None:
            raise ValueError("epoch_hour needs a timestamp")
        out = hours
    elif transform == "epoch_day":
        out = days
    elif transform == "epoch_month":
        out = days.astype("datetime64[D]").astype("datetime64[M]").astype(np.int64)
    elif transform == "epoch_year":
        out = days.astype("datetime64[D]").astype("datetime64[Y]").astype(np.int64)
    else:
        raise ValueError(f"not an epoch transform: {transform}")
    return pa.array(out, pa.int64(), mask=~valid)
