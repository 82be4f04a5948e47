"""INSERT, UPDATE, DELETE and MERGE of `lake.sql`, on `DuckLake` / `DuckLakeTable` / `Transaction` methods."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from sqlglot import exp

from ..catalog.database.spec_tables import T
from ..dataplane.spark.conform import cast_by_name
from ..dataplane.spark.types import to_spark_type
from ..errors import SchemaMismatchError, UnsupportedSqlError
from ..spec.arguments import WriteMode
from .defaults import fill_values, has_defaults, is_default
from .literal_rows import literal_rows
from .literals import typed_values
from .queries import run_query
from .references import QueryContext, resolve_table


def _refuse(ctx: QueryContext, tree: exp.Expression, args: dict[str, str]) -> None:
    for arg, construct in args.items():
        if tree.args.get(arg):
            raise UnsupportedSqlError(f"{construct} is not supported by lake.sql")


def _table_info(ctx: QueryContext, tx, key: tuple[str, str]):
    if tx is not None:  # as the open transaction sees it (created, renamed or altered in it)
        return tx.table_info(key)
    return ctx.lake.table_info(key, version=ctx.snapshot)


def insert(ctx: QueryContext, tx, tree: exp.Insert):
    """INSERT [OVERWRITE] INTO t [(cols)] [BY NAME] VALUES ... | query: values cast to the columns' types."""

    _refuse(ctx, tree, {"alternative": "INSERT OR REPLACE/IGNORE", "conflict": "INSERT ... ON CONFLICT",
                        "returning": "INSERT ... RETURNING", "partition": "INSERT ... PARTITION (...)",
                        "where": "INSERT ... REPLACE WHERE", "ignore": "INSERT IGNORE"})
    target, names = tree.this, None
    if isinstance(target, exp.Schema):
        target, names = target.this, [c.name for c in target.expressions]
    key = resolve_table(ctx, target)
    info = _table_info(ctx, tx, key)
    source = tree.args.get("expression")
    if tree.args.get("default") or has_defaults(source):  # DEFAULT VALUES / VALUES (DEFAULT, 1): sql/defaults.py
        source = fill_values(info, source, names, bool(tree.args.get("default")))
    if source is None:
        raise UnsupportedSqlError("INSERT without VALUES or a query is not supported by lake.sql")
    columns = {c.name.lower(): c for c in info.columns}
    targets = [columns.get(n.lower()) for n in names] if names is not None else list(info.columns)
    mode: WriteMode = "overwrite" if tree.args.get("overwrite") else "append"
    # without a column list the values fill the table's columns in order
    rows = None if names is not None or tree.args.get("by_name") else literal_rows(source, list(info.columns))
    if rows is not None:  # plain literals: an Arrow table, written in-process when small (no Spark start)
        return _write(ctx, tx, key, rows, mode)
    from pyspark.sql import functions as F

    known = [c for c in targets if c is not None]
    if not tree.args.get("by_name") and len(known) == len(targets):  # VALUES typed as the columns (literals.py)
        source = typed_values(source, [to_spark_type(c) for c in known])
    frame = run_query(ctx, _one_struct_column(source))
    if tree.args.get("by_name"):
        names = list(frame.columns)
    elif names is None:
        names = [c.name for c in info.columns]
    if len(names) != len(frame.columns):
        raise SchemaMismatchError(f"INSERT into {info.qualified_name} gives {len(frame.columns)} value(s) for "
                                  f"{len(names)} column(s)")
    unknown = [n for n in names if n.lower() not in columns]
    if unknown:
        raise SchemaMismatchError(f"columns not in table {info.qualified_name}: {', '.join(unknown)}")
    written = [columns[n.lower()] for n in names]
    got: list[Any] = [None] * len(written)
    if any(c.is_nested for c in written):  # the values' types: their struct fields are matched by name
        got = [f.dataType for f in frame.schema.fields]
    frame = frame.select(*[_fitted(F.col(f"`{src}`"), kind, col).alias(col.name)
                           for src, kind, col in zip(frame.columns, got, written, strict=True)])
    if isinstance(source, exp.Values):  # rows written out in the statement: one file, as the reference writes
        frame = frame.coalesce(1)       # them (Spark would split even three rows over its partitions)
    return _write(ctx, tx, key, frame, mode)


def _fitted(value, got, col):
    """An INSERT's value as the column's type: nested values by field name (conform.cast_by_name), others cast."""
    return cast_by_name(value, got, col) if col.is_nested else value.cast(to_spark_type(col))


def _write(ctx: QueryContext, tx, key: tuple[str, str], rows, mode: WriteMode):
    """Append or overwrite with `rows` (a DataFrame or an Arrow table); the count of rows inserted."""
    # A small result is one file in its row order, as DuckDB writes it; literal rows are one file in either dialect.
    one_file = ctx.dialect == "duckdb" or isinstance(rows, pa.Table)
    if tx is not None:  # staged: the rows are counted here (DuckDB's INSERT returns them inside BEGIN too)
        tx.write(rows, key, mode, one_file_if_small=one_file)
        return rows.num_rows if isinstance(rows, pa.Table) else rows.count()
    before = _row_ids_used(ctx, key) if mode == "append" else None
    with ctx.lake.transaction() as own:
        own.write(rows, key, mode, one_file_if_small=one_file)
    return None if before is None else _row_ids_used(ctx, key) - before  # the rows inserted, as DuckDB says


