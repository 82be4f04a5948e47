"""Partitioned writes: the partition key columns Spark computes per row, and where each written file belongs."""

from __future__ import annotations

from ...spec.bucket_hash import bucket_int64, bucket_many
from ...spec.epoch import EPOCH_TRANSFORMS
from ...spec.model import PartitionSpec, TableInfo
from ...spec.names import spark_name
from ..arrow.placement import KEY_PREFIX
from .workers import require_python_workers


def with_partition_keys(df, table: TableInfo, spec: PartitionSpec):
    """`df` plus one `_dl_p<i>` column per partition key (transforms computed on the executors)."""
    from pyspark.sql import functions as F

    by_id = {c.column_id: c for c in table.columns}
    keys = []
    for i, key in enumerate(spec.keys):
        col = by_id[key.column_id]
        source = F.col(spark_name(col.name))
        if key.transform == "identity":
            value = source
        elif key.transform in ("year", "month", "day", "hour"):
            value = calendar_part(source, key.transform, col.type == "timestamptz")
        elif key.transform in EPOCH_TRANSFORMS:
            value = epoch_part(source, key.transform, col.type == "timestamptz")
        else:
            require_python_workers(df.sparkSession)  # bucket() is a pandas UDF
            # timestamptz hashes as UTC micros: pass those, not pandas' local wall clock of the session time zone
            value = _bucket_udf(col.type, key.buckets)(F.unix_micros(source) if col.type == "timestamptz"  # type: ignore[arg-type]  # a bucket key has its count
                                                       else source)
        keys.append(value.alias(f"{KEY_PREFIX}{i}"))
    return df.select("*", *keys)


_DAY, _HOUR = 86_400_000_000, 3_600_000_000  # microseconds


def calendar_part(source, transform: str, instant: bool):
    """year/month/day/hour of a date or timestamp column as a long; for a timestamptz (`instant`), in UTC
    whatever the session time zone (F.year & co. on a TimestampType use spark.sql.session.timeZone)."""
    from pyspark.sql import functions as F

    if not instant:
        fn = {"year": F.year, "month": F.month, "day": F.dayofmonth, "hour": F.hour}[transform]
        return fn(source).cast("long")
    micros = F.unix_micros(source)
    within_day = F.pmod(micros, F.lit(_DAY))
    if transform == "hour":
        return (within_day / F.lit(_HOUR)).cast("long")  # within_day >= 0: the cast floors
    date = F.date_from_unix_date(((micros - within_day) / F.lit(_DAY)).cast("int"))  # an exact multiple
    return {"year": F.year, "month": F.month, "day": F.dayofmonth}[transform](date).cast("long")


def epoch_part(source, transform: str, instant: bool):
    """DuckLake 1.1's epoch_year/month/day/hour of a date or timestamp column as a long (spec/epoch.py): a
    timestamptz (`instant`) on its UTC instant, a date or timestamp_ntz on its wall clock."""
    from pyspark.sql import functions as F

    if instant:
        micros = F.unix_micros(source)
        day = ((micros - F.pmod(micros, F.lit(_DAY))) / F.lit(_DAY)).cast("long")  # exact multiples: floored
        hour = ((micros - F.pmod(micros, F.lit(_HOUR))) / F.lit(_HOUR)).cast("long")
        date = F.date_from_unix_date(day.cast("int"))
    else:
        date = F.to_date(source)
        day = F.unix_date(date).cast("long")
        hour = day * F.lit(24) + F.hour(source).cast("long")
    years = (F.year(date) - F.lit(1970)).cast("long")
    return {"epoch_year": years, "epoch_month": years * F.lit(12) + (F.month(date) - F.lit(1)).cast("long"),
            "epoch_day": day, "epoch_hour": hour}[transform]


def _bucket_udf(type_str: str, buckets: int):
    from pyspark.sql.functions import pandas_udf

    integer = type_str.startswith(("int", "uint")) or type_str == "timestamptz"  # the latter as unix micros

    @pandas_udf("int")  # type: ignore[call-overload]  # pyspark's stubs want the function type spelled out
    def bucket(values):
        # Runs on executors: bucket_hash needs only numpy (no mmh3, no sqlalchemy there).
        import pandas as pd

        present = values.notna()
        out = pd.Series(pd.NA, index=values.index, dtype="Int32")
        if present.any():
            if integer:
                out[present] = bucket_int64(values[present].astype("int64").to_numpy(), buckets)
            else:
                out[present] = bucket_many([_py(v) for v in values[present]], type_str, buckets)
        return out

    return bucket


def _py(value):
    """pandas scalars to the Python values the hash expects."""
    if hasattr(value, "to_pydatetime"):
        return value.to_pydatetime()
    if hasattr(value, "item") and not isinstance(value, bytes | str):
        return value.item()
    return value


