"""Bound parameters of `lake.sql(text, params=...)` (issue 26, item 3): named and positional, in both dialects, bound
as literals into the parsed statement (never spliced into the text), checked before any statement runs."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest

from spark_ducklake.errors import InvalidArgumentError

ATTACK = "x'; DROP TABLE t; --"


def _rows(lake, table="t"):
    return sorted(tuple(r.values()) for r in lake.read_arrow(table).to_pylist())


@pytest.fixture
def table(lake):
    lake.sql("CREATE TABLE t (id BIGINT, v VARCHAR)")
    return lake


@pytest.mark.parametrize(("dialect", "text", "params"), [
    ("spark", "INSERT INTO t VALUES (:id, :v)", {"id": 1, "v": ATTACK}),
    ("spark", "INSERT INTO t VALUES (?, ?)", [1, ATTACK]),
    ("duckdb", "INSERT INTO t VALUES ($id, $v)", {"id": 1, "v": ATTACK}),
    ("duckdb", "INSERT INTO t VALUES (?, ?)", (1, ATTACK)),
    ("duckdb", "INSERT INTO t VALUES ($1, $2)", [1, ATTACK]),
])
def test_an_interpolation_attack_is_stored_as_a_value(table, dialect, text, params):
    lake = table
    (result,) = lake.sql(text, dialect=dialect, params=params)
    assert result.rows == 1
    assert [t.name for t in lake.tables()] == ["t"]
    assert _rows(lake) == [(1, ATTACK)]
    assert not lake.context.spark_started  # a small INSERT of bound values stays in-process


def test_params_in_update_delete_and_ddl_without_spark(table):
    lake = table
    lake.sql("INSERT INTO t VALUES (?, ?), (?, ?)", params=[1, "a", 2, "b"])
    lake.sql("UPDATE t SET v = :v WHERE id = :id", params={"v": "it's", "id": 2})
    lake.sql("DELETE FROM t WHERE id = $1", dialect="duckdb", params=[1])
    assert _rows(lake) == [(2, "it's")]
    lake.sql("ALTER TABLE t ADD COLUMN n BIGINT DEFAULT ?", dialect="duckdb", params=[7])
    lake.sql("INSERT INTO t VALUES (?, ?, ?)", params=[3, None, -1])
    assert _rows(lake) == [(2, "it's", 7), (3, None, -1)]
    assert not lake.context.spark_started


def test_multi_statement_text_numbers_positional_params_across_statements(table):
    lake = table
    lake.sql("INSERT INTO t VALUES (?, ?); INSERT INTO t VALUES (?, ?)", params=[1, "a", 2, ATTACK])
    lake.sql("INSERT INTO t VALUES ($1, $2); UPDATE t SET v = $2 WHERE id = $1", dialect="duckdb",
             params=[3, "c"])
    lake.sql("DELETE FROM t WHERE id = :id; INSERT INTO t VALUES (:id, :v)", params={"id": 1, "v": "z"})
    assert _rows(lake) == [(1, "z"), (2, ATTACK), (3, "c")]


def test_value_types(lake):
    lake.sql("CREATE TABLE k (i BIGINT, f DOUBLE, d DECIMAL(10, 2), s VARCHAR, b BOOLEAN, n INTEGER)")
    lake.sql("INSERT INTO k VALUES (?, ?, ?, ?, ?, ?)",
             params=[-9000000000, 0.1, Decimal("12.34"), "é\\'\"\n", True, None])
    assert lake.read_arrow("k").to_pylist() == [{"i": -9000000000, "f": 0.1, "d": Decimal("12.34"),
                                                  "s": "é\\'\"\n", "b": True, "n": None}]
    assert not lake.context.spark_started


@pytest.mark.parametrize("dialect", ["spark", "duckdb"])
def test_typed_values_on_spark(lake, spark, dialect):
    lake.sql("CREATE TABLE k (dt DATE, ts TIMESTAMP, bl BLOB, f DOUBLE)", dialect="duckdb")
    when = datetime.datetime(2024, 2, 29, 12, 30, 1, 250000)
    lake.sql("INSERT INTO k VALUES (?, ?, ?, ?)", dialect=dialect,
             params=[datetime.date(2024, 2, 29), when, b"\x00'\xff", float("inf")])
    assert lake.read_arrow("k").to_pylist() == [{"dt": datetime.date(2024, 2, 29), "ts": when,
                                                  "bl": b"\x00'\xff", "f": float("inf")}]
    found = lake.sql("SELECT count(*) AS n FROM k WHERE dt = ? AND bl = ?", dialect=dialect,
                     params=[datetime.date(2024, 2, 29), b"\x00'\xff"])
    assert found.collect()[0].n == 1


@pytest.mark.parametrize(("dialect", "text", "params", "match"), [
    ("spark", "INSERT INTO t VALUES (?, ?)", [1], "2 positional parameters.*1 value"),
    ("spark", "INSERT INTO t VALUES (?, ?)", [1, "a", 3], "2 positional parameters.*3 values"),
    ("spark", "INSERT INTO t VALUES (:id, :v)", {"id": 1}, "no value for parameter :v"),
    ("spark", "INSERT INTO t VALUES (:id, :v)", {"id": 1, "v": "a", "w": 2}, "not in the SQL: w"),
    ("spark", "INSERT INTO t VALUES (:id, :v)", [1, "a"], "named parameters.*need a dict"),
    ("spark", "INSERT INTO t VALUES (?, ?)", {"id": 1}, "positional parameters.*need a list"),
    ("spark", "INSERT INTO t VALUES (?, :v)", [1], "both named and positional"),
    ("duckdb", "INSERT INTO t VALUES ($1, ?)", [1, 2], "both \\? and \\$n"),
    ("duckdb", "INSERT INTO t VALUES ($1, $3)", [1, 2, 3], "\\$2 is not used"),
    ("duckdb", "INSERT INTO t VALUES ($1, $2)", [1], "\\$2 has no value"),
    ("spark", "INSERT INTO t VALUES (?, ?)", [1, object()], "cannot bind a value of type object"),
    ("spark", "INSERT INTO t VALUES (1, 'a')", 5, "params must be a list, a tuple or a dict"),
    ("spark", "INSERT INTO t VALUES (1, 'a')", [1], "1 value.*no parameters"),
    ("spark", "INSERT INTO t VALUES (1, 'a'); INSERT INTO t VALUES (?, 'b')", [], "1 positional parameter.*0"),
])
def test_wrong_params_are_refused_before_anything_runs(table, dialect, text, params, match):
    lake = table
    before = lake.current_snapshot()
    with pytest.raises(InvalidArgumentError, match=match):
        lake.sql(text, dialect=dialect, params=params)
    assert lake.current_snapshot() == before  # not even the first statement ran
    assert _rows(lake) == []


def test_params_in_queries(table, spark):
    lake = table
    lake.sql("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, ?)", params=[ATTACK])
    assert [r.id for r in lake.sql("SELECT id FROM t WHERE v = :v", params={"v": ATTACK}).collect()] == [3]
    assert sorted(r.id for r in lake.sql("SELECT id FROM t WHERE id > ? AND v <> ?", params=[1, "zz"]).collect()) \
        == [2, 3]
    first = lake.snapshots()[-1].snapshot_id
    lake.sql("DELETE FROM t WHERE id = ?", params=[1])
    duck = lake.sql("SELECT count(*) AS n FROM t AT (VERSION => $v) WHERE id >= $low", dialect="duckdb",
                    params={"v": first, "low": 1})
    assert duck.collect()[0].n == 3
    assert lake.sql("SELECT ? AS s", params=[ATTACK]).collect()[0].s == ATTACK
    assert lake.sql("SELECT ?::BIGINT + 1 AS n", dialect="duckdb", params=["41"]).collect()[0].n == 42
    assert [t.name for t in lake.tables()] == ["t"]
