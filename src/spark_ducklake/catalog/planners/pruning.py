"""Dropping data files whose min/max statistics prove a simple predicate false, before Spark plans a scan.

Understood predicates (conjuncts of a SQL WHERE clause, parsed with sqlglot): `col = lit`, `<`, `<=`, `>`, `>=`,
`<>` (never prunes), `col IN (lits)`, `col BETWEEN a AND b`, `col IS NULL`, `col IS NOT NULL`, literals on either
side. Anything else keeps every file: pruning is only ever an optimisation, the filter itself still runs on Spark.
"""

from __future__ import annotations

import datetime as dt
import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import sqlalchemy as sa
import sqlglot
from sqlglot import exp

from ...spec.bucket_hash import bucket_of
from ...spec.model import Column, ColumnStats, DataFile, TableInfo
from ...spec.types import parse_literal
from ..database.spec_tables import T
from ..reads.file_list import AGGREGATE, FileList, field_values, parse_joined, subset
from ..reads.reader import driver_rows, no_gc

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}
_OPS = {exp.EQ: "=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}


@dataclass(frozen=True)
class Condition:
    """One prunable conjunct on a top-level column."""

    column: str
    op: str  # = < <= > >= in is_null not_null
    values: tuple[Any, ...] = ()


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


def conjuncts(node: exp.Expr | None) -> Iterator[exp.Expr]:
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


def _literal(node: exp.Expr) -> Any:
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


def _number(text: str) -> int | float | Decimal:
    # Spark's literal types: 12 is an integer, 1.5 an exact decimal, 1e300 a double.
    try:
        return int(text)
    except ValueError:
        return float(text) if any(ch in text for ch in "eE") else Decimal(text)


def _top_column(node: exp.Expr) -> bool:
    """A bare column name: `st.a` (a struct field, or a qualified name) could be mistaken for a column `a`."""
    return isinstance(node, exp.Column) and not node.table


def _condition(node: exp.Expr) -> Condition | None:
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
              decode: Callable[[str], Any], type_: str | None = None) -> bool:
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


def _float32_wide(value: float, pick: Callable[[float, float], float]) -> float:
    """A float bound widened to cover the float32 its text may stand for (a float32 column's shortest text reads
    back as a different double; a column widened from float32 holds such values too)."""
    try:
        return pick(value, struct.unpack("f", struct.pack("f", value))[0])
    except OverflowError:  # beyond float32: a double's own text
        return value


def _literal_range(value: Any) -> tuple[Any, ...]:
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


def _coerce(value: Any, like: object) -> Any:
    """A predicate literal in the Python type of the decoded stats value."""
    aware = getattr(like, "tzinfo", None) is not None
    # a class is hashable; mypy reads its unbound __hash__ as failing the Hashable protocol
    return _coerce_to(value, type(like), aware)  # type: ignore[arg-type]


@lru_cache(maxsize=4096)
def _coerce_to(value: Any, like_type: type, aware: bool) -> Any:
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


def _decoder(type_: str) -> Callable[[str], Any]:
    """parse_literal for one column type, memoized per distinct stats string (files share many values)."""
    cache: dict[str, Any] = {}

    def decode(text: str) -> Any:
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
    stats = _load_stats(conn, table.table_id, column_ids, _fields_needed(conditions, by_name))
    # Fields read as columns: a FileList builds no DataFile for this.
    file_ids, begins, records = (_column(files, name) for name in ("data_file_id", "begin_snapshot", "record_count"))
    keep = np.ones(len(files), dtype=bool)
    for cond in conditions:
        col = by_name[cond.column.lower()]
        mine = stats.filter(pc.equal(stats.column("column_id"), col.column_id))
        at = pc.index_in(file_ids, value_set=mine.column("data_file_id"))  # each file's stats row, or null
        if mine.num_rows:
            row = mine.take(at)
            may = _may_match_columns(cond, row, records, col.type)
            if may is None:  # stats or a literal only Python decodes: file by file
                may = np.fromiter((may_match(cond, _stats_at(row, i), r, _decoder(col.type), col.type)
                                   for i, r in enumerate(records.to_pylist())), dtype=bool, count=len(files))
        else:
            may = np.ones(len(files), dtype=bool)
        if col.added_snapshot is not None:  # files predating the column hold its default, no stats
            may |= pc.less(begins, col.added_snapshot).to_numpy(zero_copy_only=False)
        keep &= may
    return _prune_buckets(conn, table, subset(files, np.flatnonzero(keep).tolist()), conditions, by_name)


