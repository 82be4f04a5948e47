"""Commit operations that change the catalog's structure: schemas and tables."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from ...errors import AlreadyExistsError, DuckLakeError, InvalidNameError, NotFoundError
from ...spec import paths
from ...spec.internal_columns import ROW_ID_COLUMN, SNAPSHOT_ID_COLUMN
from ...spec.model import Column
from ...spec.names import check_name, schema_key, split_schema_path
from ...spec.snapshot_changes import Change, quote_name
from ...spec.uuid7 import new_uuid
from ..commit import CommitContext
from ..database.spec_tables import T, end_live_rows
from ..database.versions import catalog_is_v11, catalog_version
from ..inlined.codec import system_names
from ..inlined.tables import create_inlined_data_table, inlined_shape
from ..reads import reader
from ..reads.macros import list_macros
from ..reads.options import DEFAULT_INLINING_ROW_LIMIT
from .macros import DropMacro
from .sorting import follow_renames
from .views import DropView, list_views


@dataclass
class TableRef:
    """A table id known only once the commit assigns it (tables created in the same commit)."""

    table_id: int | None = None


def end_rows(ctx: CommitContext, table: sa.Table, *where: Any) -> int:
    return end_live_rows(ctx.conn, table, ctx.snapshot_id, *where)


def record_schema_version(ctx: CommitContext, table_id: int) -> None:
    ctx.schema_changed = True
    ctx.conn.execute(T["ducklake_schema_versions"].insert().values(
        begin_snapshot=ctx.snapshot_id, schema_version=ctx.schema_version, table_id=table_id,
    ))


def _taken_name(ctx: CommitContext, table: sa.Table, column: sa.Column[Any], name: str, *where: Any) -> str | None:
    """The live name equal to `name` ignoring case, if any: DuckDB's names are case-insensitive."""
    return ctx.conn.execute(sa.select(column).where(
        reader.visible(table, _now_visible(ctx)), sa.func.lower(column) == name.lower(), *where).limit(1)).scalar()


def _now_visible(ctx: CommitContext) -> int:
    """Rows this commit wrote (begin = new snapshot) are visible at the new snapshot id, ended ones are not."""
    return ctx.snapshot_id


# The reference's refusal of `CREATE SCHEMA lake.a.b` on a catalog without parent schemas.
NESTED_V10 = "DuckLake 1.0 does not support nested schemas"


def nested_refusal(version: str, name: str) -> str:
    """Why a nested schema cannot be created in a catalog of `version` (1.0, or the '1.1-dev1' layout, which has
    no `parent_schema_id` either), with the way to 1.1."""
    if version == "1.1-dev1":  # we do not migrate the development layout; DuckDB 2.0 does
        return ("DuckLake 1.1-dev1 catalogs (the development layout) have no parent_schema_id: they do not support "
                f"nested schemas (schema path {name}) - DuckDB 2.0 migrates such a catalog to 1.1 when attached with "
                "AUTOMATIC_MIGRATION; a name holding a dot stays one schema when quoted ('\"a.b\"')")
    return (f"{NESTED_V10} (schema path {name}) - attach with automatic_migration=True and ducklake_version=\"1.1\" "
            "to migrate the catalog to 1.1; a name holding a dot stays one schema when quoted ('\"a.b\"')")


