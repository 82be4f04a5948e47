"""Lake views in `lake.sql` and the lake API: stored as the reference stores them (DuckDB SQL, the lake's own
tables written `{DUCKLAKE_CATALOG}.schema.table`), expanded into queries as subqueries translated by sqlglot.

A view reference reads the view as of the snapshot the reference reads (`v VERSION AS OF 3` sees the view of
snapshot 3 and its tables as of snapshot 3); table references inside a view that carry their own time travel keep
it. Unqualified tables inside a stored view belong to the view's schema.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

import sqlglot
from sqlglot import exp

from ..catalog.changes.views import (
    CATALOG_PLACEHOLDER,
    CreateView,
    DropView,
    RenameView,
    ViewInfo,
    find_view,
    list_views,
)
from ..errors import AlreadyExistsError, InvalidArgumentError, NotFoundError, UnsupportedSqlError
from ..operations.staged_names import check_view_name, drop_new_view, frees_view_name, new_view_named, rename_new_view
from .references import QueryContext, resolve_table
from .references import table_ref as _table_ref
from .sandbox import lake_relation, refuse_outside_reads
from .sqlglot_dialects import reading

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..lake import DuckLake
    from ..spec.commit_properties import CommitProperties

_MARKER = "__ducklake_catalog__"  # stands for CATALOG_PLACEHOLDER while sqlglot handles the text
_MAX_DEPTH = 32
SNAPSHOT_META = "ducklake_snapshot"  # node.meta key: the snapshot a table inside an expanded view reads


def parse_query(text: str, dialect: str) -> exp.Query:
    """One SELECT-like statement; UnsupportedSqlError when it is anything else or does not parse."""
    try:
        tree = sqlglot.parse_one(text, read=reading(dialect))
    except sqlglot.errors.SqlglotError as exc:
        raise UnsupportedSqlError(f"cannot parse view SQL {text[:80]!r}: {str(exc).splitlines()[0]}") from None
    if not isinstance(tree, exp.Query):
        raise UnsupportedSqlError(f"a view needs a query, got {type(tree).__name__}")
    return tree


def table_references(tree: exp.Expr):
    """The table references of a query that may name lake tables: not table functions, not CTE names."""
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    for node in tree.find_all(exp.Table):
        if isinstance(node.this, exp.Func) or not node.name:
            continue
        if node.args.get("catalog") is None and node.args.get("db") is None and node.name.lower() in ctes:
            continue
        yield node


def stored_sql(query: exp.Expr, schema: str, catalog_name: str) -> str:
    """DuckDB SQL for `ducklake_view.sql`: every lake table fully qualified with the catalog placeholder."""
    tree = query.copy()
    for node in table_references(tree):
        catalog, db = node.args.get("catalog"), node.args.get("db")
        _as_duckdb_time_travel(node)
        if catalog is not None:
            if catalog.name.lower() != catalog_name.lower():
                raise UnsupportedSqlError(f"catalog {catalog.name!r} in a view is not this lake ({catalog_name!r})")
        elif db is not None and db.name.lower() == catalog_name.lower():
            db = exp.to_identifier("main")  # `<lake>.t`
        node.set("db", db if db is not None else exp.to_identifier(schema))
        node.set("catalog", exp.to_identifier(_MARKER))
    return tree.sql(dialect="duckdb").replace(_MARKER, CATALOG_PLACEHOLDER)


def _as_duckdb_time_travel(node: exp.Table) -> None:
    """A table's own time travel kept in the stored view as DuckDB writes it: `AT (VERSION => n)` (sqlglot has
    no DuckDB form of Spark's `VERSION AS OF n`, so that one is rewritten)."""
    travel = node.args.get("version")
    if travel is None:
        return
    kind = str(travel.this).upper()
    if str(travel.args.get("kind", "")).upper() != "AS OF" or kind not in ("VERSION", "TIMESTAMP"):
        raise UnsupportedSqlError(f"time travel {travel.sql(dialect='spark')!r} on {node.name!r} inside a view: "
                                  "only VERSION / TIMESTAMP AS OF is supported")
    node.set("version", None)
    node.set("when", exp.HistoricalData(this="AT", kind=kind, expression=travel.args["expression"].copy()))


def create_view(lake: DuckLake, name: tuple[str, str], sql: str | exp.Query, *, dialect: str = "spark",
                column_aliases: list[str] | None = None, replace: bool = False, if_not_exists: bool = False,
                catalog_name: str = "lake", stage=None, freed: Callable[[int, str], bool] | None = None,
                properties: CommitProperties | None = None) -> int | None:
    """Store a view (translated to DuckDB SQL); `stage` appends the operations to a transaction instead, and
    `freed(view_id, schema)` says whether it dropped (or renamed) the committed view of that name."""
    schema, view = name
    query = parse_query(sql, dialect) if isinstance(sql, str) else sql
    refuse_outside_reads(query, lake_relation(QueryContext(lake, catalog_name, dialect)))  # nor its readers
    ops: list = []
    with lake.context.connect() as conn:
        snap = lake.context.snapshot_id(conn)
        existing = find_view(conn, snap, schema, view)
    if existing is not None and freed is not None and freed(existing.view_id, existing.schema_name):
        existing = None
    if existing is not None:
        if if_not_exists:
            return None
        if not replace:
            raise AlreadyExistsError(f"view {schema}.{existing.name} already exists")
        ops.append(DropView(existing.view_id))
    ops.append(CreateView(schema, view, stored_sql(query, schema, catalog_name), "duckdb",
                          list(column_aliases or [])))
    if stage is not None:
        for op in ops:
            stage(op)
        return None
    return lake.context.commit(ops, properties=properties)


