"""Reading the catalog as of a snapshot: schemas, tables, columns, files, options."""

from __future__ import annotations

import gc
from collections import defaultdict
from contextlib import contextmanager
from datetime import datetime, timezone
from operator import itemgetter
from typing import Any

import sqlalchemy as sa

from ...errors import NotFoundError
from ...spec import paths
from ...spec.model import Column, DataFile, DeleteFile, SchemaInfo, Snapshot, TableInfo
from ...spec.names import schema_key
from ..database.spec_tables import T
from ..database.versions import catalog_table


def visible(table: sa.Table, snapshot_id: int) -> Any:
    """The spec's visibility predicate: begin <= s < end (or no end)."""
    return sa.and_(
        table.c.begin_snapshot <= snapshot_id,
        sa.or_(table.c.end_snapshot.is_(None), table.c.end_snapshot > snapshot_id),
    )


def _snapshot_select() -> Any:
    s, ch = T["ducklake_snapshot"], T["ducklake_snapshot_changes"]
    return sa.select(
        s.c.snapshot_id, s.c.snapshot_time, s.c.schema_version, s.c.next_catalog_id, s.c.next_file_id,
        ch.c.changes_made, ch.c.author, ch.c.commit_message, ch.c.commit_extra_info,
    ).select_from(s.outerjoin(ch, s.c.snapshot_id == ch.c.snapshot_id))


def _to_snapshot(row: Any) -> Snapshot:
    return Snapshot(*row)


def latest_snapshot(conn: sa.Connection) -> Snapshot:
    """The newest snapshot."""
    s = T["ducklake_snapshot"]
    latest = sa.select(sa.func.max(s.c.snapshot_id)).scalar_subquery()
    row = conn.execute(_snapshot_select().where(s.c.snapshot_id == latest)).one_or_none()
    if row is None:
        raise NotFoundError("the catalog has no snapshots")
    return _to_snapshot(row)


def get_snapshot(conn: sa.Connection, snapshot_id: int) -> Snapshot:
    """One snapshot by id; NotFoundError when it does not exist (or was expired)."""
    s = T["ducklake_snapshot"]
    row = conn.execute(_snapshot_select().where(s.c.snapshot_id == int(snapshot_id))).one_or_none()
    if row is None:
        raise NotFoundError(f"snapshot {snapshot_id} does not exist (never created, or expired)")
    return _to_snapshot(row)


def snapshot_at(conn: sa.Connection, when: datetime) -> Snapshot:
    """The newest snapshot committed at or before `when` (naive times are UTC)."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    candidates = [snap for snap in list_snapshots(conn) if snap.snapshot_time <= when]
    if not candidates:
        raise NotFoundError(f"no snapshot exists at or before {when.isoformat()}")
    return candidates[-1]


def list_snapshots(conn: sa.Connection, since: int | None = None) -> list[Snapshot]:
    """All snapshots in id order (optionally only those after `since`)."""
    s = T["ducklake_snapshot"]
    query = _snapshot_select().order_by(s.c.snapshot_id)
    if since is not None:
        query = query.where(s.c.snapshot_id > since)
    return [_to_snapshot(row) for row in conn.execute(query)]


def nested_schemas(conn: sa.Connection) -> bool:
    """Whether the connection's catalog records parent schemas (`ducklake_schema.parent_schema_id`: format 1.1;
    neither 1.0 nor the development builds' '1.1-dev1' layout has it)."""
    table = catalog_table(conn, "ducklake_schema")
    return table is not None and "parent_schema_id" in table.c


def list_schemas(conn: sa.Connection, snapshot_id: int, data_path: str, name: str | None = None) -> list[SchemaInfo]:
    """Schemas visible at the snapshot (only the one called `name`, if given), each named by its `schema_key`:
    a nested schema by its dotted path. A schema whose parent is not visible counts as dropped, as in the
    reference."""
    sc = T["ducklake_schema"]
    nested = nested_schemas(conn)
    columns = [sc.c.schema_id, sc.c.schema_name, sc.c.path, sc.c.path_is_relative, sc.c.begin_snapshot]
    query = sa.select(*columns, *([sc.c.parent_schema_id] if nested else []))
    if name is not None and not nested:
        query = query.where(sc.c.schema_name == name)
    rows = conn.execute(query.where(visible(sc, snapshot_id)).order_by(sc.c.schema_id)).all()
    parents = {row.schema_id: row.parent_schema_id for row in rows} if nested else {}
    by_id = {row.schema_id: row for row in rows}
    out = []
    for row in rows:
        path = schema_path(row.schema_id, by_id, parents)
        if path is None:
            continue
        key = schema_key(path)
        if name is not None and key != name:
            continue
        out.append(SchemaInfo(row.schema_id, key, paths.join(data_path, row.path, row.path_is_relative),
                              row.begin_snapshot, parents.get(row.schema_id)))
    return out


