"""What the conformance run leaves out, each with a named reason. Rules are about a file's directives or a
statement's text, never a list of tests: a file is out when it needs what only DuckDB's test runner or DuckDB
itself provides (another extension, an environment, several connections); a statement is out when it uses a
DuckDB feature that is not DuckLake (PRAGMA, settings, DuckDB functions and types, non-lake tables, file I/O)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp

from .parser import Directive, Record, TestFile

IN_SCOPE_EXTENSIONS = {"ducklake", "parquet"}
PLATFORM_REQUIREMENTS = {"notwindows", "notmusl", "no_alternative_verify", "64bit", "vector_size"}
# The lake table functions lake.sql serves (sql/procedures.py), also reachable unqualified or prefixed ducklake_.
LAKE_TABLE_FUNCTIONS = {"snapshots", "table_info", "options", "settings", "current_snapshot", "list_files",
                        "last_committed_snapshot", "table_changes", "table_insertions", "table_deletions"}
SPARK_TABLE_FUNCTIONS = {"range", "generate_series", "explode", "inline", "posexplode", "stack", "json_tuple"}
# Types a DuckLake column cannot have (docs/specification/data_types.md): DuckDB's own.
DUCKDB_ONLY_TYPES = re.compile(r"\b(ENUM\s*\(|UNION\s*\(|BIT\b|BITSTRING\b|VARINT\b|BIGNUM\b)", re.IGNORECASE)
_FIRST_WORD = {
    "PRAGMA": "PRAGMA (a DuckDB setting or function)",
    "SET": "SET/RESET of a DuckDB setting",
    "RESET": "SET/RESET of a DuckDB setting",
    "COPY": "COPY (DuckDB file import/export)",
    "EXPORT": "EXPORT/IMPORT DATABASE (DuckDB)",
    "IMPORT": "EXPORT/IMPORT DATABASE (DuckDB)",
    "INSTALL": "extension install/load",
    "LOAD": "extension install/load",
    "FORCE": "extension install/load",
    "EXPLAIN": "EXPLAIN (DuckDB's plan text)",
    "DESCRIBE": "DESCRIBE/SHOW/SUMMARIZE (DuckDB catalog introspection)",
    "SHOW": "DESCRIBE/SHOW/SUMMARIZE (DuckDB catalog introspection)",
    "SUMMARIZE": "DESCRIBE/SHOW/SUMMARIZE (DuckDB catalog introspection)",
    "VACUUM": "VACUUM/ANALYZE (DuckDB storage)",
    "ANALYZE": "VACUUM/ANALYZE (DuckDB storage)",
    "PREPARE": "prepared statements (DuckDB client API)",
    "EXECUTE": "prepared statements (DuckDB client API)",
    "DEALLOCATE": "prepared statements (DuckDB client API)",
}
_CREATE_KIND = re.compile(r"^CREATE\s+(?:OR\s+REPLACE\s+)?(?:(TEMP|TEMPORARY)\s+)?(SEQUENCE|TYPE|INDEX|UNIQUE\s+INDEX|"
                          r"SECRET|PERSISTENT\s+SECRET)?", re.IGNORECASE)
_COPY_TO = re.compile(r"^\s*COPY\b.*\bTO\s+'", re.IGNORECASE | re.DOTALL)
_CREATE_MACRO = re.compile(r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP\w*\s+)?(?:MACRO|FUNCTION)\s+"
                           r"(?:\"?[\w]+\"?\.){0,2}\"?(\w+)\"?", re.IGNORECASE)
# The lake's CALL-able functions, also unqualified after USE (sql/procedures.py, plus the reference's others).
LAKE_PROCEDURES = {"checkpoint", "set_option", "set_commit_message", "expire_snapshots", "cleanup_old_files",
                   "delete_orphaned_files", "merge_adjacent_files", "rewrite_data_files", "flush_inlined_data",
                   "add_data_files"}
_LAYOUT = re.compile(r"^\s*ALTER\s+TABLE\s+.*\b(SET|RESET)\s+(PARTITIONED|SORTED)\s+BY\b", re.IGNORECASE | re.DOTALL)
# epoch_year(ts) ... in SET PARTITIONED BY: only on catalogs of the DuckLake spec after 1.0 (the reference's gate).
_EPOCH_TRANSFORM = re.compile(r"\bSET\s+PARTITIONED\s+BY\b.*\bepoch_(?:year|month|day|hour)\s*\(",
                              re.IGNORECASE | re.DOTALL)
# FROM '/dir/*.parquet': DuckDB's replacement scan of files (read_parquet), not a lake table.
_FILE_PATH = re.compile(r"[/\\]|\.(?:parquet|csv|json)$", re.IGNORECASE)
_METADATA_DB = re.compile(r"__ducklake_metadata_|\bducklake_meta\b", re.IGNORECASE)
# SET / RESET of the extension's own settings (`SET GLOBAL ducklake_max_retry_count = 5`): DuckLake's, in scope.
# DuckDB's preserve_insertion_order too: lake.sql honours it (sql/insertion_order.py).
_LAKE_SETTING = re.compile(r"^(?:SET|RESET)\s+(?:(?:GLOBAL|SESSION|LOCAL)\s+)?"
                           r"(?:ducklake_\w+|preserve_insertion_order\b)", re.IGNORECASE)
_NESTED_COMMAND = re.compile(r"\(\s*(SHOW|DESCRIBE|SUMMARIZE)\b", re.IGNORECASE)
_WRITES = (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Drop, exp.Create, exp.Alter, exp.TruncateTable)
METADATA_WRITE = "writes the metadata database directly"
_SYSTEM_TABLES = {"information_schema", "pg_catalog", "system", "temp"}
# Catalog tables and columns the reference added after the DuckLake 1.0 spec (/work/shared/reference docs 1.0
# have none of them): a file querying view column comments (not one that only creates the table for a migration
# fixture: that write is out as a metadata write), a statement naming a newer column. Out only on a run of 1.0
# catalogs (--ducklake-version 1.0); on 1.1 catalogs they are the spec's and in scope.
_NEWER_TABLE = re.compile(r"\bducklake_view_column_tag\b", re.IGNORECASE)
_NEWER_COLUMN = re.compile(r"\brow_group_count\b", re.IGNORECASE)
NEWER_SPEC = "a catalog table or column newer than the DuckLake 1.0 spec"


@dataclass
class ScopeState:
    """What a statement is judged against: the lakes attached so far, the default catalog (USE), the names of
    Spark's functions (a DuckDB function is one sqlglot cannot map and Spark does not have), other databases."""

    lakes: set[str] = field(default_factory=set)
    default: str | None = None  # None: DuckDB's in-memory database
    spark_functions: frozenset[str] = frozenset()
    foreign: dict[str, str] = field(default_factory=dict)  # attached name -> why it is not a lake we run
    macros: set[str] = field(default_factory=set)  # lake macros the file created: DuckLake's, not DuckDB's
    metadata: dict[str, str] = field(default_factory=dict)  # metadata catalog name (lower) -> its lake's name
    ducklake_version: str = "1.0"  # the version of the run's new catalogs (the runner's --ducklake-version)

    def note(self, sql: str) -> None:
        """Remember the macro a CREATE MACRO statement names (whether or not it then runs)."""
        match = _CREATE_MACRO.match(sql)
        if match:
            self.macros.add(match.group(1).lower())


