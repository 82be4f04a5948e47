"""Queries of `lake.sql`: each lake table reference becomes a pruned read of the lake, then Spark runs the query.

A reference (`t`, `schema.t`, `<lake>.schema.t`, with `VERSION AS OF` / `TIMESTAMP AS OF` or DuckDB's
`AT (VERSION => n)` / `AT (TIMESTAMP => ...)`) is read with `where=` set to the conjuncts of its scope that touch
only that table: WHERE conjuncts for tables no outer join can null-extend, ON conjuncts of the side a join filters.
Those prune files (min/max stats, partition values) before Spark plans the scan; the full query still applies every
predicate, so pushing never changes a result. Reads are planned by `planning.StatementReads`: one catalog snapshot
per statement, one plan per distinct read, plans reused by later statements while no snapshot is committed.
Outside a transaction the translated statement is kept too (`planning.PlannedStatement`, keyed by its text): run
again at the same snapshot, it costs one catalog read and Spark's own `spark.sql`. Its reads reach Spark as global
temporary views kept with the plans (classic sessions) or inside the query's plan (Spark Connect); reads inside a
transaction are bound by PySpark for the call only (`spark.sql(text, df=...)`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from sqlglot import exp

from ..catalog.planners.pruning import conjuncts
from ..errors import NotFoundError
from .insertion_order import ORDER_COLUMNS, order_by_position, ordered_ref, preserves_insertion_order
from .intervals import computed_intervals
from .literals import duckdb_literals
from .macros import expand_macros
from .metadata_tables import is_metadata_table, metadata_frame
from .planning import PlannedStatement, StatementReads, plan_cache
from .procedures import is_lake_function, table_function
from .references import QueryContext, TableRef, table_ref
from .sandbox import lake_relation, refuse_outside_reads, refuse_unknown_sources
from .series import series_as_range
from .session import current, staged_reads
from .settings import current_settings
from .views import expand_views, table_references
from .virtual_columns import hide_in_stars, virtual_needs

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


# Conjuncts holding these are never pushed: subqueries, functions Spark may not treat as deterministic.
_UNSAFE = tuple(t for t in (getattr(exp, n, None) for n in (
    "Subquery", "Select", "Exists", "Anonymous", "Rand", "Randn", "Uuid", "AggFunc", "Window", "Placeholder",
    "Parameter", "Lambda")) if t is not None)
_MARK = "__ducklake_ref_{}__"


def statement_key(ctx: QueryContext, text: str) -> tuple | None:
    """What a query statement's translation is kept under (`cached_query`), or None when it may not be kept: inside
    a transaction, or reading a setting (SET changes no snapshot)."""
    if current(ctx.lake) is not None or "current_setting" in text.lower():
        return None
    order = ctx.dialect == "duckdb" and preserves_insertion_order(ctx.lake)
    return (text, ctx.dialect, ctx.catalog_name, order)


def cached_query(ctx: QueryContext, key: tuple | None) -> tuple[DataFrame | None, int | None]:
    """(the query's DataFrame, None) when the statement under `key` was translated at the latest snapshot, run
    again without parsing; else (None, the snapshot read to find out, for the statement to plan at; None if the
    statement was never kept)."""
    cache = plan_cache(ctx.lake)
    if key is None or not cache.knows(key):
        return None, None
    context = ctx.lake.context
    with context.connect() as conn:
        snap = context.snapshot_id(conn, ctx.snapshot)
    spark = ctx.lake.spark
    planned = cache.statement(snap, spark, key)
    if planned is None:
        return None, snap
    return _spark_sql(lambda: cache.run(spark, planned)), None


def run_query(ctx: QueryContext, tree: exp.Expression, *, statement: tuple | None = None,
              snapshot: int | None = None) -> DataFrame:
    """Run a SELECT-like tree (any dialect sqlglot parsed) on Spark over the lake's tables; `statement`: the key
    (`statement_key`) its translation is kept under, `snapshot`: the latest snapshot when the caller read it."""
    with staged_reads(ctx) as reads:  # inside BEGIN: tables and views as the open transaction left them
        return _run_query(ctx, reads, tree, statement, snapshot)


def _run_query(ctx: QueryContext, reads: QueryContext, tree: exp.Expression, statement: tuple | None = None,
               snapshot: int | None = None) -> DataFrame:
    """run_query, lake tables read through `reads` (lake functions such as snapshots() through `ctx`)."""
    tree = computed_intervals(series_as_range(tree.copy()))  # DuckDB forms Spark lacks (series.py, intervals.py)
    tree = duckdb_literals(tree)  # MAP {'k': v} (literals.py)
    tree = current_settings(ctx, tree)  # current_setting('ducklake_max_retry_count') (settings.py)
    cached = reads is ctx  # outside BEGIN plans may serve later statements
    planner = StatementReads(reads, cached=cached, snapshot=snapshot if cached else None)
    expand_views(reads, tree, lambda: planner.snapshot)  # one snapshot read for views and tables
    tree = expand_macros(reads, tree)
    refuse_outside_reads(tree, lake_relation(reads))  # also what stored views and macros hold (sql/sandbox.py)
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    frames: dict[str, DataFrame] = {}
    refs: list[TableRef] = []
    planned_only = True  # every read a planned lake table read: the translation may be kept
    for node in list(tree.find_all(exp.Table)):
        if isinstance(node.this, exp.Func):  # FROM snapshots(), FROM lake.table_changes('t', 1, 2)
            if is_lake_function(node):
                frame = table_function(ctx, node)
                _feed_virtual_columns(node, frame)
                _replace(node, frames, frame)
                planned_only = False
        elif not node.args.get("db") and node.name.lower() in ctes:
            continue
        elif is_metadata_table(ctx, node):  # `__ducklake_metadata_lake.ducklake_snapshot` (sql/metadata_tables.py)
            _replace(node, frames, metadata_frame(ctx, node))
            planned_only = False
        elif node.name:
            refs.append(table_ref(reads, node, planner.names))
    _push_predicates(planner, tree, refs)
    needs = virtual_needs(tree, refs)  # rowid, filename, ...: read only when the query names them
    ordered = ordered_ref(ctx, tree, refs)  # DuckDB's insertion order kept (insertion_order.py)
    qualifier = ordered.node.alias_or_name if ordered is not None else ""
    for ref in refs:
        virtual = needs.get(id(ref), ())
        if ref is ordered:
            virtual += tuple(n for n in ORDER_COLUMNS if n not in virtual)
        frame = planner.frame(ref, virtual)  # one plan per distinct read, however often the query names it
        if virtual:
            hide_in_stars(ref.node, frame.columns[:len(frame.columns) - len(virtual)])
        staged = getattr(reads.lake.context, "staged_snapshot", None)  # inside BEGIN, rows staged in it
        if "snapshot_id" in virtual and staged is not None:  # not committed yet: NULL, as DuckDB shows them
            from pyspark.sql import functions as F

            frame = frame.withColumn("snapshot_id", F.when(F.col("snapshot_id") != staged, F.col("snapshot_id")))
        _replace(ref.node, frames, frame)
    if ordered is not None and isinstance(tree, exp.Select):  # ordered_ref found one: tree is a SELECT
        order_by_position(tree, qualifier)
    refuse_unknown_sources(tree, set(frames), ctes)
    text = tree.sql(dialect="spark")
    if frames:
        text = text.replace("{", "{{").replace("}", "}}")
        for key in frames:
            text = text.replace(key, "{" + key + "}")
    spark = planner.spark
    if statement is None or not cached or not planned_only or any(r.timestamp is not None for r in refs):
        return _spark_sql(lambda: spark.sql(text, **frames))  # TIMESTAMP AS OF now(): not for later statements
    planned = PlannedStatement(text, frames)
    cache = plan_cache(reads.lake)
    cache.keep(planner.snapshot, spark, statement, planned)
    return _spark_sql(lambda: cache.run(spark, planned))


def _spark_sql(run) -> DataFrame:
    """`run()` (a spark.sql call), Spark's unknown-function error named as DuckDB names it."""
    try:
        return run()
    except Exception as exc:
        missing = _unknown_function(exc)
        if missing is None:
            raise
        raise NotFoundError(f"Scalar Function with name {missing} does not exist! (neither a Spark function nor "
                            "a macro of the lake)") from exc


def _unknown_function(exc: Exception) -> str | None:
    """The function name of Spark's UNRESOLVED_ROUTINE error (lowercase, as DuckDB names it), else None."""
    condition = getattr(exc, "getCondition", getattr(exc, "getErrorClass", lambda: None))()
    if condition != "UNRESOLVED_ROUTINE":
        return None
    # a Spark error class (its condition above) has message parameters; Exception does not say so
    parameters = exc.getMessageParameters()  # type: ignore[attr-defined]
    name = (parameters or {}).get("routineName", "")
    return name.strip("`").split("`.`")[-1].lower() or None


def explain_pruning(ctx: QueryContext, tree: exp.Expression) -> list[tuple[str, str | None]]:
    """(table, pushed predicate) of each lake table read of a query, without running it."""
    tree = tree.copy()
    expand_views(ctx, tree)
    planner = StatementReads(ctx, cached=False)
    refs = [table_ref(ctx, n, planner.names) for n in table_references(tree)]
    _push_predicates(planner, tree, refs)
    return [(f"{r.schema}.{r.name}", r.where()) for r in refs]


def _push_predicates(planner: StatementReads, tree: exp.Expression, refs: list[TableRef]) -> None:
    """Give each lake table reference its columns and the WHERE / ON conjuncts it can prune files by."""
    for ref in refs:  # lower-case names, from the statement's table listing (or its snapshot's, for time travel)
        ref.columns = {c.name.lower() for c in planner.table(ref).columns}
    by_node = {id(r.node): r for r in refs}
    for select in tree.find_all(exp.Select):
        _push(select, by_node)


def _feed_virtual_columns(node: exp.Table, frame) -> None:
    """table_insertions / table_deletions: their snapshot_id and rowid are DuckDB virtual columns, named when
    wanted and left out of `*` (as the reference binds them: the table's columns only)."""
    name = node.this.name if isinstance(node.this, exp.Anonymous) else node.this.sql_name()
    if name.lower().removeprefix("ducklake_") not in ("table_insertions", "table_deletions"):
        return
    if frame.columns[:2] != ["snapshot_id", "rowid"]:
        return
    if node.args.get("alias") is None:  # a qualifier for the spelled-out columns
        node.set("alias", exp.TableAlias(this=exp.to_identifier("ducklake_change_feed")))
    hide_in_stars(node, frame.columns[2:])


def _replace(node: exp.Table, frames: dict, frame) -> None:
    key = next((k for k, f in frames.items() if f is frame), None)  # a read named twice: one view
    if key is None:
        key = _MARK.format(len(frames))
        frames[key] = frame
    alias = node.args.get("alias")
    if alias is None and not isinstance(node.this, exp.Func):
        alias = exp.TableAlias(this=exp.to_identifier(node.name))
    node.replace(exp.Table(this=exp.to_identifier(key), alias=alias))


# ------------------------------------------------------------------------------------------------ pushdown
def _push(select: exp.Select, refs: dict[int, TableRef]) -> None:
    """Give each lake table of this SELECT the WHERE / ON conjuncts that touch only it and cannot change the
    result when applied before the join."""
    from_ = select.args.get("from_") or select.args.get("from")
    if from_ is None:
        return
    sources = [from_.this] + [j.this for j in select.args.get("joins") or []]
    aliases = {}
    for index, src in enumerate(sources):
        aliases[src.alias_or_name.lower()] = index
    known = [refs.get(id(src)) for src in sources]  # None: a subquery, CTE or function (columns unknown)
    nullable: set[int] = set()
    for index, join in enumerate(select.args.get("joins") or [], start=1):
        side = (join.args.get("side") or "").upper()
        kind = (join.args.get("kind") or "").upper()
        if side == "FULL":
            allowed: set[int] = set()
            nullable |= set(range(index + 1))
        elif side == "RIGHT":
            allowed = set(range(index)) - nullable
            nullable |= set(range(index))
        elif side == "LEFT" or kind in ("SEMI", "ANTI"):
            allowed = {index}
            nullable.add(index)
        else:
            allowed = set(range(index + 1)) - nullable
        for conjunct in conjuncts(join.args.get("on")):
            target = _single_table(conjunct, aliases, known)
            if target is not None and target in allowed:  # _single_table names a source of known columns only
                cast(TableRef, known[target]).pushed.append(conjunct)
    where = select.args.get("where")
    for conjunct in conjuncts(where.this if where is not None else None):
        target = _single_table(conjunct, aliases, known)
        if target is not None and target not in nullable:
            cast(TableRef, known[target]).pushed.append(conjunct)


def _single_table(conjunct: exp.Expr, aliases: dict[str, int], known: list) -> int | None:
    """The index of the one lake table all of the conjunct's columns belong to, or None."""
    if conjunct.find(*_UNSAFE) is not None:
        return None
    found: set[int] = set()
    for col in conjunct.find_all(exp.Column):
        if col.args.get("db") or col.args.get("catalog") or isinstance(col.this, exp.Star):
            return None
        name = col.name.lower()
        if col.table:
            index = aliases.get(col.table.lower())
            if index is None or known[index] is None or name not in known[index].columns:
                return None  # an outer query's column, a struct field, or a source we cannot see into
            found.add(index)
        else:
            if any(k is None for k in known):
                return None  # it might belong to a subquery's columns
            owners = [i for i, k in enumerate(known) if name in k.columns]
            if len(owners) != 1:
                return None  # ambiguous, or an outer query's column
            found.add(owners[0])
    return found.pop() if len(found) == 1 else None
