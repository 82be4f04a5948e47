"""Planning a table's stream of micro-batches from the catalog: offsets are snapshot ids, and a batch (a, b]
covers what snapshots a+1..b changed, cut into read tasks the executors run without the catalog.

A task names one data file with everything needed to tell which of its row versions were inserted or deleted in
the range (the file's begin and end snapshot, its delete files, the inlined deletes of its rows); inlined rows
travel inside the plan. A row version is inserted by its file's `_ducklake_internal_snapshot_id` or begin snapshot
(inlined: its begin_snapshot) and deleted by the first of its delete records and its file's end, the rules of the
change feed (`change_plan.py`), so a batch holds what the reference's `table_insertions(a+1, b)` (or
`table_changes`) returns. Files are chosen from the catalog alone, except delete files of partial data files,
whose per-position snapshots only their footers bound.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import pyarrow as pa
import sqlalchemy as sa

from ...errors import NotFoundError, SchemaMismatchError
from ...spec import paths
from ...spec.model import Column, TableInfo
from ...spec.snapshot_changes import parse_changes
from ..database.spec_tables import T
from ..inlined import codec as inlined
from ..inlined import tables as inlined_tables
from ..inlined.tables import BEGIN_COL, END_COL
from ..reads import reader

# A delete file's path -> (min, max) of its per-position snapshots from its footer, None without that column.
# The data plane reads the footer (spark.delete_files.snapshot_range); planning here only reads the catalog.
SnapshotRange = Callable[[str], tuple[int, int] | None]


@dataclass(frozen=True)
class DeleteTask:
    """A positional delete file of a data file: rows it lists were deleted at `begin`, or at the snapshot stored
    per position (merged, flushed files); `last` bounds those snapshots (None: unknown)."""

    path: str  # absolute
    begin: int
    last: int | None


@dataclass(frozen=True)
class FileTask:
    """One data file of a batch, as an executor reads it."""

    path: str  # absolute
    begin_snapshot: int
    row_id_start: int | None
    partial_max: int | None
    file_end: int | None = None  # end_snapshot when it falls in the batch's range
    delete_files: tuple[DeleteTask, ...] = ()  # every delete file up to the batch's end
    inlined_deletes: tuple[tuple[int, int], ...] = ()  # (position, snapshot) up to the batch's end

    def insert_span(self, start: int, end: int) -> tuple[int, int] | None:
        """Snapshots in start..end that may have inserted rows of this file."""
        last = max(self.begin_snapshot, self.partial_max or 0)
        # A partial (compacted, flushed) file's rows carry their own snapshots, any of them up to partial_max.
        lo, hi = (start if self.partial_max is not None else max(self.begin_snapshot, start)), min(last, end)
        return (lo, hi) if lo <= hi and last >= start else None

    def delete_spans(self, start: int, end: int) -> list[tuple[int, int]]:
        """Snapshots in start..end that may have deleted rows of this file."""
        spans = [(min(d.begin, self.begin_snapshot), end if d.last is None else d.last) for d in self.delete_files]
        spans += [(snap, snap) for _pos, snap in self.inlined_deletes]
        if self.file_end is not None:
            spans.append((self.file_end, self.file_end))
        clipped = [(max(lo, start), min(hi, end)) for lo, hi in spans]
        return [(lo, hi) for lo, hi in clipped if lo <= hi]


@dataclass
class BatchPlan:
    """What one micro-batch (snapshots start..end) reads: data files and inlined rows."""

    start: int
    end: int
    files: list[FileTask] = field(default_factory=list)
    inlined: pa.Table | None = None  # inlined rows inserted or deleted in the range, with both snapshots


def latest_snapshot(conn: sa.Connection) -> int:
    """The newest snapshot id."""
    return reader.latest_snapshot(conn).snapshot_id


def table_snapshots(conn: sa.Connection, table_id: int, after: int, upto: int) -> list[int]:
    """Snapshots in (after, upto] whose changes name the table (inserts, deletes, compaction, ...), in order."""
    sc = T["ducklake_snapshot_changes"]
    query = (sa.select(sc.c.snapshot_id, sc.c.changes_made)
             .where(sc.c.snapshot_id > after, sc.c.snapshot_id <= upto).order_by(sc.c.snapshot_id))
    wanted = str(table_id)
    return [snap for snap, made in conn.execute(query)
            if any(change.value == wanted for change in parse_changes(made))]


def batch_end(conn: sa.Connection, table_id: int, start: int, latest: int, max_snapshots: int | None) -> int:
    """The end offset of a batch starting after `start`: `latest`, or earlier so that at most `max_snapshots`
    snapshots changing the table fall in it."""
    if max_snapshots is None or latest <= start:
        return max(start, latest)
    changed = table_snapshots(conn, table_id, start, latest)
    return changed[max_snapshots - 1] if len(changed) > max_snapshots else latest


def check_columns(conn: sa.Connection, table: TableInfo, snapshot_id: int, since: int) -> None:
    """Raise unless the table still exists at the snapshot and, when the snapshot is newer than `since` (where
    the stream took its schema), still has the stream's columns and types: rows of added columns would be lost."""
    t = T["ducklake_table"]
    alive = conn.execute(sa.select(t.c.table_id).where(t.c.table_id == table.table_id,
                                                       reader.visible(t, snapshot_id)).limit(1)).first()
    if alive is None:
        raise NotFoundError(f"table {table.qualified_name} (id {table.table_id}) no longer exists at snapshot "
                            f"{snapshot_id}; the stream cannot go on")
    if snapshot_id <= since:
        return
    now = {c.column_id: c for c in reader.load_columns(conn, [table.table_id], snapshot_id).get(table.table_id, [])}
    then = {c.column_id: c for c in table.columns}
    if _shape(now) != _shape(then):
        raise SchemaMismatchError(
            f"the schema of {table.qualified_name} changed after snapshot {since} (by snapshot {snapshot_id}); "
            "restart the streaming query to read the new schema (it resumes from its checkpoint)")


