"""A scan plan's files as the plugin's scan needs them (a columnar FileList or DataFiles alike): their sizes,
those with inlined deletes split off, the positions their delete files delete, and what keeps Spark's Parquet
reader from reading them alone."""

from __future__ import annotations

import pyarrow.compute as pc

from ..catalog.reads.file_list import FileList
from ..dataplane.arrow.delete_files import positions_as_of
from ..dataplane.arrow.native_types import is_native
from ..dataplane.spark.scan_plan import ScanPlan
from .fields import UnsupportedRequestError, local_path


def file_sizes(plan: ScanPlan) -> list[int]:
    """The size of each of the plan's files, in bytes."""
    files = plan.files
    if hasattr(files, "column"):
        return files.column("file_size_bytes").to_pylist()
    return [f.file_size_bytes for f in files]


def split_dirty(plan: ScanPlan):
    """(the plan's files without inlined deletes, the DataFiles with them): the latter are read by the service."""
    dirty_ids = {k for k, v in (plan.inlined_deletes or {}).items() if v}
    files = plan.files
    if not dirty_ids:
        return files, []
    if isinstance(files, FileList):
        ids = files.ids().to_pylist()
        keep = [i for i, fid in enumerate(ids) if fid not in dirty_ids]
        dirty = [i for i, fid in enumerate(ids) if fid in dirty_ids]
        return files.take(keep), [files[i] for i in dirty]
    return [f for f in files if f.data_file_id not in dirty_ids], [f for f in files if f.data_file_id in dirty_ids]


def check_plain(plan: ScanPlan, name: str) -> list[str]:
    """What keeps Spark's Parquet reader from reading the plan's files alone and the service reads for it
    (scans.py's `_materialize_all`: types Spark cannot decode at a table's top level, columns added with a default
    that older files lack); refuses, naming the cause, what the service cannot (the Python API reads all of it:
    `DuckLake.read`). Inlined rows and deletes are materialized without this."""
    table = plan.table
    converted, causes = [], []
    if not all(is_native(c) for c in table.columns):
        if all(is_native(c) or not c.children for c in table.columns):
            converted.append("a column type Spark's Parquet reader cannot decode")
        else:
            causes.append("a column type Spark's Parquet reader cannot decode inside a nested column")
    oldest = _smallest(plan, "begin_snapshot")
    if oldest is not None and any(c.initial_default is not None and c.added_snapshot is not None
                                  and oldest < c.added_snapshot for c in table.columns):
        converted.append("a column added with a default that older files lack")
    if _any_set(plan, "mapping_id") or _any_set(plan, "encryption_key"):
        causes.append("files without field ids or encrypted files")
    if _any_above(plan, "partial_max", plan.snapshot_id):
        causes.append("compacted files holding later snapshots' rows")
    if causes:
        raise UnsupportedRequestError(f"the lake catalog cannot read {name} at snapshot {plan.snapshot_id} in Spark "
                                   f"SQL yet: it has {', '.join(causes)}; read it with DuckLake.read")
    return converted


def deleted_positions(plan: ScanPlan) -> dict[str, list[int]]:
    """The positions each of the plan's files with a delete file has deleted at the plan's snapshot."""
    if not getattr(plan.files, "deletes", None) and not any(getattr(f, "delete_file", None) for f in _objects(plan)):
        return {}
    return {local_path(f.path): positions_as_of(f.delete_file, plan.snapshot_id).to_pylist()
            for f in plan.files if f.delete_file is not None}


def _objects(plan: ScanPlan) -> list:
    return [] if hasattr(plan.files, "column") else list(plan.files)


def _any_set(plan: ScanPlan, column: str) -> bool:
    if hasattr(plan.files, "column"):
        return plan.files.column(column).null_count < len(plan.files)
    return any(getattr(f, column, None) is not None for f in plan.files)


def _smallest(plan: ScanPlan, column: str) -> int | None:
    if hasattr(plan.files, "column"):
        return pc.min(plan.files.column(column)).as_py() if len(plan.files) else None
    return min((getattr(f, column) for f in plan.files), default=None)


def _any_above(plan: ScanPlan, column: str, bound: int) -> bool:
    if hasattr(plan.files, "column"):
        top = pc.max(plan.files.column(column)).as_py() if len(plan.files) else None
        return top is not None and top > bound
    return any((getattr(f, column, None) or 0) > bound for f in plan.files)