_ATTACH_PATH = re.compile(r"^\s*ATTACH\s+(?:DATABASE\s+)?(?:IF\s+NOT\s+EXISTS\s+)?'([^']*)'"
                          r"(?:\s+AS\s+\"?(\w+))?", re.IGNORECASE)
_WRITE_WORDS = ("UPDATE", "INSERT", "DELETE", "DROP", "ALTER", "CREATE")
CATALOG_FIXTURE = "edits a lake's catalog database through a plain ATTACH (a DuckDB-built fixture)"


def _catalog_fixture(test: TestFile) -> bool:
    """Whether the file, after attaching a lake, ATTACHes its catalog database file as a plain database and writes
    to it (to break or rewrite it with DuckDB: those writes are out of scope, so what the file then checks is a
    state never built here). Server catalogs (postgres:, mysql:) are the runner's own choice and not looked at."""
    lakes, editors = set(), set()
    for item in test.items:
        if isinstance(item, Directive):
            continue
        word = item.sql.split(None, 1)[0].upper() if item.sql.strip() else ""
        if word in _WRITE_WORDS and any(re.search(rf"\b{re.escape(n)}\s*\.", item.sql, re.IGNORECASE)
                                        for n in editors):
            return True
        match = _ATTACH_PATH.match(item.sql)
        if not match:
            continue
        kind, _, rest = match.group(1).partition(":")
        if kind.lower() == "ducklake":
            inner, _, path = rest.partition(":")
            lakes.add(path if inner in ("sqlite", "duckdb") else rest)
        elif kind.lower() not in ("postgres", "mysql") and (rest if kind in ("sqlite", "duckdb") else
                                                            match.group(1)) in lakes and match.group(2):
            editors.add(match.group(2))
    return False


