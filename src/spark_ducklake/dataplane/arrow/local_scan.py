"""A planned scan read in-process with pyarrow: the same rows, values and types as the Spark path, no JVM.

Data files are read by Parquet field id (files registered without ids by their name mapping), so renamed,
added and dropped columns read right; a column a file predates reads its initial default; values are widened or
converted to the types Spark shows (`visible_type`). Positional deletes (delete files, per-position snapshots of
partial ones, inlined deletes) are applied per file, rows of partial files newer than the snapshot are skipped,
and the catalog's inlined rows are appended. Imports no pyspark.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ...errors import CatalogError
from ...spec import types
from ...spec.internal_columns import INLINED_ROW_ID, ROW_ID_COLUMN, SNAPSHOT_ID_COLUMN
from ...spec.model import Column, DataFile, NewDataFile
from .arrow_rows import conform, default_array, field_indexes, position_array
from .arrow_values import spark_value
from .delete_files import positions_as_of
from .planned_scan import PlannedScan
from .scan_columns import FILE, POS, TABLE_ONLY, ScanColumns
from .storage import filesystem

ROWID = "rowid"
_WIDENED = {"uint8": pa.int16(), "uint16": pa.int32(), "uint32": pa.int64()}  # as Spark shows them
_READERS = 8  # threads reading files at once (pyarrow decodes without the GIL)


def visible_type(col: Column) -> pa.DataType:
    """The Arrow type of a column as the Spark path returns it (`lake.read(...).toArrow()`)."""
    if col.type == "list":
        return pa.list_(pa.field("element", visible_type(col.children[0]), True))
    if col.type == "map":
        key, value = col.children
        return pa.map_(pa.field("key", visible_type(key), False), pa.field("value", visible_type(value), True))
    if col.type == "struct":
        return pa.struct([pa.field(c.name, visible_type(c), True) for c in col.children])
    return _WIDENED.get(col.type) or types.to_arrow_type(col)


def visible_schema(columns: list[Column]) -> pa.Schema:
    """The Arrow schema of rows of these columns as the Spark path returns them."""
    return pa.schema([pa.field(c.name, visible_type(c), True) for c in columns])


def encrypted_plan(plan: PlannedScan) -> bool:
    """Whether the plan reads encrypted files (ENCRYPTED lakes): only Spark's AES decrypts them (spark/encrypted/)."""
    return any(f.encryption_key or (f.delete_file is not None and f.delete_file.encrypted) for f in plan.files)


def read_plan(plan: PlannedScan, columns: list[Column] | None = None, *, row_ids: bool = False,
              positions: bool = False) -> pa.Table:
    """The plan's rows visible at its snapshot: `columns` (default: all) in table order, then `rowid` and, with
    `positions`, `_dl_file` (data file id; NULL for inlined rows) and `_dl_pos` (position; inlined: row id)."""
    if encrypted_plan(plan):  # callers route such plans to Spark first (read.py, threshold.files_in_process)
        raise CatalogError(f"table {plan.table.qualified_name!r} is in an ENCRYPTED lake: its files are decrypted by "
                           "Spark only (read it with lake.read; docs/types.md, 'Encrypted lakes')")
    columns = plan.table.columns if columns is None else columns
    extra = ScanColumns(row_ids=row_ids, positions=positions)
    schema = _result_schema(columns, extra)
    deletes = {k: v for k, v in (plan.inlined_deletes or {}).items() if v}

    def one(f: DataFile) -> pa.Table:
        return _read_file(f, columns, schema, plan.snapshot_id, deletes.get(f.data_file_id, ()), extra)

    if len(plan.files) > 1:
        with ThreadPoolExecutor(max_workers=min(_READERS, len(plan.files))) as pool:
            parts = list(pool.map(one, plan.files))
    else:
        parts = [one(f) for f in plan.files]
    if plan.inlined is not None and plan.inlined.num_rows:
        parts.append(_inlined(plan.inlined, columns, schema, extra))
    if not parts:
        return schema.empty_table()
    return pa.concat_tables(parts)


def read_new_files(files: list[NewDataFile], columns: list[Column]) -> pa.Table:
    """Rows of files just written (not committed, no deletes), as `read_plan` returns a table's rows."""
    schema = _result_schema(columns, TABLE_ONLY)
    parts = [_read_file(DataFile(data_file_id=-1, table_id=-1, path=f.path, record_count=f.record_count,
                                 file_size_bytes=f.file_size_bytes, footer_size=f.footer_size, row_id_start=None,
                                 begin_snapshot=0), columns, schema, 0, (), TABLE_ONLY) for f in files]
    return pa.concat_tables(parts) if parts else schema.empty_table()


def _result_schema(columns: list[Column], extra: ScanColumns) -> pa.Schema:
    fields = list(visible_schema(columns))
    if extra.row_ids:
        fields.append(pa.field(ROWID, pa.int64()))
    if extra.positions:
        fields += [pa.field(FILE, pa.int64()), pa.field(POS, pa.int64())]
    return pa.schema(fields)


