"""Property-style check of stats pruning: over random files of edge values of every type and random predicates,
a file is never pruned while one of its rows satisfies the predicate (Spark's comparison semantics, computed here
in plain Python). Stats come from real Parquet footers (pyarrow-written) and from the reference's encoding."""

from __future__ import annotations

import datetime as dt
import io
import math
import random
import struct
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq

from spark_ducklake.catalog.planners.pruning import _decoder, may_match, parse_conditions
from spark_ducklake.catalog.stats import file_column_stats
from spark_ducklake.spec.model import Column, ColumnStats
from spark_ducklake.spec.types import format_literal, to_arrow_type

UTC = dt.timezone.utc


def _f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0] if abs(x) <= 3.4028234663852886e38 or math.isinf(x) else x


def _edge_floats(single: bool) -> list[float]:
    big = 3.4028234663852886e38 if single else 1.7976931348623157e308
    tiny = 1.401298464324817e-45 if single else 5e-324
    values = [0.0, -0.0, 1.0, -1.0, 0.1, big, -big, tiny, -tiny, math.inf, -math.inf, math.nan, 1e30, 2.5]
    return [_f32(v) for v in values] if single else values


POOLS = {
    "int8": [-128, 127, 0, -1, 1, 5],
    "int32": [-2**31, 2**31 - 1, 0, 7, -7, 1000],
    "int64": [-2**63, 2**63 - 1, 0, 2**53 + 1, -(2**53) - 1, 9223372036854775806],
    "float32": _edge_floats(True),
    "float64": _edge_floats(False),
    "decimal(9,2)": [Decimal("-9999999.99"), Decimal("9999999.99"), Decimal("0.00"), Decimal("0.01"),
                     Decimal("1.50"), Decimal("-1.25")],
    "varchar": ["", "a", "ab", "b", "z", "ü", "€", "😀", "A", " ", "a\x00b", "zz" * 40],
    "boolean": [True, False],
    "date": [dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(1970, 1, 1), dt.date(2024, 2, 29),
             dt.date(2024, 7, 2), dt.date(2024, 7, 3)],
    "timestamp": [dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999), dt.datetime(2024, 7, 2),
                  dt.datetime(2024, 7, 2, 23, 59, 59, 500000), dt.datetime(2024, 7, 3, 0, 0, 0, 1),
                  dt.datetime(1970, 1, 1)],
    "timestamptz": [dt.datetime(1, 1, 2, tzinfo=UTC), dt.datetime(9999, 12, 30, tzinfo=UTC),
                    dt.datetime(2024, 7, 2, tzinfo=UTC), dt.datetime(2024, 7, 2, 23, 30, tzinfo=UTC),
                    dt.datetime(2024, 7, 3, 5, tzinfo=UTC), dt.datetime(1970, 1, 1, tzinfo=UTC)],
    "blob": [b"", b"\x00", b"\xff", b"ab"],
}
OPS = ["=", "<", "<=", ">", ">=", "in", "between", "is_null", "not_null"]


def _sql(type_: str, value, zone: dt.timezone) -> str:
    """A literal as a user writes it in a WHERE clause (timestamptz: wall clock of the session zone)."""
    if type_ in ("float32", "float64"):
        return repr(float(value))  # inf/nan never reach here
    if type_ == "boolean":
        return "true" if value else "false"
    if type_.startswith("decimal") or type_.startswith("int"):
        return str(value)
    if type_ == "varchar":
        return "'" + value.replace("'", "''") + "'"
    if type_ == "date":
        return f"DATE '{value.isoformat()}'"
    if type_ == "timestamp":
        return f"TIMESTAMP_NTZ '{value.isoformat(sep=' ')}'"
    if type_ == "timestamptz":  # zoneless: it means the session time zone in Spark
        return f"TIMESTAMP '{value.astimezone(zone).replace(tzinfo=None).isoformat(sep=' ')}'"
    if type_ == "blob":
        return f"X'{value.hex()}'"
    raise AssertionError(type_)


def _spark_compare(type_: str, value, literal) -> int:
    """-1/0/1 as Spark orders a column value against a literal (NaN above all, equal to NaN; -0.0 == 0.0)."""
    if type_ in ("float32", "float64"):
        a, b = float(value), float(literal)
        if math.isnan(a) or math.isnan(b):
            return 0 if math.isnan(a) and math.isnan(b) else (1 if math.isnan(a) else -1)
        return (a > b) - (a < b)
    return (value > literal) - (value < literal)


