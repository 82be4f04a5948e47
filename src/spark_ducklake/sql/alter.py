"""ALTER TABLE of `lake.sql`: column changes as one SchemaUpdate, RENAME TO, and SET/RESET PARTITIONED BY and
SORTED BY (whose keys go to the lake as the text the user wrote, DuckDB expressions)."""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp
from sqlglot.tokens import TokenType

from ..dataplane.spark.conform import plan_columns
from ..dataplane.spark.ddl import parse_type
from ..errors import NotFoundError, SchemaMismatchError, UnsupportedSqlError
from .defaults import NON_LITERAL, is_literal, literal_default
from .duck_types import arrow_type, cast_default, check_column, ducklake_type, set_types, with_stand_ins
from .references import QueryContext, resolve_table
from .sqlglot_dialects import reading
from .views import alter_view_statement

_LAYOUT = {"PARTITIONED": "partitioning", "SORTED": "sorted_by"}


def spark_type(ctx: QueryContext, dtype: exp.DataType) -> str:
    """A parsed type as Spark DDL; DuckDB's TIMESTAMP has no time zone (Spark: TIMESTAMP_NTZ)."""
    dtype = dtype.copy()
    if ctx.dialect == "duckdb":
        dtype = with_stand_ins(dtype)  # USMALLINT, TIME, UUID, ...: the Spark type they read as (duck_types.py)
        for node in dtype.find_all(exp.DataType):
            if node.this == exp.DataType.Type.TIMESTAMP:
                node.set("this", exp.DataType.Type.TIMESTAMPNTZ)
            elif node.this == exp.DataType.Type.TIMESTAMPTZ:
                node.set("this", exp.DataType.Type.TIMESTAMPLTZ)
    return dtype.sql(dialect="spark")


def column_ddl(ctx: QueryContext, col: exp.Expression) -> str:
    """A column definition of CREATE TABLE as Spark DDL (constraints other than NOT NULL are refused later)."""
    if not isinstance(col, exp.ColumnDef) or col.args.get("kind") is None:
        raise UnsupportedSqlError(f"not a column definition: {col.sql(dialect=ctx.dialect)!r}")
    if ctx.dialect == "duckdb":
        check_column(col)  # INT[3], COLLATE: refused as DuckDB refuses them (sql/duck_types.py)
    copy = col.copy()
    copy.set("kind", exp.DataType.build(spark_type(ctx, col.args["kind"]), dialect="spark"))
    return copy.sql(dialect="spark")


_ALTER = re.compile(r"\bALTER\b", re.IGNORECASE)


def layout_change(ctx: QueryContext, text: str) -> tuple | None:
    """(table node, 'partitioning' | 'sorted_by', keys or [] to reset) of `ALTER TABLE t SET|RESET PARTITIONED BY
    (...)` / `SORTED BY (...)`, found with sqlglot's tokenizer (its parser has no node for them); None otherwise."""
    if not _ALTER.search(text):  # most statements: not tokenized for nothing (a TPC-DS query's tokens: ~10 ms)
        return None
    try:
        tokens = sqlglot.tokenize(text, read=ctx.dialect)
    except sqlglot.errors.TokenError:
        return None
    words = [t.text.upper() for t in tokens]
    if words[:2] != ["ALTER", "TABLE"]:
        return None
    for i in range(3, len(tokens) - 1):
        if words[i] not in ("SET", "RESET"):
            continue
        kind = words[i + 1].split()[0] if words[i + 1].split() else ""
        if words[i + 1] in ("PARTITIONED BY", "SORTED BY"):  # one keyword token in some dialects
            skip = 2
        elif kind in _LAYOUT and i + 2 < len(words) and words[i + 2] == "BY":
            skip = 3
        else:
            continue
        break
    else:
        return None
    node = exp.to_table(text[tokens[2].start:tokens[i - 1].end + 1], dialect=ctx.dialect)
    rest = tokens[i + skip:]
    if words[i] == "RESET":
        if rest:
            raise UnsupportedSqlError(f"unexpected {text[rest[0].start:]!r} after RESET {kind} BY")
        return node, _LAYOUT[kind], []
    if len(rest) < 3 or rest[0].token_type != TokenType.L_PAREN or rest[-1].token_type != TokenType.R_PAREN:
        raise UnsupportedSqlError(f"SET {kind} BY needs a parenthesised list of keys in {text!r}")
    return node, _LAYOUT[kind], _split_keys(text, rest[1:-1])