@dataclass
class CreateSchema:
    """CREATE SCHEMA name; with a `path` of more than one name, a nested schema (DuckLake 1.1) inside the schema
    the path's other names give, which must exist."""

    name: str  # the schema_key of `path`
    schema_uuid: str = field(default_factory=new_uuid)  # fixed up front: writers need the schema's directory
    path: tuple[str, ...] = ()  # the names from the top level down; () = (name,)

    def __post_init__(self) -> None:
        self.path = tuple(self.path) or (self.name,)

    @property
    def dir_name(self) -> str:
        """The schema's directory relative to the data path: the reference names a nested schema's directory by
        its uuid, beside the top-level ones (not inside its parent's)."""
        if len(self.path) > 1:
            return f"{self.schema_uuid}/"
        return paths.dir_name_for(self.name, self.schema_uuid)

    def intents(self) -> list[Change]:
        return [Change("created_schema", quote_name(self.name))]

    def apply(self, ctx: CommitContext) -> None:
        for part in self.path:
            check_name(part, "schema")
        sc = T["ducklake_schema"]
        parent = None
        if len(self.path) > 1:
            if not reader.nested_schemas(ctx.conn):
                raise DuckLakeError(nested_refusal(catalog_version(ctx.conn), self.name))
            parent_key = schema_key(self.path[:-1])
            parent = reader.find_schema(ctx.conn, _now_visible(ctx), ctx.data_path, parent_key).schema_id
        if reader.nested_schemas(ctx.conn):
            siblings = reader.list_schemas(ctx.conn, _now_visible(ctx), ctx.data_path)
            for other in siblings:
                if other.parent_id == parent and _stored_name(other).lower() == self.path[-1].lower():
                    raise AlreadyExistsError(f"schema {self.name!r} already exists" + _as(other.name, self.name))
                if other.name.lower() == self.name.lower():  # a top-level "a.b" and the path a.b
                    raise AlreadyExistsError(
                        f"schema {self.name!r} would go by the name of schema {other.name!r}: a top-level schema "
                        "named with a dot and a nested schema path cannot share a name here")
        else:
            taken = _taken_name(ctx, sc, sc.c.schema_name, self.name)
            if taken is not None:
                raise AlreadyExistsError(f"schema {self.name!r} already exists" + _as(taken, self.name))
        schema_id, schema_uuid = ctx.catalog_id(), self.schema_uuid
        ctx.conn.execute(T["ducklake_schema"].insert().values(
            schema_id=schema_id, schema_uuid=schema_uuid, begin_snapshot=ctx.snapshot_id, end_snapshot=None,
            schema_name=self.path[-1], path=self.dir_name, path_is_relative=True,
            **({"parent_schema_id": parent} if parent is not None else {}),
        ))
        ctx.schema_changed = True
        ctx.record("created_schema", quote_name(self.name))


def _stored_name(schema: Any) -> str:
    """A schema's own (last) name."""
    return split_schema_path(schema.name)[-1] if schema.parent_id is not None else schema.name


@dataclass
class DropSchema:
    """DROP SCHEMA name (must be empty unless `cascade`; CASCADE drops its nested schemas too, deepest first)."""

    name: str
    cascade: bool = False
    schema_id: int | None = None

    def intents(self) -> list[Change]:
        return [Change("dropped_schema", str(self.schema_id))] if self.schema_id is not None else []

    def apply(self, ctx: CommitContext) -> None:
        schema = reader.find_schema(ctx.conn, _now_visible(ctx), ctx.data_path, self.name)
        children = [s for s in reader.list_schemas(ctx.conn, _now_visible(ctx), ctx.data_path)
                    if s.parent_id is not None and s.parent_id == schema.schema_id]
        tables = reader.list_tables(ctx.conn, _now_visible(ctx), ctx.data_path, schema=self.name)

        views = list_views(ctx.conn, _now_visible(ctx), schema=self.name)

        macros = {m.macro_id: m for m in list_macros(ctx.conn, _now_visible(ctx), self.name)}
        if (children or tables or views or macros) and not self.cascade:
            names = ", ".join([f"schema {c.name}" for c in children] + [t.name for t in tables] +
                              [v.name for v in views] + [m.macro_name for m in macros.values()])
            raise DuckLakeError(f"schema {self.name!r} is not empty (schemas/tables/views/macros: {names}); use "
                                "cascade=True (DROP SCHEMA ... CASCADE)")
        for child in children:  # the reference drops the whole tree
            DropSchema(child.name, cascade=True).apply(ctx)
        for table in tables:
            DropTable(table.table_id).apply(ctx)
        for view in views:
            DropView(view.view_id).apply(ctx)
        for macro in macros.values():  # the schema's macros end with it, as in the reference
            DropMacro(macro.macro_id, macro.macro_type).apply(ctx)
        sc = T["ducklake_schema"]
        end_rows(ctx, sc, sc.c.schema_id == schema.schema_id)
        ctx.schema_changed = True
        ctx.record("dropped_schema", schema.schema_id)