def schema_keys(conn: sa.Connection, snapshot_id: int) -> dict[int, str] | None:
    """Ids of the schemas visible at the snapshot and the names they go by, on catalogs with nested schemas
    (None on the others: there a schema's name is its `schema_name`)."""
    if not nested_schemas(conn):
        return None
    return {s.schema_id: s.name for s in list_schemas(conn, snapshot_id, "")}


def schema_path(schema_id: int, rows: dict[Any, Any], parents: dict[int, int | None]) -> tuple[str, ...] | None:
    """The names from the top-level schema down to `schema_id`; None when an ancestor is not among `rows` (not
    visible: the schema counts as dropped) or the parents form a cycle."""
    path: list[str] = []
    seen: set[int] = set()
    current: int | None = schema_id
    while current is not None:
        if current in seen or current not in rows:
            return None
        seen.add(current)
        path.append(rows[current].schema_name)
        current = parents.get(current)
    return tuple(reversed(path))


def find_schema(conn: sa.Connection, snapshot_id: int, data_path: str, name: str) -> SchemaInfo:
    """A schema by name (a nested schema by its path); NotFoundError naming it when missing."""
    for schema in list_schemas(conn, snapshot_id, data_path, name=name):
        return schema
    raise NotFoundError(f"schema {name!r} does not exist")


def list_tables(
    conn: sa.Connection, snapshot_id: int, data_path: str, *, schema: str | None = None,
    name: str | None = None,
) -> list[TableInfo]:
    """Tables visible at the snapshot with their columns, loaded in three queries whatever their number."""
    schemas = {s.schema_id: s for s in list_schemas(conn, snapshot_id, data_path, name=schema)}
    t = T["ducklake_table"]
    query = sa.select(
        t.c.table_id, t.c.table_uuid, t.c.schema_id, t.c.table_name, t.c.path, t.c.path_is_relative,
        t.c.begin_snapshot,
    ).where(visible(t, snapshot_id))
    if name is not None:
        query = query.where(t.c.table_name == name)
    if schema is not None:
        query = query.where(t.c.schema_id.in_(list(schemas)))
    rows = [r for r in conn.execute(query.order_by(t.c.table_id)) if r.schema_id in schemas]
    if schema is not None:
        rows = [r for r in rows if schemas[r.schema_id].name == schema]
    columns = load_columns(conn, [r.table_id for r in rows], snapshot_id)
    tables = []
    for r in rows:
        sch = schemas[r.schema_id]
        tables.append(TableInfo(
            table_id=r.table_id, table_uuid=r.table_uuid, schema_id=r.schema_id, schema_name=sch.name,
            name=r.table_name, path=paths.join(sch.path, r.path, r.path_is_relative),
            columns=columns.get(r.table_id, []), begin_snapshot=r.begin_snapshot,
        ))
    return tables


def find_table(conn: sa.Connection, snapshot_id: int, data_path: str, schema: str, name: str) -> TableInfo:
    """A table by schema and name; NotFoundError naming what is missing."""
    found = list_tables(conn, snapshot_id, data_path, schema=schema, name=name)
    if found:
        return found[0]
    find_schema(conn, snapshot_id, data_path, schema)  # raises when the schema is the missing part
    raise NotFoundError(f"table {schema}.{name} does not exist")