def is_v11(version: str) -> bool:
    """Whether a run's catalogs are DuckLake 1.1 ('1.1' or the reference's '1.1-dev1'), where the newer catalog
    tables, columns and partition transforms are in scope."""
    return version.startswith("1.1")


def file_reason(test: TestFile, slow: bool = False, ducklake_version: str = "1.0") -> str | None:
    """Why a whole file is out of scope on catalogs of `ducklake_version`, or None."""
    newer = not is_v11(ducklake_version)  # 1.1 features are out only on a run of 1.0 catalogs
    if _catalog_fixture(test):
        return CATALOG_FIXTURE
    if test.path.endswith(".test_slow") and not slow:
        return "slow test file (.test_slow; run with --slow)"
    for item in test.items:
        if isinstance(item, Directive):
            if item.kind == "require" and item.args:
                name = item.args[0]
                if name not in IN_SCOPE_EXTENSIONS and name not in PLATFORM_REQUIREMENTS:
                    return f"requires DuckDB extension {name}"
            if item.kind == "require-env":
                return "requires a test environment (require-env)"
            if item.kind in ("load", "restart", "reconnect"):
                return f"restarts DuckDB itself ({item.kind})"
            if item.kind == "unzip":
                return "unzips a stored database (DuckDB test fixture)"
        elif _COPY_TO.search(item.sql):
            return "makes its input files with DuckDB (COPY ... TO)"
        elif newer and item.kind == "query" and _NEWER_TABLE.search(item.sql):  # a file checking what it holds
            return f"view column comments: {NEWER_SPEC} (ducklake_view_column_tag)"
        elif newer and item.expect == "ok" and _EPOCH_TRANSFORM.search(item.sql):
            return ("partitions by an epoch transform (a DuckLake 1.1 catalog feature: the reference refuses it on "
                    "the 1.0 catalogs this library writes)")
        elif item.connection is not None:
            return "several connections (conN)"
        elif item.concurrent:
            return "concurrent connections (concurrentloop)"
    return None


def record_reason(record: Record) -> str | None:
    """Why a record is not run for reasons of the record itself (skipif/onlyif conditions), or None."""
    for kind, arg in record.conditions:
        holds = _condition(arg)
        if (kind == "skipif" and holds) or (kind == "onlyif" and not holds):
            return f"{kind} {arg} (the test's own condition)"
    return None


def _condition(arg: str) -> bool:
    """`a=b` compares (loop variables are substituted); a system name holds only for duckdb."""
    if "=" in arg:
        left, right = arg.split("=", 1)
        return left.strip() == right.strip()
    return arg.strip().lower() == "duckdb"


