"""Catalog-side bookkeeping of inlined data tables: which exist, creating, filling and reading them."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import sqlalchemy as sa

from ...spec.model import Column
from ...spec.types import parse_literal, to_arrow_type
from ..database.dialects import dialect_for
from ..database.spec_tables import T, end_live_rows
from ..database.versions import catalog_is_v11
from ..reads import reader
from . import codec as inlined


def create_inlined_data_table(conn: sa.Connection, table_id: int, schema_version: int,
                              columns: list[Column]) -> str:
    """Create ducklake_inlined_data_<table>_<version> and register it, as the reference does on DDL.

    Not on MySQL for columns it cannot hold (nested types): the reference cannot create that table there. Not on
    PostgreSQL for a column name over 63 bytes (it would truncate it): the reference writes Parquet then."""
    dialect, v11 = dialect_for(conn), catalog_is_v11(conn)
    name = inlined.inlined_table_name(table_id, schema_version)
    if not inlined.creates_table(columns, dialect) or inlined.system_name_clash(columns, v11):
        return name
    table = inlined.inlined_data_table(sa.MetaData(), dialect, table_id, schema_version, columns, v11=v11)
    registry = T["ducklake_inlined_data_tables"]
    exists = conn.execute(sa.select(registry.c.table_name).where(registry.c.table_name == table.name)).first()
    dialect.create_table(conn, table, keep_existing=exists is not None)
    if exists is None:
        conn.execute(registry.insert().values(table_id=table_id, table_name=table.name,
                                              schema_version=schema_version))
    return table.name


def inlined_versions(conn: sa.Connection, table_id: int) -> list[tuple[str, int]]:
    """(table name, schema version) of every inlined data table of a table, oldest first."""
    registry = T["ducklake_inlined_data_tables"]
    rows = conn.execute(
        sa.select(registry.c.table_name, registry.c.schema_version)
        .where(registry.c.table_id == table_id).order_by(registry.c.schema_version)
    )
    return [(name, version) for name, version in rows]


def current_inlined_table(conn: sa.Connection, table_id: int, columns: list[Column]) -> sa.Table:
    """The inlined data table for the table's newest schema version, created when missing."""
    sv, registry = T["ducklake_schema_versions"], T["ducklake_inlined_data_tables"]
    latest, newest_inlined = conn.execute(sa.select(  # one round trip: this runs inside every inlined commit
        sa.select(sa.func.max(sv.c.schema_version)).where(sv.c.table_id == table_id).scalar_subquery(),
        sa.select(sa.func.max(registry.c.schema_version)).where(registry.c.table_id == table_id).scalar_subquery(),
    )).one()
    if latest is None:
        latest = newest_inlined if newest_inlined is not None else 0
    if newest_inlined is not None and newest_inlined < latest and _same_shape(conn, table_id, newest_inlined, columns):
        latest = newest_inlined  # only nullability or defaults changed since: the reference keeps its table
    elif newest_inlined is None or newest_inlined < latest:
        create_inlined_data_table(conn, table_id, latest, columns)
    v11 = catalog_is_v11(conn)
    key = (dialect_for(conn), v11, table_id, latest, tuple((c.name, c.type) for top in columns for c in top.walk()))
    if key not in _TABLES:  # one Table object per layout, so SQLAlchemy's statement cache hits
        if len(_TABLES) > 1000:
            _TABLES.clear()
        _TABLES[key] = inlined.inlined_data_table(sa.MetaData(), key[0], table_id, latest, columns, v11=v11)
    return _TABLES[key]


_TABLES: dict[tuple[Any, ...], sa.Table] = {}


def inlined_shape(columns: list[Column]) -> list[tuple[Any, ...]]:
    """What an inlined data table's columns depend on: ids, names, types and nesting (not nullability or
    defaults)."""
    return [(c.column_id, c.name, c.type, len(c.children)) for top in columns for c in top.walk()]


def _same_shape(conn: sa.Connection, table_id: int, version: int, columns: list[Column]) -> bool:
    """Whether the table's columns at schema `version` have the shape of `columns` (cached: layouts never
    change once written)."""
    key = (str(conn.engine.url), table_id, version, tuple(inlined_shape(columns)))
    if key not in _SHAPES:
        sv = T["ducklake_schema_versions"]
        begin = conn.execute(sa.select(sa.func.min(sv.c.begin_snapshot)).where(
            sv.c.table_id == table_id, sv.c.schema_version == version)).scalar()
        then = reader.load_columns(conn, [table_id], begin).get(table_id) if begin is not None else None
        _SHAPES[key] = then is not None and inlined_shape(then) == list(key[3])
    return _SHAPES[key]


_SHAPES: dict[tuple[Any, ...], bool] = {}


def insert_rows(conn: sa.Connection, table: sa.Table, data: pa.Table, columns: list[Column],
                row_ids: list[int], snapshot_id: int) -> None:
    """Insert Arrow rows with the given row ids, visible from `snapshot_id`."""
    rows = inlined.encode_rows(data, columns, dialect_for(conn))
    for row, row_id in zip(rows, row_ids, strict=True):
        row.update({inlined.ROW_ID: row_id, inlined.BEGIN: snapshot_id, inlined.END: None})
    if rows:
        conn.execute(table.insert(), rows)


