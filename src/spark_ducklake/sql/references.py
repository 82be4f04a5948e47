"""A query's lake-table references (`TableRef`), what every statement runs with (`QueryContext`), and the
constant values time travel names (VERSION AS OF n, TIMESTAMP AS OF expr)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlglot import exp

from ..errors import UnsupportedSqlError
from ..spec.names import schema_key
from . import session

if TYPE_CHECKING:
    from ..lake import DuckLake
    from ..spec.model import TableInfo


@dataclass
class TableRef:
    """One lake table read of a query."""

    node: exp.Table
    schema: str
    name: str
    version: int | None = None
    timestamp: str | None = None
    columns: set[str] = field(default_factory=set)
    pushed: list[exp.Expr] = field(default_factory=list)

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


@dataclass
class CatalogNames:
    """The schemas and tables visible at one snapshot, read once for a whole statement (sql/planning.py)."""

    schemas: set[str]
    tables: dict[tuple[str, str], TableInfo]


def resolve_table(ctx: QueryContext, node: exp.Table, names: CatalogNames | None = None) -> tuple[str, str]:
    """(schema, table) of a reference: `t` (schema main), `schema.t`, `<lake>.schema.t` or `<lake>.t`; names
    looked up in `names` when given, else in the catalog now."""
    parts = [part.name for part in node.parts]
    if len(parts) > 3 or (len(parts) == 3 and parts[0].lower() != ctx.catalog_name.lower()):
        return _nested_table(ctx, node, parts, names)
    catalog, db = node.args.get("catalog"), node.args.get("db")
    if catalog is not None:
        if catalog.name.lower() != ctx.catalog_name.lower():
            raise UnsupportedSqlError(f"catalog {catalog.name!r} in {node.sql(dialect=ctx.dialect)!r} is not this "
                                      f"lake (named {ctx.catalog_name!r} here; pass catalog_name= to lake.sql)")
        return _stored_case(ctx, (db.name if db is not None else "main"), node.name, names)
    if db is None:
        return _stored_case(ctx, "main", node.name, names)
    schemas = names.schemas if names is not None else ctx.lake.schemas()
    if db.name.lower() == ctx.catalog_name.lower() and db.name not in schemas:
        return _stored_case(ctx, "main", node.name, names)
    return _stored_case(ctx, db.name, node.name, names)


def _nested_table(ctx: QueryContext, node: exp.Table, parts: list[str],
                  names: CatalogNames | None) -> tuple[str, str]:
    """A table of a nested schema (DuckLake 1.1): `[<lake>.]sales.europe.t`. A leading name equal to the lake's
    is the lake unless the whole path names a schema; without it, the first name is a schema when the path names
    one, else a catalog that is not this lake (as before nested schemas)."""
    schemas = set(names.schemas if names is not None else ctx.lake.schemas())
    tx = session.current(ctx.lake)
    if tx is not None:  # schemas created in the open transaction
        schemas |= set(tx.new_schemas)
    ours = parts[0].lower() == ctx.catalog_name.lower()
    for path in ([parts[1:-1], parts[:-1]] if ours else [parts[:-1]]):
        stored = _schema_case(schema_key(path), schemas)
        if stored is not None:
            return _stored_case(ctx, stored, parts[-1], names)
    if ours:
        return _stored_case(ctx, schema_key(parts[1:-1]), parts[-1], names)  # NotFoundError names the schema
    raise UnsupportedSqlError(f"catalog {parts[0]!r} in {node.sql(dialect=ctx.dialect)!r} is not this lake (named "
                              f"{ctx.catalog_name!r} here; pass catalog_name= to lake.sql), nor is "
                              f"{schema_key(parts[:-1])!r} a schema of it")


def _schema_case(key: str, schemas: set[str]) -> str | None:
    """The schema `key` names, as stored: the exact spelling first, else one in another case."""
    if key in schemas:
        return key
    return next((s for s in sorted(schemas) if s.lower() == key.lower()), None)


def _stored_case(ctx: QueryContext, schema: str, name: str, names: CatalogNames | None) -> tuple[str, str]:
    """SQL names are case-insensitive (as in DuckDB): a table named in another case resolves to its stored
    spelling; the exact spelling wins, and a name matching no table stays as written."""
    if names is not None:
        if (schema, name) in names.tables:
            return schema, name
        tables = list(names.tables.values())
    else:
        if ctx.lake.context.find(schema, name) is not None:
            return schema, name
        tables = ctx.lake.tables()
    wanted = (schema.lower(), name.lower())
    for table in tables:
        if (table.schema_name.lower(), table.name.lower()) == wanted:
            return table.schema_name, table.name
    return schema, name


def table_ref(ctx: QueryContext, node: exp.Table, names: CatalogNames | None = None) -> TableRef:
    """The reference a table node makes: (schema, table), time travel; UnsupportedSqlError for what we don't."""
    schema, name = resolve_table(ctx, node, names)
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
            ref.timestamp = timestamp_text(ctx, value)
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