@dataclass
class CreateTable:
    """CREATE TABLE schema.name (columns) — column ids are already assigned in `columns`."""

    schema: str
    name: str
    columns: list[Column]
    ref: TableRef = field(default_factory=TableRef)
    table_uuid: str = field(default_factory=new_uuid)  # fixed up front: writers need the table's directory
    dir_name: str | None = None  # the directory, when not the name's (renamed before commit, files written)

    def intents(self) -> list[Change]:
        return [Change("created_table", quote_name(self.schema, self.name))]

    def apply(self, ctx: CommitContext) -> None:
        check_name(self.name, "table")
        if not self.columns:
            raise DuckLakeError(f"table {self.schema}.{self.name} needs at least one column")
        schema = reader.find_schema(ctx.conn, _now_visible(ctx), ctx.data_path, self.schema)
        check_column_names(ctx, [col.name for col in self.columns], schema_id=schema.schema_id)
        _check_table_name_free(ctx, schema.schema_id, self.schema, self.name)
        table_id, table_uuid = ctx.catalog_id(), self.table_uuid
        self.ref.table_id = table_id
        ctx.conn.execute(T["ducklake_table"].insert().values(
            table_id=table_id, table_uuid=table_uuid, begin_snapshot=ctx.snapshot_id, end_snapshot=None,
            schema_id=schema.schema_id, table_name=self.name,
            path=self.dir_name or paths.dir_name_for(self.name, table_uuid),
            path_is_relative=True,
        ))
        insert_columns(ctx, table_id, self.columns)
        record_schema_version(ctx, table_id)
        create_inlined_data_table(ctx.conn, table_id, ctx.schema_version, self.columns)
        ctx.record("created_table", quote_name(self.schema, self.name))


# DuckLake 1.1 names the inlined data tables' system columns `_ducklake_row_id`, ...: the reference refuses a new
# column name with that prefix on a 1.1 catalog (DuckLakeUtil::ValidateInlinedSystemColumn; test/sql/alter/
# issue_944.test). On 1.0 catalogs the system columns are row_id, begin_snapshot, end_snapshot: the reference refuses
# those names (and its internal Parquet columns') while inlining is on for the table, and allows them with
# data_inlining_row_limit 0 (test/sql/data_inlining/inlining_reserved_column_names.test).
RESERVED_COLUMN_PREFIX = "_ducklake_"
_INTERNAL_NAMES = (ROW_ID_COLUMN, SNAPSHOT_ID_COLUMN)


def inlining_system_names(v11: bool) -> set[str]:
    """The column names that clash with a catalog's inlined data tables (lower case; the reference's
    DuckLakeInlinedColNames::ConflictsWith)."""
    return set(system_names(v11)) | set(_INTERNAL_NAMES)


def check_column_names(ctx: CommitContext, names: list[str], *, schema_id: int | None = None,
                       table_id: int | None = None) -> None:
    """InvalidNameError for a new top-level column name the catalog's version reserves, in the reference's words
    (on 1.0 catalogs only while data inlining is on for the table: its options, else the handle's limit)."""
    if catalog_is_v11(ctx.conn):
        reserved = [n for n in names if n.lower().startswith(RESERVED_COLUMN_PREFIX)]
        if reserved:
            raise InvalidNameError(f'Column name "{reserved[0]}" is reserved by DuckLake for internal use: column '
                                   f'names starting with "{RESERVED_COLUMN_PREFIX}" are not allowed.')
        return
    clashing = inlining_system_names(v11=False)
    reserved = [n for n in names if n.lower() in clashing]
    if reserved and _inlining_limit(ctx, schema_id, table_id) > 0:
        raise InvalidNameError(f'Column name "{reserved[0]}" is reserved by DuckLake for internal use when data '
                               "inlining is enabled. If you must use this column name, disable inlining by calling "
                               "ducklake_set_option('data_inlining_row_limit', 0).")


