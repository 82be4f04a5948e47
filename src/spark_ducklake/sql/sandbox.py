"""What `lake.sql` may read: lake tables, lake views and the lake's own functions, nothing else.

Every table reference of a query becomes a `lake.read` before Spark sees the text, so a name never reaches Spark as
a path; what could still reach files is a table function (DuckDB's `read_parquet`, which sqlglot writes as Spark's
``parquet.`/path` ``, Spark's `read_files`), a relation addressed by path (``csv.`/path` ``, DuckDB's `FROM
'file.parquet'`) or Java reflection. `refuse_outside_reads` refuses those wherever they sit (subqueries, CTEs,
joins, the source of INSERT / MERGE / CREATE TABLE AS, view bodies); `refuse_unknown_sources` checks, right before
Spark runs a query (views and macros expanded, lake reads substituted), that nothing but those reads is left.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlglot import exp

from ..errors import ExternalReadError
from . import session
from .references import QueryContext, resolve_table

_ONLY = "lake.sql reads only lake tables (and the lake's views and functions)"
# Table functions that read files, URLs or other databases (DuckDB's and its extensions', Spark's), named in errors.
FILE_FUNCTIONS = frozenset({
    "read_parquet", "parquet_scan", "read_csv", "read_csv_auto", "sniff_csv", "read_json", "read_json_auto",
    "read_json_objects", "read_json_objects_auto", "read_ndjson", "read_ndjson_auto", "read_ndjson_objects",
    "read_text", "read_blob", "glob", "read_files", "read_xlsx", "read_avro", "read_orc", "iceberg_scan",
    "iceberg_metadata", "iceberg_snapshots", "delta_scan", "parquet_metadata", "parquet_schema",
    "parquet_file_metadata", "parquet_kv_metadata", "parquet_bloom_probe", "sqlite_scan", "postgres_scan",
    "postgres_query", "mysql_scan", "mysql_query", "st_read", "st_read_meta", "read_xml"})
# Spark functions that call any static Java method (a file read included).
REFLECTION = frozenset({"reflect", "java_method", "try_reflect"})
# Spark's data sources a relation can be addressed by path with: ``format.`/path` ``.
PATH_FORMATS = frozenset({"parquet", "csv", "json", "orc", "avro", "text", "binaryfile", "delta", "iceberg", "hudi",
                          "xml", "jdbc", "libsvm", "image", "hive", "file", "noop"})
# Table functions that compute rows from their arguments alone (left to Spark).
GENERATORS = frozenset({"range", "generate_series", "explode", "explode_outer", "posexplode", "posexplode_outer",
                        "inline", "inline_outer", "stack", "json_tuple", "unnest"})
# What DuckDB reads as a file when no table has the name: a path, a URL, a glob or a data file's extension.
_FILE_NAME = re.compile(r"[/\\*?\[]|^~|\.(?:parquet|parq|pq|csv|tsv|tbl|txt|json|jsonl|ndjson|arrow|feather|avro|"
                        r"orc|xlsx|db|duckdb|sqlite)(?:\.(?:gz|zst|zstd|bz2|lz4|snappy))?$", re.IGNORECASE)


def function_name(func: exp.Func) -> str:
    """A function's name as written (lower case): `read_parquet`, `explode`."""
    if isinstance(func, exp.Anonymous):
        return func.name.lower()
    if isinstance(func, exp.ReadParquet):
        return "read_parquet"
    if isinstance(func, exp.ReadCSV):
        return "read_csv"
    return func.sql_name().lower()


def refuse_outside_reads(tree: exp.Expr, is_lake_relation: Callable[[exp.Table], bool],
                         targets: tuple[exp.Expression, ...] = ()) -> None:
    """ExternalReadError for the first file-reading function, path-addressed relation (unless the lake has a
    table or view of that name: `is_lake_relation`) or Java reflection anywhere in `tree`; `targets` are the
    tables a command creates or writes (`CREATE TABLE "data.csv"` names a new lake table, not a file)."""
    for func in tree.find_all(exp.Func):
        name = function_name(func)
        if name in FILE_FUNCTIONS or isinstance(func, (exp.ReadParquet, exp.ReadCSV)):
            raise ExternalReadError(f"{name}() reads files: {_ONLY}")
        if name in REFLECTION:
            raise ExternalReadError(f"{name}() calls Java methods, which can read files: {_ONLY}")
    skip = {id(t) for t in targets}
    for node in tree.find_all(exp.Table):
        path = addressed_path(node) if id(node) not in skip else None
        if path is not None and not is_lake_relation(node):
            raise ExternalReadError(f"{path} names a file, not a lake table: {_ONLY}")


def lake_relation(ctx: QueryContext) -> Callable[[exp.Table], bool]:
    """Whether a table reference names a lake table or view (one named like a file: `"data.csv"`), as `ctx`'s
    statement sees the lake (an open transaction's new tables included)."""
    def check(node: exp.Table) -> bool:
        key = resolve_table(ctx, node)
        if ctx.lake.context.find(*key) is not None:
            return True
        tx = session.current(ctx.lake)
        if tx is not None and tx.names.exists(tx, key):
            return True
        return any(v.name.lower() == key[1].lower() for v in ctx.lake.views(key[0], version=ctx.snapshot))

    return check


def addressed_path(node: exp.Table) -> str | None:
    """How a table reference names a file, if it looks like one: Spark's ``parquet.`/path` `` or DuckDB's
    replacement scan `FROM '/dir/*.parquet'`; else None."""
    if isinstance(node.this, exp.Func) or not node.name or node.args.get("catalog") is not None:
        return None
    db = node.args.get("db")
    if db is not None:
        path_like = db.name.lower() in PATH_FORMATS and re.search(r"[/\\.:*?]", node.name)
        return f"{db.name}.`{node.name}`" if path_like else None
    return f"'{node.name}'" if _FILE_NAME.search(node.name) or "://" in node.name else None


def refuse_unknown_sources(tree: exp.Expression, frames: set[str], ctes: set[str]) -> None:
    """Right before Spark runs `tree`: every table left is a lake read (`frames`), a CTE or a generator such as
    range() or explode(); ExternalReadError names anything else (a function only Spark or DuckDB knows)."""
    for node in tree.find_all(exp.Table):
        if isinstance(node.this, exp.Func):
            name = function_name(node.this)
            if name not in GENERATORS:
                raise ExternalReadError(f"table function {name}() is not one of the lake's: {_ONLY}")
        elif node.name not in frames and (node.args.get("db") or node.name.lower() not in ctes):
            raise ExternalReadError(f"{node.sql(dialect='spark')} is not a lake table: {_ONLY}")