def _shape(columns: dict[int, Column]) -> set[tuple[int, str]]:
    """Column ids with their types at every depth (names may change: columns are read by id)."""
    return {(c.column_id, c.type) for top in columns.values() for c in top.walk()}


def plan_batch(conn: sa.Connection, table: TableInfo, start: int, end: int, *, deletes: bool,
               delete_spans: dict[str, tuple[int, int] | None] | None = None,
               snapshot_range: SnapshotRange | None = None) -> BatchPlan:
    """The tasks of a batch over snapshots start..end (inclusive) in the stream's columns (`table.columns`).

    Without `deletes` only files that may hold rows inserted in the range are kept. With it, files that may hold
    rows deleted in the range too, with every delete record up to `end` (a later delete file may repeat positions
    deleted earlier; the first deletion counts). `snapshot_range` reads the footers of delete files of partial
    data files (needed with `deletes` when there are such files); `delete_spans` caches what it said.
    """
    plan = BatchPlan(start=start, end=end)
    if start > end:
        return plan
    inlined = inlined_tables.rows_changed_between(conn, table.table_id, table.columns, start, end)
    if inlined is not None and inlined.num_rows:
        plan.inlined = inlined
    files = [(f, file_end) for f, file_end in _data_files(conn, table, end)
             if file_end is None or file_end >= start]  # rows of files ended earlier were all gone by then
    if not deletes:
        plan.files = [f for f, _end in files if f.insert_span(start, end) is not None]
        return plan
    removals = _delete_files(conn, table, end)
    small = _inlined_deletes(conn, table, end)
    cache = {} if delete_spans is None else delete_spans
    for f, file_end in files:
        records = tuple(DeleteTask(path, begin, _last_deletion(path, begin, last, f.partial_max is not None, cache,
                                                               snapshot_range))
                        for path, begin, last in removals.get(f.path, ()))
        task = replace(f, file_end=file_end if file_end is not None and file_end <= end else None,
                       delete_files=records, inlined_deletes=tuple(small.get(f.path, ())))
        if task.insert_span(start, end) is not None or task.delete_spans(start, end):
            plan.files.append(task)
    return plan


def _last_deletion(path: str, begin: int, partial_max: int | None, partial_file: bool,
                   cache: dict[str, tuple[int, int] | None], snapshot_range: SnapshotRange | None) -> int | None:
    """The newest snapshot a delete file can hold. A plain one holds its begin snapshot; a partial one up to its
    partial_max. Those of partial data files (the reference's flush writes them beginning at their oldest
    deletion, without partial_max) say it only in their footer's statistics, read once per file (files never
    change)."""
    if partial_max is not None:
        return max(partial_max, begin)
    if not partial_file:
        return begin
    if path not in cache:
        if snapshot_range is None:
            raise TypeError("plan_batch needs snapshot_range to plan deletions of partial data files")
        cache[path] = snapshot_range(path)
    found = cache[path]
    return begin if found is None else max(found[1], begin)


