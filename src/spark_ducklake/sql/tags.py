"""Comments and tags of tables, views and columns: the lake API and `COMMENT ON` of `lake.sql`."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sqlglot import exp

from ..catalog.changes.ddl import AlterColumns
from ..catalog.changes.tags import COMMENT, VIEW_COLUMN_V10, SetTag, column_tags, object_tags, view_column_tags
from ..catalog.changes.views import ViewInfo, find_view
from ..catalog.database.versions import catalog_is_v11
from ..catalog.reads import reader
from ..errors import InvalidArgumentError, NotFoundError, UnsupportedSqlError, UnsupportedVersionError
from ..operations.staged_names import comment_new_view
from .references import evaluate, resolve_table
from .sqlglot_dialects import reading

if TYPE_CHECKING:
    from ..lake import DuckLake
    from ..spec.commit_properties import CommitProperties
    from .references import QueryContext


def _target(lake: DuckLake, conn, snap: int, name: tuple[str, str], column: str | None,
            kind: str | None = None) -> tuple[int, int | None, bool, str | None]:
    """(object id, table column id or None, is a view, view column name or None) of a table, view or column; kind
    limits it to one."""
    schema, table = name
    info = None
    if kind != "view":
        try:
            info = reader.find_table(conn, snap, lake.data_path, schema, table)
        except NotFoundError:
            if kind == "table":
                raise
    if info is not None:
        if column is None:
            return info.table_id, None, False, None
        for col in info.columns:
            if col.name.lower() == column.lower():
                return info.table_id, col.column_id, False, None
        raise NotFoundError(f"column {column!r} of table {schema}.{table} does not exist")
    view = find_view(conn, snap, schema, table)
    if view is None:
        raise NotFoundError(f"{kind or 'table or view'} {schema}.{table} does not exist")
    if column is None:
        return view.view_id, None, True, None
    if not catalog_is_v11(conn):
        raise UnsupportedVersionError(f"{VIEW_COLUMN_V10} ({schema}.{table} is in a DuckLake 1.0 catalog: attach "
                                      "with automatic_migration=True to migrate it to 1.1)")
    return view.view_id, None, True, view_column_name(view, column)


def view_column_name(view: ViewInfo, column: str) -> str:
    """The name DuckLake 1.1 keys a view column's tags by: the view query's output name, before the view's column
    aliases (`CREATE VIEW v (x) AS SELECT id ...`: `x` is stored as `id`). A view with aliases takes comments on
    its aliased columns only, as the 1.1 reference does (`CREATE VIEW pv (a1) AS SELECT 1 AS x, 2 AS y`: `y` is
    refused too; test/sql/comments/comment_on_view_column.test)."""
    import sqlglot

    try:
        text = re.sub(r"\{[A-Z_]+\}", "c", view.sql)  # the reference's {DUCKLAKE_CATALOG} placeholder
        tree = sqlglot.parse_one(text, read=reading("duckdb" if view.dialect == "duckdb" else "spark"))
        outputs = list(tree.named_selects) if isinstance(tree, exp.Query) else []
    except sqlglot.errors.SqlglotError:
        outputs = []
    if not outputs or "*" in outputs:
        return column  # the names are only known when the query runs: taken as given
    lowered = [o.lower() for o in outputs]
    for i, alias in enumerate(view.column_aliases):
        if alias.lower() == column.lower() and i < len(outputs):
            return outputs[i]
    if not view.column_aliases and column.lower() in lowered:
        return outputs[lowered.index(column.lower(), len(view.column_aliases))]
    raise NotFoundError(f'View "{view.name}" does not have a column with name "{column}" '
                        f"({view.schema_name}.{view.name})")


def set_tag(lake: DuckLake, name: tuple[str, str], key: str, value: str | None, *, column: str | None = None,
            kind: str | None = None, stage=None,
            properties: CommitProperties | None = None) -> int | None:
    """Set (or, with value None, blank) a tag; `stage` appends the operation to a transaction instead."""
    if not isinstance(key, str) or not key:
        raise InvalidArgumentError("a tag key must be a non-empty string")
    if column is not None and key != COMMENT:  # the reference refuses to load a lake with any other
        raise InvalidArgumentError(f"column tag {key!r}: DuckDB's reference reads only 'comment' tags on columns")
    if value is not None and not isinstance(value, str):
        raise InvalidArgumentError(f"a tag value must be a string or None, got {type(value).__name__}")
    with lake.context.connect() as conn:
        object_id, column_id, is_view, view_column = _target(lake, conn, lake.context.snapshot_id(conn), name,
                                                             column, kind)
    op = SetTag(object_id, key, value, column_id, is_view, view_column)
    if stage is not None:
        stage(op)
        return None
    return lake.context.commit([op], properties=properties)


def tags(lake: DuckLake, name: tuple[str, str], *, column: str | None = None,
         version: int | None = None) -> dict[str, str | None]:
    """key -> value of a table's, view's or column's tags now or at `version` (the comment is key 'comment')."""
    with lake.context.connect() as conn:
        snap = lake.context.snapshot_id(conn, version)
        object_id, column_id, _, view_column = _target(lake, conn, snap, name, column)
        if view_column is not None:
            return view_column_tags(conn, snap, object_id, view_column)
        if column_id is None:
            return object_tags(conn, snap, object_id)
        return column_tags(conn, snap, object_id, column_id)


def comment_statement(ctx: QueryContext, tx, tree: exp.Comment) -> None:
    """COMMENT ON TABLE|VIEW|COLUMN name IS 'text' | NULL."""
    kind = str(tree.args.get("kind") or "").lower()
    node = tree.this
    value = tree.expression
    text = None if isinstance(value, exp.Null) else evaluate(ctx, value)
    if text is not None and not isinstance(text, str):
        raise UnsupportedSqlError(f"COMMENT ON {kind.upper()} needs a string or NULL")
    if kind in ("table", "view") and isinstance(node, exp.Table):
        column: str | None
        key, column = resolve_table(ctx, node), None
    elif kind == "column" and isinstance(node, exp.Column) and node.table:
        table = exp.Table(this=exp.to_identifier(node.table), db=node.args.get("db"),
                          catalog=node.args.get("catalog"))
        key, column, kind = resolve_table(ctx, table), node.name, None  # type: ignore[assignment]  # a table or a view column
    else:
        raise UnsupportedSqlError(f"COMMENT ON {kind.upper()} is not supported by lake.sql (tables, views and "
                                  "columns as table.column)")
    if tx is not None and kind == "view":
        if comment_new_view(tx, key, text):  # created in the open transaction: written with its CREATE
            return
    try:
        set_tag(ctx.lake, key, COMMENT, text, column=column, kind=kind,
                stage=tx.stage if tx is not None else None)
    except NotFoundError:
        staged = _staged_column(ctx.lake, tx, key, column) if tx is not None and column is not None else None
        if staged is None:
            raise
        tx.stage(SetTag(staged[0], COMMENT, text, staged[1]))


def _staged_column(lake: DuckLake, tx, key: tuple[str, str], column: str) -> tuple[int, int] | None:
    """(table id, column id) of a column added to an existing table by an ALTER of the open transaction."""
    with lake.context.connect() as conn:
        try:
            table_id = reader.find_table(conn, lake.context.snapshot_id(conn), lake.data_path, *key).table_id
        except NotFoundError:
            return None
    for op in reversed(tx.ops):
        if isinstance(op, AlterColumns) and op.table_id == table_id:
            return next(((table_id, c.column_id) for c in op.new if c.name.lower() == column.lower()), None)
    return None
