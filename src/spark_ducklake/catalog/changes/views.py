"""Lake views (`ducklake_view`): reading them at a snapshot, and the commit operations that create, rename and
drop them.

As the reference writes them: the view id comes from next_catalog_id, the schema version moves on (but no
ducklake_schema_versions row: that table is per table), changes_made says `created_view:"schema"."name"` /
`dropped_view:<id>`, and `column_aliases` is '' or the quoted list `"x","y"`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sqlalchemy as sa

from ...errors import AlreadyExistsError, NotFoundError
from ...spec.names import check_name
from ...spec.snapshot_changes import Change, quote_name, unquote_name
from ...spec.uuid7 import new_uuid
from ..commit import CommitContext
from ..database.spec_tables import T, end_live_rows
from ..reads import reader
from .tags import end_view_column_tags

# The reference writes the attached catalog's name as this placeholder in the SQL it stores.
CATALOG_PLACEHOLDER = "{DUCKLAKE_CATALOG}"


@dataclass
class ViewInfo:
    """One view as of a snapshot."""

    view_id: int
    view_uuid: str
    schema_id: int
    schema_name: str
    name: str
    dialect: str
    sql: str
    column_aliases: list[str] = field(default_factory=list)
    begin_snapshot: int = 0
    comment: str | None = None


def render_aliases(aliases: list[str] | None) -> str:
    """column_aliases as stored: '' when none, else `"x","y"`."""
    return ",".join(quote_name(a) for a in aliases or [])


def parse_aliases(text: str | None) -> list[str]:
    """Inverse of render_aliases."""
    if not text:
        return []
    out: list[str]
    buf: list[str]
    out, buf, quoted = [], [], False
    for ch in text:  # split on commas outside quotes, then unquote each part
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            out.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
    out.append("".join(buf))
    return [unquote_name(part.strip())[0] for part in out]


def list_views(conn: sa.Connection, snapshot_id: int, *, schema: str | None = None,
               name: str | None = None) -> list[ViewInfo]:
    """Views visible at the snapshot (optionally of one schema, or one name, matched ignoring case)."""
    v, sc, tag = T["ducklake_view"], T["ducklake_schema"], T["ducklake_tag"]
    query = sa.select(v.c.view_id, v.c.view_uuid, v.c.schema_id, sc.c.schema_name, v.c.view_name, v.c.dialect,
                      v.c.sql, v.c.column_aliases, v.c.begin_snapshot).select_from(
        v.join(sc, v.c.schema_id == sc.c.schema_id)).where(
        reader.visible(v, snapshot_id), reader.visible(sc, snapshot_id))
    keys = reader.schema_keys(conn, snapshot_id)  # nested schemas go by their paths
    if keys is not None and schema is not None:
        query = query.where(v.c.schema_id.in_([i for i, key in keys.items() if key.lower() == schema.lower()]))
    elif schema is not None:
        query = query.where(sa.func.lower(sc.c.schema_name) == schema.lower())
    if name is not None:
        query = query.where(sa.func.lower(v.c.view_name) == name.lower())
    rows = list(conn.execute(query.order_by(v.c.view_id)))
    if keys is not None:  # a view of a schema with a dropped parent is gone with it
        rows = [r for r in rows if r.schema_id in keys]
    comments = {}
    if rows:
        found = conn.execute(sa.select(tag.c.object_id, tag.c.value).where(
            reader.visible(tag, snapshot_id), tag.c.key == "comment",
            tag.c.object_id.in_([r.view_id for r in rows])))
        comments = dict(found.all())
    return [ViewInfo(r.view_id, str(r.view_uuid), r.schema_id, keys[r.schema_id] if keys else r.schema_name,
                     r.view_name, r.dialect, r.sql,
                     parse_aliases(r.column_aliases), r.begin_snapshot, comments.get(r.view_id)) for r in rows]


def find_view(conn: sa.Connection, snapshot_id: int, schema: str, name: str) -> ViewInfo | None:
    """The view `schema.name` at the snapshot, or None."""
    found = list_views(conn, snapshot_id, schema=schema, name=name)
    return found[0] if found else None


@dataclass
class CreateView:
    """CREATE VIEW schema.name AS <sql> (sql already in `dialect`, lake references as CATALOG_PLACEHOLDER)."""

    schema: str
    name: str
    sql: str
    dialect: str = "duckdb"
    column_aliases: list[str] = field(default_factory=list)
    view_uuid: str = field(default_factory=new_uuid)
    comment: str | None = None  # COMMENT ON VIEW in the transaction that creates it: written with the view

    def intents(self) -> list[Change]:
        return [Change("created_view", quote_name(self.schema, self.name))]

    def apply(self, ctx: CommitContext) -> None:
        check_name(self.name, "view")
        schema = reader.find_schema(ctx.conn, ctx.snapshot_id, ctx.data_path, self.schema)
        _check_name_free(ctx, schema.schema_id, self.schema, self.name)
        view_id = ctx.catalog_id()
        v, tag = T["ducklake_view"], T["ducklake_tag"]
        ctx.conn.execute(v.insert().values(
            view_id=view_id, view_uuid=self.view_uuid, begin_snapshot=ctx.snapshot_id, end_snapshot=None,
            schema_id=schema.schema_id, view_name=self.name, dialect=self.dialect, sql=self.sql,
            column_aliases=render_aliases(self.column_aliases),
        ))
        if self.comment is not None:
            ctx.conn.execute(tag.insert().values(object_id=view_id, begin_snapshot=ctx.snapshot_id,
                                                 end_snapshot=None, key="comment", value=self.comment))
        ctx.schema_changed = True
        ctx.record("created_view", quote_name(self.schema, self.name))


def _check_name_free(ctx: CommitContext, schema_id: int, schema: str, name: str, view_id: int | None = None) -> None:
    """AlreadyExistsError when a table or another view holds the name: they share one namespace, compared
    ignoring case, as in DuckDB."""
    t, v = T["ducklake_table"], T["ducklake_view"]
    for table, column in ((t, t.c.table_name), (v, v.c.view_name)):
        query = sa.select(column).where(reader.visible(table, ctx.snapshot_id), table.c.schema_id == schema_id,
                                        sa.func.lower(column) == name.lower())
        if table is v and view_id is not None:
            query = query.where(v.c.view_id != view_id)
        taken = ctx.conn.execute(query.limit(1)).scalar()
        if taken is not None:
            kind = "table" if table is t else "view"
            raise AlreadyExistsError(f"{kind} {schema}.{taken} already exists")


@dataclass
class RenameView:
    """ALTER VIEW ... RENAME TO: a new version of the view row with the same id and uuid, as the reference writes
    it (the old row ends, its tags stay; the snapshot logs the new name as created_view)."""

    view_id: int
    schema: str
    new_name: str

    def intents(self) -> list[Change]:
        return [Change("created_view", quote_name(self.schema, self.new_name)),
                Change("altered_view", str(self.view_id))]

    def apply(self, ctx: CommitContext) -> None:
        check_name(self.new_name, "view")
        v = T["ducklake_view"]
        current = ctx.conn.execute(sa.select(v).where(
            v.c.view_id == self.view_id, v.c.end_snapshot.is_(None))).mappings().one_or_none()
        if current is None:
            raise NotFoundError(f"view id {self.view_id} does not exist")
        _check_name_free(ctx, current["schema_id"], self.schema, self.new_name, self.view_id)
        end_live_rows(ctx.conn, v, ctx.snapshot_id, v.c.view_id == self.view_id)
        row = dict(current)
        row.update(begin_snapshot=ctx.snapshot_id, end_snapshot=None, view_name=self.new_name)
        ctx.conn.execute(v.insert().values(**row))
        ctx.schema_changed = True
        ctx.record("created_view", quote_name(self.schema, self.new_name))


@dataclass
class DropView:
    """DROP VIEW by id: end its row and its tags."""

    view_id: int

    def intents(self) -> list[Change]:
        return [Change("dropped_view", str(self.view_id))]

    def apply(self, ctx: CommitContext) -> None:
        v, tag = T["ducklake_view"], T["ducklake_tag"]
        if not end_live_rows(ctx.conn, v, ctx.snapshot_id, v.c.view_id == self.view_id):
            raise NotFoundError(f"view id {self.view_id} does not exist")
        end_live_rows(ctx.conn, tag, ctx.snapshot_id, tag.c.object_id == self.view_id)
        end_view_column_tags(ctx.conn, self.view_id, ctx.snapshot_id)
        ctx.schema_changed = True
        ctx.record("dropped_view", self.view_id)