def _existing_view(lake: DuckLake, name: tuple[str, str], *, if_exists: bool):
    """The current view `name`; None when it is missing and `if_exists`, else NotFoundError."""
    schema, view = name
    with lake.context.connect() as conn:
        found = find_view(conn, lake.context.snapshot_id(conn), schema, view)
    if found is None and not if_exists:
        raise NotFoundError(f"view {schema}.{view} does not exist")
    return found


def drop_view(lake: DuckLake, name: tuple[str, str], *, if_exists: bool = False, stage=None,
              properties: CommitProperties | None = None) -> int | None:
    """Drop a view by name; `stage` appends the operation to a transaction instead."""
    found = _existing_view(lake, name, if_exists=if_exists)
    if found is None:
        return None
    if stage is not None:
        stage(DropView(found.view_id))
        return None
    return lake.context.commit([DropView(found.view_id)], properties=properties)


def rename_view(lake: DuckLake, name: tuple[str, str], new_name: str, *, if_exists: bool = False, stage=None,
                properties: CommitProperties | None = None) -> int | None:
    """Rename a view (same id, its comment kept); `stage` appends the operation to a transaction instead."""
    found = _existing_view(lake, name, if_exists=if_exists)
    if found is None:
        return None
    op = RenameView(found.view_id, found.schema_name, new_name)
    if stage is not None:
        stage(op)
        return None
    return lake.context.commit([op], properties=properties)


def views(lake: DuckLake, schema: str | None = None, version: int | None = None) -> list[ViewInfo]:
    """The views visible now or at `version`."""
    with lake.context.connect() as conn:
        return list_views(conn, lake.context.snapshot_id(conn, version), schema=schema)


# ------------------------------------------------------------------------------------------------ expansion
def expand_views(ctx: QueryContext, tree: exp.Expression, snapshot: Callable[[], int] | None = None) -> None:
    """Replace every view reference of `tree` (in place) by the view's query as a subquery; `snapshot` gives the
    statement's snapshot when the caller has read it already (else it is read here)."""
    catalogs: dict[int, dict] = {}
    default: int | None = None
    for _ in range(_MAX_DEPTH):
        ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
        expanded = False
        for node in list(tree.find_all(exp.Table)):
            if isinstance(node.this, exp.Func) or not node.name:
                continue
            if not node.args.get("db") and not node.args.get("catalog") and node.name.lower() in ctes:
                continue
            if default is None and snapshot is not None:
                default = snapshot()
            if default is None:
                with ctx.lake.context.connect() as conn:
                    default = ctx.lake.context.snapshot_id(conn, ctx.snapshot)
            snap = _snapshot_of(ctx, node, default)
            if snap not in catalogs:
                with ctx.lake.context.connect() as conn:
                    catalogs[snap] = {(v.schema_name.lower(), v.name.lower()): v for v in list_views(conn, snap)}
            if not catalogs[snap]:
                continue

            schema, name = resolve_table(ctx, node)
            view = catalogs[snap].get((schema.lower(), name.lower()))
            if view is not None:
                node.replace(_subquery(ctx, node, view, snap))
                expanded = True
        if not expanded:
            return
    raise UnsupportedSqlError(f"views nested more than {_MAX_DEPTH} deep (a view that refers to itself?)")


def _snapshot_of(ctx: QueryContext, node: exp.Table, default: int) -> int:
    """The snapshot a table reference reads: its own time travel, the enclosing view's, or the statement's."""
    if not (node.args.get("version") or node.args.get("when")):
        return node.meta.get(SNAPSHOT_META, default)
    ref = _table_ref(ctx, node)
    if ref.version is not None and ref.timestamp is None:
        return ref.version
    with ctx.lake.context.connect() as conn:
        return ctx.lake.context.snapshot_id(conn, ref.version, ref.timestamp)


