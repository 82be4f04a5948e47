"""Partitioned writes: the partition key columns Spark computes per row, and where each written file belongs."""

from __future__ import annotations

from urllib.parse import quote, unquote

from ..catalog.model import PartitionSpec, TableInfo

KEY_PREFIX = "_dl_p"
_SPARK_NULL = "__HIVE_DEFAULT_PARTITION__"


def with_partition_keys(df, table: TableInfo, spec: PartitionSpec):
    """`df` plus one `_dl_p<i>` column per partition key (transforms computed on the executors)."""
    from pyspark.sql import functions as F

    by_id = {c.column_id: c for c in table.columns}
    keys = []
    for i, key in enumerate(spec.keys):
        col = by_id[key.column_id]
        source = F.col(f"`{col.name}`")
        if key.transform == "identity":
            value = source
        elif key.transform in ("year", "month", "day", "hour"):
            fn = {"year": F.year, "month": F.month, "day": F.dayofmonth, "hour": F.hour}[key.transform]
            value = fn(source).cast("long")
        else:
            value = _bucket_udf(col.type, key.buckets)(source)
        keys.append(value.alias(f"{KEY_PREFIX}{i}"))
    return df.select("*", *keys)


def _bucket_udf(type_str: str, buckets: int):
    from pyspark.sql.functions import pandas_udf

    integer = type_str.startswith(("int", "uint"))

    @pandas_udf("int")
    def bucket(values):
        import pandas as pd

        from spark_ducklake.catalog.partitioning import bucket_int64, bucket_of

        if integer:  # vectorized: the common case of bucketing an id
            present = values.notna()
            out = pd.Series(pd.NA, index=values.index, dtype="Int32")
            out[present] = bucket_int64(values[present].astype("int64").to_numpy(), buckets)
            return out
        return values.map(lambda v: None if v is None or v != v else bucket_of(_py(v), type_str, buckets)) \
            .astype("Int32")

    return bucket


def _py(value):
    """pandas scalars to the Python values the hash expects."""
    if hasattr(value, "to_pydatetime"):
        return value.to_pydatetime()
    if hasattr(value, "item") and not isinstance(value, bytes | str):
        return value.item()
    return value


def placement(staged_relative: str, table: TableInfo, spec: PartitionSpec,
              hive: bool) -> tuple[str, dict[int, str | None]]:
    """(directory under the table for the final file, partition values by key index) of a staged file whose
    path below the staging folder is `_dl_p0=.../_dl_p1=.../part-...parquet`."""
    values: dict[int, str | None] = {}
    for segment in staged_relative.split("/")[:-1]:
        name, _, raw = segment.partition("=")
        if name.startswith(KEY_PREFIX):
            text = unquote(raw)
            values[int(name[len(KEY_PREFIX):])] = None if text == _SPARK_NULL else text
    if not hive:
        return "", values
    by_id = {c.column_id: c for c in table.columns}
    parts = [f"{key.directory_name(by_id[key.column_id])}="
             f"{'NULL' if values.get(i) is None else quote(values[i], safe='')}" for i, key in enumerate(spec.keys)]
    return "".join(p + "/" for p in parts), values
