"""`merge_adjacent_files` and `rewrite_data_files`: the reference's compaction functions on Spark.

The catalog decides what to rewrite (`catalog/planners/compaction.py`), `engine_for` picks the data plane once per
table (small merges in-process, else one Spark job per column layout: `dataplane/spark/compaction_units.py`), and
the driver commits all tables' changes as one snapshot. A merge keeps every old snapshot readable (`partial_max`,
per-row snapshot and row ids in the merged files) and schedules the sources for deletion; a rewrite drops deleted
rows from now on and keeps row ids, and its sources stay for time travel. Sorted tables are written sorted by their
current keys.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ...catalog.changes.compaction import MergeFiles, PlacedFile, RewriteFiles
from ...catalog.changes.sorting import current_sort
from ...catalog.planners.compaction import TablePlan, plan_merge, plan_rewrite
from ...catalog.reads import reader
from ...catalog.reads.options import parse_size
from ...dataplane.arrow.storage import delete_paths
from ...dataplane.engine import engine_for
from ...errors import DuckLakeError
from ...spec.commit_properties import CommitProperties
from .targets import maintained_tables, progress, usable_sort_keys

if TYPE_CHECKING:
    from ..context import LakeContext

DEFAULT_DELETE_THRESHOLD = 0.95  # the reference's rewrite_delete_threshold when the option is not set


class CompactionRow(NamedTuple):
    """A row of `merge_adjacent_files()` / `rewrite_data_files()`: one output of one table."""

    schema_name: str
    table_name: str
    files_processed: int
    files_created: int


def merge_adjacent_files(ctx: LakeContext, table: str | None, schema: str | None, *, min_file_size=None,
                         max_file_size=None, max_compacted_files: int | None = None,
                         info: CommitProperties | None = None) -> list[CompactionRow]:
    """Merge small files (per table, partition and compatible schema) into files near `target_file_size`."""
    ctx.check_writable()
    min_size = None if min_file_size is None else parse_size(min_file_size)
    max_size = None if max_file_size is None else parse_size(max_file_size)
    _check_limits(max_compacted_files, max_size, min_size)
    with ctx.engine.connect() as conn:
        read_snapshot = reader.latest_snapshot(conn).snapshot_id
        work = []
        for info_ in maintained_tables(ctx, conn, read_snapshot, schema=schema, table=table,
                                       function="merge_adjacent_files"):
            options = ctx.write_options(info_, conn)
            plans = plan_merge(conn, info_, read_snapshot, target=options.target_file_size, min_size=min_size,
                               max_size=max_size, max_outputs=max_compacted_files)
            if plans:
                work.append((info_, plans, options, current_sort(conn, info_.table_id, read_snapshot)))
    ops, rows, staged = [], [], []
    try:
        for target, plans, options, sort_keys in work:
            merges = []
            for plan, outputs in _run(ctx, target, plans, options, sort_keys, "merging", snapshot_ids=True):
                for unit, written in zip(plan.units, outputs, strict=True):
                    staged += [f.path for f in written]
                    first = min(f.begin_snapshot for f in unit.files)
                    last = max(f.partial_max if f.partial_max is not None else f.begin_snapshot for f in unit.files)
                    merges.append((unit.files, [PlacedFile(f, plan.table.columns, begin_snapshot=first,
                                                           partial_max=last, partition_id=unit.partition_id)
                                                for f in written]))
                    rows.append(CompactionRow(target.schema_name, target.name, len(unit.files), len(written)))
            ops.append(MergeFiles(target, merges))
    except BaseException:
        delete_paths(staged)
        raise
    _commit(ctx, ops, read_snapshot, info, staged)
    return rows


def rewrite_data_files(ctx: LakeContext, table: str | None, schema: str | None, *, delete_threshold=None,
                       max_compacted_files: int | None = None,
                       info: CommitProperties | None = None) -> list[CompactionRow]:
    """Rewrite files whose deleted fraction reaches the threshold, without their deleted rows (row ids kept)."""
    ctx.check_writable()
    _check_limits(max_compacted_files, None, None)
    if delete_threshold is not None and not 0 <= float(delete_threshold) <= 1:
        raise DuckLakeError("delete_threshold must be between 0 and 1")
    with ctx.engine.connect() as conn:
        read_snapshot = reader.latest_snapshot(conn).snapshot_id
        rows_ = reader.options(conn)
        work = []
        for info_ in maintained_tables(ctx, conn, read_snapshot, schema=schema, table=table,
                                       function="rewrite_data_files"):
            threshold = delete_threshold
            if threshold is None:
                threshold = reader.option_value(rows_, "rewrite_delete_threshold", table_id=info_.table_id,
                                                schema_id=info_.schema_id) or DEFAULT_DELETE_THRESHOLD
            options = ctx.write_options(info_, conn)
            plan, inlined = plan_rewrite(conn, info_, read_snapshot, target=options.target_file_size,
                                         threshold=float(threshold), max_outputs=max_compacted_files)
            if plan is not None:
                work.append((info_, plan, inlined, options, current_sort(conn, info_.table_id, read_snapshot)))
    ops, rows, staged = [], [], []
    try:
        for target, plan, inlined, options, sort_keys in work:
            [(_, outputs)] = _run(ctx, target, [plan], options, sort_keys, "rewriting", snapshot_ids=False,
                                  live_at=read_snapshot, inlined_deletes=inlined)
            placed = []
            for unit, written in zip(plan.units, outputs, strict=True):
                staged += [f.path for f in written]
                placed += [PlacedFile(f, plan.table.columns, partition_id=unit.partition_id) for f in written]
                rows.append(CompactionRow(target.schema_name, target.name, len(unit.files), len(written)))
            ops.append(RewriteFiles(target, [f for unit in plan.units for f in unit.files], placed))
    except BaseException:
        delete_paths(staged)
        raise
    _commit(ctx, ops, read_snapshot, info, staged)
    return rows


def _check_limits(max_compacted_files, max_size, min_size) -> None:
    if max_compacted_files is not None and int(max_compacted_files) <= 0:
        raise DuckLakeError("max_compacted_files must be greater than zero")
    if max_size is not None and max_size <= 0:
        raise DuckLakeError("max_file_size must be greater than zero")
    if min_size is not None and max_size is not None and min_size >= max_size:
        raise DuckLakeError("min_file_size must be less than max_file_size")


def _run(ctx: LakeContext, target, plans: list[TablePlan], options, sort_keys, verb: str, **kwargs):
    """(plan, files per unit) for each plan, written on Spark with a status line on the driver."""
    for plan in plans:
        sources = sum(len(unit.files) for unit in plan.units)
        keys = usable_sort_keys(sort_keys, plan.table.columns)
        with progress(f"{verb} {sources} files of {target.qualified_name} into {len(plan.units)}"):
            engine = engine_for(ctx, extra_bytes=sum(u.size for u in plan.units))
            yield plan, engine.write_units(plan, options, keys, **kwargs)


def _commit(ctx: LakeContext, ops: list, read_snapshot: int, info: CommitProperties | None, staged: list[str]) -> None:
    if not ops:
        return
    ctx.commit(ops, read_snapshot=read_snapshot, properties=info, staged_files=staged)