def _subquery(ctx: QueryContext, node: exp.Table, view: ViewInfo, snap: int) -> exp.Subquery:
    dialect = view.dialect.lower() if view.dialect else "duckdb"
    if dialect not in sqlglot.Dialect.classes:
        raise UnsupportedSqlError(f"view {view.schema_name}.{view.name} is written in dialect {view.dialect!r}, "
                                  "which sqlglot cannot read")
    query = parse_query(view.sql.replace(CATALOG_PLACEHOLDER, _MARKER), dialect)
    refuse_outside_reads(query, lambda t: lake_relation(ctx)(_in_schema(t, view.schema_name)))  # written by anyone
    for inner in table_references(query):
        catalog, db = inner.args.get("catalog"), inner.args.get("db")
        if catalog is not None and catalog.name == _MARKER:
            inner.set("catalog", exp.to_identifier(ctx.catalog_name))
        elif catalog is None and db is not None and db.name == _MARKER:
            inner.set("catalog", exp.to_identifier(ctx.catalog_name))
            inner.set("db", exp.to_identifier("main"))
        elif db is None:
            inner.set("db", exp.to_identifier(view.schema_name))
        if not (inner.args.get("version") or inner.args.get("when")):
            inner.meta[SNAPSHOT_META] = snap
    alias = node.args.get("alias")
    alias = alias.copy() if alias is not None else exp.TableAlias(this=exp.to_identifier(node.name))
    if view.column_aliases and not alias.args.get("columns") and not _name_first_columns(query, view.column_aliases):
        alias.set("columns", [exp.to_identifier(c) for c in view.column_aliases])
    return exp.Subquery(this=query, alias=alias)


def _name_first_columns(query: exp.Query, names: list[str]) -> bool:
    """DuckDB lets a view name fewer columns than its query has (`CREATE VIEW v(a) AS SELECT 1 x, 2 y`: a, y);
    Spark's alias list must name them all. Renames the first columns in the query itself when it lists them
    (True); False when the names cover every column, or a star hides how many there are."""
    first = query
    while isinstance(first, exp.SetOperation):  # a UNION's columns are named by its first SELECT
        first = first.this
    selects = first.selects if isinstance(first, exp.Select) else []
    if len(names) >= len(selects) or any(s.is_star for s in selects):
        return False
    for select, name in zip(selects[:len(names)], names, strict=True):
        select.replace(exp.alias_(select.unalias(), name, quoted=True))
    return True


def _in_schema(node: exp.Table, schema: str) -> exp.Table:
    """A stored view's table reference as it resolves: unqualified ones belong to the view's schema."""
    return node if node.args.get("db") is not None else exp.table_(node.this.copy(), db=schema)


def check_dialect(dialect: str) -> str:
    """A dialect sqlglot reads (view SQL is translated from it)."""
    if dialect not in sqlglot.Dialect.classes:
        raise InvalidArgumentError(f"unknown SQL dialect {dialect!r}")
    return dialect


# ------------------------------------------------------------------------------------------------ statements
def create_view_statement(ctx: QueryContext, tx, tree: exp.Create) -> None:
    """CREATE [OR REPLACE] VIEW [IF NOT EXISTS] name [(columns)] AS query."""
    properties = tree.args.get("properties")
    if properties is not None and properties.expressions:
        names = ", ".join(p.sql(dialect=ctx.dialect) for p in properties.expressions)
        raise UnsupportedSqlError(f"CREATE VIEW with {names} is not supported by lake.sql (lake views only)")
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    aliases = [c.name for c in tree.this.expressions] if isinstance(tree.this, exp.Schema) else []
    query = tree.args.get("expression")
    if not isinstance(query, exp.Query):
        raise UnsupportedSqlError("CREATE VIEW needs AS followed by a query")
    key = resolve_table(ctx, target)
    if tx is not None:  # names the open transaction created: a table, or a view (replaced by OR REPLACE)
        if tree.args.get("exists") and (tx.names.exists(tx, key) or new_view_named(tx, key)):
            return
        check_view_name(tx, key, replace_view=bool(tree.args.get("replace")))
    create_view(ctx.lake, key, query, column_aliases=aliases,
                replace=bool(tree.args.get("replace")), if_not_exists=bool(tree.args.get("exists")),
                catalog_name=ctx.catalog_name, stage=tx.stage if tx is not None else None,
                freed=partial(frees_view_name, tx) if tx is not None else None)


def drop_view_statement(ctx: QueryContext, tx, tree: exp.Drop) -> None:
    """DROP VIEW [IF EXISTS] name[, name...]."""
    for node in tree.args.get("tables") or []:
        key = resolve_table(ctx, node)
        if tx is not None and drop_new_view(tx, key):  # created in the open transaction: forget its CREATE
            continue
        drop_view(ctx.lake, key, if_exists=bool(tree.args.get("exists")),
                  stage=tx.stage if tx is not None else None)


def alter_view_statement(ctx: QueryContext, tx, tree: exp.Alter) -> None:
    """ALTER VIEW [IF EXISTS] name RENAME TO new_name (the only ALTER VIEW DuckLake stores)."""
    actions = tree.args.get("actions") or []
    if len(actions) != 1 or not isinstance(actions[0], exp.AlterRename):
        raise UnsupportedSqlError(f"ALTER VIEW {tree.sql(dialect=ctx.dialect)[:80]!r}: lake.sql supports only "
                                  "ALTER VIEW ... RENAME TO")
    key, new_name = resolve_table(ctx, tree.this), actions[0].this.name
    if tx is not None and rename_new_view(tx, key, new_name):  # created or renamed in the open transaction
        return
    rename_view(ctx.lake, key, new_name, if_exists=bool(tree.args.get("exists")),
                stage=tx.stage if tx is not None else None)
