"""Sorted tables: `SET SORTED BY` / `RESET SORTED BY` (ducklake_sort_info, ducklake_sort_expression).

Keys are SQL expressions in DuckDB's dialect, as the reference stores them; writers translate them to Spark SQL
with sqlglot and sort each task's rows before writing files (option `sort_on_insert`, default true; the Spark
side is dataplane/spark/sorting.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from ...errors import NotFoundError, SchemaMismatchError
from ...spec.model import TableInfo
from ...spec.snapshot_changes import Change
from ..database.spec_tables import T, end_live_rows
from ..reads import reader


@dataclass(frozen=True)
class SortKey:
    """One sort key: a DuckDB SQL expression, ASC/DESC and NULLS_FIRST/NULLS_LAST."""

    expression: str
    direction: str = "ASC"
    null_order: str = "NULLS_LAST"


def parse_sort_keys(table: TableInfo, keys: list[str]) -> list[SortKey]:
    """`['ts DESC', "b ASC NULLS FIRST", "date_trunc('hour', ts)"]` -> keys; unknown columns are errors."""
    import sqlglot
    from sqlglot import exp

    names = {c.name.lower() for c in table.columns}
    out, unmatched = [], []
    for text in keys:
        try:
            order = sqlglot.parse_one(f"SELECT 1 ORDER BY {text}", read="duckdb").args["order"].expressions
        except (sqlglot.errors.ParseError, KeyError, AttributeError) as e:
            raise SchemaMismatchError(f"cannot parse sort key {text!r}") from e
        if len(order) != 1:
            raise SchemaMismatchError(f"give one sort key per list item, not {text!r}")
        item = order[0]
        columns = [c.name for c in item.this.find_all(exp.Column, bfs=False)]  # in the order written
        if not columns:
            raise SchemaMismatchError(f"sort key {text!r} names no column")
        unmatched += [c for c in columns if c.lower() not in names and c not in unmatched]
        nulls_first = item.args.get("nulls_first")
        explicit_nulls = "NULLS" in text.upper()
        # function names in lower case, as the reference's expression text has them
        out.append(SortKey(item.this.sql(dialect="duckdb", normalize_functions="lower"),
                           "DESC" if item.args.get("desc") else "ASC",
                           "NULLS_FIRST" if explicit_nulls and nulls_first else "NULLS_LAST"))
    if unmatched:  # the reference's words, every unknown column of every key
        raise NotFoundError(f"Columns in the SET SORTED BY statement were not found in the DuckLake table. "
                            f"Unmatched columns were: {', '.join(unmatched)} (table {table.qualified_name})")
    return out


def current_sort(conn: sa.Connection, table_id: int, snapshot_id: int) -> list[SortKey]:
    """The table's sort keys at the snapshot (empty when unsorted)."""
    info, se = T["ducklake_sort_info"], T["ducklake_sort_expression"]
    row = conn.execute(sa.select(info.c.sort_id).where(info.c.table_id == table_id,
                                                       reader.visible(info, snapshot_id))).first()
    if row is None:
        return []
    rows = conn.execute(sa.select(se.c.expression, se.c.sort_direction, se.c.null_order).where(
        se.c.sort_id == row.sort_id, se.c.table_id == table_id).order_by(se.c.sort_key_index))
    return [SortKey(r.expression, r.sort_direction or "ASC", r.null_order or "NULLS_LAST") for r in rows]


@dataclass
class SetSorting:
    """ALTER TABLE ... SET SORTED BY (keys) / RESET SORTED BY (no keys), as the reference writes them."""

    table_id: int | object  # or ddl.TableRef: the table is created in the same commit
    keys: list[SortKey]

    def intents(self) -> list[Change]:
        return [] if not isinstance(self.table_id, int) else [Change("altered_table", str(self.table_id))]

    def apply(self, ctx: Any) -> None:
        table_id = self.table_id.table_id if not isinstance(self.table_id, int) else self.table_id  # type: ignore[attr-defined]  # a ddl.TableRef
        info, se = T["ducklake_sort_info"], T["ducklake_sort_expression"]
        end_live_rows(ctx.conn, info, ctx.snapshot_id, info.c.table_id == table_id)
        if self.keys:
            sort_id = ctx.catalog_id()
            ctx.conn.execute(info.insert().values(sort_id=sort_id, table_id=table_id,
                                                  begin_snapshot=ctx.snapshot_id, end_snapshot=None))
            ctx.conn.execute(se.insert(), [
                {"sort_id": sort_id, "table_id": table_id, "sort_key_index": i, "expression": k.expression,
                 "dialect": "duckdb", "sort_direction": k.direction, "null_order": k.null_order}
                for i, k in enumerate(self.keys)])
        if isinstance(self.table_id, int):  # else a new table: its CREATE records the change
            ctx.schema_changed = True
            ctx.record("altered_table", table_id)


def follow_renames(ctx: Any, table_id: int, renamed: dict[str, str]) -> None:
    """After columns are renamed (old -> new name): the table's sort keys naming them, rewritten, as a new sort, the
    way the reference keeps a sorted table's keys valid across RENAME COLUMN."""
    import sqlglot
    from sqlglot import exp

    keys = current_sort(ctx.conn, table_id, ctx.snapshot_id)
    lowered = {old.lower(): new for old, new in renamed.items()}
    changed = []
    for key in keys:
        try:
            tree = sqlglot.parse_one(key.expression, read="duckdb")
        except sqlglot.errors.ParseError:
            changed.append(key)  # kept as it is: writers report what they cannot translate
            continue
        for node in list(tree.find_all(exp.Column)):
            if not node.table and node.name.lower() in lowered:
                node.set("this", exp.to_identifier(lowered[node.name.lower()]))
        changed.append(SortKey(tree.sql(dialect="duckdb"), key.direction, key.null_order))
    if changed != keys:
        SetSorting(table_id, changed).apply(ctx)