def statement_reason(sql: str, state: ScopeState) -> str | None:
    """Why a statement is out of scope, or None (ATTACH / DETACH / USE are judged by the runner)."""
    text = sql.strip()
    word = text.split(None, 1)[0].upper().rstrip(";") if text else ""
    if word in ("SET", "RESET") and _LAKE_SETTING.match(text):
        return None  # the extension's settings: lake.sql applies them (sql/settings.py)
    if word in _FIRST_WORD:
        return _FIRST_WORD[word]
    nested = _NESTED_COMMAND.search(text)  # FROM (SHOW ALL TABLES), FROM (DESCRIBE t)
    if nested:
        return _FIRST_WORD[nested.group(1).upper()]
    if word == "CREATE":
        match = _CREATE_KIND.match(text)
        if match and match.group(1):
            return "temporary objects (DuckDB's temp catalog)"
        if match and match.group(2):
            return f"CREATE {match.group(2).upper()} (a DuckDB object, not in DuckLake)"
    if _LAYOUT.match(text):
        return None  # partition / sort keys are the lake's transforms (epoch_year(ts), bucket(4, id)), not calls
    if re.search(r"':memory:'|\bmemory\.", text, re.IGNORECASE):
        return "non-lake table (DuckDB's in-memory database)"
    if not is_v11(state.ducklake_version) and _NEWER_COLUMN.search(text):
        return f"{NEWER_SPEC} (row_group_count)"
    if DUCKDB_ONLY_TYPES.search(text):
        return "DuckDB-only type (not a DuckLake type)"
    try:
        trees = [t for t in sqlglot.parse(text, read="duckdb") if t is not None]
    except sqlglot.errors.SqlglotError:
        if word in ("INSERT", "UPDATE", "DELETE", "DROP", "CREATE", "ALTER") and _METADATA_DB.search(text):
            return METADATA_WRITE
        return None  # lake.sql reports what it cannot parse: in scope
    for tree in trees:
        reason = _tree_reason(tree, state)
        if reason:
            return reason
    return None


def _tree_reason(tree: exp.Expression, state: ScopeState) -> str | None:
    if isinstance(tree, exp.Command) and str(tree.this).upper() == "CALL":
        call = str(tree.expression.this if tree.expression is not None else "").strip()
        name = call.split("(", 1)[0].strip().lower()
        lakes = {n.lower() for n in state.lakes}
        if not (name.startswith("ducklake_") or name.split(".")[0] in lakes or name in
                LAKE_PROCEDURES | LAKE_TABLE_FUNCTIONS):
            return f"DuckDB function CALL {name}()"
        return _call_argument_reason(call, state)
    if isinstance(tree, _WRITES) and _is_metadata(_written(tree), state):
        return METADATA_WRITE
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    in_view = _lake_view(tree, state)
    for table in tree.find_all(exp.Table):
        if in_view and table.args.get("catalog") is None and not isinstance(table.this, exp.Func):
            continue  # a lake view's `t` / `s.t` are its own lake's tables (DuckDB binds them there)
        if isinstance(table.parent, exp.AlterRename):
            continue  # `RENAME TO t2`: the new name of the altered table (in its catalog), not a table read

        reason = _table_reason(table, ctes, state)
        if reason:
            return reason
    for func in tree.find_all(exp.Anonymous):
        name = func.name.lower()
        if isinstance(func.parent, exp.Table) or _lake_setting_read(func):
            continue
        if name and name not in state.spark_functions | state.macros and not name.startswith("ducklake_"):
            return f"DuckDB function {name}()"
    return None