def _fields_needed(conditions: list[Condition], by_name: dict[str, Column]) -> set[str]:
    """The stats fields the conditions can use (the database builds and ships only those): `<` reads only minima,
    `>` only maxima, IS NULL neither; contains_nan and both bounds for a column checked file by file
    (may_match); column_id only when several columns are checked."""
    needed = {"data_file_id", "null_count"}
    if len({c.column.lower() for c in conditions}) > 1:
        needed.add("column_id")
    for cond in conditions:
        if by_name[cond.column.lower()].type not in _VECTOR_TYPES:
            needed |= {"min_value", "max_value", "contains_nan"}
        elif cond.op in ("<", "<="):
            needed.add("min_value")
        elif cond.op in (">", ">="):
            needed.add("max_value")
        elif cond.op not in ("is_null", "not_null"):
            needed |= {"min_value", "max_value"}
    return needed


def _column(files: Sequence[DataFile], name: str) -> pa.Array:
    if isinstance(files, FileList):
        return files.column(name).combine_chunks()
    return pa.array(field_values(files, name), pa.int64())


def _stats_at(rows: pa.Table, i: int) -> ColumnStats | None:
    """Row i of a stats table (one column's stats per file, null where a file has none) as a ColumnStats."""
    file_id = rows.column("data_file_id")[i].as_py()
    if file_id is None:
        return None
    nan = rows.column("contains_nan")[i].as_py()
    return ColumnStats(rows.column("column_id")[i].as_py(), None, rows.column("null_count")[i].as_py(),
                       rows.column("min_value")[i].as_py(), rows.column("max_value")[i].as_py(),
                       None if nan is None else bool(nan))


# Column types whose stats pyarrow decodes as parse_literal does (the rest go file by file through may_match).
_INTEGERS = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"}
_VECTOR_TYPES = _INTEGERS | {"date", "varchar"}


