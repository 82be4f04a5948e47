"""Where a partitioned file goes: the directory under the table and the partition values, from the key values Spark's or
our task writer grouped rows by."""

from __future__ import annotations

from urllib.parse import quote, unquote

from ...spec.model import PartitionSpec, TableInfo, directory_names

KEY_PREFIX = "_dl_p"


_SPARK_NULL = "__HIVE_DEFAULT_PARTITION__"


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
    names = directory_names(spec.keys, table.columns)
    parts = []
    for i in range(len(spec.keys)):
        value = values.get(i)  # a key the path lacks is NULL too
        parts.append(f"{names[i]}={_SPARK_NULL if value is None else quote(value, safe='')}")
    return "".join(p + "/" for p in parts), values