def _split_keys(text: str, tokens: list) -> list[str]:
    """The comma-separated keys between a list's parentheses, each as written."""
    keys, depth, start = [], 0, tokens[0].start
    for token in tokens:
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
        elif token.token_type == TokenType.COMMA and depth == 0:
            keys.append(text[start:token.start].strip())
            start = token.end + 1
    keys.append(text[start:tokens[-1].end + 1].strip())
    return keys


def create_partition_keys(dialect: str, text: str) -> list[str] | None:
    """The keys of `CREATE [OR REPLACE] TABLE ... PARTITIONED BY (k, ...)` as written, for `set_partitioning`
    (sqlglot's tree rewrites some: Spark's `year(ts)` becomes YEAR(TO_DATE(ts))); None without such a clause."""
    try:
        tokens = sqlglot.tokenize(text, read=dialect)
    except sqlglot.errors.TokenError:
        return None
    words = [t.text.upper() for t in tokens]
    if not words or words[0] != "CREATE" or "TABLE" not in words[:4]:
        return None
    depth = 0
    for i, token in enumerate(tokens):
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and (words[i] == "PARTITIONED BY" or words[i:i + 2] == ["PARTITIONED", "BY"]):
            first = i + (1 if words[i] == "PARTITIONED BY" else 2)
            break
    else:
        return None
    if first >= len(tokens) or tokens[first].token_type != TokenType.L_PAREN:
        raise UnsupportedSqlError(f"PARTITIONED BY needs a parenthesised list of keys in {text!r}")
    depth = 0
    for j in range(first, len(tokens)):
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(tokens[j].token_type, 0)
        if depth == 0:
            if j == first + 1:
                raise UnsupportedSqlError(f"PARTITIONED BY needs at least one key in {text!r}")
            return _split_keys(text, tokens[first + 1:j])
    raise UnsupportedSqlError(f"PARTITIONED BY: unbalanced parentheses in {text!r}")


def run_layout(ctx: QueryContext, tx, node: exp.Table, kind: str, keys: list[str]):
    """SET/RESET PARTITIONED BY or SORTED BY, committed (or staged in the open transaction)."""
    key = resolve_table(ctx, node)
    if tx is not None:
        return getattr(tx, f"set_{kind}")(key, keys)
    if not keys:
        return getattr(ctx.lake, f"reset_{kind}")(key)
    return getattr(ctx.lake, f"set_{kind}")(key, keys)


def run_alter(ctx: QueryContext, tx, tree: exp.Alter):
    """ALTER TABLE: RENAME TO alone; column changes together as one snapshot."""
    if str(tree.args.get("kind") or "").upper() == "VIEW":
        return alter_view_statement(ctx, tx, tree)
    if str(tree.args.get("kind") or "").upper() != "TABLE":
        raise UnsupportedSqlError(f"ALTER {tree.args.get('kind')} is not supported by lake.sql")
    key = resolve_table(ctx, tree.this)
    if tree.args.get("exists") and not (tx.names.exists(tx, key) if tx is not None
                                        else ctx.lake.context.find(*key) is not None):
        return None
    actions = tree.args.get("actions") or []
    if len(actions) == 1 and isinstance(actions[0], exp.AlterRename):
        new_name = actions[0].this.name
        return tx.rename_table(key, new_name) if tx is not None else ctx.lake.rename_table(key, new_name)
    update = tx.update_schema(key) if tx is not None else ctx.lake.update_schema(key)
    for action in actions:
        _column_change(ctx, update, action)
    return update.commit()


