"""Which columns a data file lacks, from its column statistics.

A file written before a column was added lacks it, but so can a file written later: the reference's
`rewrite_data_files`, `flush_inlined_data` and compaction copy rows in the schema they were written with. Such
files must read the column's initial default (as the reference does), not NULL. Every writer records statistics
for each Parquet leaf it writes, so a file with statistics but none for any leaf of a column lacks that column.
Only columns added after the table was created can be missing, and only files holding rows older than themselves
(compacted or flushed ones have `partial_max`, rewritten ones no `row_id_start`) can lack a column they postdate;
for other files the snapshot a column was added decides. So ordinary tables and files cost no query at all.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import sqlalchemy as sa

from ...spec.model import DataFile, TableInfo
from ..database.spec_tables import T
from .file_list import nulls_in
from .name_maps import apply_name_maps


def mark_absent_columns(conn: sa.Connection, table: TableInfo, files: Sequence[DataFile]) -> None:
    """Set `absent_columns` on the files that have statistics; the others keep None (decided by snapshots)."""
    apply_name_maps(conn, table, files)  # files read by name: their mapping says what they lack
    added = [c.added_snapshot for c in table.columns if c.added_snapshot is not None]
    if not files or not added:
        return
    created = min(added)
    late = {c.column_id: {leaf.column_id for leaf in c.walk()} for c in table.columns
            if c.added_snapshot is not None and c.added_snapshot > created}
    if not late:
        return
    if nulls_in(files, "partial_max") == len(files) and not nulls_in(files, "row_id_start"):
        return  # no compacted, flushed or rewritten file (a FileList answers from its columns)
    candidates = [f for f in files if (f.partial_max is not None or f.row_id_start is None) and f.name_map is None]
    if not candidates:
        return
    stats = T["ducklake_file_column_stats"]
    present: dict[int, set[int]] = defaultdict(set)
    for start in range(0, len(candidates), 500):
        ids = [f.data_file_id for f in candidates[start:start + 500]]
        for file_id, column_id in conn.execute(
            sa.select(stats.c.data_file_id, stats.c.column_id)
            .where(stats.c.table_id == table.table_id, stats.c.data_file_id.in_(ids))
        ):
            present[file_id].add(column_id)
    for f in candidates:
        if present[f.data_file_id]:  # no statistics at all: leave it to the snapshots
            f.absent_columns = frozenset(top for top, leaves in late.items()
                                         if not leaves & present[f.data_file_id])
