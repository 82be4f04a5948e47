"""ALTER TABLE of `lake.sql`: column changes as one SchemaUpdate, RENAME TO, and SET/RESET PARTITIONED BY and
SORTED BY (whose keys go to the lake as the text the user wrote, DuckDB expressions)."""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.tokens import TokenType

from ..errors import UnsupportedSqlError
from .references import QueryContext, evaluate, resolve_table

_LAYOUT = {"PARTITIONED": "partitioning", "SORTED": "sorted_by"}


def spark_type(ctx: QueryContext, dtype: exp.DataType) -> str:
    """A parsed type as Spark DDL; DuckDB's TIMESTAMP has no time zone (Spark: TIMESTAMP_NTZ)."""
    dtype = dtype.copy()
    if ctx.dialect == "duckdb":
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
    copy = col.copy()
    copy.set("kind", exp.DataType.build(spark_type(ctx, col.args["kind"]), dialect="spark"))
    return copy.sql(dialect="spark")


def layout_change(ctx: QueryContext, text: str) -> tuple | None:
    """(table node, 'partitioning' | 'sorted_by', keys or [] to reset) of `ALTER TABLE t SET|RESET PARTITIONED BY
    (...)` / `SORTED BY (...)`, found with sqlglot's tokenizer (its parser has no node for them); None otherwise."""
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
    keys, depth, start = [], 0, rest[1].start
    for token in rest[1:-1]:
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
        elif token.token_type == TokenType.COMMA and depth == 0:
            keys.append(text[start:token.start].strip())
            start = token.end + 1
    keys.append(text[start:rest[-1].start].strip())
    return node, _LAYOUT[kind], keys


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
    if str(tree.args.get("kind") or "").upper() != "TABLE":
        raise UnsupportedSqlError(f"ALTER {tree.args.get('kind')} is not supported by lake.sql")
    key = resolve_table(ctx, tree.this)
    if tree.args.get("exists") and ctx.lake.context.find(*key) is None:
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
            if action.args.get("exists") and col.name.lower() not in {c.name.lower() for c in update.columns}:
                continue
            update.drop_column(col.name)
    elif isinstance(action, exp.RenameColumn):
        update.rename_column(action.this.name, action.args["to"].name)
    elif isinstance(action, exp.AlterColumn):
        _alter_column(ctx, update, action)
    else:
        raise UnsupportedSqlError(f"ALTER TABLE {action.sql(dialect=ctx.dialect)!r} is not supported by lake.sql")


def _add_column(ctx: QueryContext, update, col: exp.ColumnDef) -> None:
    if col.args.get("kind") is None:
        raise UnsupportedSqlError(f"ADD COLUMN {col.name!r} has no type")
    default, nullable = None, True
    for constraint in col.constraints:
        kind = constraint.kind
        if isinstance(kind, exp.DefaultColumnConstraint):
            default = evaluate(ctx, kind.this)
        elif isinstance(kind, exp.NotNullColumnConstraint):
            nullable = bool(kind.args.get("allow_null"))
        else:
            raise UnsupportedSqlError(f"column constraint {constraint.sql(dialect=ctx.dialect)!r} is not supported")
    exists = col.args.get("exists") and col.name.lower() in {c.name.lower() for c in update.columns}
    if not exists:
        update.add_column(col.name, spark_type(ctx, col.args["kind"]), default=default, nullable=nullable)


def _alter_column(ctx: QueryContext, update, action: exp.AlterColumn) -> None:
    name = action.this.name
    if action.args.get("dtype") is not None:
        if action.args.get("using") or action.args.get("collate"):
            raise UnsupportedSqlError(f"ALTER COLUMN {name} TYPE ... USING/COLLATE is not supported")
        update.update_column_type(name, spark_type(ctx, action.args["dtype"]))
    elif action.args.get("allow_null") is not None:
        update.set_nullable(name, bool(action.args["allow_null"]))
    elif action.args.get("default") is not None:
        update.set_default(name, evaluate(ctx, action.args["default"]))
    elif action.args.get("drop"):
        update.set_default(name, None)
    else:
        raise UnsupportedSqlError(f"ALTER COLUMN {action.sql(dialect=ctx.dialect)!r} is not supported by lake.sql")
