"""Stats-based file pruning decisions, without Spark."""

from spark_ducklake.catalog.planners.pruning import Condition, may_match, parse_conditions
from spark_ducklake.spec.model import ColumnStats


def test_parse_simple_conjuncts():
    conds = parse_conditions("id = 5 AND 10 > score AND name IN ('a', 'b') AND ts IS NULL AND x IS NOT NULL "
                             "AND y BETWEEN 1 AND 3 AND (lower(name) = 'a' OR id = 1)")
    assert conds == [
        Condition("id", "=", (5,)), Condition("score", "<", (10,)), Condition("name", "in", ("a", "b")),
        Condition("ts", "is_null"), Condition("x", "not_null"), Condition("y", "between", (1, 3)),
    ]


def test_unparseable_where_prunes_nothing():
    assert parse_conditions("this is not sql ((") == []


def _stats(lo, hi, nulls=0, nan=None):
    return ColumnStats(column_id=1, value_count=10 - nulls, null_count=nulls, min_value=lo, max_value=hi,
                       contains_nan=nan)


def test_ranges_on_integers_compare_as_numbers():
    stats, dec = _stats("9", "100"), int
    assert may_match(Condition("c", "=", (50,)), stats, 10, dec)
    assert not may_match(Condition("c", "=", (8,)), stats, 10, dec)  # '8' > '100' as strings: must be numeric
    assert not may_match(Condition("c", ">", (100,)), stats, 10, dec)
    assert may_match(Condition("c", ">=", (100,)), stats, 10, dec)
    assert not may_match(Condition("c", "<", (9,)), stats, 10, dec)
    assert may_match(Condition("c", "in", (1, 2, 99)), stats, 10, dec)
    assert not may_match(Condition("c", "in", (1, 2, 101)), stats, 10, dec)
    assert not may_match(Condition("c", "between", (101, 200)), stats, 10, dec)


def test_nulls():
    assert not may_match(Condition("c", "is_null"), _stats("1", "2", nulls=0), 10, int)
    assert may_match(Condition("c", "is_null"), _stats("1", "2", nulls=3), 10, int)
    all_null = ColumnStats(1, 0, 10, None, None)
    assert not may_match(Condition("c", "not_null"), all_null, 10, int)
    assert not may_match(Condition("c", "=", (1,)), all_null, 10, int)


def test_nan_keeps_float_files_for_greater_than():
    assert may_match(Condition("f", ">", (1e9,)), _stats("0.0", "2.5", nan=True), 10, float)
    assert not may_match(Condition("f", ">", (1e9,)), _stats("0.0", "2.5", nan=False), 10, float)


def test_missing_stats_keep_the_file():
    assert may_match(Condition("c", "=", (1,)), None, 10, int)
    assert may_match(Condition("c", "=", (1,)), ColumnStats(1, 10, 0, None, None), 10, int)
