"""Dropping data files whose min/max statistics prove a simple predicate false, before Spark plans a scan.

Understood predicates (conjuncts of a SQL WHERE clause, parsed with sqlglot): `col = lit`, `<`, `<=`, `>`, `>=`,
`<>` (never prunes), `col IN (lits)`, `col BETWEEN a AND b`, `col IS NULL`, `col IS NOT NULL`, literals on either
side. Anything else keeps every file: pruning is only ever an optimisation, the filter itself still runs on Spark.
"""

from __future__ import annotations

import datetime as dt
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache

import sqlalchemy as sa
import sqlglot
from sqlglot import exp

from ...spec.model import ColumnStats, DataFile, TableInfo
from ..database.spec_tables import T
from ..reads.file_list import field_values, subset

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
    for node in conjuncts(tree):
        cond = _condition(node)
        if cond is not None:
            out.append(cond)
    return out


def conjuncts(node: exp.Expression | None):
    """The AND-ed parts of a predicate (parentheses looked through); none for no predicate."""
    if node is None:
        return
    if isinstance(node, exp.And):
        yield from conjuncts(node.left)
        yield from conjuncts(node.right)
    elif isinstance(node, exp.Paren):
        yield from conjuncts(node.this)
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
    # Spark's literal types: 12 is an integer, 1.5 an exact decimal, 1e300 a double.
    try:
        return int(text)
    except ValueError:
        return float(text) if any(ch in text for ch in "eE") else Decimal(text)


def _top_column(node: exp.Expression) -> bool:
    """A bare column name: `st.a` (a struct field, or a qualified name) could be mistaken for a column `a`."""
    return isinstance(node, exp.Column) and not node.table


def _condition(node: exp.Expression) -> Condition | None:
    for klass, op in _OPS.items():
        if isinstance(node, klass):
            left, right = node.left, node.right
            if _top_column(left) and (value := _literal(right)) is not _NO:
                return Condition(left.name, op, (value,))
            if _top_column(right) and (value := _literal(left)) is not _NO:
                return Condition(right.name, _FLIP[op], (value,))
            return None
    if isinstance(node, exp.In) and _top_column(node.this) and not node.args.get("query"):
        values = tuple(_literal(v) for v in node.expressions)
        if values and all(v is not _NO for v in values):
            return Condition(node.this.name, "in", values)
    if isinstance(node, exp.Between) and _top_column(node.this):
        low, high = _literal(node.args["low"]), _literal(node.args["high"])
        if low is not _NO and high is not _NO:
            return Condition(node.this.name, "between", (low, high))
    if isinstance(node, exp.Is) and _top_column(node.this) and isinstance(node.expression, exp.Null):
        return Condition(node.this.name, "is_null")
    if (isinstance(node, exp.Not) and isinstance(node.this, exp.Is) and _top_column(node.this.this)
            and isinstance(node.this.expression, exp.Null)):
        return Condition(node.this.this.name, "not_null")
    return None


def may_match(cond: Condition, stats: ColumnStats | None, record_count: int,
              decode: Callable[[str], object], type_: str | None = None) -> bool:
    """False only when the file's stats prove no row satisfies the condition (Spark's comparison semantics)."""
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
    floats = type_ in _FLOATS if type_ is not None else _is_float(stats)
    if floats and stats.contains_nan is not False and cond.op in (">", ">=", "=", "in", "between"):
        return True  # NaN is above every number (and equal to itself) in Spark, and never in min/max
    try:
        low, high = decode(stats.min_value), decode(stats.max_value)
        if floats:
            if low != low or high != high:  # older stats holding NaN bound nothing
                return True
            low, high = _float32_wide(low, min), _float32_wide(high, max)
        ranges = [_literal_range(_coerce(v, low)) for v in cond.values]
        if any(isinstance(v, float) for v, _ in ranges) and not isinstance(low, bool | float | str | bytes) \
                and isinstance(low, int | Decimal):
            low, high = float(low), float(high)  # Spark compares an integer/decimal column with a double as doubles
        if cond.op in ("=", "in"):
            return any(low <= v_high and v_low <= high for v_low, v_high in ranges)
        if cond.op == "between":
            return ranges[0][0] <= high and ranges[1][1] >= low
        if cond.op == "<":
            return low < ranges[0][1]
        if cond.op == "<=":
            return low <= ranges[0][1]
        if cond.op == ">":
            return high > ranges[0][0]
        if cond.op == ">=":
            return high >= ranges[0][0]
    except (TypeError, ValueError, ArithmeticError):
        return True
    return True


_FLOATS = {"float32", "float64"}
# A timestamp literal without a zone means the Spark session's time zone, unknown here: any offset Java allows.
_ANY_ZONE = dt.timedelta(hours=18)