def load_columns(conn: sa.Connection, table_ids: list[int], snapshot_id: int) -> dict[int, list[Column]]:
    """Column trees of the given tables at the snapshot, keyed by table id."""
    if not table_ids:
        return {}
    c = T["ducklake_column"]
    # Every version up to the snapshot, in one plain query: the first version gives the snapshot a column was
    # added in. (A join with a GROUP BY subquery for that was quadratic on SQLite: 8 s for 500 tables.)
    query = (
        sa.select(
            c.c.table_id, c.c.column_id, c.c.column_name, c.c.column_type, c.c.nulls_allowed, c.c.parent_column,
            c.c.initial_default, c.c.default_value, c.c.begin_snapshot, c.c.end_snapshot,
        )
        .where(c.c.begin_snapshot <= snapshot_id)
        .order_by(c.c.table_id, c.c.column_order)
    )
    wanted = set(table_ids)
    if len(wanted) <= 1000:  # else filtered here: long IN lists hit bind-parameter limits
        query = query.where(c.c.table_id.in_(sorted(wanted)))
    by_table: dict[int, list[Column]] = defaultdict(list)
    nodes: dict[tuple[int, int], Column] = {}
    parents: list[tuple[int, int, Column]] = []
    with no_gc():  # thousands of tables: tens of thousands of Column objects
        rows = [tuple(r) for r in conn.execute(query).all() if r[0] in wanted]
        first: dict[tuple[int, int], int] = {}
        for table_id, column_id, *_, begin, _end in rows:
            key = (table_id, column_id)
            if begin < first.get(key, begin + 1):
                first[key] = begin
        for table_id, column_id, name, type_, nulls, parent, initial, default, _begin, end in rows:
            if end is not None and end <= snapshot_id:
                continue
            col = Column(
                column_id=column_id, name=name, type=type_, nullable=True if nulls is None else bool(nulls),
                initial_default=initial, default_value=default, added_snapshot=first[(table_id, column_id)],
            )
            nodes[(table_id, column_id)] = col
            if parent is None:
                by_table[table_id].append(col)
            else:
                parents.append((table_id, parent, col))
    for table_id, parent_id, col in parents:
        nodes[(table_id, parent_id)].children.append(col)
    return dict(by_table)


def column_names_stable(conn: sa.Connection, table_id: int) -> bool:
    """False when a column was ever renamed or a name was held by two column ids (the by-name filter hazard)."""
    c = T["ducklake_column"]
    rows = conn.execute(
        sa.select(c.c.column_id, c.c.column_name, c.c.parent_column).where(c.c.table_id == table_id)
    ).all()
    names_of: dict[int, set[str]] = defaultdict(set)
    ids_of: dict[tuple[int | None, str], set[int]] = defaultdict(set)
    for column_id, name, parent in rows:
        names_of[column_id].add(name)
        ids_of[(parent, name)].add(column_id)
    return all(len(v) == 1 for v in names_of.values()) and all(len(v) == 1 for v in ids_of.values())


def data_files(conn: sa.Connection, table: TableInfo, snapshot_id: int) -> list[DataFile]:
    """Data files of a table visible at the snapshot (in file_order, then id order), each with its visible delete
    file."""
    df = T["ducklake_data_file"]
    rows = file_rows(conn, table.table_id, visible(df, snapshot_id))
    return build_files(rows, table, delete_files(conn, table, snapshot_id))


FILE_ORDER = 11  # index of file_order in file_rows' tuples


def file_rows(conn: sa.Connection, table_id: int, condition: Any) -> list[tuple[Any, ...]]:
    """The table's ducklake_data_file rows meeting `condition`, as the tuples build_files takes."""
    df = T["ducklake_data_file"]
    # Planning a table of 100k files is dominated by per-row Python work: raw columns (no bool decoding) fetched
    # as the driver's tuples, tuple unpacking instead of attribute access, delete files fetched apart (few)
    # instead of joined, and no ORDER BY (no index serves it: SQLite sorted 100k rows in a temporary B-tree for
    # a third of the query's time; rows mostly arrive in id order, which Python's sort merely checks).
    query = (
        sa.select(
            df.c.data_file_id, df.c.path, sa.type_coerce(df.c.path_is_relative, sa.BigInteger), df.c.record_count,
            df.c.file_size_bytes, df.c.footer_size, df.c.row_id_start, df.c.begin_snapshot, df.c.partial_max,
            df.c.partition_id, df.c.mapping_id, df.c.file_order, df.c.encryption_key,
        )
        .where(df.c.table_id == table_id, condition)
    )
    with no_gc():
        return driver_rows(conn, query)


