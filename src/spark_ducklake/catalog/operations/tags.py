"""Tags and comments (`ducklake_tag`, `ducklake_column_tag`), written as the reference's COMMENT ON writes them.

A comment is the tag with key 'comment'. Setting a tag ends the live row of the same key and inserts a new one,
even when the new value is NULL (`COMMENT ... IS NULL` stores a NULL value rather than ending the row); the
snapshot is `altered_table:<id>` or `altered_view:<id>` and moves the schema version on.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from ...spec.snapshot_changes import Change
from ..commit import CommitContext
from ..database.spec_tables import T, end_live_rows
from ..reads.reader import visible

COMMENT = "comment"


@dataclass
class SetTag:
    """Set tag `key` of a table or view (`object_id`), or of one column of a table (`column_id`)."""

    object_id: int
    key: str
    value: str | None
    column_id: int | None = None
    is_view: bool = False

    def _change(self) -> Change:
        return Change("altered_view" if self.is_view else "altered_table", str(self.object_id))

    def intents(self) -> list[Change]:
        return [self._change()]

    def apply(self, ctx: CommitContext) -> None:
        row = {"begin_snapshot": ctx.snapshot_id, "end_snapshot": None, "key": self.key, "value": self.value}
        if self.column_id is None:
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


def column_tags(conn: sa.Connection, snapshot_id: int, table_id: int, column_id: int) -> dict[str, str | None]:
    """key -> value of one column's tags at the snapshot."""
    tag = T["ducklake_column_tag"]
    rows = conn.execute(sa.select(tag.c.key, tag.c.value).where(
        visible(tag, snapshot_id), tag.c.table_id == table_id, tag.c.column_id == column_id).order_by(tag.c.key))
    return {key: value for key, value in rows}