def end_rows(conn: sa.Connection, table_id: int, row_ids: list[int], snapshot_id: int) -> int:
    """Mark the given live inlined rows deleted at `snapshot_id`; returns how many."""
    ended, v11 = 0, catalog_is_v11(conn)
    for name, _version in inlined_versions(conn, table_id):
        tbl = inlined.system_table(name, v11)
        for start in range(0, len(row_ids), 1000):
            ended += end_live_rows(conn, tbl, snapshot_id, tbl.c[inlined.ROW_ID].in_(row_ids[start:start + 1000]),
                                   end=tbl.c[inlined.END])
    return ended


def inlined_delete_table(conn: sa.Connection, table_id: int) -> sa.Table:
    """ducklake_inlined_delete_<table_id>, created when missing."""
    dialect = dialect_for(conn)
    table = inlined.inlined_delete_table(sa.MetaData(), dialect, table_id)
    dialect.create_table(conn, table, keep_existing=True)
    return table


def end_all_rows(conn: sa.Connection, table_id: int, snapshot_id: int) -> int:
    """Mark every live inlined row of the table deleted at `snapshot_id`; returns how many."""
    ended, v11 = 0, catalog_is_v11(conn)
    for name, _version in inlined_versions(conn, table_id):
        tbl = inlined.system_table(name, v11)
        ended += end_live_rows(conn, tbl, snapshot_id, end=tbl.c[inlined.END])
    return ended


BEGIN_COL, END_COL = "_dl_begin_snapshot", "_dl_end_snapshot"
SOURCE_COL = "_dl_inlined_table"  # the inlined table a row is stored in (DuckDB's `filename` of inlined rows)


def read_rows(conn: sa.Connection, table_id: int, columns: list[Column], snapshot_id: int, *,
              with_snapshots: bool = False, with_source: bool = False) -> pa.Table | None:
    """Inlined rows visible at the snapshot, in the table's current columns plus their row id (`INLINED_ROW_ID`);
    None if none.

    `with_snapshots` adds each row's begin and end snapshot (`BEGIN_COL`, `END_COL`), `with_source` the name of
    the inlined table holding it (`SOURCE_COL`)."""
    return _read_matching(conn, table_id, columns, with_snapshots, lambda tbl: sa.and_(
        tbl.c[inlined.BEGIN] <= snapshot_id,
        sa.or_(tbl.c[inlined.END].is_(None), tbl.c[inlined.END] > snapshot_id),
    ), with_source=with_source, columns_at=snapshot_id)


def rows_changed_between(conn: sa.Connection, table_id: int, columns: list[Column], start: int,
                         end: int) -> pa.Table | None:
    """Inlined rows inserted or deleted in snapshots start..end (inclusive), with row_id and both snapshots."""
    return _read_matching(conn, table_id, columns, True, lambda tbl: sa.or_(
        tbl.c[inlined.BEGIN].between(start, end), tbl.c[inlined.END].between(start, end)))


def _read_matching(conn: sa.Connection, table_id: int, columns: list[Column], with_snapshots: bool,
                   condition: Any, with_source: bool = False, columns_at: int | None = None) -> pa.Table | None:
    # `columns_at`: the snapshot `columns` are the table's columns at (None: unknown).
    sv = T["ducklake_schema_versions"]
    begins = dict(
        (version, begin) for begin, version in
        conn.execute(sa.select(sv.c.begin_snapshot, sv.c.schema_version).where(sv.c.table_id == table_id))
    )
    parts, v11 = [], catalog_is_v11(conn)
    for name, version in inlined_versions(conn, table_id):
        # The inlined table holds the columns of its own schema version.
        at = begins.get(version)
        if at is None or _unchanged(begins, at, columns_at):  # e.g. the newest version read at its snapshot
            old_columns = columns
        else:
            old_columns = reader.load_columns(conn, [table_id], at).get(table_id, columns)
        md = sa.MetaData()
        tbl = inlined.inlined_data_table(md, dialect_for(conn), table_id, version, old_columns, v11=v11)
        if not sa.inspect(conn).has_table(name):
            continue
        selected = inlined.select_columns(tbl, old_columns, dialect_for(conn))
        if with_snapshots:
            selected += [tbl.c[inlined.BEGIN].label(BEGIN_COL), tbl.c[inlined.END].label(END_COL)]
        query = sa.select(*selected).where(condition(tbl)).order_by(tbl.c[inlined.ROW_ID])
        rows = conn.execute(query).mappings().all()
        if not rows:
            continue
        decoded = inlined.decode_rows(rows, old_columns, dialect_for(conn))
        part = _to_current(decoded, [r[inlined.ROW_ID] for r in rows], old_columns, columns)
        if with_snapshots:
            for key in (BEGIN_COL, END_COL):
                part = part.append_column(key, pa.array([r[key] for r in rows], pa.int64()))
        if with_source:
            part = part.append_column(SOURCE_COL, pa.array([name] * len(rows), pa.string()))
        parts.append(part)
    if not parts:
        return None
    schema = _all_nullable(parts[-1].schema)  # versions may differ in nullability only
    return pa.concat_tables([part.cast(schema) for part in parts])


