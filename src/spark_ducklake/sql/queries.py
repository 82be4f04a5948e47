"""Queries of `lake.sql`: each lake table reference becomes a pruned `lake.read`, then Spark runs the query.

A reference (`t`, `schema.t`, `<lake>.schema.t`, with `VERSION AS OF` / `TIMESTAMP AS OF` or DuckDB's
`AT (VERSION => n)` / `AT (TIMESTAMP => ...)`) is read with `where=` set to the conjuncts of its scope that touch
only that table: WHERE conjuncts for tables no outer join can null-extend, ON conjuncts of the side a join filters.
Those prune files (min/max stats, partition values) before Spark plans the scan; the full query still applies every
predicate, so pushing never changes a result. The reads reach `spark.sql` as DataFrame arguments, which PySpark
binds to uniquely named temporary views and drops when the call returns (classic) or sends inside the plan
(Spark Connect): no view outlives the call and concurrent queries never share a name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlglot import exp

from ..catalog.planners.pruning import conjuncts
from ..errors import UnsupportedSqlError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from ..lake import DuckLake

# Conjuncts holding these are never pushed: subqueries, functions Spark may not treat as deterministic.
_UNSAFE = tuple(t for t in (getattr(exp, n, None) for n in (
    "Subquery", "Select", "Exists", "Anonymous", "Rand", "Randn", "Uuid", "AggFunc", "Window", "Placeholder",
    "Parameter", "Lambda")) if t is not None)
_MARK = "__ducklake_ref_{}__"


@dataclass
class TableRef:
    """One lake table read of a query."""

    node: exp.Table
    schema: str
    name: str
    version: int | None = None
    timestamp: str | None = None
    columns: set[str] = field(default_factory=set)
    pushed: list[exp.Expression] = field(default_factory=list)

    def where(self) -> str | None:
        """The pushed conjuncts as one Spark SQL predicate on the table's own columns."""
        parts = []
        for conjunct in self.pushed:
            copy = conjunct.copy()
            for col in copy.find_all(exp.Column):
                col.set("table", None)
            parts.append(f"({copy.sql(dialect='spark')})")
        return " AND ".join(parts) or None


@dataclass
class QueryContext:
    """What a statement's queries need: the lake, the name its tables are qualified with, the input dialect and
    the snapshot plain references read (an open transaction's start; None: the latest)."""

    lake: DuckLake
    catalog_name: str
    dialect: str
    snapshot: int | None = None


def run_query(ctx: QueryContext, tree: exp.Expression) -> DataFrame:
    """Run a SELECT-like tree (any dialect sqlglot parsed) on Spark over the lake's tables."""
    from .procedures import is_lake_function, table_function
    from .views import expand_views

    tree = tree.copy()
    expand_views(ctx, tree)
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    frames: dict[str, DataFrame] = {}
    refs: list[TableRef] = []
    for node in list(tree.find_all(exp.Table)):
        if isinstance(node.this, exp.Func):  # FROM snapshots(), FROM lake.table_changes('t', 1, 2)
            if is_lake_function(node):
                _replace(node, frames, table_function(ctx, node))
        elif not node.args.get("db") and node.name.lower() in ctes:
            continue
        elif node.name:
            refs.append(_table_ref(ctx, node))
    _push_predicates(ctx, tree, refs)
    for ref in refs:
        version = ref.version if ref.version is not None or ref.timestamp is not None else ctx.snapshot
        frame = ctx.lake.read((ref.schema, ref.name), version=version, timestamp=ref.timestamp, where=ref.where())
        _replace(ref.node, frames, frame)
    text = tree.sql(dialect="spark")
    if not frames:
        return ctx.lake.spark.sql(text)
    text = text.replace("{", "{{").replace("}", "}}")
    for key in frames:
        text = text.replace(key, "{" + key + "}")
    return ctx.lake.spark.sql(text, **frames)


def explain_pruning(ctx: QueryContext, tree: exp.Expression) -> list[tuple[str, str | None]]:
    """(table, pushed predicate) of each lake table read of a query, without running it."""
    from .views import expand_views, table_references

    tree = tree.copy()
    expand_views(ctx, tree)
    refs = [_table_ref(ctx, n) for n in table_references(tree)]
    _push_predicates(ctx, tree, refs)
    return [(f"{r.schema}.{r.name}", r.where()) for r in refs]


def _push_predicates(ctx: QueryContext, tree: exp.Expression, refs: list[TableRef]) -> None:
    """Give each lake table reference its columns and the WHERE / ON conjuncts it can prune files by."""
    columns = _columns(ctx, refs)
    for ref in refs:
        ref.columns = columns[(ref.schema, ref.name, ref.version, ref.timestamp)]
    by_node = {id(r.node): r for r in refs}
    for select in tree.find_all(exp.Select):
        _push(select, by_node)


def _replace(node: exp.Table, frames: dict, frame) -> None:
    key = _MARK.format(len(frames))
    frames[key] = frame
    alias = node.args.get("alias")
    if alias is None and not isinstance(node.this, exp.Func):
        alias = exp.TableAlias(this=exp.to_identifier(node.name))
    node.replace(exp.Table(this=exp.to_identifier(key), alias=alias))