def build_files(rows: list[tuple[Any, ...]], table: TableInfo, deletes: dict[int, DeleteFile]) -> list[DataFile]:
    """DataFiles from file_rows' tuples (sorted in place by file_order, NULL last as PostgreSQL, then id)."""
    base, table_id, get_delete = table.path, table.table_id, deletes.get
    files = []
    with no_gc():
        if any(r[FILE_ORDER] is not None for r in rows):
            rows.sort(key=lambda r: (r[FILE_ORDER] is None, r[FILE_ORDER] or 0, r[0]))
        else:
            rows.sort(key=itemgetter(0))
        for file_id, path, rel, records, size, footer, row_start, begin, pmax, part, mapping, _order, key in rows:
            # Relative unless stored as not relative (NULL: absolute only when it looks absolute), as paths.join.
            full = base + path if rel or (rel is None and not paths.is_absolute(path)) else path or base
            files.append(DataFile(file_id, table_id, full, records, size, footer, row_start, begin, pmax, part,
                                  mapping, get_delete(file_id), encryption_key=key))
    return files


def driver_rows(conn: sa.Connection, query: Any) -> list[tuple[Any, ...]]:
    """Every row of `query` as the database driver's tuples, for queries of plain integer and text columns
    (nothing SQLAlchemy would convert): its Row objects cost more than SQLite's own work for 100k rows."""
    result = conn.execute(query)
    try:
        return list(result.cursor.fetchall())
    finally:
        result.close()


@contextmanager
def no_gc() -> Any:
    """Cyclic GC paused while many acyclic objects are made: collections triggered by allocation alone would
    walk the whole heap over and over (they made planning a 100k-file table 2.5x slower)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def delete_files(conn: sa.Connection, table: TableInfo, snapshot_id: int) -> dict[int, DeleteFile]:
    """The delete file visible at the snapshot for each data file of the table that has one."""
    dl = T["ducklake_delete_file"]
    rows = conn.execute(sa.select(
        dl.c.delete_file_id, dl.c.data_file_id, dl.c.path, dl.c.path_is_relative, dl.c.delete_count,
        dl.c.begin_snapshot, dl.c.partial_max, dl.c.file_size_bytes, dl.c.footer_size, dl.c.format,
        dl.c.encryption_key,
    ).where(dl.c.table_id == table.table_id, visible(dl, snapshot_id)))
    return {
        r.data_file_id: DeleteFile(
            delete_file_id=r.delete_file_id, data_file_id=r.data_file_id,
            path=paths.join(table.path, r.path, r.path_is_relative), delete_count=r.delete_count,
            begin_snapshot=r.begin_snapshot, partial_max=r.partial_max, file_size_bytes=r.file_size_bytes,
            footer_size=r.footer_size, format=r.format or "parquet", encryption_key=r.encryption_key,
        )
        for r in rows
    }


def options(conn: sa.Connection) -> list[tuple[str, str, str | None, int | None]]:
    """Every ducklake_metadata row: (key, value, scope, scope_id)."""
    md = T["ducklake_metadata"]
    return [tuple(r) for r in conn.execute(sa.select(md.c.key, md.c.value, md.c.scope, md.c.scope_id))]


def option_value(
    rows: list[tuple[str, str, str | None, int | None]], key: str, *, table_id: int | None = None,
    schema_id: int | None = None,
) -> str | None:
    """The most specific value of an option: table, then schema, then global scope."""
    scoped = {(scope, scope_id): value for k, value, scope, scope_id in rows if k == key}
    for probe in (("table", table_id), ("schema", schema_id), (None, None)):
        if probe[0] is not None and probe[1] is None:
            continue
        if probe in scoped:
            return scoped[probe]
    return None


class TableCache:
    """Tables by name, kept while the catalog's schema_version stays the same (every DDL bumps it).

    Saves the schema/table/column queries on the write path, where small commits follow each other."""

    def __init__(self) -> None:
        self._version: int | None = None
        self._tables: dict[tuple[str, str], TableInfo | None] = {}

    def find(self, conn: sa.Connection, snapshot: Snapshot, data_path: str, schema: str,
             name: str) -> TableInfo | None:
        """The table visible at `snapshot`, or None."""
        if snapshot.schema_version != self._version:
            self._tables, self._version = {}, snapshot.schema_version
        key = (schema, name)
        if key not in self._tables:
            found = list_tables(conn, snapshot.snapshot_id, data_path, schema=schema, name=name)
            self._tables[key] = found[0] if found else None
        return self._tables[key]