def _row_ids_used(ctx: QueryContext, key: tuple[str, str]) -> int:
    """The table's next row id: an append moves it by exactly the rows it added (one catalog read)."""
    import sqlalchemy as sa

    stats = T["ducklake_table_stats"]
    table_id = ctx.lake.table_info(key).table_id
    with ctx.lake.context.connect() as conn:
        found = conn.execute(sa.select(stats.c.next_row_id).where(stats.c.table_id == table_id)).scalar()
    return int(found or 0)


def _one_struct_column(source: exp.Expression) -> exp.Expression:
    """`VALUES ({'i': 1})`: Spark spreads a lone struct over the row's columns; a padding column keeps it one."""
    if not isinstance(source, exp.Values) or not all(
            isinstance(t, exp.Tuple) and len(t.expressions) == 1 for t in source.expressions):
        return source
    if not any(isinstance(t.expressions[0], exp.Struct) for t in source.expressions):
        return source
    rows = [exp.Tuple(expressions=[t.expressions[0].copy(), exp.Literal.number(0)]) for t in source.expressions]
    padded = exp.Values(expressions=rows, alias=exp.TableAlias(
        this=exp.to_identifier("v"), columns=[exp.to_identifier("col1"), exp.to_identifier("pad")]))
    return exp.select("col1").from_(padded)


def _target(ctx: QueryContext, node: exp.Table) -> tuple[tuple[str, str], str]:
    return resolve_table(ctx, node), node.alias_or_name


def _unqualified(node: exp.Expression, alias: str) -> str:
    """Spark SQL of an expression on the target table alone, its `alias.` qualifiers dropped."""
    copy = node.copy()
    for col in copy.find_all(exp.Column):
        if col.table and col.table.lower() == alias.lower():
            col.set("table", None)
    return copy.sql(dialect="spark")


def _with_rowid(ctx: QueryContext, tx, key: tuple[str, str], node: exp.Expression | None, text: str | None):
    """`text` as a Spark Column when it names DuckDB's `rowid` (which the table lacks): Column conditions and
    values run on the scan that carries row ids, where string ones are checked against the table's columns."""
    if node is None or text is None:
        return text
    if not any(c.name.lower() == "rowid" for c in node.find_all(exp.Column)):
        return text
    if any(c.name.lower() == "rowid" for c in _table_info(ctx, tx, key).columns):
        return text
    from pyspark.sql import functions as F

    ctx.lake.spark  # noqa: B018 -- F.expr needs an active session
    return F.expr(text)


def update(ctx: QueryContext, tx, tree: exp.Update):
    """UPDATE t SET col = expr, ... [WHERE cond]; returns the rows updated (None when staged)."""
    _refuse(ctx, tree, {"from_": "UPDATE ... FROM (use MERGE INTO)", "from": "UPDATE ... FROM (use MERGE INTO)",
                        "returning": "UPDATE ... RETURNING", "order": "UPDATE ... ORDER BY",
                        "limit": "UPDATE ... LIMIT"})
    key, alias = _target(ctx, tree.this)
    assignments = {}
    for eq in tree.expressions:
        if not isinstance(eq, exp.EQ) or not isinstance(eq.this, exp.Column):
            raise UnsupportedSqlError(f"UPDATE assignment {eq.sql(dialect=ctx.dialect)!r} is not supported")
        assignments[eq.this.name] = _with_rowid(ctx, tx, key, eq.expression, _unqualified(eq.expression, alias))
    where = tree.args.get("where")
    condition = _unqualified(where.this, alias) if where is not None else None
    condition = _with_rowid(ctx, tx, key, where, condition)
    if tx is not None:
        return tx.update(key, condition, assignments)
    return ctx.lake.update(key, condition, assignments)


def delete(ctx: QueryContext, tx, tree: exp.Delete):
    """DELETE FROM t [WHERE cond]; returns the rows deleted (None when staged)."""
    _refuse(ctx, tree, {"using": "DELETE ... USING (use MERGE INTO ... THEN DELETE)",
                        "returning": "DELETE ... RETURNING", "limit": "DELETE ... LIMIT"})
    key, alias = _target(ctx, tree.this)
    where = tree.args.get("where")
    condition = _with_rowid(ctx, tx, key, where, _unqualified(where.this, alias) if where is not None else None)
    if tx is not None:
        return tx.delete(key, condition)
    return ctx.lake.delete(key, condition)


def truncate(ctx: QueryContext, tx, tree: exp.TruncateTable):
    """TRUNCATE [TABLE] t: DuckDB's DELETE FROM t without a condition; returns the rows deleted."""
    if len(tree.expressions) != 1 or tree.args.get("is_database"):
        raise UnsupportedSqlError("TRUNCATE takes exactly one table in lake.sql")
    key = resolve_table(ctx, tree.expressions[0])
    return tx.delete(key, None) if tx is not None else ctx.lake.delete(key, None)


