"""Data file lists of big tables kept between scans, checked against the catalog on every use.

The files visible at a snapshot look immutable but are not: compaction (`merge_adjacent_files`) replaces files
under old snapshots too, and expiry deletes rows. So each use of a kept list runs one aggregate over the visible
rows of the data and delete file tables: (count, sum and max of the ids); a first load computes the same from the
rows it fetched. File ids only ever grow (`next_file_id`), so a
file added anywhere raises the max, one removed lowers the count: any change to the visible set changes the
fingerprint. Rows themselves never change except their end_snapshot, which is what visibility reads.

A scan of another snapshot of a cached table (typically: the next one, after a commit) starts from the cached
list when that one still matches its fingerprint and the table's columns are the same: only the rows whose
begin or end snapshot lies between the two are fetched (a file's visibility changes nowhere else). Both
snapshots' fingerprints are read in one pass over the catalog rows.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import sqlalchemy as sa

from ...spec.model import DataFile, TableInfo
from ..database.spec_tables import T
from . import reader
from .file_list import FEW, FileList, fetch
from .file_list import load as load_list

MIN_FILES = 1_000  # smaller lists load in a few ms: not worth holding
MAX_ENTRIES = 4  # 100k files: ~10 MB of columns, ~50 MB more once their DataFile objects are built


@dataclass
class _Entry:
    fingerprint: tuple[Any, ...]
    files: FileList
    columns: list[Any]

    def sorted_by_id(self) -> bool:
        """Whether the list is in id order (no file_order in use), which a merge with other files keeps."""
        return self.files.column("file_order").null_count == len(self.files)


class FileListCache:
    """`reader.data_files` for big tables, kept per (table, snapshot) while the catalog's fingerprint matches."""

    def __init__(self, min_files: int = MIN_FILES, max_entries: int = MAX_ENTRIES) -> None:
        self.min_files, self.max_entries = min_files, max_entries
        self._entries: OrderedDict[tuple[Any, ...], _Entry] = OrderedDict()

    def data_files(self, conn: sa.Connection, table: TableInfo, snapshot_id: int) -> Sequence[DataFile]:
        """The table's files visible at the snapshot (a new list, or FileList; the DataFile objects may be
        shared)."""
        key = (table.table_id, snapshot_id, table.path)
        cached = self._entries.get(key)
        few = min(FEW, self.min_files - 1)  # lists kept are FileLists
        neighbour = self._neighbour(table) if cached is None else None
        if cached is None and neighbour is None:  # a first scan: no aggregate, one load
            files, current = load(conn, table, snapshot_id, few)
            return self._keep(key, current, files, table)
        # Taken before the load: a commit in between pairs the new files with the old fingerprint, so the next
        # use reloads (the other order could keep an outdated list for good). A neighbour's is taken in the same
        # pass over the catalog rows.
        found = fingerprints(conn, table.table_id, [snapshot_id] + ([neighbour[0]] if neighbour else []))
        current = found[0]
        if cached is not None and cached.fingerprint == current:
            self._entries.move_to_end(key)
            return cached.files.copy()
        self._entries.pop(key, None)
        files = self._from_neighbour(conn, table, snapshot_id, found[1] if neighbour else None)  # type: ignore[assignment]  # None: below
        if files is None:
            files = load_list(conn, table, snapshot_id, reader.delete_files(conn, table, snapshot_id), few)
        return self._keep(key, current, files, table)

    def _keep(self, key: tuple[Any, ...], current: tuple[Any, ...], files: Sequence[DataFile],
              table: TableInfo) -> Sequence[DataFile]:
        if len(files) >= self.min_files and isinstance(files, FileList):
            self._entries[key] = _Entry(current, files, table.columns)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
            return files.copy()
        return files

    def _from_neighbour(self, conn: sa.Connection, table: TableInfo, snapshot_id: int,
                        base_fingerprint: tuple[Any, ...] | None = None) -> FileList | None:
        """The files at `snapshot_id` from the most recently used list of another snapshot of the table, or None
        when there is none still valid (same fingerprint, same columns) or file_order is in use
        (`base_fingerprint`: that list's snapshot's, when already read)."""
        found = self._neighbour(table)
        if found is None:
            return None
        base_snapshot, entry = found
        if not entry.sorted_by_id():
            return None
        if base_fingerprint is None:
            base_fingerprint = fingerprint(conn, table.table_id, base_snapshot)
        if base_fingerprint != entry.fingerprint:
            return None
        df = T["ducklake_data_file"]
        low, high = sorted((base_snapshot, snapshot_id))
        changed = sa.or_(sa.and_(df.c.begin_snapshot > low, df.c.begin_snapshot <= high),
                         sa.and_(df.c.end_snapshot > low, df.c.end_snapshot <= high))
        removed = [r[0] for r in reader.driver_rows(conn, sa.select(df.c.data_file_id).where(
            df.c.table_id == table.table_id, changed))]
        added = fetch(conn, table.table_id, sa.and_(changed, reader.visible(df, snapshot_id)))
        if added.column("file_order").null_count != added.num_rows:
            return None
        # The cached list's columns and objects stay as they were: a new list over the kept rows and the added
        # ones, its objects those of the kept files (replaced where their delete file changed).
        base = entry.files
        gone = pc.is_in(base.ids(), pa.array(removed, pa.int64()))
        if pc.any(gone).as_py():  # no copy of 100k rows when files were only added
            base = base.take(pc.indices_nonzero(pc.invert(gone)))
        base = base.with_deletes(reader.delete_files(conn, table, snapshot_id))
        rows = pa.concat_tables([base.rows, added])
        objects = base.objects_or_none() + [None] * added.num_rows if base.annotated() else None
        top, new_ids = pc.max(base.ids()).as_py(), added.column("data_file_id")
        if not added.num_rows or ((top is None or pc.min(new_ids).as_py() > top) and _ascending(new_ids)):
            return FileList(table, rows, base.deletes, objects)  # new files have new ids: already in id order
        order = pc.sort_indices(rows, sort_keys=[("data_file_id", "ascending")])
        return FileList(table, rows.take(order), base.deletes,
                        None if objects is None else [objects[i] for i in order.to_pylist()])

    def _neighbour(self, table: TableInfo) -> tuple[int, _Entry] | None:
        """(snapshot, entry) of the most recently used list of the table with the same columns, or None."""
        return next(((key[1], entry) for key, entry in reversed(self._entries.items())
                     if key[0] == table.table_id and key[2] == table.path and entry.columns == table.columns), None)

    def clear(self) -> None:
        """Forget every list (the next scan of each table loads it from the catalog)."""
        self._entries.clear()


