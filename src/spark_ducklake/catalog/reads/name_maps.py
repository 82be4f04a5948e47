"""Name mappings (ducklake_column_mapping / ducklake_name_mapping): how files without field ids map to columns.

A file with a `mapping_id` is read by the names its mapping lists (`source_name` -> `target_field_id`, nested
through `parent_column`), as the reference does for files it registered with `ducklake_add_data_files` and for
files whose writer left out field ids. Columns the mapping lacks read their initial default; columns flagged
`is_partition` are not in the file at all: their value comes from the file's hive path, which the file's column
statistics record (min = max = the value, or all NULL).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from ...spec import types
from ...spec.model import DataFile, TableInfo
from ..database.spec_tables import T
from .file_list import nulls_in


@dataclass(frozen=True)
class MappedField:
    """One entry of a name mapping: the file's field `source` holds column `column_id`."""

    column_id: int
    source: str
    hive: bool = False  # the value comes from the file's path (ducklake_name_mapping.is_partition)
    children: tuple[MappedField, ...] = ()

    def child(self, column_id: int) -> MappedField | None:
        """The mapped child for a nested column id, if the file has it."""
        return next((c for c in self.children if c.column_id == column_id), None)


NameMap = tuple[MappedField, ...]  # top-level entries; hashable, so files with equal mappings read together


def load_name_maps(conn: sa.Connection, mapping_ids: set[int]) -> dict[int, NameMap]:
    """The mapping trees of the given mapping ids."""
    nm = T["ducklake_name_mapping"]
    rows: dict[int, list[Any]] = defaultdict(list)
    ids = sorted(mapping_ids)
    for start in range(0, len(ids), 500):
        query = sa.select(nm.c.mapping_id, nm.c.column_id, nm.c.source_name, nm.c.target_field_id,
                          nm.c.parent_column, nm.c.is_partition).where(nm.c.mapping_id.in_(ids[start:start + 500]))
        for r in conn.execute(query):
            rows[r.mapping_id].append(r)
    return {mapping_id: _tree(entries) for mapping_id, entries in rows.items()}


def _tree(entries: Any) -> NameMap:
    kids: dict[int | None, list[Any]] = defaultdict(list)
    for r in sorted(entries, key=lambda r: r.column_id):
        kids[r.parent_column].append(r)

    def build(r: Any) -> MappedField:
        return MappedField(r.target_field_id, r.source_name, bool(r.is_partition),
                           tuple(build(k) for k in kids.get(r.column_id, ())))

    return tuple(build(r) for r in kids.get(None, ()))


def apply_name_maps(conn: sa.Connection, table: TableInfo, files: Sequence[DataFile]) -> None:
    """Give files with a mapping their `name_map`, the columns they lack (`absent_columns`) and the values of
    their hive-path columns (`hive_values`). Costs nothing when no file has a mapping."""
    if nulls_in(files, "mapping_id") == len(files):  # a FileList answers from its columns: no object built
        return
    mapped = [f for f in files if f.mapping_id is not None]
    if not mapped:
        return
    maps = load_name_maps(conn, {f.mapping_id for f in mapped})  # type: ignore[misc]  # mapped: ids not None
    hive_ids: set[int] = set()
    for f in mapped:
        f.name_map = maps.get(f.mapping_id, ())  # type: ignore[arg-type]  # mapped: id not None
        present = {m.column_id for m in f.name_map}
        f.absent_columns = frozenset(c.column_id for c in table.columns if c.column_id not in present)
        hive_ids |= {m.column_id for m in f.name_map if m.hive}
    if hive_ids:
        _load_hive_values(conn, table, [f for f in mapped if any(m.hive for m in f.name_map)])  # type: ignore[union-attr]  # set above


def _load_hive_values(conn: sa.Connection, table: TableInfo, files: list[DataFile]) -> None:
    stats = T["ducklake_file_column_stats"]
    by_id = {c.column_id: c for c in table.columns}
    found: dict[int, dict[int, tuple[Any, ...]]] = defaultdict(dict)
    for start in range(0, len(files), 500):
        ids = [f.data_file_id for f in files[start:start + 500]]
        query = sa.select(stats.c.data_file_id, stats.c.column_id, stats.c.null_count, stats.c.min_value).where(
            stats.c.table_id == table.table_id, stats.c.data_file_id.in_(ids))
        for file_id, column_id, nulls, low in conn.execute(query):
            found[file_id][column_id] = (nulls, low)
    for f in files:
        values = {}
        for m in f.name_map:  # type: ignore[union-attr]  # the files passed have their name maps
            col = by_id.get(m.column_id)
            if not m.hive or col is None:
                continue
            nulls, low = found[f.data_file_id].get(m.column_id, (f.record_count, None))
            values[m.column_id] = None if low is None or (nulls or 0) >= f.record_count > 0 else \
                types.parse_literal(col.type, low)
        f.hive_values = values