def merge(ctx: QueryContext, tx, tree: exp.Merge):
    """MERGE INTO t USING source ON cond WHEN [NOT] MATCHED [BY SOURCE|TARGET] [AND c] THEN ...; every clause
    kind of the builder. Returns the rows inserted + updated + deleted (None when staged)."""
    _refuse(ctx, tree, {"returning": "MERGE ... RETURNING"})
    key, target_alias = _target(ctx, tree.this)
    source_node = tree.args["using"]
    source_alias = source_node.alias_or_name
    if isinstance(source_node, exp.Subquery):
        frame = run_query(ctx, source_node.this)
    else:
        plain = source_node.copy()
        plain.set("alias", None)
        frame = run_query(ctx, exp.select("*").from_(plain))
    if target_alias.lower() == source_alias.lower():
        raise UnsupportedSqlError("MERGE target and source need different names: give one an alias")
    shared = tree.args.get("using_cond") or []  # USING (a, b): target.a = source.a AND target.b = source.b
    condition = tree.args["on"].sql(dialect="spark") if tree.args.get("on") else " AND ".join(
        f"{_quoted(target_alias)}.{_quoted(c.name)} = {_quoted(source_alias)}.{_quoted(c.name)}" for c in shared)
    if not condition:
        raise UnsupportedSqlError("MERGE needs ON <condition> or USING (columns)")
    if tx is not None:
        builder = tx.merge(frame, key, condition, target_alias=target_alias, source_alias=source_alias)
    else:
        builder = ctx.lake.table(key).merge(frame, condition, target_alias=target_alias,
                                            source_alias=source_alias)
    def columns() -> list[str]:  # the target's columns now (ALTERs staged in the transaction included)
        info = tx.table_info(key) if tx is not None else ctx.lake.table_info(key)
        return [c.name for c in info.columns]

    for when in tree.args["whens"].expressions:
        _clause(ctx, builder, when, target_alias, columns)
    outcome = builder.execute()
    return None if tx is not None else outcome.inserted + outcome.updated + outcome.deleted


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _clause(ctx: QueryContext, builder, when: exp.When, target_alias: str, table_columns) -> None:
    then = when.args.get("then")
    cond = when.args.get("condition")
    condition = cond.sql(dialect="spark") if cond is not None else None
    kind = "matched" if when.args.get("matched") else \
        "not_matched_by_source" if when.args.get("source") else "not_matched"
    text = when.sql(dialect=ctx.dialect)
    if isinstance(then, exp.Var) and then.name.upper() == "DELETE" and kind != "not_matched":
        getattr(builder, f"when_{kind}_delete")(condition)
    elif isinstance(then, exp.Update) and kind != "not_matched":
        sets = then.expressions
        if not sets or (len(sets) == 1 and isinstance(sets[0], exp.Star)):
            if kind != "matched":
                raise UnsupportedSqlError(f"{text!r}: UPDATE SET * needs a source row (WHEN MATCHED)")
            builder.when_matched_update_all(condition)
        else:
            assignments = {}
            for eq in sets:
                if not isinstance(eq, exp.EQ) or not isinstance(eq.this, exp.Column):
                    raise UnsupportedSqlError(f"MERGE assignment {eq.sql(dialect=ctx.dialect)!r} is not supported")
                assignments[eq.this.name] = eq.expression.sql(dialect="spark")
            getattr(builder, f"when_{kind}_update")(assignments, condition)
    elif isinstance(then, exp.Insert) and kind == "not_matched":
        columns, values = then.this, then.args.get("expression") or None  # bare INSERT parses as False
        if (columns is None or isinstance(columns, exp.Star) or _by_name(columns)) and values is None:
            builder.when_not_matched_insert_all(condition)  # columns the source lacks get their defaults
        else:
            # INSERT VALUES (...) without a column list: DuckDB fills the table's columns in order
            names = table_columns() if columns is None or isinstance(columns, exp.Star) else \
                [c.name for c in columns.expressions]
            given = values.expressions if values is not None else []
            if len(names) != len(given):
                raise SchemaMismatchError(f"{text!r}: {len(given)} value(s) for {len(names)} column(s)")
            # DEFAULT: the column is left out, so the insert stores its default
            pairs = [(n, v) for n, v in zip(names, given, strict=True) if not is_default(v)]
            builder.when_not_matched_insert({n: v.sql(dialect="spark") for n, v in pairs}, condition)
    else:
        raise UnsupportedSqlError(f"MERGE clause {text!r} is not supported by lake.sql")


def _by_name(columns: exp.Expression) -> bool:
    """`INSERT BY NAME` in a MERGE clause, which sqlglot reads as a one-column list `BY AS NAME`."""
    items = columns.expressions if isinstance(columns, exp.Tuple) else []
    return len(items) == 1 and isinstance(items[0], exp.Alias) and items[0].this.name.upper() == "BY" \
        and items[0].alias.upper() == "NAME"