def resolve_table(ctx: QueryContext, node: exp.Table) -> tuple[str, str]:
    """(schema, table) of a reference: `t` (schema main), `schema.t`, `<lake>.schema.t` or `<lake>.t`."""
    catalog, db = node.args.get("catalog"), node.args.get("db")
    if catalog is not None:
        if catalog.name.lower() != ctx.catalog_name.lower():
            raise UnsupportedSqlError(f"catalog {catalog.name!r} in {node.sql(dialect=ctx.dialect)!r} is not this "
                                      f"lake (named {ctx.catalog_name!r} here; pass catalog_name= to lake.sql)")
        return (db.name if db is not None else "main"), node.name
    if db is None:
        return "main", node.name
    if db.name.lower() == ctx.catalog_name.lower() and db.name not in ctx.lake.schemas():
        return "main", node.name
    return db.name, node.name


def _table_ref(ctx: QueryContext, node: exp.Table) -> TableRef:
    schema, name = resolve_table(ctx, node)
    ref = TableRef(node, schema, name)
    travel = node.args.get("version") or node.args.get("when")
    if travel is not None:
        kind = str(travel.args.get("kind") if isinstance(travel, exp.HistoricalData) else travel.this).upper()
        if isinstance(travel, exp.Version) and str(travel.args.get("kind", "")).upper() != "AS OF":
            raise UnsupportedSqlError(f"time travel {travel.sql(dialect=ctx.dialect)!r}: only AS OF is supported")
        if isinstance(travel, exp.HistoricalData) and str(travel.this).upper() != "AT":
            raise UnsupportedSqlError(f"time travel {travel.sql(dialect=ctx.dialect)!r}: only AT (...) is supported")
        value = travel.args.get("expression")
        if kind == "VERSION":
            ref.version = _version(ctx, value)
        elif kind == "TIMESTAMP":
            ref.timestamp = _timestamp(ctx, value)
        else:
            raise UnsupportedSqlError(f"time travel by {kind} in {node.sql(dialect=ctx.dialect)!r}: use VERSION or "
                                      "TIMESTAMP")
    elif "ducklake_snapshot" in node.meta:  # a table inside a view read at that snapshot (sql/views.py)
        ref.version = node.meta["ducklake_snapshot"]
    for arg in ("pivots", "laterals", "sample", "hints"):
        if node.args.get(arg):
            raise UnsupportedSqlError(f"{arg} on lake table {schema}.{name} is not supported by lake.sql")
    return ref


def evaluate(ctx: QueryContext, value: exp.Expression):
    """A constant expression's value: literals directly, anything else (now() - INTERVAL '1 day') on Spark."""
    if isinstance(value, exp.Literal):
        return value.this if value.is_string else int(value.this) if value.is_int else float(value.this)
    if isinstance(value, exp.Boolean):
        return value.this
    if isinstance(value, exp.Neg) and isinstance(value.this, exp.Literal) and value.this.is_int:
        return -int(value.this.this)
    if value.find(exp.Column, exp.Select) is not None:
        raise UnsupportedSqlError(f"{value.sql(dialect=ctx.dialect)!r} is not a constant")
    return ctx.lake.spark.sql(f"SELECT {value.sql(dialect='spark')} AS v").collect()[0][0]


def _version(ctx: QueryContext, value: exp.Expression) -> int:
    got = evaluate(ctx, value)
    if isinstance(got, bool) or not isinstance(got, int):
        raise UnsupportedSqlError(f"VERSION {value.sql(dialect=ctx.dialect)!r} is not an integer snapshot id")
    return got


def timestamp_text(ctx: QueryContext, value: exp.Expression) -> str:
    """A timestamp expression as an ISO string (naive: UTC; an expression is computed on Spark, in UTC)."""
    if isinstance(value, exp.Literal) and value.is_string:
        return value.this
    if isinstance(value, exp.Cast) and isinstance(value.this, exp.Literal) and value.this.is_string:
        return value.this.this
    spark_sql = value.sql(dialect="spark")
    row = ctx.lake.spark.sql(
        f"SELECT date_format(to_utc_timestamp(CAST({spark_sql} AS TIMESTAMP), current_timezone()), "
        "'yyyy-MM-dd HH:mm:ss.SSSSSS') AS v").collect()[0]
    if row[0] is None:
        raise UnsupportedSqlError(f"TIMESTAMP {value.sql(dialect=ctx.dialect)!r} is not a timestamp")
    return row[0]


_timestamp = timestamp_text


def _columns(ctx: QueryContext, refs: list[TableRef]) -> dict:
    """Lower-case column names of each referenced table version (one catalog read per distinct reference)."""
    out: dict = {}
    for ref in refs:
        key = (ref.schema, ref.name, ref.version, ref.timestamp)
        if key not in out:
            if ref.timestamp is not None:  # table_info takes ids only: its snapshot via the scan plan
                info = ctx.lake.plan_scan((ref.schema, ref.name), timestamp=ref.timestamp).table
            else:
                version = ref.version if ref.version is not None else ctx.snapshot
                info = ctx.lake.table_info((ref.schema, ref.name), version=version)
            out[key] = {c.name.lower() for c in info.columns}
    return out


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
            if target is not None and target in allowed:
                known[target].pushed.append(conjunct)
    where = select.args.get("where")
    for conjunct in conjuncts(where.this if where is not None else None):
        target = _single_table(conjunct, aliases, known)
        if target is not None and target not in nullable:
            known[target].pushed.append(conjunct)


def _single_table(conjunct: exp.Expression, aliases: dict[str, int], known: list) -> int | None:
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