def _data_files(conn: sa.Connection, table: TableInfo, end: int) -> list[tuple[FileTask, int | None]]:
    """Every data file of the table begun by `end` (ended or not), with its end_snapshot."""
    df = T["ducklake_data_file"]
    query = (sa.select(df.c.path, df.c.path_is_relative, df.c.row_id_start, df.c.begin_snapshot,
                       df.c.end_snapshot, df.c.partial_max)
             .where(df.c.table_id == table.table_id, df.c.begin_snapshot <= end).order_by(df.c.data_file_id))
    return [(FileTask(path=paths.join(table.path, r.path, r.path_is_relative), begin_snapshot=r.begin_snapshot,
                      row_id_start=r.row_id_start, partial_max=r.partial_max), r.end_snapshot)
            for r in conn.execute(query)]


def _delete_files(conn: sa.Connection, table: TableInfo, end: int) -> dict[str, list[tuple[str, int, int | None]]]:
    """(path, begin_snapshot, partial_max) of every delete file begun by `end`, per data file path."""
    df, dl = T["ducklake_data_file"], T["ducklake_delete_file"]
    query = (sa.select(df.c.path.label("data_path"), df.c.path_is_relative.label("data_relative"), dl.c.path,
                       dl.c.path_is_relative, dl.c.begin_snapshot, dl.c.partial_max)
             .join(df, df.c.data_file_id == dl.c.data_file_id)
             .where(dl.c.table_id == table.table_id, dl.c.begin_snapshot <= end))
    out: dict[str, list[tuple[str, int, int | None]]] = defaultdict(list)
    for r in conn.execute(query):
        out[paths.join(table.path, r.data_path, r.data_relative)].append(
            (paths.join(table.path, r.path, r.path_is_relative), r.begin_snapshot, r.partial_max))
    return out


def _inlined_deletes(conn: sa.Connection, table: TableInfo, end: int) -> dict[str, list[tuple[int, int]]]:
    """(position, snapshot) of every inlined delete of a data file row begun by `end`, per data file path."""
    name = inlined.inlined_delete_table_name(table.table_id)
    out: dict[str, list[tuple[int, int]]] = defaultdict(list)
    if not sa.inspect(conn).has_table(name):
        return out
    df = T["ducklake_data_file"]
    small = sa.table(name, sa.column("file_id"), sa.column("row_id"), sa.column("begin_snapshot"))
    query = (sa.select(df.c.path, df.c.path_is_relative, small.c.row_id, small.c.begin_snapshot)
             .join(df, df.c.data_file_id == small.c.file_id).where(small.c.begin_snapshot <= end))
    for r in conn.execute(query):
        out[paths.join(table.path, r.path, r.path_is_relative)].append((r.row_id, r.begin_snapshot))
    return out


def change_groups(plan: BatchPlan) -> list[tuple[list[FileTask], bool]]:
    """The plan's files (and its inlined rows, the flag) in groups that must be read together to pair an update's
    delete and insert of one row id in one snapshot; a file whose snapshots touch no deletion is a group alone."""
    nodes: list[tuple[list[tuple[int, int]], list[tuple[int, int]]]] = []  # (insert spans, delete spans)
    for f in plan.files:
        span = f.insert_span(plan.start, plan.end)
        nodes.append(([span] if span else [], f.delete_spans(plan.start, plan.end)))
    inlined = plan.inlined is not None
    if inlined:
        begins = {s for s in plan.inlined.column(BEGIN_COL).to_pylist() if s is not None}  # type: ignore[union-attr]  # inlined
        ends = {s for s in plan.inlined.column(END_COL).to_pylist() if s is not None}  # type: ignore[union-attr]  # inlined
        nodes.append(([(s, s) for s in begins if plan.start <= s <= plan.end],
                      [(s, s) for s in ends if plan.start <= s <= plan.end]))
    deleted = _merge([span for _ins, dels in nodes for span in dels])
    relevant = []
    for i, (ins, dels) in enumerate(nodes):
        relevant += [(lo, hi, i) for lo, hi in dels]
        relevant += [(lo, hi, i) for lo, hi in ins if any(lo <= d_hi and d_lo <= hi for d_lo, d_hi in deleted)]
    parent = list(range(len(nodes)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    relevant.sort()
    last: int
    reach, last = None, None  # type: ignore[assignment]  # `last` is read only once `reach` is set
    for lo, hi, i in relevant:
        if reach is not None and lo <= reach:
            parent[root(i)] = root(last)
            reach = max(reach, hi)
        else:
            reach = hi
        last = i
    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(len(nodes)):
        groups[root(i)].append(i)
    n_files = len(plan.files)
    return [([plan.files[i] for i in members if i < n_files], inlined and n_files in members)
            for members in groups.values()]


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged
