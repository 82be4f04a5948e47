"""A micro-batch's rows, read with pyarrow on the executors (a Python data source cannot call Spark's reader).

Columns are found by Parquet field id, which is the catalog's column id, so renamed columns and struct fields
read right; a column a file lacks reads its initial default. Values are converted to the stream's Spark types.
Every row version gets its row id and the snapshots that inserted and deleted it, by the change feed's rules:
inserted by the file's `_ducklake_internal_snapshot_id` (compacted, flushed files) or its begin snapshot; deleted
by the first of its delete files (per-position snapshots of partial ones), inlined deletes and the file's end.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ...catalog.inlined.tables import BEGIN_COL, END_COL
from ...catalog.planners.stream import FileTask
from ...spec import types
from ...spec.internal_columns import INLINED_ROW_ID, ROW_ID_COLUMN, SNAPSHOT_ID_COLUMN
from ...spec.model import Column
from .arrow_values import spark_value
from .native_types import is_native
from .storage import filesystem

SNAPSHOT_ID, ROWID, CHANGE_TYPE = "snapshot_id", "rowid", "change_type"
INSERTED, DELETED = "_dl_inserted", "_dl_deleted"
FIELD_ID = b"PARQUET:field_id"


def file_versions(task: FileTask, columns: list[Column], schema: pa.Schema, start: int, end: int, *,
                  deletes: bool) -> pa.Table:
    """The file's row versions inserted in start..end (and, with `deletes`, those deleted in it): the stream's
    columns (`schema`), then `rowid`, `_dl_inserted`, `_dl_deleted`."""
    fs, inner = filesystem(task.path)
    with fs.open_input_file(inner) as fh:
        parquet = pq.ParquetFile(fh)
        file_schema = parquet.schema_arrow
        found = field_indexes(file_schema, columns)
        extras = [name for name in (SNAPSHOT_ID_COLUMN, ROW_ID_COLUMN) if name in file_schema.names]
        wanted = sorted({file_schema.field(i).name for i in found.values()}) + extras
        data = parquet.read(columns=wanted, use_threads=False)
    n = data.num_rows
    begin = pa.scalar(task.begin_snapshot, pa.int64())
    inserted = pa.repeat(begin, n)
    if SNAPSHOT_ID_COLUMN in extras:
        inserted = pc.coalesce(_flat(data.column(SNAPSHOT_ID_COLUMN)).cast(pa.int64()), begin)
    if deletes:  # row ids and deletions only matter to change rows
        pos = position_array(n)
        rowid = pc.add(pos, task.row_id_start) if task.row_id_start is not None else pa.nulls(n, pa.int64())
        if ROW_ID_COLUMN in extras:
            rowid = pc.coalesce(_flat(data.column(ROW_ID_COLUMN)).cast(pa.int64()), rowid)
        deleted = _deletions(task, n)
        keep = pc.or_kleene(_between(inserted, start, end), _between(deleted, start, end))
    else:
        rowid = deleted = pa.nulls(n, pa.int64())
        keep = _between(inserted, start, end)
    keep = pc.fill_null(keep, False)
    if _count(keep) < n:
        data, rowid, inserted, deleted = (x.filter(keep) for x in (data, rowid, inserted, deleted))
    arrays = []
    for col, target in zip(columns, schema, strict=True):
        if col.column_id in found:
            arrays.append(conform(data.column(file_schema.field(found[col.column_id]).name).combine_chunks(),
                                  col, target.type))
        else:
            arrays.append(default_array(col, target.type, data.num_rows))
    arrays += [rowid, inserted, deleted]
    return pa.Table.from_arrays(arrays, schema=_versions_schema(schema))


def inlined_versions(rows: pa.Table, columns: list[Column], schema: pa.Schema) -> pa.Table:
    """Inlined rows (from the catalog, already in the stream's columns) as row versions."""
    arrays = [rows.column(col.name).combine_chunks().cast(field.type) for col, field in zip(columns, schema,
                                                                                           strict=True)]
    arrays += [rows.column(INLINED_ROW_ID).cast(pa.int64()), rows.column(BEGIN_COL).cast(pa.int64()),
               rows.column(END_COL).cast(pa.int64())]
    return pa.Table.from_arrays(arrays, schema=_versions_schema(schema))


def insertions(versions: pa.Table, schema: pa.Schema, start: int, end: int) -> pa.Table:
    """The stream's columns of the row versions inserted in start..end."""
    keep = pc.fill_null(_between(versions.column(INSERTED), start, end), False)
    if _count(keep) < versions.num_rows:
        versions = versions.filter(keep)
    return versions.select(schema.names).cast(schema)


def changes(versions: pa.Table, schema: pa.Schema, start: int, end: int) -> pa.Table:
    """`table_changes` rows of start..end: snapshot_id, rowid, change_type, then the stream's columns. A delete and
    an insert of one row id in one snapshot are an update's pre- and postimage (both must be in `versions`)."""
    ins = versions.filter(pc.fill_null(_between(versions.column(INSERTED), start, end), False))
    dels = versions.filter(pc.fill_null(_between(versions.column(DELETED), start, end), False))
    events = pa.concat_tables([
        ins.append_column("_dl_snap", ins.column(INSERTED)).append_column("_dl_ins", pa.array([1] * ins.num_rows,
                                                                                            pa.int8())),
        dels.append_column("_dl_snap", dels.column(DELETED)).append_column("_dl_ins", pa.array([0] * dels.num_rows,
                                                                                             pa.int8())),
    ])
    keys = pa.table({"s": events.column("_dl_snap"), "r": events.column(ROWID), "i": events.column("_dl_ins"),
                     "n": pa.array(range(events.num_rows), pa.int64())})
    agg = keys.group_by(["s", "r"]).aggregate([("i", "min"), ("i", "max")])
    pairs = agg.filter(pc.and_(pc.equal(agg.column("i_min"), 0), pc.equal(agg.column("i_max"), 1)))
    pairs = pairs.select(["s", "r"]).append_column("u", pa.array([True] * pairs.num_rows, pa.bool_()))
    update = (keys.select(["s", "r", "n"]).join(pairs, ["s", "r"], join_type="left outer").sort_by("n")
              .column("u").combine_chunks())
    update = pc.fill_null(update, False)
    inserted = pc.equal(events.column("_dl_ins"), 1)
    kind = pc.if_else(update, pc.if_else(inserted, "update_postimage", "update_preimage"),
                      pc.if_else(inserted, "insert", "delete"))
    head = [events.column("_dl_snap"), events.column(ROWID), kind]
    out = pa.Table.from_arrays(head + [events.column(name) for name in schema.names],
                               names=[SNAPSHOT_ID, ROWID, CHANGE_TYPE] + schema.names)
    return out.cast(change_schema(schema))


def change_schema(schema: pa.Schema) -> pa.Schema:
    """The Arrow schema of change rows: snapshot_id, rowid, change_type, then the stream's columns."""
    head = [pa.field(SNAPSHOT_ID, pa.int64()), pa.field(ROWID, pa.int64()), pa.field(CHANGE_TYPE, pa.string())]
    return pa.schema(head + list(schema))


def _versions_schema(schema: pa.Schema) -> pa.Schema:
    return pa.schema(list(schema) + [pa.field(ROWID, pa.int64()), pa.field(INSERTED, pa.int64()),
                                     pa.field(DELETED, pa.int64())])


def position_array(n: int) -> pa.Array:
    """0, 1, ..., n-1 (vectorized: a Python range of millions of rows costs seconds)."""
    return pc.subtract(pc.cumulative_sum(pa.repeat(pa.scalar(1, pa.int64()), n)), 1) if n else pa.array([], pa.int64())


def _count(mask: pa.Array | pa.ChunkedArray) -> int:
    """True values of a boolean (chunked) array."""
    return pc.sum(mask).as_py() or 0


def _flat(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def _between(values: pa.Array | pa.ChunkedArray, start: int, end: int) -> pa.Array | pa.ChunkedArray:
    return pc.and_kleene(pc.greater_equal(values, start), pc.less_equal(values, end))


def _deletions(task: FileTask, n: int) -> pa.Array:
    """Per position, the first snapshot that deleted it (NULL: not deleted by the batch's end)."""
    positions, snapshots = [], []
    for record in task.delete_files:
        path, begin = record.path, record.begin
        fs, inner = filesystem(path)
        with fs.open_input_file(inner) as fh:
            parquet = pq.ParquetFile(fh)
            names = ["pos"] + [SNAPSHOT_ID_COLUMN for _ in (0,) if SNAPSHOT_ID_COLUMN in parquet.schema_arrow.names]
            found = parquet.read(columns=names, use_threads=False)
        positions.append(found.column("pos").cast(pa.int64()))
        snaps = (pc.coalesce(found.column(SNAPSHOT_ID_COLUMN).cast(pa.int64()), pa.scalar(begin, pa.int64()))
                 if SNAPSHOT_ID_COLUMN in names else pa.chunked_array([pa.array([begin] * found.num_rows, pa.int64())]))
        snapshots.append(snaps)
    if task.inlined_deletes:
        positions.append(pa.chunked_array([pa.array([p for p, _s in task.inlined_deletes], pa.int64())]))
        snapshots.append(pa.chunked_array([pa.array([s for _p, s in task.inlined_deletes], pa.int64())]))
    deleted = pa.nulls(n, pa.int64())
    if positions:
        events = pa.table({"pos": pa.chunked_array([c for p in positions for c in p.chunks], pa.int64()),
                           "snap": pa.chunked_array([c for s in snapshots for c in s.chunks], pa.int64())})
        first = events.group_by("pos").aggregate([("snap", "min")])
        where = pc.index_in(position_array(n), value_set=first.column("pos").combine_chunks())
        deleted = pc.take(first.column("snap_min").combine_chunks(), where)
    if task.file_end is not None:
        deleted = pc.min_element_wise(deleted, pa.scalar(task.file_end, pa.int64()))  # NULLs skipped
    return deleted


def field_indexes(file_schema: pa.Schema, columns: list[Column]) -> dict[int, int]:
    """Column id -> index of the file's top-level field holding it (by field id; by name in files without ids)."""
    by_id = {}
    for i, f in enumerate(file_schema):
        raw = (f.metadata or {}).get(FIELD_ID)
        if raw is not None:
            by_id[int(raw)] = i
    if by_id:
        return {c.column_id: by_id[c.column_id] for c in columns if c.column_id in by_id}
    names = {f.name: i for i, f in enumerate(file_schema)}
    return {c.column_id: names[c.name] for c in columns if c.name in names}


def conform(arr: pa.Array, col: Column, target: pa.DataType) -> pa.Array:
    """A file's column values in the stream's type: struct fields by field id, types cast or converted."""
    if isinstance(arr.type, pa.ExtensionType):
        arr = arr.storage
    if not is_native(col):
        values = [types.convert_nested(col, v, spark_value) for v in arr.to_pylist()]
        return pa.array(values, type=target)
    if col.type == "struct":
        fields = list(target)
        found = field_indexes(pa.schema(list(arr.type)), col.children)
        children = [conform(arr.field(found[c.column_id]), c, f.type) if c.column_id in found
                    else default_array(c, f.type, len(arr)) for c, f in zip(col.children, fields, strict=True)]
        return pa.StructArray.from_arrays(children, fields=fields, mask=arr.is_null())
    if col.type == "list":
        values = conform(arr.values, col.children[0], target.value_type)
        return pa.ListArray.from_arrays(arr.offsets, values, type=target, mask=arr.is_null())
    if col.type == "map":
        keys = conform(arr.keys, col.children[0], target.key_type)
        items = conform(arr.items, col.children[1], target.item_type)
        return pa.MapArray.from_arrays(arr.offsets, keys, items, type=target, mask=arr.is_null())
    return arr if arr.type == target else arr.cast(target)


def default_array(col: Column, target: pa.DataType, n: int) -> pa.Array:
    """A column the file predates: its initial default (NULL for nested columns) in every row."""
    value = None if col.is_nested else types.parse_literal(col.type, col.initial_default)
    if value is not None:
        value = types.convert_nested(col, value, spark_value)
    return pa.array([value] * n, type=target)