def check_can_enable_inlining(table_name: str, columns: list[Column], v11: bool) -> None:
    """InvalidNameError when inlining cannot be turned on for a table: a column takes a system column's name (the
    reference's set_option check, DuckLakeUtil::ValidateCanEnableInlining)."""
    clashing = inlining_system_names(v11)
    for col in columns:
        if col.name.lower() in clashing:
            raise InvalidNameError(
                f'Cannot enable data inlining for table "{table_name}". Column "{col.name}" conflicts with a reserved '
                "DuckLake internal column name used for inlining. To enable inlining for this table, rename or drop "
                f'column "{col.name}".')


def _inlining_limit(ctx: CommitContext, schema_id: int | None, table_id: int | None) -> int:
    """data_inlining_row_limit for a table (or a new table of a schema): its options, the handle's, the default."""
    if table_id is not None and schema_id is None:
        t = T["ducklake_table"]
        schema_id = ctx.conn.execute(sa.select(t.c.schema_id).where(
            t.c.table_id == table_id, t.c.end_snapshot.is_(None))).scalar()
    value = reader.option_value(reader.options(ctx.conn), "data_inlining_row_limit", table_id=table_id,
                                schema_id=schema_id)
    if value is not None:
        return int(value)
    return DEFAULT_INLINING_ROW_LIMIT if ctx.inlining_limit is None else int(ctx.inlining_limit)


def _check_table_name_free(ctx: CommitContext, schema_id: int, schema: str, name: str, *where: Any) -> None:
    t = T["ducklake_table"]
    taken = _taken_name(ctx, t, t.c.table_name, name, t.c.schema_id == schema_id, *where)
    if taken is not None:
        raise AlreadyExistsError(f"table {schema}.{name} already exists" + _as(taken, name))
    v = T["ducklake_view"]  # tables and views share one namespace
    taken = _taken_name(ctx, v, v.c.view_name, name, v.c.schema_id == schema_id)
    if taken is not None:
        raise AlreadyExistsError(f"a view {schema}.{taken} already exists")


def _as(taken: str, name: str) -> str:
    return "" if taken == name else f" as {taken!r} (names are case-insensitive)"


def insert_columns(ctx: CommitContext, table_id: int, columns: list[Column]) -> None:
    """Write column rows depth first, as the reference orders them."""
    rows = [_column_row(ctx, table_id, row) for row in _flatten(columns).values()]
    ctx.conn.execute(T["ducklake_column"].insert(), rows)


@dataclass
class DropTable:
    """DROP TABLE by id: end every row that belongs to it."""

    table_id: int

    def intents(self) -> list[Change]:
        return [Change("dropped_table", str(self.table_id))]

    def apply(self, ctx: CommitContext) -> None:
        tid = self.table_id
        for name in ("ducklake_table", "ducklake_partition_info", "ducklake_column", "ducklake_column_tag",
                     "ducklake_data_file", "ducklake_delete_file", "ducklake_sort_info"):
            table = T[name]
            ended = end_rows(ctx, table, table.c.table_id == tid)
            if name == "ducklake_table" and not ended:
                raise NotFoundError(f"table id {tid} does not exist")
        tag = T["ducklake_tag"]
        end_rows(ctx, tag, tag.c.object_id == tid)
        ctx.schema_changed = True
        ctx.record("dropped_table", tid)


