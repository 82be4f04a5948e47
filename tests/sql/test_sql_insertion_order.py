"""DuckDB's preserve_insertion_order in `lake.sql(dialect="duckdb")`: queries without ORDER BY return rows in the
order they sit in the lake (files by id, rows by position, inlined rows last); SET preserve_insertion_order = false
lets Spark return them in any order."""

from __future__ import annotations

import pyarrow as pa
import pytest
import sqlglot

from spark_ducklake.errors import InvalidArgumentError
from spark_ducklake.sql.insertion_order import ordered_ref
from spark_ducklake.sql.references import QueryContext, TableRef


@pytest.mark.lake(data_inlining_row_limit=2)
def test_rows_come_back_in_insertion_order_across_files(lake, spark):
    """A small file, then a larger one (which Spark's planner reads first), then inlined rows."""
    lake.create_table("t", "i BIGINT, s STRING")
    lake.write(pa.table({"i": [1, 2, 3], "s": ["a", "b", "c"]}), "t")
    big = list(range(100, 2100))
    lake.write(pa.table({"i": big, "s": [f"row{i}" for i in big]}), "t")
    lake.write(pa.table({"i": [7], "s": ["z"]}), "t")  # inlined
    expected = [1, 2, 3, *big, 7]
    assert [r.i for r in lake.sql("FROM t", dialect="duckdb").collect()] == expected
    assert [r[0] for r in lake.sql("SELECT i FROM main.t WHERE i < 200 OR i = 7", dialect="duckdb").collect()] \
        == [i for i in expected if i < 200 or i == 7]
    assert [r[0] for r in lake.sql("SELECT i + 1 AS j FROM t x LIMIT 5", dialect="duckdb").collect()] \
        == [2, 3, 4, 101, 102]
    assert lake.sql("SELECT * FROM t LIMIT 1", dialect="duckdb").columns == ["i", "s"]  # no ordering columns shown
    assert [r[0] for r in lake.sql("SELECT i FROM t ORDER BY i DESC LIMIT 2", dialect="duckdb").collect()] \
        == [2099, 2098]


def test_set_preserve_insertion_order(lake):
    """SET / RESET of the setting; a bad value names it."""
    tree = sqlglot.parse_one("SELECT a FROM t", read="duckdb")
    ref = TableRef(node=tree.args["from_"].this, schema="main", name="t", columns={"a"})
    ctx = QueryContext(lake, "lake", "duckdb")
    assert ordered_ref(ctx, tree, [ref]) is ref
    lake.sql("SET preserve_insertion_order = false", dialect="duckdb")
    assert ordered_ref(ctx, tree, [ref]) is None
    lake.sql("RESET preserve_insertion_order", dialect="duckdb")
    assert ordered_ref(ctx, tree, [ref]) is ref
    assert ordered_ref(QueryContext(lake, "lake", "spark"), tree, [ref]) is None  # Spark SQL: no such promise
    grouped = sqlglot.parse_one("SELECT a, count(*) FROM t GROUP BY a", read="duckdb")
    assert ordered_ref(ctx, grouped, [TableRef(node=grouped.args["from_"].this, schema="main", name="t",
                                               columns={"a"})]) is None
    with pytest.raises(InvalidArgumentError, match="preserve_insertion_order"):
        lake.sql("SET preserve_insertion_order = 'maybe'", dialect="duckdb")


# The in-process path writes small results as one file; CI's Connect lane turns it off by default (threshold 0).
@pytest.mark.lake(data_inlining_row_limit=10, small_data_threshold=16 * 2**20)
def test_small_insert_select_writes_one_file_in_order(lake, spark):
    """A small INSERT ... SELECT or CTAS is one data file, as DuckDB writes it, not one per Spark task."""
    lake.sql("CREATE TABLE u(i INTEGER)", dialect="duckdb")
    lake.sql("INSERT INTO u FROM range(100)", dialect="duckdb")
    lake.sql("INSERT INTO u SELECT i + 1000 FROM u", dialect="duckdb")
    lake.sql("CREATE TABLE v AS SELECT i FROM range(50) r(i)", dialect="duckdb")
    assert [len(lake.list_files(name)) for name in ("u", "v")] == [2, 1]
    assert [r[0] for r in lake.sql("FROM u", dialect="duckdb").collect()] \
        == list(range(100)) + list(range(1000, 1100))