def _may_match_columns(cond: Condition, rows: pa.Table, records: pa.Array, type_: str) -> np.ndarray | None:
    """`may_match` for every file at once (numpy booleans): `rows` holds each file's stats of the condition's
    column (null where it has none). None when the column type or a literal needs the file-by-file check."""
    if type_ not in _VECTOR_TYPES:
        return None
    has = pc.is_valid(rows.column("data_file_id"))
    nulls = rows.column("null_count")
    unknown_nulls = pc.is_null(nulls)
    if cond.op == "is_null":
        return _filled(pc.or_(pc.invert(has), pc.or_(unknown_nulls, pc.greater(nulls, 0))))
    non_null = pc.subtract(records, nulls)
    if cond.op == "not_null":
        return _filled(pc.or_(pc.invert(has), pc.or_(unknown_nulls, pc.greater(non_null, 0))))
    only_nulls = pc.fill_null(pc.equal(non_null, 0), False)  # only NULLs: no comparison is true
    low_text, high_text = rows.column("min_value"), rows.column("max_value")
    if type_ == "varchar":  # parse_literal reads the text 'NULL' as no value: such a bound proves nothing
        low_text = pc.if_else(pc.equal(low_text, "NULL"), pa.scalar(None, pa.string()), low_text)
        high_text = pc.if_else(pc.equal(high_text, "NULL"), pa.scalar(None, pa.string()), high_text)
    # a bound not fetched (_bounds_needed: the comparison does not read it) does not make the other one unusable
    no_bounds = pc.or_(pc.is_null(low_text) if cond.op not in (">", ">=") else pa.scalar(False),
                       pc.is_null(high_text) if cond.op not in ("<", "<=") else pa.scalar(False))
    arrow_type = pa.int64() if type_ in _INTEGERS else pa.date32() if type_ == "date" else pa.string()
    literal_type = int if type_ in _INTEGERS else dt.date if type_ == "date" else str
    values: list[Any] = []
    comparable = True  # False: a literal these bounds never compare with
    for value in cond.values:
        if isinstance(value, bool) or not isinstance(value, int | str) or \
                (literal_type is int and not isinstance(value, int)):
            if literal_type is int:
                return None  # a float or decimal literal: compared as Spark does, file by file
            comparable = False  # a literal these values never compare with: nothing is provable
            break
        if literal_type is dt.date:
            try:
                value = dt.date.fromisoformat(value) if isinstance(value, str) else _NO
            except ValueError:
                value = _NO
            if value is _NO:
                comparable = False
                break
        elif literal_type is str and not isinstance(value, str):
            comparable = False
            break
        values.append(pa.scalar(value, arrow_type))
    if not comparable:
        compared = pa.array(np.ones(len(rows), dtype=bool))
    else:
        try:
            low, high = (low_text.cast(arrow_type) if cond.op not in (">", ">=") else None,
                         high_text.cast(arrow_type) if cond.op not in ("<", "<=") else None)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None  # bounds pyarrow does not read as Python does
        compared = _compare(cond.op, low, high, values)
    decided = pc.if_else(only_nulls, False, pc.or_(no_bounds, compared))
    return _filled(pc.or_(pc.invert(has), decided))


def _compare(op: str, low: pa.Array, high: pa.Array, values: list[Any]) -> pa.Array:
    """Whether [low, high] may hold a value meeting `op` against the literal(s) (null bounds: null)."""
    if op in ("=", "in"):
        out = None
        for v in values:
            hit = pc.and_(pc.less_equal(low, v), pc.less_equal(v, high))
            out = hit if out is None else pc.or_(out, hit)
        return out
    if op == "between":
        return pc.and_(pc.less_equal(values[0], high), pc.greater_equal(values[1], low))
    if op == "<":
        return pc.less(low, values[0])
    if op == "<=":
        return pc.less_equal(low, values[0])
    if op == ">":
        return pc.greater(high, values[0])
    if op == ">=":
        return pc.greater_equal(high, values[0])
    return pa.array(np.ones(len(low), dtype=bool))


def _filled(mask: pa.Array) -> np.ndarray:
    """A mask's nulls (something unknown) as True: keep the file."""
    return pc.fill_null(mask, True).to_numpy(zero_copy_only=False)


def _prune_buckets(conn: sa.Connection, table: TableInfo, files: Sequence[DataFile],
                   conditions: list[Condition], by_name: dict[Any, Any]) -> Sequence[DataFile]:
    """Drop files of bucket partitions an equality or IN on the bucketed column cannot land in (min/max stats
    of hashed keys prove nothing, so this is the only way such files are skipped)."""
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


def _load_stats(conn: sa.Connection, table_id: int, column_ids: set[int], fields: set[str]) -> pa.Table:
    """The stats rows of these columns as columns (STATS_SCHEMA; only the `fields` named are fetched, the others
    NULL, but column_id of a single column), no Python object per row: on SQLite and PostgreSQL each column comes
    as one text value the database aggregates (as reads/file_list.py fetches files), elsewhere (or when a bound
    holds the separator) the driver's tuples go straight into pyarrow."""
    fcs = T["ducklake_file_column_stats"]
    where = (fcs.c.table_id == table_id, fcs.c.column_id.in_(sorted(column_ids)))
    aggregate = AGGREGATE.get(conn.dialect.name)
    if aggregate is not None:
        found = _aggregated_stats(conn, where, aggregate, fields)
        if found is not None:
            return _one_column(found, column_ids)
    query = sa.select(*[sa.type_coerce(fcs.c[n], sa.BigInteger) if n == "contains_nan" else
                        sa.null() if n not in fields else fcs.c[n]
                        for n in STATS_SCHEMA.names]).where(*where)
    with no_gc():
        rows = driver_rows(conn, query)
    if not rows:
        return STATS_SCHEMA.empty_table()
    columns: list[Sequence[Any]] = list(zip(*rows, strict=True))
    nan = STATS_SCHEMA.names.index("contains_nan")  # a driver's booleans (or their text) as 1/0
    columns[nan] = [None if v is None else int(v.lower() in ("1", "true") if isinstance(v, str) else bool(v))
                    for v in columns[nan]]
    return _one_column(pa.Table.from_arrays([pa.array(values, field.type)
                                             for values, field in zip(columns, STATS_SCHEMA, strict=True)],
                                            schema=STATS_SCHEMA), column_ids)