def _ascending(ids: pa.ChunkedArray) -> bool:
    ids = ids.combine_chunks()
    return len(ids) < 2 or pc.all(pc.less(ids[:-1], ids[1:])).as_py()


def fingerprints(conn: sa.Connection, table_id: int, snapshot_ids: list[int]) -> list[tuple[Any, ...]]:
    """`fingerprint` at each snapshot, in one round trip and one pass over each table's rows."""
    if len(snapshot_ids) == 1:
        return [fingerprint(conn, table_id, snapshot_ids[0])]
    df, dl = T["ducklake_data_file"], T["ducklake_delete_file"]
    parts = []
    for table, id_col in ((df, df.c.data_file_id), (dl, dl.c.delete_file_id)):
        aggregates = []
        for i, snapshot_id in enumerate(snapshot_ids):
            seen = sa.case((reader.visible(table, snapshot_id), id_col))  # NULL where not visible
            aggregates += [sa.func.count(seen).label(f"n{i}"), sa.func.sum(seen).label(f"total{i}"),
                           sa.func.max(seen).label(f"top{i}")]
        parts.append(sa.select(*aggregates).where(table.c.table_id == table_id).subquery())
    both = parts[0].join(parts[1], sa.true())  # one row each: a cross join, said so
    row = conn.execute(sa.select(*parts[0].c, *parts[1].c).select_from(both)).one()
    width = 3 * len(snapshot_ids)
    return [tuple(row[3 * i:3 * i + 3]) + tuple(row[width + 3 * i:width + 3 * i + 3])
            for i in range(len(snapshot_ids))]


def fingerprint(conn: sa.Connection, table_id: int, snapshot_id: int) -> tuple[Any, ...]:
    """(count, sum, max) of the ids of the table's data files and of its delete files visible at the snapshot,
    in one round trip."""
    df, dl = T["ducklake_data_file"], T["ducklake_delete_file"]
    parts = [
        sa.select(sa.func.count().label("n"), sa.func.sum(id_col).label("total"), sa.func.max(id_col).label("top"))
        .where(table.c.table_id == table_id, reader.visible(table, snapshot_id)).subquery()
        for table, id_col in ((df, df.c.data_file_id), (dl, dl.c.delete_file_id))
    ]
    both = parts[0].join(parts[1], sa.true())  # one row each: a cross join, said so
    return tuple(conn.execute(sa.select(*parts[0].c, *parts[1].c).select_from(both)).one())


def load(conn: sa.Connection, table: TableInfo, snapshot_id: int,
         few: int = 0) -> tuple[Sequence[DataFile], tuple[Any, ...]]:
    """`reader.data_files` (a FileList, or up to `few` files a list) and the fingerprint of exactly the rows it
    loaded (no aggregate query: rows loaded from one catalog state match that state's fingerprint; a commit
    between the two queries makes a pair that matches no later state, so the next use reloads)."""
    deletes = reader.delete_files(conn, table, snapshot_id)
    files = load_list(conn, table, snapshot_id, deletes, few)
    if isinstance(files, FileList):
        ids = files.ids()
        total, top = pc.sum(ids).as_py(), pc.max(ids).as_py()
    else:
        ids = [f.data_file_id for f in files]
        total, top = (sum(ids) if ids else None), max(ids, default=None)
    delete_ids = [d.delete_file_id for d in deletes.values()]  # one per data file, as the catalog holds them
    current = (len(ids), total, top,
               len(delete_ids), sum(delete_ids) if delete_ids else None, max(delete_ids, default=None))
    return files, current
