"""The `changes` reply: Spark's `CHANGES` clause (loadChangelog), DuckLake's `table_changes` for a range of
snapshots with Spark's changelog columns, as one Parquet file in the service's scratch folder listed in a
file-sink log, and its Spark schema."""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..dataplane.arrow.change_rows import changes as change_rows
from ..dataplane.arrow.conform import conform_arrow
from ..dataplane.arrow.native_types import is_native
from ..dataplane.spark.file_log import SCAN_LOG_PREFIX, write_file_log
from ..dataplane.spark.types import to_spark_schema
from ..errors import InvalidArgumentError
from ..lake import DuckLake
from ..operations.history import change_plan
from ..spec import types
from .fields import EPOCH, UnsupportedRequestError, request_table
from .scratch import Scratch, write_parquet
from .values import result_struct

CHANGE_COLUMNS = {"rowid", "_change_type", "_commit_version", "_commit_timestamp"}
CHANGE_SPARK_COLUMNS = (("rowid", "long"), ("_change_type", "string"), ("_commit_version", "long"),
                        ("_commit_timestamp", "timestamp"))


def _without_field_ids(node: Any) -> Any:
    """Spark's schema JSON without the Parquet field ids its struct fields carry, at every level."""
    if isinstance(node, dict):
        return {k: ({} if k == "metadata" else _without_field_ids(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_without_field_ids(v) for v in node]
    return node


def changes(lake: DuckLake, scratch: Scratch, request: dict[str, Any]) -> dict[str, Any]:
    """The change feed of `CHANGES FROM ... TO ...` (Spark's loadChangelog): the rows DuckLake's
    `table_changes` gives for the range, with Spark's changelog columns (`_change_type`, `_commit_version`,
    `_commit_timestamp`) in place of its change_type and snapshot_id, as one Parquet file in the service's
    scratch folder, listed in a file-sink log the plugin reads with Spark's Parquet scan."""
    schema, table = request_table(request)
    name = f"{schema}.{table}"
    start, end = _change_range(lake, request)
    plan = change_plan(lake.context, name, start, end)
    columns = plan.table.columns
    taken = sorted(CHANGE_COLUMNS & {c.name.lower() for c in columns})
    if taken:
        raise UnsupportedRequestError(f"the lake catalog cannot show the changes of {name}: its columns "
                                      f"{', '.join(taken)} have the names of the change feed's own columns")
    if not all(is_native(c) for c in columns) or plan.delete_keys or any(f.encryption_key for f in plan.files):
        raise UnsupportedRequestError(f"the lake catalog cannot show the changes of {name} in Spark SQL yet: it "
                                      "has a column type Spark's Parquet reader cannot decode or encrypted "
                                      "files; use DuckLake.table_changes")
    # The changes between two snapshots never change: one file per (table, range), made once and reused, so
    # repeated CHANGES queries do not pile files up in the scratch folder.
    path = scratch.path("changes-", plan.table.table_id, plan.start, plan.end)
    rows_count = _write_changes(lake, plan, path) if not os.path.exists(path) else pq.read_metadata(path).num_rows
    folder = tempfile.mkdtemp(prefix=SCAN_LOG_PREFIX, dir=scratch.log_root)
    write_file_log(folder, [path], [os.path.getsize(path)])
    # Read by name, not field id: Spark's changelog columns carry no field-id metadata to match ids with.
    spark_schema = _without_field_ids(json.loads(to_spark_schema(columns).json()))
    spark_schema["fields"] += result_struct(CHANGE_SPARK_COLUMNS)["fields"]
    return {"log": folder, "schema": json.dumps(spark_schema), "start": plan.start, "end": plan.end,
            "rows": rows_count}


def _write_changes(lake: DuckLake, plan, path: str) -> int:
    """The change feed of `plan` with Spark's changelog columns, written to `path` (atomically); its rows."""
    columns = plan.table.columns
    rows = change_rows(plan)  # snapshot_id, rowid, change_type, the table's columns
    times = {s.snapshot_id: s.snapshot_time for s in lake.snapshots()}
    ids = rows.column("snapshot_id").cast(pa.int64())
    stamps = pa.array([times.get(i) for i in ids.to_pylist()], pa.timestamp("us", tz="UTC"))
    data = conform_arrow(rows.select([c.name for c in columns]), plan.table)
    fields = list(types.to_parquet_schema(columns))
    arrays = [data.column(i) for i in range(len(fields))]
    arrays += [rows.column("rowid").cast(pa.int64()), rows.column("change_type").cast(pa.string()), ids, stamps]
    fields += [pa.field("rowid", pa.int64()), pa.field("_change_type", pa.string()),
               pa.field("_commit_version", pa.int64()), pa.field("_commit_timestamp", pa.timestamp("us", "UTC"))]
    write_parquet(pa.Table.from_arrays(arrays, schema=pa.schema(fields)), path)
    return rows.num_rows


def _change_range(lake: DuckLake, request: dict[str, Any]) -> tuple[int | datetime, int | datetime]:
    """The inclusive (start, end) of a change request: snapshot ids (`start`, `end`) or times in microseconds
    (`start_us`, `end_us`); no end is the current snapshot; an exclusive bound moves by one id or one
    microsecond (timestamps are microseconds)."""
    step_in, step_out = int(not request.get("start_inclusive", True)), int(not request.get("end_inclusive", True))
    if request.get("start_us") is not None:
        start: int | datetime = EPOCH + timedelta(microseconds=int(request["start_us"]) + step_in)
        end_us = request.get("end_us")
        end: int | datetime = (lake.current_snapshot() if end_us is None
                           else EPOCH + timedelta(microseconds=int(end_us) - step_out))
        return start, end
    first, last = request.get("start", 0), request.get("end")
    for bound in (first, last):
        if bound is not None and not str(bound).isdigit():
            raise InvalidArgumentError(f"CHANGES FROM VERSION takes snapshot ids, not {bound!r}")
    if last is None:
        return int(first) + step_in, lake.current_snapshot()
    return int(first) + step_in, int(last) - step_out