def _column_change(ctx: QueryContext, update, action: exp.Expression) -> None:
    if isinstance(action, exp.Schema):  # Spark's ADD COLUMNS (a INT, b STRING)
        for col in action.expressions:
            _column_change(ctx, update, col)
    elif isinstance(action, exp.ColumnDef):
        _add_column(ctx, update, action)
    elif isinstance(action, exp.Drop) and str(action.args.get("kind")).upper() == "COLUMN":
        for col in action.args.get("tables") or []:
            if action.args.get("exists") and not _has(update, _path(col)):
                continue
            update.drop_column(_path(col))
    elif isinstance(action, exp.RenameColumn):
        update.rename_column(_path(action.this), action.args["to"].name)
    elif isinstance(action, exp.AlterColumn):
        _alter_column(ctx, update, action)
    else:
        raise UnsupportedSqlError(f"ALTER TABLE {action.sql(dialect=ctx.dialect)!r} is not supported by lake.sql")


def _path(col: exp.Expression) -> str:
    """A column reference as a column name, or a dotted path of a struct field (`a`.`b`) when qualified."""
    if not isinstance(col, exp.Column):
        return col.name
    parts = [p.name for p in (col.args.get("catalog"), col.args.get("db"), col.args.get("table")) if p is not None]
    return ".".join(f"`{p}`" for p in [*parts, col.name]) if parts else col.name


def _has(update, path: str) -> bool:
    if "`" not in path:  # a plain name (it may hold a dot): a top-level column
        return any(c.name.lower() == path.lower() for c in update.columns)
    try:
        update._find(path)
    except NotFoundError:
        return False
    return True


_NESTED = re.compile(r"^(?P<head>\s*ALTER\s+TABLE\s+.+?\s+(?:ADD|ALTER)\s+(?:COLUMN\s+)?(?:IF\s+NOT\s+EXISTS\s+)?)"
                     r"(?P<path>(?:\"[^\"]+\"|\w+)(?:\s*\.\s*(?:\"[^\"]+\"|\w+))+)(?P<tail>\s+.*)$",
                     re.IGNORECASE | re.DOTALL)
_PLACEHOLDER = "ducklake_nested_field_path"


def parse_nested(text: str, dialect: str) -> exp.Alter | None:
    """`ALTER TABLE t ADD COLUMN s.f TYPE` / `ALTER COLUMN s.f ...`, which sqlglot cannot parse: the struct
    field's path goes in as the column's name (`s`.`f`), which SchemaUpdate reads as a path; None otherwise."""
    match = _NESTED.match(text)
    if match is None:
        return None
    try:
        tree = sqlglot.parse_one(match["head"] + _PLACEHOLDER + match["tail"], read=reading(dialect))
    except sqlglot.errors.SqlglotError:
        return None
    if not isinstance(tree, exp.Alter):
        return None
    parts = [a or b for a, b in re.findall(r'"([^"]+)"|(\w+)', match["path"])]
    for node in tree.find_all(exp.Identifier):
        if node.name == _PLACEHOLDER:
            node.set("this", ".".join(f"`{p}`" for p in parts))
    return tree


