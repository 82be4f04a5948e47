"""Which data files compaction rewrites, and into which output files: catalog reads only, no Spark.

The rules are the reference's (`ducklake_merge_adjacent_files`, `ducklake_rewrite_data_files`):

- merge: live files smaller than `max_file_size` (default `target_file_size`) and at least `min_file_size`, that
  never had deletes (delete files or inlined deletes), grouped by partition and by schema: files written under a
  schema whose every column survives unchanged (id, name, type) in the latest one merge together under the latest
  schema, others only with files of their own schema version, under that version's columns. A group needs two
  files.
- rewrite: live files whose deleted fraction is at least `delete_threshold`, grouped by partition; their live rows
  are written under the latest schema (the new files are only visible from the rewrite on).

Within a group, files in commit order are packed greedily into outputs whose size gets closest to
`target_file_size` (rewrite estimates a file's size by its live fraction); `max_compacted_files` caps the outputs
per table.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from ...spec.model import Column, DataFile, TableInfo
from ..database.spec_tables import T
from ..inlined import tables as inlined_tables
from ..reads import reader
from ..reads.file_columns import mark_absent_columns

LATEST = -1  # group key of files merged under the latest schema


@dataclass
class Unit:
    """Source files that become one output file."""

    files: list[DataFile]
    directory: str  # of the output, relative to the table's path (a partition's folder, or '')
    partition_id: int | None = None
    partition_values: dict[int, str | None] = field(default_factory=dict)

    @property
    def size(self) -> int:
        """Bytes of the source files."""
        return sum(f.file_size_bytes for f in self.files)


@dataclass
class TablePlan:
    """The units of one table that share a column layout (read and written with `table.columns`)."""

    table: TableInfo
    units: list[Unit]


def schema_versions(conn: sa.Connection, table_id: int) -> list[tuple[int, int]]:
    """(begin snapshot, schema version) of the table's schema versions, oldest first."""
    sv = T["ducklake_schema_versions"]
    return [(b, v) for b, v in conn.execute(
        sa.select(sv.c.begin_snapshot, sv.c.schema_version).where(sv.c.table_id == table_id)
        .order_by(sv.c.begin_snapshot))]


def version_at(versions: list[tuple[int, int]], snapshot_id: int) -> tuple[int, int] | None:
    """(begin snapshot, version) of the schema version in force at the snapshot."""
    found = None
    for begin, version in versions:
        if begin <= snapshot_id:
            found = (begin, version)
    return found if found is not None else (versions[0] if versions else None)


def preserved_in(old: list[Column], latest: list[Column]) -> bool:
    """Whether every column (nested ones too) of `old` exists in `latest` with the same id, name and type."""
    now = {c.column_id: c for top in latest for c in top.walk()}
    return all(c.column_id in now and now[c.column_id].name == c.name and now[c.column_id].type == c.type
               for top in old for c in top.walk())


def _partition_values(conn: sa.Connection, table_id: int) -> dict[int, dict[int, str | None]]:
    pv = T["ducklake_file_partition_value"]
    out: dict[int, dict[int, str | None]] = defaultdict(dict)
    for file_id, index, value in conn.execute(sa.select(pv.c.data_file_id, pv.c.partition_key_index,
                                                        pv.c.partition_value).where(pv.c.table_id == table_id)):
        out[file_id][index] = value
    return out


def _files_ever_deleted_from(conn: sa.Connection, table_id: int) -> set[int]:
    dl = T["ducklake_delete_file"]
    return set(conn.execute(sa.select(dl.c.data_file_id).where(dl.c.table_id == table_id).distinct()).scalars())


def _commit_order(f: DataFile) -> tuple[int, int, int]:
    return f.begin_snapshot, -1 if f.row_id_start is None else f.row_id_start, f.data_file_id


def _directory(table: TableInfo, f: DataFile) -> str:
    relative = f.path[len(table.path):] if f.path.startswith(table.path) else ""
    return relative.rsplit("/", 1)[0] + "/" if "/" in relative else ""


def pack(files: list[DataFile], sizes: list[float], target: int, *, pairs_only: bool, budget: list[int]) -> list[
        list[DataFile]]:
    """Consecutive runs of `files` whose summed size gets closest to `target` (the reference's greedy packing).

    With `pairs_only` a run of one file is no output (but still spends budget, as in the reference); `budget`
    holds the outputs still allowed for the table and is decremented."""
    out, start = [], 0
    while start < len(files) and budget[0] > 0:
        total, end = 0.0, start
        while end < len(files):
            if total > 0 and abs(total + sizes[end] - target) >= abs(total - target):
                break
            total += sizes[end]
            end += 1
        if end - start > 1 or not pairs_only:
            out.append(files[start:end])
        budget[0] -= 1
        start = end
    return out


