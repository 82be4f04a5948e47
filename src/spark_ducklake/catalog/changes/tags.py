"""Tags and comments (`ducklake_tag`, `ducklake_column_tag`, and on 1.1 catalogs `ducklake_view_column_tag`),
written as the reference's COMMENT ON writes them.

A comment is the tag with key 'comment'. Setting a tag ends the live row of the same key and inserts a new one,
even when the new value is NULL (`COMMENT ... IS NULL` stores a NULL value rather than ending the row); the
snapshot is `altered_table:<id>` or `altered_view:<id>` and moves the schema version on. A view's column is named
by the view query's output name (before the view's column aliases), as DuckLake 1.1 keys it.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from ...errors import UnsupportedVersionError
from ...spec.snapshot_changes import Change
from ..commit import CommitContext
from ..database.spec_tables import T, end_live_rows
from ..database.versions import catalog_is_v11
from ..reads.reader import visible

COMMENT = "comment"
VIEW_COLUMN_V10 = "DuckLake 1.0 does not support COMMENT ON COLUMN for views"  # the reference's words


@dataclass
class SetTag:
    """Set tag `key` of a table or view (`object_id`), or of one column of a table (`column_id`)."""

    object_id: int
    key: str
    value: str | None
    column_id: int | None = None
    is_view: bool = False
    view_column: str | None = None  # a view's column (DuckLake 1.1 catalogs only)

    def _change(self) -> Change:
        return Change("altered_view" if self.is_view else "altered_table", str(self.object_id))

    def intents(self) -> list[Change]:
        return [self._change()]

    def apply(self, ctx: CommitContext) -> None:
        row = {"begin_snapshot": ctx.snapshot_id, "end_snapshot": None, "key": self.key, "value": self.value}
        if self.view_column is not None:
            if not catalog_is_v11(ctx.conn):
                raise UnsupportedVersionError(VIEW_COLUMN_V10)
            tag = T["ducklake_view_column_tag"]
            end_live_rows(ctx.conn, tag, ctx.snapshot_id, tag.c.view_id == self.object_id,
                          tag.c.column_name == self.view_column, tag.c.key == self.key)
            ctx.conn.execute(tag.insert().values(view_id=self.object_id, column_name=self.view_column, **row))
        elif self.column_id is None:
            tag = T["ducklake_tag"]
            end_live_rows(ctx.conn, tag, ctx.snapshot_id, tag.c.object_id == self.object_id, tag.c.key == self.key)
            ctx.conn.execute(tag.insert().values(object_id=self.object_id, **row))
        else:
            c = T["ducklake_column"]
            live = ctx.conn.execute(sa.select(c.c.column_id).where(
                c.c.table_id == self.object_id, c.c.column_id == self.column_id, c.c.end_snapshot.is_(None)).limit(1))
            if live.scalar() is None:
                return  # the column was dropped later in the same transaction: no tag is left behind
            tag = T["ducklake_column_tag"]
            end_live_rows(ctx.conn, tag, ctx.snapshot_id, tag.c.table_id == self.object_id,
                          tag.c.column_id == self.column_id, tag.c.key == self.key)
            ctx.conn.execute(tag.insert().values(table_id=self.object_id, column_id=self.column_id, **row))
        ctx.schema_changed = True
        change = self._change()
        ctx.record(change.kind, change.value)


def object_tags(conn: sa.Connection, snapshot_id: int, object_id: int) -> dict[str, str | None]:
    """key -> value of a table's or view's tags at the snapshot."""
    tag = T["ducklake_tag"]
    rows = conn.execute(sa.select(tag.c.key, tag.c.value).where(
        visible(tag, snapshot_id), tag.c.object_id == object_id).order_by(tag.c.key))
    return {key: value for key, value in rows}


def view_column_tags(conn: sa.Connection, snapshot_id: int, view_id: int, column_name: str) -> dict[str, str | None]:
    """key -> value of one view column's tags at the snapshot (none on a 1.0 catalog)."""
    if not catalog_is_v11(conn):
        return {}
    tag = T["ducklake_view_column_tag"]
    rows = conn.execute(sa.select(tag.c.key, tag.c.value).where(
        visible(tag, snapshot_id), tag.c.view_id == view_id, tag.c.column_name == column_name).order_by(tag.c.key))
    return {key: value for key, value in rows}


def end_view_column_tags(conn: sa.Connection, view_id: int, snapshot_id: int) -> None:
    """A dropped view's column tags end with it (1.1 catalogs)."""
    if catalog_is_v11(conn):
        tag = T["ducklake_view_column_tag"]
        end_live_rows(conn, tag, snapshot_id, tag.c.view_id == view_id)


def column_tags(conn: sa.Connection, snapshot_id: int, table_id: int, column_id: int) -> dict[str, str | None]:
    """key -> value of one column's tags at the snapshot."""
    tag = T["ducklake_column_tag"]
    rows = conn.execute(sa.select(tag.c.key, tag.c.value).where(
        visible(tag, snapshot_id), tag.c.table_id == table_id, tag.c.column_id == column_id).order_by(tag.c.key))
    return {key: value for key, value in rows}
