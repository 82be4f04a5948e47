"""Dropping data files whose min/max statistics prove a simple predicate false, before Spark plans a scan.

Understood predicates (conjuncts of a SQL WHERE clause, parsed with sqlglot): `col = lit`, `<`, `<=`, `>`, `>=`,
`<>` (never prunes), `col IN (lits)`, `col BETWEEN a AND b`, `col IS NULL`, `col IS NOT NULL`, literals on either
side. Anything else keeps every file: pruning is only ever an optimisation, the filter itself still runs on Spark.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import sqlalchemy as sa
import sqlglot
from sqlglot import exp

from .model import ColumnStats, DataFile, TableInfo
from .spec_tables import T

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}
_OPS = {exp.EQ: "=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}


@dataclass(frozen=True)
class Condition:
    """One prunable conjunct on a top-level column."""

    column: str
    op: str  # = < <= > >= in is_null not_null
    values: tuple = ()


def parse_conditions(where: str) -> list[Condition]:
    """The prunable conjuncts of a WHERE clause (others are ignored)."""
    try:
        tree = sqlglot.parse_one(where, read="spark")
    except sqlglot.errors.ParseError:
        return []
    out: list[Condition] = []
    for node in _conjuncts(tree):
        cond = _condition(node)
        if cond is not None:
            out.append(cond)
    return out


def _conjuncts(node: exp.Expression):
    if isinstance(node, exp.And):
        yield from _conjuncts(node.left)
        yield from _conjuncts(node.right)
    elif isinstance(node, exp.Paren):
        yield from _conjuncts(node.this)
    else:
        yield node


def _literal(node: exp.Expression):
    if isinstance(node, exp.Literal):
        return node.this if node.is_string else _number(node.this)
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        return -_number(node.this.this)
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal):
        return node.this.this
    if isinstance(node, exp.Boolean):
        return node.this
    return _NO


_NO = object()


def _number(text: str):
    try:
        return int(text)
    except ValueError:
        return float(text)


def _condition(node: exp.Expression) -> Condition | None:
    for klass, op in _OPS.items():
        if isinstance(node, klass):
            left, right = node.left, node.right
            if isinstance(left, exp.Column) and (value := _literal(right)) is not _NO:
                return Condition(left.name, op, (value,))
            if isinstance(right, exp.Column) and (value := _literal(left)) is not _NO:
                return Condition(right.name, _FLIP[op], (value,))
            return None
    if isinstance(node, exp.In) and isinstance(node.this, exp.Column):
        values = tuple(_literal(v) for v in node.expressions)
        if values and all(v is not _NO for v in values):
            return Condition(node.this.name, "in", values)
    if isinstance(node, exp.Between) and isinstance(node.this, exp.Column):
        low, high = _literal(node.args["low"]), _literal(node.args["high"])
        if low is not _NO and high is not _NO:
            return Condition(node.this.name, "between", (low, high))
    if isinstance(node, exp.Is) and isinstance(node.this, exp.Column) and isinstance(node.expression, exp.Null):
        return Condition(node.this.name, "is_null")
    if isinstance(node, exp.Not) and isinstance(node.this, exp.Is) and isinstance(node.this.this, exp.Column):
        return Condition(node.this.this.name, "not_null")
    return None


def may_match(cond: Condition, stats: ColumnStats | None, record_count: int,
              decode: Callable[[str], object]) -> bool:
    """False only when the file's stats prove no row satisfies the condition."""
    if stats is None:
        return True
    if cond.op == "is_null":
        return stats.null_count is None or stats.null_count > 0
    non_null = None if stats.null_count is None else record_count - stats.null_count
    if cond.op == "not_null":
        return non_null is None or non_null > 0
    if non_null == 0:
        return False  # only NULLs: no comparison is true
    if stats.min_value is None or stats.max_value is None:
        return True
    if stats.contains_nan is not False and cond.op in (">", ">=", "=", "in", "between") and _is_float(stats):
        return True  # NaN sorts above every number in Spark and is not in min/max
    try:
        low, high = decode(stats.min_value), decode(stats.max_value)
        values = [_coerce(v, low) for v in cond.values]
        if cond.op == "=":
            return low <= values[0] <= high
        if cond.op == "in":
            return any(low <= v <= high for v in values)
        if cond.op == "between":
            return values[0] <= high and values[1] >= low
        if cond.op == "<":
            return low < values[0]
        if cond.op == "<=":
            return low <= values[0]
        if cond.op == ">":
            return high > values[0]
        if cond.op == ">=":
            return high >= values[0]
    except (TypeError, ValueError):
        return True
    return True


def _is_float(stats: ColumnStats) -> bool:
    text = stats.max_value or ""
    if text in ("inf", "-inf"):
        return True
    if not any(ch in text for ch in ".eE"):
        return False
    try:  # a string such as 'eu' is no float: its bounds still prove things
        float(text)
    except ValueError:
        return False
    return True


def _coerce(value, like):
    """A predicate literal in the Python type of the decoded stats value."""
    aware = getattr(like, "tzinfo", None) is not None
    return _coerce_to(value, type(like), aware)