def plan_merge(conn: sa.Connection, table: TableInfo, snapshot_id: int, *, target: int,
               min_size: int | None, max_size: int | None, max_outputs: int | None) -> list[TablePlan]:
    """The merges of one table, per column layout."""
    limit = max_size if max_size is not None else target
    deleted = _files_ever_deleted_from(conn, table.table_id) | set(
        inlined_tables.inlined_deletes(conn, table.table_id, snapshot_id))
    files = [f for f in reader.data_files(conn, table, snapshot_id)
             if f.file_size_bytes < limit and (min_size is None or f.file_size_bytes >= min_size)
             and f.delete_file is None and f.data_file_id not in deleted]
    if len(files) < 2:
        return []
    versions = schema_versions(conn, table.table_id)
    layouts: dict[int, TableInfo] = {}  # schema version -> table under that version's columns (or LATEST)
    compatible: dict[int, bool] = {}

    def layout_of(f: DataFile) -> int:
        # Compacted or flushed files hold rows up to partial_max, written under a schema at least that recent.
        found = version_at(versions, f.partial_max if f.partial_max is not None else f.begin_snapshot)
        if found is None:
            return LATEST
        begin, version = found
        if version not in compatible:
            old = reader.load_columns(conn, [table.table_id], begin).get(table.table_id, table.columns)
            compatible[version] = preserved_in(old, table.columns)
            if not compatible[version]:
                layouts[version] = _at_columns(table, old)
        return LATEST if compatible[version] else version

    values = _partition_values(conn, table.table_id)
    groups: dict[tuple[Any, ...], list[DataFile]] = defaultdict(list)
    for f in sorted(files, key=_commit_order):
        key = (layout_of(f), f.partition_id, tuple(sorted(values.get(f.data_file_id, {}).items())))
        groups[key].append(f)
    layouts[LATEST] = table
    budget = [max_outputs if max_outputs is not None else 1 << 62]
    plans: dict[int, TablePlan] = {}
    for (layout, partition_id, part), members in groups.items():
        if len(members) < 2:
            continue
        for run in pack(members, [f.file_size_bytes for f in members], target, pairs_only=True, budget=budget):
            plans.setdefault(layout, TablePlan(layouts[layout], [])).units.append(
                Unit(run, _directory(table, run[0]), partition_id, dict(part)))
        if budget[0] <= 0:
            break
    for plan in plans.values():
        mark_absent_columns(conn, plan.table, [f for unit in plan.units for f in unit.files])
    return list(plans.values())


def _at_columns(table: TableInfo, columns: list[Column]) -> TableInfo:
    return TableInfo(table_id=table.table_id, table_uuid=table.table_uuid, schema_id=table.schema_id,
                     schema_name=table.schema_name, name=table.name, path=table.path, columns=columns,
                     begin_snapshot=table.begin_snapshot, partition=table.partition, sort_keys=table.sort_keys)


def plan_rewrite(conn: sa.Connection, table: TableInfo, snapshot_id: int, *, target: int, threshold: float,
                 max_outputs: int | None) -> tuple[TablePlan | None, dict[int, list[int]]]:
    """The rewrites of one table's heavily deleted files, and the table's inlined deletes (which the rewrite
    applies)."""
    inlined = inlined_tables.inlined_deletes(conn, table.table_id, snapshot_id)
    chosen: list[tuple[DataFile, float]] = []
    for f in reader.data_files(conn, table, snapshot_id):
        deleted = (f.delete_file.delete_count if f.delete_file else 0) + len(inlined.get(f.data_file_id, ()))
        ratio = deleted / f.record_count if f.record_count else 0.0
        if deleted and ratio >= threshold:
            chosen.append((f, ratio))
    if not chosen:
        return None, inlined
    values = _partition_values(conn, table.table_id)
    groups: dict[tuple[Any, ...], list[tuple[DataFile, float]]] = defaultdict(list)
    for f, ratio in sorted(chosen, key=lambda pair: _commit_order(pair[0])):
        groups[(f.partition_id, tuple(sorted(values.get(f.data_file_id, {}).items())))].append((f, ratio))
    budget = [max_outputs if max_outputs is not None else 1 << 62]
    plan = TablePlan(table, [])
    for (partition_id, part), members in groups.items():
        runs = pack([f for f, _ in members], [f.file_size_bytes * (1 - r) for f, r in members], target,
                    pairs_only=False, budget=budget)
        plan.units += [Unit(run, _directory(table, run[0]), partition_id, dict(part)) for run in runs]
        if budget[0] <= 0:
            break
    mark_absent_columns(conn, table, [f for unit in plan.units for f in unit.files])
    return plan, inlined