@dataclass
class RenameTable:
    """ALTER TABLE ... RENAME TO: a new version of the table row (the reference logs it as created_table)."""

    table_id: int
    schema: str
    new_name: str

    def intents(self) -> list[Change]:
        return [Change("created_table", quote_name(self.schema, self.new_name)),
                Change("altered_table", str(self.table_id))]

    def apply(self, ctx: CommitContext) -> None:
        t = T["ducklake_table"]
        check_name(self.new_name, "table")
        current = ctx.conn.execute(
            sa.select(t).where(t.c.table_id == self.table_id, t.c.end_snapshot.is_(None))
        ).mappings().one_or_none()
        if current is None:
            raise NotFoundError(f"table id {self.table_id} does not exist")
        _check_table_name_free(ctx, current["schema_id"], self.schema, self.new_name, t.c.table_id != self.table_id)
        end_rows(ctx, t, t.c.table_id == self.table_id)
        row = dict(current)
        row.update(begin_snapshot=ctx.snapshot_id, end_snapshot=None, table_name=self.new_name)
        ctx.conn.execute(t.insert().values(**row))
        record_schema_version(ctx, self.table_id)
        columns = reader.load_columns(ctx.conn, [self.table_id], _now_visible(ctx))[self.table_id]
        create_inlined_data_table(ctx.conn, self.table_id, ctx.schema_version, columns)
        ctx.record("created_table", quote_name(self.schema, self.new_name))


@dataclass
class AlterColumns:
    """ALTER TABLE on columns: the rows of changed columns get a new version (same column_id), as the reference
    writes them; dropped columns (and their fields) are ended, new ones inserted."""

    table_id: int
    old: list[Column]
    new: list[Column]

    def intents(self) -> list[Change]:
        return [Change("altered_table", str(self.table_id))]

    def apply(self, ctx: CommitContext) -> None:
        had = {col.name.lower() for col in self.old}
        check_column_names(ctx, [col.name for col in self.new if col.name.lower() not in had],  # added, renamed
                           table_id=self.table_id)
        before, after = _flatten(self.old), _flatten(self.new)
        c = T["ducklake_column"]
        ended = [cid for cid, row in before.items() if after.get(cid) != row]
        if ended:
            end_rows(ctx, c, c.c.table_id == self.table_id, c.c.column_id.in_(ended))
        dropped = [cid for cid in before if cid not in after]
        if dropped:  # a dropped column's comments go with it, as the reference ends them
            tag = T["ducklake_column_tag"]
            end_rows(ctx, tag, tag.c.table_id == self.table_id, tag.c.column_id.in_(dropped))
        rows = [row for cid, row in after.items() if before.get(cid) != row]
        if rows:
            ctx.conn.execute(c.insert(), [_column_row(ctx, self.table_id, row) for row in rows])
        record_schema_version(ctx, self.table_id)
        if inlined_shape(self.old) != inlined_shape(self.new):  # as the reference: not for NOT NULL or DEFAULT
            create_inlined_data_table(ctx.conn, self.table_id, ctx.schema_version, self.new)
        old_names = {col.column_id: col.name for col in self.old}
        renamed = {old_names[col.column_id]: col.name for col in self.new
                   if col.column_id in old_names and old_names[col.column_id] != col.name}
        if renamed:  # sort keys follow renamed columns
            follow_renames(ctx, self.table_id, renamed)
        ctx.record("altered_table", self.table_id)


def _flatten(columns: list[Column]) -> dict[int, tuple[Any, ...]]:
    """column_id -> the column row's content (name, type, defaults, nullability, parent, order)."""
    out: dict[int, tuple[Any, ...]] = {}

    def add(col: Column, parent: int | None, order: int) -> None:
        out[col.column_id] = (col.column_id, col.name, col.type, col.initial_default, col.default_value,
                              col.nullable, parent, order, col.is_nested)
        for child in col.children:
            add(child, col.column_id, child.column_id)

    for col in columns:
        add(col, None, col.column_id)
    return out


def _column_row(ctx: CommitContext, table_id: int, row: tuple[Any, ...]) -> dict[Any, Any]:
    column_id, name, type_, initial, default, nullable, parent, order, nested = row
    return {
        "column_id": column_id, "begin_snapshot": ctx.snapshot_id, "end_snapshot": None, "table_id": table_id,
        "column_order": order, "column_name": name, "column_type": type_, "initial_default": initial,
        "default_value": default if default is not None else "NULL", "nulls_allowed": nullable,
        "parent_column": parent, "default_value_type": "" if nested else "literal",
        "default_value_dialect": "duckdb",
    }