def _unchanged(begins: dict[int, int], at: int, columns_at: int | None) -> bool:
    """Whether the table's columns at snapshot `at` are those at `columns_at`: no schema version of the table
    began in between."""
    return columns_at is not None and at <= columns_at and not any(at < b <= columns_at for b in begins.values())


def _all_nullable(schema: pa.Schema) -> pa.Schema:
    def relax(t: pa.DataType) -> pa.DataType:
        if pa.types.is_struct(t):
            return pa.struct([f.with_type(relax(f.type)).with_nullable(True) for f in t])
        if pa.types.is_list(t):
            return pa.list_(t.value_field.with_type(relax(t.value_type)).with_nullable(True))
        if pa.types.is_map(t):
            return pa.map_(t.key_field.with_type(relax(t.key_type)), t.item_field.with_type(relax(t.item_type)))
        return t

    return pa.schema([f.with_type(relax(f.type)).with_nullable(True) for f in schema])


def _to_current(data: pa.Table, row_ids: list[int], old: list[Column], current: list[Column]) -> pa.Table:
    by_id = {col.column_id: (i, col) for i, col in enumerate(old)}
    arrays, names = [], []
    for col in current:
        if col.column_id in by_id:
            i, old_col = by_id[col.column_id]
            arrays.append(_convert(data.column(i).combine_chunks(), old_col, col))
        else:
            arrays.append(_defaults(col, data.num_rows))
        names.append(col.name)
    arrays.append(pa.array(row_ids, type=pa.int64()))
    names.append(inlined.ROW_ID)
    return pa.Table.from_arrays(arrays, names=names)


def _defaults(col: Column, length: int) -> pa.Array:
    """A column missing from older rows: its initial default (or NULL) in every row."""
    value = parse_literal(col.type, col.initial_default) if col.initial_default is not None else None
    return pa.array([value] * length, type=to_arrow_type(col))


def _convert(arr: pa.Array, old: Column, new: Column) -> pa.Array:
    """Values of an older column version in the current version's shape: nested fields matched by column id
    (renamed ones kept, dropped ones left out, added ones defaulted), promoted types cast."""
    target = to_arrow_type(new)
    if new.type == "struct" and old.type == "struct":
        olds = {c.column_id: (i, c) for i, c in enumerate(old.children)}
        children = [_convert(arr.field(olds[c.column_id][0]), olds[c.column_id][1], c) if c.column_id in olds
                    else _defaults(c, len(arr)) for c in new.children]
        fields = [f.with_nullable(True) for f in target]
        return pa.StructArray.from_arrays(children, fields=fields, mask=arr.is_null())
    if new.type == "list" and old.type == "list":
        values = _convert(arr.values, old.children[0], new.children[0])
        return pa.ListArray.from_arrays(arr.offsets, values, mask=arr.is_null())
    if new.type == "map" and old.type == "map":
        keys = _convert(arr.keys, old.children[0], new.children[0])
        items = _convert(arr.items, old.children[1], new.children[1])
        return pa.MapArray.from_arrays(arr.offsets, keys, items, mask=arr.is_null())
    return arr if arr.type == target else arr.cast(target)


def inlined_deletes(conn: sa.Connection, table_id: int, snapshot_id: int) -> dict[int, list[int]]:
    """Positions deleted by inlined deletes visible at the snapshot, per data file id."""
    name = f"ducklake_inlined_delete_{table_id}"
    if not sa.inspect(conn).has_table(name):
        return {}
    tbl = sa.table(name, sa.column("file_id"), sa.column("row_id"), sa.column("begin_snapshot"))
    out: dict[int, list[int]] = {}
    for file_id, row_id in conn.execute(
        sa.select(tbl.c.file_id, tbl.c.row_id).where(tbl.c.begin_snapshot <= snapshot_id)
    ):
        out.setdefault(file_id, []).append(row_id)
    return out


def inlined_rows_key(table_id: int) -> int:
    """The pseudo data file id that stands for a table's inlined rows in conflict checks (real ids are >= 0)."""
    return -1 - table_id


def files_deleted_at(conn: sa.Connection, table_id: int, snapshot_id: int) -> set[int]:
    """Data files the snapshot added inlined deletes for, and the inlined-rows key if it ended inlined rows."""
    out: set[int] = set()
    name = inlined.inlined_delete_table_name(table_id)
    if sa.inspect(conn).has_table(name):
        tbl = sa.table(name, sa.column("file_id"), sa.column("begin_snapshot"))
        out |= set(conn.execute(sa.select(tbl.c.file_id).where(tbl.c.begin_snapshot == snapshot_id)
                                .distinct()).scalars())
    v11 = catalog_is_v11(conn)
    for name, _version in inlined_versions(conn, table_id):
        tbl = inlined.system_table(name, v11)
        if conn.execute(sa.select(sa.literal(1)).where(tbl.c[inlined.END] == snapshot_id).limit(1)).first():
            out.add(inlined_rows_key(table_id))
            break
    return out