def read_file_columns(f: DataFile, columns: list[Column]) -> tuple[pa.Table, dict[int, str], list[str]]:
    """A data file's columns found by field id (or its name map), plus the internal snapshot/row-id columns it
    holds: (data, column_id -> its column name in the file, internal column names present)."""
    fs, inner = filesystem(f.path)
    with fs.open_input_file(inner) as fh:
        parquet = pq.ParquetFile(fh)
        file_schema = parquet.schema_arrow
        found = _by_name(file_schema, f, columns) if f.name_map is not None else field_indexes(file_schema,
                                                                                              columns)
        extras = [n for n in (SNAPSHOT_ID_COLUMN, ROW_ID_COLUMN) if n in file_schema.names]
        names = {cid: file_schema.field(i).name for cid, i in found.items()}
        wanted = sorted(set(names.values()) | set(extras))
        return parquet.read(columns=wanted, use_threads=False), names, extras


def _read_file(f: DataFile, columns: list[Column], schema: pa.Schema, snapshot_id: int, inlined_deletes: Sequence[int],
               extra: ScanColumns) -> pa.Table:
    data, found, extras = read_file_columns(f, columns)
    n = data.num_rows
    pos = position_array(n)
    keep = None
    if f.partial_max is not None and f.partial_max > snapshot_id and SNAPSHOT_ID_COLUMN in extras:
        stamps = data.column(SNAPSHOT_ID_COLUMN).cast(pa.int64())
        keep = pc.fill_null(pc.less_equal(stamps, snapshot_id), True)
    deleted = _deleted_positions(f, snapshot_id, inlined_deletes)
    if deleted is not None and len(deleted):
        alive = pc.invert(pc.is_in(pos, value_set=deleted))
        keep = alive if keep is None else pc.and_(keep, alive)
    rowid = pc.add(pos, pa.scalar(f.row_id_start or 0, pa.int64()))
    if ROW_ID_COLUMN in extras:
        rowid = pc.coalesce(data.column(ROW_ID_COLUMN).combine_chunks().cast(pa.int64()), rowid)
    if keep is not None:
        data, pos, rowid = data.filter(keep), pos.filter(keep), rowid.filter(keep)
    arrays = []
    for col, field in zip(columns, schema, strict=False):
        if f.hive_values and col.column_id in f.hive_values and col.column_id not in found:
            value = types.convert_nested(col, f.hive_values[col.column_id], spark_value)
            arrays.append(pa.array([value] * data.num_rows, field.type))
        elif col.column_id in found:
            raw = data.column(found[col.column_id]).combine_chunks()
            arrays.append(conform(raw, col, field.type))
        else:
            arrays.append(default_array(col, field.type, data.num_rows))
    if extra.row_ids:
        arrays.append(rowid)
    if extra.positions:
        arrays += [pa.repeat(pa.scalar(f.data_file_id, pa.int64()), data.num_rows), pos]
    return pa.Table.from_arrays(arrays, schema=schema)


def _by_name(file_schema: pa.Schema, f: DataFile, columns: list[Column]) -> dict[int, int]:
    """Column id -> field index of a file without field ids, through its name mapping (case-insensitive)."""
    position = {field.name.lower(): i for i, field in enumerate(file_schema)}
    sources = {m.column_id: m.source for m in f.name_map}  # type: ignore[union-attr]  # a file read by name has its map
    return {c.column_id: position[sources[c.column_id].lower()] for c in columns
            if c.column_id in sources and sources[c.column_id].lower() in position}


def _deleted_positions(f: DataFile, snapshot_id: int, inlined_deletes: Sequence[int]) -> pa.Array | None:
    """Positions of the file deleted as of the snapshot: its delete file (per-position snapshots of a partial
    one, else the file's begin snapshot) and its inlined deletes."""
    parts = [] if f.delete_file is None else [positions_as_of(f.delete_file, snapshot_id)]
    if inlined_deletes:
        parts.append(pa.array(list(inlined_deletes), pa.int64()))
    if not parts:
        return None
    return pa.concat_arrays(parts)


def _inlined(rows: pa.Table, columns: list[Column], schema: pa.Schema, extra: ScanColumns) -> pa.Table:
    """The catalog's inlined rows (in the table's Arrow types, plus `row_id`) in the result's columns."""
    by_name = {name.lower(): name for name in rows.column_names}
    arrays = [rows.column(by_name[c.name.lower()]).combine_chunks().cast(field.type)
              for c, field in zip(columns, schema, strict=False)]
    ids = rows.column(INLINED_ROW_ID).combine_chunks().cast(pa.int64())
    if extra.row_ids:
        arrays.append(ids)
    if extra.positions:
        arrays += [pa.nulls(rows.num_rows, pa.int64()), ids]
    return pa.Table.from_arrays(arrays, schema=schema)