def _float32_wide(value: float, pick) -> float:
    """A float bound widened to cover the float32 its text may stand for (a float32 column's shortest text reads
    back as a different double; a column widened from float32 holds such values too)."""
    try:
        return pick(value, struct.unpack("f", struct.pack("f", value))[0])
    except OverflowError:  # beyond float32: a double's own text
        return value


def _literal_range(value) -> tuple:
    """(lowest, highest) instant a literal may stand for: itself, or for a zoneless timestamp compared with a
    timestamptz column, the same wall clock in any zone."""
    if isinstance(value, _Zoneless):
        utc = value.value
        return utc - _ANY_ZONE, utc + _ANY_ZONE
    return value, value


@dataclass(frozen=True)
class _Zoneless:
    value: dt.datetime  # the wall clock read as UTC


def _is_float(stats: ColumnStats) -> bool:
    text = stats.max_value or ""
    if text.lower() in ("inf", "-inf", "nan"):
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
    if issubclass(like_type, bool) or isinstance(value, like_type):
        return value
    if issubclass(like_type, int | float | Decimal) and isinstance(value, str):
        raise ValueError("string compared with a number")
    if issubclass(like_type, Decimal):
        return value if isinstance(value, float) else Decimal(str(value))
    if issubclass(like_type, float):
        return float(value)
    if issubclass(like_type, dt.datetime) and isinstance(value, str):
        parsed = dt.datetime.fromisoformat(value)
        if aware and not parsed.tzinfo:
            return _Zoneless(parsed.replace(tzinfo=dt.timezone.utc))
        return parsed
    if issubclass(like_type, dt.date) and isinstance(value, str):
        return dt.date.fromisoformat(value)
    return value


def _decoder(type_: str) -> Callable[[str], object]:
    """parse_literal for one column type, memoized per distinct stats string (files share many values)."""
    from ...spec.types import parse_literal

    cache: dict[str, object] = {}

    def decode(text: str):
        try:
            return cache[text]
        except KeyError:
            value = cache[text] = parse_literal(type_, text)
            return value

    return decode


def prune_files(conn: sa.Connection, table: TableInfo, files: Sequence[DataFile],
                where: str | None) -> Sequence[DataFile]:
    """The files that may hold rows matching `where` (all of them when nothing is provable), of the same kind
    as `files` (a list, or a FileList)."""
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
    # Fields read as columns: a FileList builds no DataFile for this.
    for i, (file_id, begin, records) in enumerate(zip(*(field_values(files, name) for name in (
            "data_file_id", "begin_snapshot", "record_count")), strict=True)):
        keep = True
        for cond, col, decode in checks:
            if col.added_snapshot is not None and begin < col.added_snapshot:
                continue  # file predates the column: it holds the default, no stats
            if not may_match(cond, stats.get((file_id, col.column_id)), records, decode, col.type):
                keep = False
                break
        if keep:
            kept.append(i)
    return _prune_buckets(conn, table, subset(files, kept), conditions, by_name)


def _prune_buckets(conn: sa.Connection, table: TableInfo, files: Sequence[DataFile],
                   conditions: list[Condition], by_name: dict) -> Sequence[DataFile]:
    """Drop files of bucket partitions an equality or IN on the bucketed column cannot land in (min/max stats
    of hashed keys prove nothing, so this is the only way such files are skipped)."""
    from ...spec.types import parse_literal
    from ..operations.partitioning import bucket_of

    equalities = [c for c in conditions if c.op in ("=", "in")]
    partition_ids = set(field_values(files, "partition_id")) - {None} if equalities else set()
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
    return subset(files, [i for i, (file_id, partition_id) in enumerate(zip(
        field_values(files, "data_file_id"), field_values(files, "partition_id"), strict=True)) if all(
        values.get((file_id, index), None) in buckets
        for (pid, index), buckets in wanted.items() if pid == partition_id)])


def _load_stats(conn: sa.Connection, table_id: int, column_ids: set[int]) -> dict[tuple[int, int], ColumnStats]:
    from ..reads.reader import driver_rows, no_gc

    fcs = T["ducklake_file_column_stats"]
    query = (
        sa.select(fcs.c.data_file_id, fcs.c.column_id, fcs.c.value_count, fcs.c.null_count, fcs.c.min_value,
                  fcs.c.max_value, sa.type_coerce(fcs.c.contains_nan, sa.BigInteger))
        .where(fcs.c.table_id == table_id, fcs.c.column_id.in_(sorted(column_ids)))
    )
    out: dict[tuple[int, int], ColumnStats] = {}
    with no_gc():  # one object per file and column: tuple unpacking and no GC passes keep 100k files fast
        for file_id, column_id, values, nulls, low, high, nan in driver_rows(conn, query):
            out[(file_id, column_id)] = ColumnStats(column_id, values, nulls, low, high,
                                                    None if nan is None else bool(nan))
    return out
