"""The change feed with pyarrow: the rows of `table_changes`, `table_insertions` and `table_deletions` as Arrow.

The same rows as `dataplane/spark/change_feed.py` (whose docstring gives the rules), computed on the driver: the
engine's `change_feed` verb runs them when the files the feed reads are at most the small-data threshold
(`lake.table_changes_arrow`), and the catalog service's change scans. Every row version gets the snapshot that
inserted it and the first one that deleted it (delete files, deletion vectors, inlined deletes, a file's end); a
delete and an insert of one row id in one snapshot are an update's pre- and postimage.
"""

from __future__ import annotations

from typing import Literal

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ...catalog.inlined import tables as inlined_tables
from ...catalog.planners.change_feed import ChangePlan
from ...spec.internal_columns import INLINED_ROW_ID, SNAPSHOT_ID_COLUMN
from .deletion_vectors import positions_table
from .local_scan import ROWID, visible_schema
from .row_versions import INSERTED, read_versions
from .scan_columns import DELETED, FILE, POS
from .storage import filesystem

SNAPSHOT_ID, CHANGE_TYPE = "snapshot_id", "change_type"
FILE_END = "_dl_file_end"
FeedKind = Literal["changes", "insertions", "deletions"]  # table_changes, table_insertions, table_deletions


def row_versions(plan: ChangePlan) -> pa.Table:
    """Every row version the plan covers, as `spark.change_feed.row_versions` gives them: the table's columns,
    `rowid`, `_dl_inserted`, `_dl_deleted` (NULL: not deleted by the end snapshot), `_dl_file`, `_dl_pos`."""
    columns = plan.table.columns
    names = [c.name for c in columns] + [ROWID, INSERTED, DELETED, FILE, POS]
    parts = []
    if plan.files:
        data = read_versions(plan.files, columns)
        deleted = _first_deletions(plan)
        deleted_at = pa.nulls(data.num_rows, pa.int64()) if deleted is None else _lookup(
            data, [FILE, POS], deleted, DELETED)
        if plan.file_ends:
            ends = pa.table({FILE: pa.array(list(plan.file_ends), pa.int64()),
                             FILE_END: pa.array(list(plan.file_ends.values()), pa.int64())})
            deleted_at = pc.min_element_wise(deleted_at, _lookup(data, [FILE], ends, FILE_END), skip_nulls=True)
        parts.append(pa.Table.from_arrays([data.column(n) for n in names[:-3]] + [
            deleted_at, data.column(FILE), data.column(POS)], names=names))
    schema = parts[0].schema if parts else pa.schema(
        list(visible_schema(columns)) + [pa.field(n, pa.int64()) for n in names[len(columns):]])
    if plan.inlined is not None and plan.inlined.num_rows:
        rows = plan.inlined
        by_name = {n.lower(): n for n in rows.column_names}
        ids = rows.column(INLINED_ROW_ID).cast(pa.int64())
        arrays = [rows.column(by_name[c.name.lower()]).cast(f.type) for c, f in zip(columns, schema, strict=False)]
        arrays += [ids, rows.column(inlined_tables.BEGIN_COL).cast(pa.int64()),
                   rows.column(inlined_tables.END_COL).cast(pa.int64()), pa.nulls(rows.num_rows, pa.int64()), ids]
        parts.append(pa.Table.from_arrays([pa.chunked_array(a) if isinstance(a, pa.Array) else a for a in arrays],
                                          schema=schema))
    versions = pa.concat_tables(parts) if parts else schema.empty_table()
    # Partial files and inlined rows may hold versions inserted or deleted after the end snapshot.
    versions = versions.filter(pc.less_equal(versions.column(INSERTED), plan.end))
    gone = versions.column(DELETED)
    later = pc.fill_null(pc.greater(gone, plan.end), False)
    return versions.set_column(len(columns) + 2, DELETED, pc.if_else(later, pa.scalar(None, pa.int64()), gone))


def _lookup(rows: pa.Table, keys: list[str], values: pa.Table, column: str) -> pa.Array:
    """`values[column]` for each row of `rows` by `keys` (unique in `values`; NULL where absent), in row order
    (only keys are joined: Acero joins no nested payload columns)."""
    index = pa.table({**{k: rows.column(k) for k in keys}, "_dl_idx": pa.array(range(rows.num_rows), pa.int64())})
    joined = index.join(values.select([*keys, column]), keys, join_type="left outer")
    return joined.take(pc.sort_indices(joined.column("_dl_idx"))).column(column).combine_chunks()


