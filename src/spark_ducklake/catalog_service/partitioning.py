"""Partitioning across the plugin: Spark's PARTITIONED BY transforms as DuckLake partition keys, and a table's keys
as the transforms Spark shows."""

from __future__ import annotations

from typing import Any

from ..spec.model import Column, PartitionSpec
from .fields import UnsupportedRequestError

_TRANSFORMS = {"identity", "years", "months", "days", "hours", "bucket"}


def partition_keys(transforms: list[dict[str, Any]]) -> list[str]:
    """Spark's PARTITIONED BY transforms (`{"transform", "column", "buckets"}`) as DuckLake.set_partitioning keys:
    `region`, `days(ts)` (set_partitioning maps years/months/days/hours to DuckLake 1.1's epoch transforms and
    refuses them on 1.0 catalogs), `bucket(16, id)`."""
    keys = []
    for t in transforms:
        name, column = t.get("transform"), t.get("column")
        buckets: Any = t.get("buckets")  # int() refuses what is not a count
        if name not in _TRANSFORMS or not isinstance(column, str):
            raise UnsupportedRequestError(f"PARTITIONED BY {t.get('text') or name}: the lake catalog takes columns, "
                                       "years/months/days/hours(column) and bucket(n, column)")
        keys.append(column if name == "identity" else
                    f"bucket({int(buckets)}, {column})" if name == "bucket" else f"{name}({column})")
    return keys


# DuckLake 1.1's epoch transforms are what Spark's (and Iceberg's) years/months/days/hours mean; the calendar
# transforms (year(ts) = 2026) have no Spark transform and are shown by their DuckLake names.
_SPARK_TRANSFORMS = {"epoch_year": "years", "epoch_month": "months", "epoch_day": "days", "epoch_hour": "hours"}


def spark_partitioning(spec: PartitionSpec, columns: list[Column]) -> list[dict[str, Any]]:
    """A table's partition keys as the plugin's Table.partitioning() builds them (`{"transform", "column",
    "buckets"}`): identity, bucket, Spark's years/months/days/hours, or a DuckLake calendar transform by name."""
    names = {c.column_id: c.name for c in columns}
    return [{"transform": "bucket" if key.buckets else _SPARK_TRANSFORMS.get(key.transform, key.transform),
             "column": names[key.column_id], "buckets": key.buckets} for key in spec.keys]
