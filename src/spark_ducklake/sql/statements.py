"""`lake.sql`: split and parse statements with sqlglot, then run each on the lake's public API (one function per
statement kind). Commands return a list of `CommandResult` (CALL: the function's rows); queries a DataFrame."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import sqlglot
from sqlglot import exp
from sqlglot.tokens import TokenType

from ..catalog.changes.ddl import nested_refusal
from ..catalog.database.versions import catalog_version
from ..catalog.reads.reader import nested_schemas
from ..errors import DuckLakeError, InvalidArgumentError, UnsupportedSqlError
from ..operations.staged_names import drop_schema_entries
from ..spec.names import schema_key
from . import alter, dml, session
from .alter import column_ddl, parse_nested
from .defaults import create_table, split_defaults
from .duck_types import ducklake_type
from .geometry import geometry_literals, geometry_output
from .macro_ddl import is_macro_ddl, run_macro_ddl
from .params import bind
from .procedures import call
from .queries import cached_query, run_query, statement_key
from .references import QueryContext, resolve_table
from .register import refresh
from .results import CommandResult
from .sandbox import lake_relation, refuse_outside_reads
from .settings import quote_settings_call, reset_statement, set_statement
from .sqlglot_dialects import reading
from .tags import comment_statement
from .views import create_view_statement, drop_view_statement

if TYPE_CHECKING:
    from ..lake import DuckLake

DIALECTS = ("spark", "duckdb")


def run(lake: DuckLake, text: str, dialect: str = "spark", catalog_name: str = "lake", params=None):
    """Run every statement of `text` (its placeholders bound to `params`: sql/params.py); returns the last one's
    result."""
    if dialect not in DIALECTS:
        raise InvalidArgumentError(f"dialect must be one of {', '.join(DIALECTS)}; got {dialect!r}")
    if not isinstance(text, str) or not text.strip():
        raise InvalidArgumentError("lake.sql needs at least one SQL statement")
    if "\0" in text:  # Spark's parser stops at it, DuckDB's refuses it: never part of a statement
        raise InvalidArgumentError(f"the SQL text holds a NUL character (at offset {text.index(chr(0))}); pass "
                                   "such values as data, not in the SQL text")

    pieces = split_statements(text, dialect)
    if params is not None:
        pieces = bind(pieces, dialect, params)  # every statement bound and checked before the first runs
    result = None
    for piece in pieces:
        before = lake.last_committed
        tx = session.current(lake)
        point = tx.savepoint() if tx is not None and not tx.aborted else None
        try:
            session.check_usable(lake, piece)
            result = _run_one(lake, piece, dialect, catalog_name)
        except BaseException as exc:
            session.after_error(lake, exc, point)  # DuckDB's rules: the transaction goes on or is aborted
            raise
        if lake.last_committed != before:
            refresh(lake)  # views from lake.register() follow this handle's own commits
    return result


def split_statements(text: str, dialect: str) -> list[str]:
    """The statements of `text` (split on top-level semicolons by sqlglot's tokenizer), each as its own text."""
    return list(_split(text, dialect))


@functools.lru_cache(maxsize=64)  # a TPC-DS query's tokens cost ~10 ms: a text run again is not tokenized again
def _split(text: str, dialect: str) -> tuple[str, ...]:
    try:
        tokens = sqlglot.tokenize(text, read=dialect)
    except sqlglot.errors.TokenError as exc:
        raise UnsupportedSqlError(f"cannot tokenize SQL: {str(exc).splitlines()[0]}") from None
    pieces, start = [], 0
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            pieces.append(text[start:token.start])
            start = token.end + 1
    pieces.append(text[start:])
    return tuple(p.strip() for p in pieces if p.strip())


_END = re.compile(r"^\s*(END|ABORT)(?:\s+(?:TRANSACTION|WORK))?\s*$", re.IGNORECASE)
_COMPRESSION = re.compile(r"\bUSING\s+COMPRESSION\b", re.IGNORECASE)
_COMMENT_NULL = re.compile(r"^(\s*COMMENT\s+ON\s+.+\s+IS\s+)NULL(\s*)$", re.IGNORECASE | re.DOTALL)


def _parse_one(text: str, dialect: str) -> exp.Expression:
    # sqlglot types its result as the Expr trait; every node it builds is an Expression
    return cast(exp.Expression, sqlglot.parse_one(text, read=reading(dialect)))


def _parse(text: str, dialect: str) -> exp.Expression:
    try:
        null_comment = _COMMENT_NULL.match(text)
        if null_comment:  # sqlglot parses COMMENT ON ... IS 'text' only: NULL (clear it) goes in afterwards
            tree = _parse_one(_COMMENT_NULL.sub(r"\1''\2", text), dialect)
            tree.set("expression", exp.Null())
            return tree
        tree = _parse_one(text, dialect)
        if isinstance(tree, exp.Command) and str(tree.this).upper() == "ALTER":
            tree = parse_nested(text, dialect) or tree  # ADD / ALTER COLUMN of a struct field
    except sqlglot.errors.SqlglotError as exc:
        quoted = quote_settings_call(text)  # `FROM settings()`: SETTINGS is a keyword to sqlglot
        if quoted is not None:
            return _parse(quoted, dialect)
        if _COMPRESSION.search(text):  # DuckDB's per-column storage option, which sqlglot does not parse
            raise UnsupportedSqlError("a compression type for a column is not supported in DuckLake") from None
        raise UnsupportedSqlError(f"cannot parse {text[:80]!r}: {str(exc).splitlines()[0]}") from None
    return tree


def _run_one(lake: DuckLake, text: str, dialect: str, catalog_name: str):
    ending = _END.match(text)
    if ending is not None:  # Postgres' spellings, which DuckDB takes too and sqlglot does not parse
        if ending.group(1).upper() == "END":
            return [CommandResult("COMMIT", session.commit(lake))]
        session.rollback(lake)
        return [CommandResult("ROLLBACK", None)]
    tx = session.current(lake)
    ctx = QueryContext(lake, catalog_name, dialect, tx.read_snapshot if tx is not None else None)
    key = statement_key(ctx, text)
    found, snapshot = cached_query(ctx, key)  # the same query at the same snapshot: not parsed again
    if found is not None:
        return geometry_output(found) if dialect == "duckdb" else found
    if is_macro_ddl(text, dialect):
        return _committed(lake, "CREATE MACRO" if text.lstrip()[:1] in "cC" else "DROP MACRO",
                          lambda: run_macro_ddl(ctx, tx, text))
    layout = alter.layout_change(ctx, text)
    if layout is not None:
        return _committed(lake, "ALTER TABLE", lambda: alter.run_layout(ctx, tx, *layout))
    tree = geometry_literals(_parse(text, dialect))  # '<wkt>'::GEOMETRY as its WKB (sql/geometry.py)
    refuse_outside_reads(tree, lake_relation(ctx), _targets(tree))  # lake tables only (sql/sandbox.py)
    if isinstance(tree, exp.Column) and tree.name.upper() == "CHECKPOINT" and not tree.table:
        return call(ctx, f"{catalog_name}.checkpoint()", tx is not None)  # bare CHECKPOINT parses as a column
    if isinstance(tree, exp.Transaction):
        session.begin(lake)
        return [CommandResult("BEGIN", None)]
    if isinstance(tree, exp.Commit):
        return [CommandResult("COMMIT", session.commit(lake))]
    if isinstance(tree, exp.Rollback):
        session.rollback(lake)
        return [CommandResult("ROLLBACK", None)]
    if isinstance(tree, exp.Query) and not tree.args.get("into"):
        frame = run_query(ctx, tree, statement=key, snapshot=snapshot)
        return geometry_output(frame) if dialect == "duckdb" else frame
    if isinstance(tree, exp.Set):
        return set_statement(ctx, tree)
    if isinstance(tree, exp.Command):
        word = str(tree.this).upper()
        if word == "RESET" and tree.expression is not None:
            return reset_statement(ctx, str(tree.expression.this))
        if word == "CALL":
            return call(ctx, str(tree.expression.this if tree.expression is not None else ""), tx is not None)
        if word == "CHECKPOINT" and not (tree.expression and str(tree.expression.this).strip()):
            return call(ctx, f"{catalog_name}.checkpoint()", tx is not None)
        raise UnsupportedSqlError(f"{_head(text)} is not supported by lake.sql")
    handlers: dict[type, Callable[..., Any]] = {
        exp.Create: _create, exp.Drop: _drop, exp.Alter: alter.run_alter, exp.Insert: dml.insert,
        exp.Update: dml.update, exp.Delete: dml.delete, exp.Merge: dml.merge, exp.Comment: _comment,
        exp.TruncateTable: dml.truncate}
    handler = handlers.get(type(tree))
    if handler is None:
        raise UnsupportedSqlError(f"{_head(text)} ({type(tree).__name__}) is not supported by lake.sql")
    if isinstance(tree, exp.Create | exp.Drop) and str(tree.args.get("kind") or "").upper() == "SCHEMA":
        tree.meta[_SCHEMA_PATHS] = _schema_paths(text, dialect)
    if isinstance(tree, exp.Create) and str(tree.args.get("kind") or "").upper() == "TABLE":
        tree.meta[_PARTITION_KEYS] = alter.create_partition_keys(dialect, text)
    label = _label(tree)
    return _committed(lake, label, lambda: handler(ctx, tx, tree))


_SCHEMA_PATHS = "ducklake_schema_paths"  # tree.meta: the names of CREATE / DROP SCHEMA, as written
_PARTITION_KEYS = "ducklake_partition_keys"  # tree.meta: the keys of CREATE TABLE ... PARTITIONED BY, as written


def _schema_paths(text: str, dialect: str) -> list[tuple[str, ...]] | None:
    """The dotted names of `CREATE SCHEMA [IF NOT EXISTS] a.b.c` / `DROP SCHEMA [IF EXISTS] a.b, c`, read from the
    tokens: sqlglot's tree keeps two names of a schema at most (catalog.schema) and drops a third, the path of a
    nested schema. None when the text is not of that shape."""
    try:
        tokens = [t for t in sqlglot.Dialect.get_or_raise(dialect).tokenize(text)]
    except sqlglot.errors.SqlglotError:
        return None
    words = [t.text.upper() for t in tokens]
    i = 2 if words[:1] in (["CREATE"], ["DROP"]) and words[1:2] == ["SCHEMA"] else None
    if i is None:
        return None
    for filler in (["IF", "NOT", "EXISTS"], ["IF", "EXISTS"]):
        if words[i:i + len(filler)] == filler:
            i += len(filler)
            break
    paths: list[tuple[str, ...]] = []
    path: list[str] = []
    while i < len(tokens):
        token = tokens[i]
        if token.token_type in (TokenType.DOT, TokenType.COMMA) and not path:
            return None
        if token.token_type == TokenType.DOT:
            i += 1
            continue
        if token.token_type == TokenType.COMMA:
            paths.append(tuple(path))
            path = []
            i += 1
            continue
        if path and tokens[i - 1].token_type != TokenType.DOT:
            break  # CASCADE, RESTRICT, a semicolon...
        path.append(token.text)
        i += 1
    if path:
        paths.append(tuple(path))
    return paths or None


def _targets(tree: exp.Expression) -> tuple[exp.Expression, ...]:
    """The tables a command creates, writes or drops (named, not read)."""
    if isinstance(tree, exp.Drop):
        return tuple(tree.args.get("tables") or ())
    if not isinstance(tree, (exp.Create, exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Alter, exp.TruncateTable,
                             exp.Comment)) or tree.this is None:
        return ()
    return (tree.this, tree.this.this) if isinstance(tree.this, exp.Schema) else (tree.this,)


def _committed(lake: DuckLake, label: str, action) -> list[CommandResult]:
    """Run a command; its result names the snapshot it committed (None when staged or nothing changed)."""
    before = lake.last_committed
    rows = action()
    snapshot = lake.last_committed if lake.last_committed != before else None
    return [CommandResult(label, snapshot, rows if isinstance(rows, int) and not isinstance(rows, bool) else None)]


def _label(tree: exp.Expression) -> str:
    kind = tree.args.get("kind")
    name = type(tree).__name__.upper()
    if isinstance(tree, exp.Insert) and tree.args.get("overwrite"):
        return "INSERT OVERWRITE"
    return f"{name} {str(kind).upper()}" if kind else name


def _head(text: str) -> str:
    """The statement's first words, to name it in errors."""
    words = text.split()
    return " ".join(words[:3]) if words else text


# ------------------------------------------------------------------------------------------------ DDL
def _comment(ctx: QueryContext, tx, tree: exp.Comment):
    return comment_statement(ctx, tx, tree)


def _schema_name(ctx: QueryContext, node: exp.Table) -> str:
    catalog = node.args.get("catalog")
    if catalog is not None and catalog.name.lower() != ctx.catalog_name.lower():
        raise UnsupportedSqlError(f"catalog {catalog.name!r} is not this lake (named {ctx.catalog_name!r} here)")
    db = node.args.get("db")
    if db is None:
        raise UnsupportedSqlError(f"no schema name in {node.sql(dialect=ctx.dialect)!r}")
    return db.name


def _create(ctx: QueryContext, tx, tree: exp.Create):
    kind = str(tree.args.get("kind") or "").upper()
    if kind == "VIEW":
        return create_view_statement(ctx, tx, tree)
    if tree.args.get("replace") and kind == "TABLE":
        return _replace_table(ctx, tx, tree)
    if tree.args.get("replace"):
        raise UnsupportedSqlError(f"CREATE OR REPLACE {kind} is not supported by lake.sql: DROP, then CREATE")
    if kind == "SCHEMA":
        return _create_schema(ctx, tx, tree)
    if kind == "TABLE":
        return _create_table(ctx, tx, tree)
    raise UnsupportedSqlError(f"CREATE {kind} is not supported by lake.sql")


def _schema_path(ctx: QueryContext, node: exp.Table, path: tuple[str, ...] | None) -> tuple[str, ...]:
    """The names of a schema of CREATE / DROP SCHEMA from the top level down: `s`, `<lake>.s`, and on DuckLake 1.1
    catalogs `[<lake>.]sales.europe` (a nested schema; the lake's name in front is the lake)."""
    if path is None or len(path) == 1 or (len(path) == 2 and path[0].lower() == ctx.catalog_name.lower()):
        return (_schema_name(ctx, node),)
    prefixed = path[0].lower() == ctx.catalog_name.lower()
    path = path[1:] if prefixed else path
    with ctx.lake.context.connect() as conn:
        nested, version = nested_schemas(conn), catalog_version(conn)
    if not nested and not prefixed and len(path) == 2:  # before 1.1 this read as catalog.schema: say both
        raise UnsupportedSqlError(f"catalog {path[0]!r} is not this lake (named {ctx.catalog_name!r} here), and as "
                                  f"a schema path: {nested_refusal(version, schema_key(path))}")
    if not nested:
        raise DuckLakeError(nested_refusal(version, schema_key(path)))
    return path


def _create_schema(ctx: QueryContext, tx, tree: exp.Create):
    paths = tree.meta.get(_SCHEMA_PATHS)
    path = _schema_path(ctx, tree.this, paths[0] if paths and len(paths) == 1 else None)
    name = schema_key(path)
    exists = bool(tree.args.get("exists"))
    if tx is None:
        ctx.lake.create_schema(path, if_not_exists=exists)
    elif not (exists and name.lower() in {s.lower() for s in ctx.lake.schemas()}):
        tx.create_schema(path)


def _partition_keys(ctx: QueryContext, tree: exp.Create) -> list[str] | None:
    """The keys of the statement's PARTITIONED BY (None without one); refuses the table properties it cannot
    keep."""
    properties = tree.args.get("properties")
    listed = properties.expressions if properties is not None else []
    others = [p for p in listed if not isinstance(p, exp.PartitionedByProperty)]
    if others:
        names = ", ".join(p.sql(dialect=ctx.dialect) for p in others)
        raise UnsupportedSqlError(f"CREATE TABLE with {names} is not supported by lake.sql")
    if not listed:
        return None
    return tree.meta.get(_PARTITION_KEYS) or [k.sql(dialect=ctx.dialect) for k in listed[0].this.expressions]


def _create_table(ctx: QueryContext, tx, tree: exp.Create):
    partition_keys = _partition_keys(ctx, tree)
    if partition_keys is not None and tx is None:  # the table and its partitioning: one snapshot
        with ctx.lake.transaction() as own:
            created = _create_table(ctx, own, tree)
        return None if created is None and own.snapshot_id is None else own.snapshot_id
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    key = resolve_table(ctx, target)
    exists = bool(tree.args.get("exists"))
    if exists and _table_exists(ctx, tx, key):
        return None
    query = tree.args.get("expression")
    if query is not None:
        if isinstance(tree.this, exp.Schema):
            raise UnsupportedSqlError("CREATE TABLE with both a column list and AS SELECT is not supported")
        frame = run_query(ctx, query)
        if partition_keys is not None:  # the partitioning applies to the rows written now
            tx.create_table(key, frame.schema)
            tx.set_partitioning(key, partition_keys)
            return tx.write(frame, key, mode="append", one_file_if_small=ctx.dialect == "duckdb")
        if tx is not None:
            return tx.write(frame, key, mode="error", one_file_if_small=ctx.dialect == "duckdb")
        with ctx.lake.transaction() as own:  # a small result is one file, as DuckDB writes it
            own.write(frame, key, mode="error", one_file_if_small=ctx.dialect == "duckdb")
        return own.snapshot_id
    if not isinstance(tree.this, exp.Schema):
        raise UnsupportedSqlError("CREATE TABLE needs a column list or AS SELECT")

    columns, defaults = split_defaults(ctx, tree.this.expressions)
    ddl = ", ".join(column_ddl(ctx, col) for col in columns)
    special = {} if ctx.dialect != "duckdb" else {  # USMALLINT, TIME, UUID, ... (sql/duck_types.py)
        col.name: kind for col in columns if (kind := ducklake_type(col.args.get("kind"))) is not None}
    if defaults or special:  # `i INTEGER DEFAULT 42`: stored on the new column (sql/defaults.py)
        create_table(ctx, tx, key, ddl, defaults, special)
    elif tx is None:
        return ctx.lake.create_table(key, ddl)
    else:
        tx.create_table(key, ddl)
    if partition_keys is not None:
        tx.set_partitioning(key, partition_keys)
    return None


def _replace_table(ctx: QueryContext, tx, tree: exp.Create):
    """CREATE OR REPLACE TABLE: as in the reference, drop the old table and create the new one in one snapshot
    (the new table gets a new id; rows, tags and layout of the old one end with it)."""
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    key = resolve_table(ctx, target)
    if tx is not None and tx.created(key) is not None:
        raise UnsupportedSqlError(f"CREATE OR REPLACE TABLE {key[0]}.{key[1]}: the table was created in this "
                                  "transaction; replace it after COMMIT")
    plain = tree.copy()
    plain.set("replace", False)
    plain.set("exists", False)
    if tx is not None:
        return _drop_then_create(ctx, tx, plain, key)
    with ctx.lake.transaction() as own:
        return _drop_then_create(ctx, own, plain, key)


def _drop_then_create(ctx: QueryContext, tx, tree: exp.Create, key: tuple[str, str]):
    if _table_exists(ctx, tx, key):
        tx.drop_table(key)
    query = tree.args.get("expression")
    if query is None:
        return _create_table(ctx, tx, tree)
    if isinstance(tree.this, exp.Schema):
        raise UnsupportedSqlError("CREATE TABLE with both a column list and AS SELECT is not supported")
    frame = run_query(ctx, query)
    tx.create_table(key, frame.schema)  # the new table, so the write does not find the dropped one
    partition_keys = _partition_keys(ctx, tree)
    if partition_keys is not None:
        tx.set_partitioning(key, partition_keys)
    return tx.write(frame, key, mode="append", one_file_if_small=ctx.dialect == "duckdb")


def _table_exists(ctx: QueryContext, tx, key: tuple[str, str]) -> bool:
    if tx is not None:  # as the open transaction sees it: its creates, renames and drops included
        return tx.names.exists(tx, key)
    return ctx.lake.context.find(*key) is not None


def _drop(ctx: QueryContext, tx, tree: exp.Drop):
    kind = str(tree.args.get("kind") or "").upper()
    exists = bool(tree.args.get("exists"))
    nodes = tree.args.get("tables") or []
    if kind == "SCHEMA":
        paths = tree.meta.get(_SCHEMA_PATHS)
        paths = paths if paths and len(paths) == len(nodes) else [None] * len(nodes)
        for node, path in zip(nodes, paths, strict=True):
            name = schema_key(_schema_path(ctx, node, path))
            _drop_schema(ctx, tx, name, exists, bool(tree.args.get("cascade")))
        return None
    if kind == "VIEW":
        return drop_view_statement(ctx, tx, tree)
    if kind != "TABLE":
        raise UnsupportedSqlError(f"DROP {kind} is not supported by lake.sql")
    for node in nodes:
        key = resolve_table(ctx, node)
        if exists and not _table_exists(ctx, tx, key):
            continue
        if tx is None:
            ctx.lake.drop_table(key)
        else:
            tx.drop_table(key)
    return None


def _drop_schema(ctx: QueryContext, tx, name: str, exists: bool, cascade: bool) -> None:
    if tx is None:
        ctx.lake.drop_schema(name, cascade=cascade, if_exists=exists)
        return

    if drop_schema_entries(tx, name, cascade):  # created in this transaction: nothing of it is written
        return
    if not (exists and name not in ctx.lake.schemas()):
        if not cascade:
            _refuse_non_empty(ctx, tx, name)
        tx.drop_schema(name, cascade=cascade)


def _refuse_non_empty(ctx: QueryContext, tx, name: str) -> None:
    """Inside BEGIN: DROP SCHEMA without CASCADE fails now (not at COMMIT) when the schema, as the transaction
    leaves it, still holds tables, views or macros, as in DuckDB."""
    with tx.staged(catalog_only=True) as staged:
        lake = type(ctx.lake)(staged)
        names = ([t.name for t in lake.tables(name)] + [v.name for v in lake.views(name)] +
                 [m.macro_name for m in lake.macros(name)])
    if names:
        raise DuckLakeError(f"cannot drop schema {name!r}: there are entries that depend on it (tables/views/"
                            f"macros: {', '.join(sorted(set(names)))}); use DROP SCHEMA ... CASCADE")