def _first_deletions(plan: ChangePlan) -> pa.Table | None:
    """(`_dl_file`, `_dl_pos`, `_dl_deleted`): the first snapshot that deleted each deleted position."""
    parts = []
    for path, fid, begin in plan.delete_files:
        if path.endswith(".puffin"):
            parts.append(positions_table(path, fid, begin, None, (FILE, POS, DELETED)))
            continue
        fs, inner = filesystem(path)
        names = pq.read_schema(inner, filesystem=fs).names
        stored = pq.read_table(inner, columns=["pos"] + [n for n in (SNAPSHOT_ID_COLUMN,) if n in names],
                               filesystem=fs)
        when = pa.repeat(pa.scalar(begin, pa.int64()), stored.num_rows)
        if SNAPSHOT_ID_COLUMN in stored.column_names:
            when = pc.coalesce(stored.column(SNAPSHOT_ID_COLUMN).combine_chunks().cast(pa.int64()), when)
        parts.append(pa.table({FILE: pa.repeat(pa.scalar(fid, pa.int64()), stored.num_rows),
                               POS: stored.column("pos").combine_chunks().cast(pa.int64()), DELETED: when}))
    if plan.inlined_deletes:
        fids, pos, snaps = zip(*plan.inlined_deletes, strict=True)
        parts.append(pa.table({FILE: pa.array(fids, pa.int64()), POS: pa.array(pos, pa.int64()),
                               DELETED: pa.array(snaps, pa.int64())}))
    if not parts:
        return None
    events = pa.concat_tables([p.cast(parts[0].schema) for p in parts])
    return events.group_by([FILE, POS]).aggregate([(DELETED, "min")]).rename_columns([FILE, POS, DELETED])


def _in_range(values: pa.ChunkedArray, plan: ChangePlan) -> pa.ChunkedArray:
    return pc.fill_null(pc.and_(pc.greater_equal(values, plan.start), pc.less_equal(values, plan.end)), False)


def insertions(plan: ChangePlan) -> pa.Table:
    """`table_insertions`: snapshot_id, rowid and the table's columns of rows inserted in the range."""
    versions = row_versions(plan)
    rows = versions.filter(_in_range(versions.column(INSERTED), plan))
    return _shape(rows, rows.column(INSERTED), plan)


def deletions(plan: ChangePlan) -> pa.Table:
    """`table_deletions`: snapshot_id, rowid and the table's columns of rows deleted in the range."""
    versions = row_versions(plan)
    rows = versions.filter(_in_range(versions.column(DELETED), plan))
    return _shape(rows, rows.column(DELETED), plan)


def changes(plan: ChangePlan) -> pa.Table:
    """`table_changes`: snapshot_id, rowid, change_type and the table's columns."""
    versions = row_versions(plan)
    inserted = versions.filter(_in_range(versions.column(INSERTED), plan))
    deleted = versions.filter(_in_range(versions.column(DELETED), plan))
    events = pa.concat_tables([
        _shape(inserted, inserted.column(INSERTED), plan).append_column("_dl_ins", pa.repeat(
            pa.scalar(1, pa.int8()), inserted.num_rows)),
        _shape(deleted, deleted.column(DELETED), plan).append_column("_dl_ins", pa.repeat(
            pa.scalar(0, pa.int8()), deleted.num_rows)),
    ])
    both = events.group_by([SNAPSHOT_ID, ROWID]).aggregate([("_dl_ins", "count_distinct")])
    updates = both.filter(pc.equal(both.column("_dl_ins_count_distinct"), 2)).select([SNAPSHOT_ID, ROWID])
    updates = updates.append_column("_dl_update", pa.repeat(pa.scalar(True), updates.num_rows))
    update = pc.fill_null(_lookup(events, [SNAPSHOT_ID, ROWID], updates, "_dl_update"), False)
    ins = pc.equal(events.column("_dl_ins"), 1)
    kind = pc.if_else(update, pc.if_else(ins, "update_postimage", "update_preimage"),
                      pc.if_else(ins, "insert", "delete"))
    names = [c.name for c in plan.table.columns]
    return pa.Table.from_arrays([events.column(SNAPSHOT_ID), events.column(ROWID), kind]
                                + [events.column(n) for n in names], names=[SNAPSHOT_ID, ROWID, CHANGE_TYPE, *names])


def _shape(rows: pa.Table, snapshot: pa.ChunkedArray, plan: ChangePlan) -> pa.Table:
    names = [c.name for c in plan.table.columns]
    return pa.Table.from_arrays([snapshot, rows.column(ROWID)] + [rows.column(n) for n in names],
                                names=[SNAPSHOT_ID, ROWID, *names])


def feed_rows(plan: ChangePlan, kind: FeedKind) -> pa.Table:
    """One change feed of the plan as Arrow: `kind` names it."""
    return {"changes": changes, "insertions": insertions, "deletions": deletions}[kind](plan)