def _call_argument_reason(call: str, state: ScopeState) -> str | None:
    """A DuckDB function among a lake CALL's arguments (`versions => getvariable('v')`), or None."""
    try:
        select = sqlglot.parse_one(f"SELECT {call}", read="duckdb")
    except sqlglot.errors.SqlglotError:
        return None  # lake.sql reports what it cannot parse: in scope
    outer = next(select.find_all(exp.Anonymous), None)  # the procedure itself
    for func in select.find_all(exp.Anonymous):
        name = func.name.lower()
        if func is not outer and name not in state.spark_functions | state.macros and not name.startswith("ducklake_"):
            return f"DuckDB function {name}()"
    return None


def _lake_setting_read(func: exp.Anonymous) -> bool:
    """`current_setting('ducklake_...')`: reads one of the extension's settings (lake.sql answers it)."""
    args = func.expressions
    return (func.name.lower() == "current_setting" and len(args) == 1 and isinstance(args[0], exp.Literal)
            and args[0].name.lower().startswith("ducklake_"))


def _written(tree: exp.Expression) -> exp.Table | None:
    """The table an INSERT / UPDATE / DELETE / MERGE / DDL statement changes."""
    target = tree.this
    if isinstance(target, exp.Schema):
        target = target.this
    if isinstance(tree, exp.Drop) and not isinstance(target, exp.Table):
        target = next(iter(tree.args.get("tables") or []), None)
    return target if isinstance(target, exp.Table) else None


def _lake_view(tree: exp.Expression, state: ScopeState) -> bool:
    """Whether the statement is CREATE VIEW of a view qualified by a lake's name (`CREATE VIEW lake.v AS ...`)."""
    if not isinstance(tree, exp.Create) or str(tree.args.get("kind") or "").upper() != "VIEW":
        return False
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    qualifier = target.args.get("catalog") or target.args.get("db") if isinstance(target, exp.Table) else None
    return qualifier is not None and qualifier.name.lower() in {n.lower() for n in state.lakes}


def _is_metadata(table: exp.Table | None, state: ScopeState) -> bool:
    """Whether a table is one of the metadata database's (`__ducklake_metadata_lake.ducklake_column`, ...)."""
    if table is None:
        return False
    qualifier = table.args.get("catalog") or table.args.get("db")
    name = qualifier.name.lower() if qualifier is not None else ""
    return name in state.metadata or name.startswith("__ducklake_metadata_")


def _table_reason(table: exp.Table, ctes: set[str], state: ScopeState) -> str | None:
    if isinstance(table.this, exp.Func):
        func = table.this
        name = (func.name if isinstance(func, exp.Anonymous) else func.sql_name()).lower()
        qualifier = table.args.get("db")
        if qualifier is not None and qualifier.name.lower() in {n.lower() for n in state.lakes}:
            return None
        if name.startswith("ducklake_") or name in LAKE_TABLE_FUNCTIONS | SPARK_TABLE_FUNCTIONS | state.macros:
            return None
        if name in ("unnest", "explode"):
            return None
        return f"DuckDB table function {name}()"
    if not table.name:
        return None
    if table.args.get("db") is None and _FILE_PATH.search(table.name):
        return "DuckDB file read (FROM 'a/file/path.parquet')"
    parts = [p.name.lower() for p in (table.args.get("catalog"), table.args.get("db")) if p is not None]
    lakes = {n.lower() for n in state.lakes}
    foreign = {n.lower(): why for n, why in state.foreign.items()}
    if parts and parts[0] in state.metadata:
        return None  # a read of the catalog tables: lake.sql serves them (sql/metadata_tables.py)
    for part in parts:
        if part in foreign:
            return foreign[part]
        if part in _SYSTEM_TABLES:
            return "DuckDB system catalog (information_schema, pg_catalog, ...)"
    if parts and parts[0] in lakes:
        return None
    if not parts and table.name.lower() in ctes:
        return None
    if table.name.lower().startswith("duckdb_"):
        return "DuckDB system catalog (information_schema, pg_catalog, ...)"
    if state.default is None:
        return "non-lake table (DuckDB's in-memory database)"
    if len(parts) == 2:  # catalog.schema.table of an unknown catalog
        return "non-lake table (another attached database)"
    return None