@lru_cache(maxsize=4096)
def _coerce_to(value, like_type: type, aware: bool):
    # Cached: pruning a big table coerces the same few literals once per file.
    import datetime as dt
    from decimal import Decimal

    if issubclass(like_type, bool) or isinstance(value, like_type):
        return value
    if issubclass(like_type, int | float | Decimal) and isinstance(value, str):
        raise ValueError("string compared with a number")
    if issubclass(like_type, Decimal):
        return Decimal(str(value))
    if issubclass(like_type, float):
        return float(value)
    if issubclass(like_type, dt.datetime) and isinstance(value, str):
        parsed = dt.datetime.fromisoformat(value)
        if aware and not parsed.tzinfo:
            parsed = parsed.replace(tzinfo=dt.timezone.utc)
        return parsed
    if issubclass(like_type, dt.date) and isinstance(value, str):
        return dt.date.fromisoformat(value)
    return value


def _decoder(type_: str) -> Callable[[str], object]:
    """parse_literal for one column type, memoized per distinct stats string (files share many values)."""
    from .types import parse_literal

    cache: dict[str, object] = {}

    def decode(text: str):
        try:
            return cache[text]
        except KeyError:
            value = cache[text] = parse_literal(type_, text)
            return value

    return decode


def prune_files(conn: sa.Connection, table: TableInfo, files: list[DataFile], where: str | None) -> list[DataFile]:
    """The files that may hold rows matching `where` (all of them when nothing is provable)."""
    if not where or not files:
        return files
    by_name = {col.name.lower(): col for col in table.columns if not col.is_nested}
    conditions = [c for c in parse_conditions(where) if c.column.lower() in by_name]
    if not conditions:
        return files
    column_ids = {by_name[c.column.lower()].column_id for c in conditions}
    stats = _load_stats(conn, table.table_id, column_ids)
    checks = [(cond, by_name[cond.column.lower()], _decoder(by_name[cond.column.lower()].type))
              for cond in conditions]
    kept = []
    for f in files:
        keep = True
        for cond, col, decode in checks:
            if col.added_snapshot is not None and f.begin_snapshot < col.added_snapshot:
                continue  # file predates the column: it holds the default, no stats
            if not may_match(cond, stats.get((f.data_file_id, col.column_id)), f.record_count, decode):
                keep = False
                break
        if keep:
            kept.append(f)
    return _prune_buckets(conn, table, kept, conditions, by_name)


def _prune_buckets(conn: sa.Connection, table: TableInfo, files: list[DataFile], conditions: list[Condition],
                   by_name: dict) -> list[DataFile]:
    """Drop files of bucket partitions an equality or IN on the bucketed column cannot land in (min/max stats
    of hashed keys prove nothing, so this is the only way such files are skipped)."""
    from .partitioning import bucket_of
    from .types import parse_literal

    equalities = [c for c in conditions if c.op in ("=", "in")]
    partition_ids = {f.partition_id for f in files if f.partition_id is not None}
    if not equalities or not partition_ids:
        return files
    pc, fpv = T["ducklake_partition_column"], T["ducklake_file_partition_value"]
    keys = [r for r in conn.execute(sa.select(pc.c.partition_id, pc.c.partition_key_index, pc.c.column_id,
                                              pc.c.transform).where(pc.c.table_id == table.table_id,
                                                                    pc.c.partition_id.in_(sorted(partition_ids))))
            if r.transform.startswith("bucket(")]
    wanted: dict[tuple[int, int], set[str]] = {}  # (partition id, key index) -> bucket numbers that may match
    for cond in equalities:
        col = by_name[cond.column.lower()]
        for key in (k for k in keys if k.column_id == col.column_id):
            n = int(key.transform[len("bucket("):-1])
            try:
                buckets = {str(bucket_of(v if isinstance(v, str) and col.type == "varchar"
                                         else parse_literal(col.type, str(v)), col.type, n)) for v in cond.values}
            except (ValueError, TypeError, ArithmeticError):
                continue  # a literal we cannot type: keep the files
            wanted[(key.partition_id, key.partition_key_index)] = buckets
    if not wanted:
        return files
    values = {(r.data_file_id, r.partition_key_index): r.partition_value for r in conn.execute(
        sa.select(fpv.c.data_file_id, fpv.c.partition_key_index, fpv.c.partition_value)
        .where(fpv.c.table_id == table.table_id))}
    return [f for f in files if all(
        values.get((f.data_file_id, index), None) in buckets
        for (pid, index), buckets in wanted.items() if pid == f.partition_id)]


def _load_stats(conn: sa.Connection, table_id: int, column_ids: set[int]) -> dict[tuple[int, int], ColumnStats]:
    from .reader import no_gc

    fcs = T["ducklake_file_column_stats"]
    query = (
        sa.select(fcs.c.data_file_id, fcs.c.column_id, fcs.c.value_count, fcs.c.null_count, fcs.c.min_value,
                  fcs.c.max_value, sa.type_coerce(fcs.c.contains_nan, sa.BigInteger))
        .where(fcs.c.table_id == table_id, fcs.c.column_id.in_(sorted(column_ids)))
    )
    out: dict[tuple[int, int], ColumnStats] = {}
    with no_gc():  # one object per file and column: tuple unpacking and no GC passes keep 100k files fast
        rows = conn.execute(query).all()
        for file_id, column_id, values, nulls, low, high, nan in rows:
            out[(file_id, column_id)] = ColumnStats(column_id, values, nulls, low, high,
                                                    None if nan is None else bool(nan))
    return out