def _add_column(ctx: QueryContext, update, col: exp.ColumnDef) -> None:
    if col.args.get("kind") is None:
        raise UnsupportedSqlError(f"ADD COLUMN {col.name!r} has no type")
    default, nullable = None, True
    for constraint in col.constraints:
        kind = constraint.kind
        if isinstance(kind, exp.DefaultColumnConstraint):
            if not is_literal(kind.this):  # old rows would need the expression's value: refused as DuckDB does
                raise UnsupportedSqlError(NON_LITERAL)
            default = literal_default(ctx, kind.this, col.name)
            if ctx.dialect == "duckdb":
                default = cast_default(default, col.args["kind"])
        elif isinstance(kind, exp.NotNullColumnConstraint):
            nullable = bool(kind.args.get("allow_null"))
        else:
            raise UnsupportedSqlError(f"column constraint {constraint.sql(dialect=ctx.dialect)!r} is not supported")
    if not (col.args.get("exists") and _has(update, col.name)):
        update.add_column(col.name, spark_type(ctx, col.args["kind"]), default=default, nullable=nullable)
        special = ducklake_type(col.args["kind"]) if ctx.dialect == "duckdb" else None
        if special is not None:  # declared with its Spark stand-in; now its DuckLake type (sql/duck_types.py)
            set_types(update.columns, {col.name: special})


def _alter_column(ctx: QueryContext, update, action: exp.AlterColumn) -> None:
    name = action.this.name
    if action.args.get("dtype") is not None:
        if action.args.get("using") or action.args.get("collate"):
            raise UnsupportedSqlError(f"ALTER COLUMN {name} TYPE ... USING/COLLATE is not supported")
        unsigned = arrow_type(ducklake_type(action.args["dtype"])) if ctx.dialect == "duckdb" else None
        if unsigned is not None:  # UTINYINT ... UBIGINT: promoted as the DuckLake type (sql/duck_types.py)
            update.update_column_type(f"`{name}`", unsigned)
        else:
            _change_type(update, name, spark_type(ctx, action.args["dtype"]))
    elif action.args.get("allow_null") is not None:
        update.set_nullable(name, bool(action.args["allow_null"]))
    elif action.args.get("default") is not None:  # a literal only: an expression would need evaluating per row
        update.set_default(name, literal_default(ctx, action.args["default"], name))
    elif action.args.get("drop"):
        update.set_default(name, None)
    else:
        raise UnsupportedSqlError(f"ALTER COLUMN {action.sql(dialect=ctx.dialect)!r} is not supported by lake.sql")


def _change_type(update, name: str, ddl_type: str) -> None:
    """ALTER COLUMN ... TYPE: a primitive is promoted; a struct (also inside a list or map) evolves as DuckDB's
    does: fields missing from the new type are dropped, new ones added, common ones changed in turn."""
    _siblings, column = update._find(name)
    new = parse_type(ddl_type)
    if not column.is_nested:
        _evolve(update, name if "`" in name else f"`{name}`", column, new)  # the same type: nothing to do
        return
    _evolve(update, name if "`" in name else f"`{name}`", column, new)


def _evolve(update, path: str, old, new) -> None:
    from pyspark.sql.types import ArrayType, MapType, StructField, StructType

    if isinstance(new, StructType) and old.type == "struct":
        fields = {f.name.lower(): f for f in new.fields}
        for child in list(old.children):
            if child.name.lower() not in fields:
                update.drop_column(f"{path}.`{child.name}`")
        existing = {c.name.lower(): c for c in old.children}
        for field in new.fields:
            if field.name.lower() in existing:
                _evolve(update, f"{path}.`{existing[field.name.lower()].name}`", existing[field.name.lower()],
                        field.dataType)
            else:
                update.add_column(f"{path}.`{field.name}`", field.dataType)
    elif isinstance(new, ArrayType) and old.type == "list":
        _evolve(update, f"{path}.`{old.children[0].name}`", old.children[0], new.elementType)
    elif isinstance(new, MapType) and old.type == "map":
        _evolve(update, f"{path}.`{old.children[0].name}`", old.children[0], new.keyType)
        _evolve(update, f"{path}.`{old.children[1].name}`", old.children[1], new.valueType)
    elif isinstance(new, (StructType, ArrayType, MapType)) or old.is_nested:
        raise SchemaMismatchError(f"cannot change {path} from {old.type} to {new.simpleString()}")
    elif plan_columns(StructType([StructField("probe", new)]))[0].type != old.type:
        update.update_column_type(path, new)