def _matches(type_: str, value, op: str, literals: list) -> bool:
    if op == "is_null":
        return value is None
    if op == "not_null":
        return value is not None
    if value is None:
        return False
    c = [_spark_compare(type_, value, lit) for lit in literals]
    if op == "in":
        return 0 in c
    if op == "between":
        return c[0] >= 0 and c[1] <= 0
    return {"=": c[0] == 0, "<": c[0] < 0, "<=": c[0] <= 0, ">": c[0] > 0, ">=": c[0] >= 0}[op]


def _footer_stats(type_: str, values: list) -> ColumnStats:
    col = Column(column_id=1, name="c", type=type_)
    buf = io.BytesIO()
    table = pa.table({"c": pa.array(values, to_arrow_type(col))},
                     schema=pa.schema([pa.field("c", to_arrow_type(col), metadata={b"PARQUET:field_id": b"1"})]))
    pq.write_table(table, buf)
    return file_column_stats(pq.ParquetFile(io.BytesIO(buf.getvalue())).metadata, [col])[1]


def _reference_stats(type_: str, values: list) -> ColumnStats:
    """What the reference writes: min/max of the non-NaN values, contains_nan for floats."""
    present = [v for v in values if v is not None]
    numbers = [v for v in present if not (isinstance(v, float) and math.isnan(v))]
    floats = type_ in ("float32", "float64")
    return ColumnStats(1, len(present), len(values) - len(present),
                       format_literal(type_, min(numbers)) if numbers else None,
                       format_literal(type_, max(numbers)) if numbers else None,
                       (len(numbers) < len(present)) if floats else None)


def _literal_for(type_: str, rng: random.Random, pool: list):
    """A literal near the pool's values (the pool itself, and neighbours for ordered types)."""
    value = rng.choice(pool)
    if type_ in ("float32", "float64"):
        value = value if not (math.isnan(value) or math.isinf(value)) else rng.choice([0.0, 1e30, -2.5])
        near = rng.choice([value, math.nextafter(value, math.inf), math.nextafter(value, -math.inf)])
        return near if math.isfinite(near) else value
    if type_.startswith("int"):
        return value + rng.choice([-1, 0, 0, 1])
    if type_ == "timestamptz":
        return value + dt.timedelta(hours=rng.choice([-13, -1, 0, 0, 2, 9]))
    return value


def test_pruning_never_drops_a_file_with_a_match():
    rng = random.Random(20261123)
    zones = [dt.timezone.utc, dt.timezone(dt.timedelta(hours=9)), dt.timezone(dt.timedelta(hours=-7))]
    checked = pruned = 0
    for type_, pool in POOLS.items():
        decode = _decoder(type_)
        files = []
        for _ in range(25):
            values = [rng.choice(pool + [None]) for _ in range(rng.randint(1, 4))]
            stats = [_reference_stats(type_, values)]
            if type_ != "blob" or any(v for v in values if v is not None):
                stats.append(_footer_stats(type_, values))
            files.append((values, stats))
        for _ in range(120):
            op = rng.choice(OPS if type_ not in ("blob", "boolean") else ["=", "is_null", "not_null"])
            if type_ == "blob" and op == "=":
                op = "is_null"
            zone = rng.choice(zones)
            literals = [_literal_for(type_, rng, pool) for _ in range({"in": 3, "between": 2}.get(op, 1))]
            if op == "between":
                literals.sort(key=lambda v: (isinstance(v, float) and math.isnan(v), v))
            texts = [_sql(type_, v, zone) for v in literals]
            if op in ("is_null", "not_null"):
                where = "c IS NULL" if op == "is_null" else "c IS NOT NULL"
            elif op == "in":
                where = f"c IN ({', '.join(texts)})"
            elif op == "between":
                where = f"c BETWEEN {texts[0]} AND {texts[1]}"
            else:  # also the flipped form, literal first
                where = f"c {op} {texts[0]}" if rng.random() < 0.7 else f"{texts[0]} {_flip(op)} c"
            conditions = parse_conditions(where)
            assert len(conditions) == 1, where
            for values, stats in files:
                truth = any(_matches(type_, v, op, literals) for v in values)
                for s in stats:
                    kept = may_match(conditions[0], s, len(values), decode, type_)
                    assert kept or not truth, (type_, where, values, s)
                    checked += 1
                    pruned += not kept
    assert pruned > checked // 10  # the check is not vacuous: pruning does happen


def _flip(op: str) -> str:
    return {"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