def _one_column(stats: pa.Table, column_ids: set[int]) -> pa.Table:
    """Stats of a single column with its column_id filled in (not fetched: the query asked for that one only)."""
    if len(column_ids) != 1:
        return stats
    index = STATS_SCHEMA.names.index("column_id")
    return stats.set_column(index, STATS_SCHEMA.field(index), pa.array(np.full(stats.num_rows, next(iter(column_ids))),
                                                                       pa.int64()))


STATS_SCHEMA = pa.schema([("data_file_id", pa.int64()), ("column_id", pa.int64()), ("null_count", pa.int64()),
                          ("min_value", pa.string()), ("max_value", pa.string()), ("contains_nan", pa.int64())])
_BOUNDS = ("min_value", "max_value")
# Between bounds: a control character no statistic of ours holds (checked: a miscount reads the rows instead).
_BOUND_SEPARATOR = "\x1e"


def _aggregated_stats(conn: sa.Connection, where: tuple[Any, ...], aggregate: str, fields: set[str]) -> pa.Table | None:
    """The stats as one aggregated text value per column; None when they do not split back into the rows."""
    fcs = T["ducklake_file_column_stats"]
    parts = [sa.func.count()]
    fetched = [n for n in STATS_SCHEMA.names if n in fields]
    for name in fetched:
        col = fcs.c[name]
        if name in _BOUNDS:  # 'v' before every value: an empty string stays apart from NULL ('')
            value = sa.func.coalesce(sa.literal_column("'v'").concat(col), sa.literal_column("''"))
            separator: sa.ColumnClause[Any] = sa.literal_column(f"'{_BOUND_SEPARATOR}'")
        else:
            if name == "contains_nan" or aggregate == "string_agg":  # PostgreSQL's boolean as 1/0; text of it
                col = sa.cast(sa.cast(col, sa.Integer), sa.Text) if name == "contains_nan" else sa.cast(col, sa.Text)
            value, separator = sa.func.coalesce(col, sa.literal_column("''")), sa.literal_column("','")
        parts.append(getattr(sa.func, aggregate)(value, separator))
    row = conn.execute(sa.select(*parts).where(*where)).one()
    count = row[0]
    if not count:
        return STATS_SCHEMA.empty_table()
    texts: dict[str, Any] = dict(zip(fetched, row[1:], strict=True))
    columns = []
    for field in STATS_SCHEMA:
        text = texts.get(field.name)
        if field.name not in texts:
            values = pa.nulls(count, field.type)
        elif field.name in _BOUNDS:
            values = pc.list_flatten(pc.split_pattern(pa.array([text], pa.large_string()), _BOUND_SEPARATOR))
            if len(values) != count:
                return None
            values = pc.if_else(pc.equal(values, ""), pa.scalar(None, pa.large_string()),
                                pc.utf8_slice_codeunits(values, 1)).cast(pa.string())
        else:
            values = parse_joined(texts[field.name], ",", field.type, count)
            if values is None:
                return None
        columns.append(values)
    return pa.Table.from_arrays(columns, schema=STATS_SCHEMA)
