"""The `scan` reply: the data files a snapshot's scan reads (pruned by the catalog's statistics with the filters
Spark pushed) as a file-sink log (`_spark_metadata/0`, as file_log.py writes for Python scans) for Spark's
MetadataLogFileIndex, plus the rows Spark's reader cannot read alone (inlined rows, files with inlined deletes,
whole tables of types Spark cannot decode) materialized with pyarrow as scratch files; and the scan plan a
request resolves to (`table` asks it too)."""

from __future__ import annotations

import dataclasses
import os
import tempfile
from datetime import datetime, timezone
from typing import Any

import pyarrow as pa

from ..dataplane.arrow.arrow_values import spark_value
from ..dataplane.arrow.native_types import is_native
from ..dataplane.arrow.threshold import is_small, threshold_of
from ..dataplane.spark.file_log import SCAN_LOG_PREFIX, write_file_log
from ..dataplane.spark.scan_plan import ScanPlan
from ..errors import InvalidArgumentError
from ..lake import DuckLake
from ..spec import types
from ..spec.model import Column, DataFile
from .fields import UnsupportedRequestError, request_text
from .filters import pruning_predicate
from .scan_files import check_plain, deleted_positions, file_sizes, split_dirty
from .scratch import Scratch, write_parquet


def scan(lake: DuckLake, scratch: Scratch, request: dict[str, Any]) -> dict[str, Any]:
    """The files of the snapshot's scan (`namespace`, `table`, `snapshot`, `filters`) as a file-sink log in the
    service's folder (`log`), with the positions deleted in each file with a delete file (`deletes`)."""
    plan = request_plan(lake, request)
    name = f"{request_text(request, 'namespace')}.{request_text(request, 'table')}"
    converted = check_plain(plan, name)
    if converted:  # every row read here with pyarrow, as Spark's reader cannot read the files alone
        whole = _materialize_all(lake, scratch, plan, name, converted)
        paths, sizes, deletes = [whole], [os.path.getsize(whole)], {}
    else:
        files, dirty = split_dirty(plan)
        plain = dataclasses.replace(plan, files=files)
        paths = files.full_paths() if hasattr(files, "full_paths") else [f.path for f in files]
        sizes = [int(s) for s in file_sizes(plain)]
        deletes = deleted_positions(plain)
        extra = _materialize(lake, scratch, plan, dirty, name)
        if extra is not None:
            paths, sizes = [*paths, extra], [*sizes, os.path.getsize(extra)]
    folder = tempfile.mkdtemp(prefix=SCAN_LOG_PREFIX, dir=scratch.log_root)
    write_file_log(folder, paths, sizes)
    # names_stable False: a column was renamed or a name held by two columns; the plugin then pushes no filter
    # into the Parquet reader, whose row-group filters match file columns by name.
    return {"log": folder, "files": len(paths), "snapshot": plan.snapshot_id, "names_stable": plan.names_stable,
            "deletes": deletes}


def request_plan(lake: DuckLake, request: dict[str, Any]) -> ScanPlan:
    """The scan plan of the table a request names, at its `snapshot` / `version` / `timestamp_us` (else the
    current snapshot), pruned by its `filters`."""
    name = (request_text(request, "namespace"), request_text(request, "table"))
    where = pruning_predicate(request.get("filters") or [])
    version = request.get("snapshot", request.get("version"))
    stamp = request.get("timestamp_us")
    when = None if stamp is None else datetime.fromtimestamp(int(stamp) / 1e6, timezone.utc)
    if version is not None and not str(version).isdigit():
        raise InvalidArgumentError(f"VERSION AS OF takes a snapshot id, not {version!r}")
    return lake.plan_scan(name, version=None if version is None else int(version), timestamp=when, where=where)


def _materialize(lake: DuckLake, scratch: Scratch, plan: ScanPlan, dirty: list[DataFile], name: str) -> str | None:
    """The snapshot's inlined rows plus the rows of the files with inlined deletes (those deletes applied),
    as one Parquet file under the table's field ids in the service's scratch folder; None when there are
    none. The rows at a snapshot never change, so the file is named by (table, snapshot, files) and reused."""
    has_rows = plan.inlined is not None and plan.inlined.num_rows > 0
    if not has_rows and not dirty:
        return None
    size = sum(f.file_size_bytes for f in dirty)
    if dirty and not is_small(threshold_of(lake.context), size):
        raise UnsupportedRequestError(
            f"the lake catalog cannot read {name} at snapshot {plan.snapshot_id} in Spark SQL yet: it has "
            f"inlined deletes in {len(dirty)} data files ({size} bytes, above the small-data threshold the "
            "service rewrites them under); flush_inlined_data writes them as delete files")
    ids = sorted(f.data_file_id for f in dirty)
    path = scratch.path("", plan.table.table_id, plan.snapshot_id, ids)
    if os.path.exists(path):
        return path
    wanted = set(ids)
    part = dataclasses.replace(plan, files=dirty, inlined_deletes={
        k: v for k, v in (plan.inlined_deletes or {}).items() if k in wanted})
    rows = scratch.scan_rows(part, path)
    schema = types.to_parquet_schema(plan.table.columns)
    write_parquet(pa.Table.from_arrays([rows.column(i) for i in range(len(schema))], schema=schema), path)
    return path


def _materialize_all(lake: DuckLake, scratch: Scratch, plan: ScanPlan, name: str, causes: list[str]) -> str:
    """Every row of the scan (inlined, in files, deletes applied, defaults filled in) read with pyarrow and
    written as one Parquet file of Spark's types (docs/types.md: uuid, time as text, timestamp_ns in
    microseconds) under the table's field ids, in the service's scratch folder: for tables Spark's Parquet
    reader cannot read alone (`causes`), up to the small-data threshold. Named by (table, snapshot, files)."""
    files = list(plan.files)  # DataFiles, from a columnar FileList too
    size = sum(f.file_size_bytes for f in files)
    if not is_small(threshold_of(lake.context), size):
        raise UnsupportedRequestError(
            f"the lake catalog cannot read {name} at snapshot {plan.snapshot_id} in Spark SQL yet: it has "
            f"{', '.join(causes)}, which the service reads for Spark up to the small-data threshold only "
            f"({size} bytes of files); read it with DuckLake.read")
    path = scratch.path("all-", plan.table.table_id, plan.snapshot_id, sorted(f.data_file_id for f in files))
    if os.path.exists(path):
        return path
    rows = scratch.scan_rows(dataclasses.replace(plan, files=files), path)
    write_parquet(spark_readable(rows, plan.table.columns), path)
    return path


def spark_readable(data: pa.Table, columns: list[Column]) -> pa.Table:
    """A table's rows (its Arrow types, `conform_arrow`) as a Parquet file Spark's reader reads under the table's
    field ids: the columns Spark cannot decode (top-level uuid, time, timetz, interval, timestamp_ns) in the Spark
    types `to_spark_schema` declares, converted as the executors' pyarrow reader converts them."""
    schema = types.to_parquet_schema(columns)
    fields, arrays = [], []
    for i, col in enumerate(columns):
        field, array = schema.field(i), data.column(i)
        if not is_native(col):
            target = pa.timestamp("us") if col.type == "timestamp_ns" else pa.string()
            array = pa.array([spark_value(col, v) for v in array.to_pylist()], type=target)
            field = pa.field(field.name, target, True, metadata=field.metadata)
        fields.append(field)
        arrays.append(array)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))
