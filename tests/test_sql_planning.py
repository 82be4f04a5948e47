"""How `lake.sql` plans its lake table reads (sql/planning.py): one catalog snapshot per statement, one plan per
distinct read however often the query names it, plans reused by later statements only while no snapshot is
committed, time travel planned per reference."""

from __future__ import annotations

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.operations.context import LakeContext


@pytest.fixture
def plans(monkeypatch):
    """The (table, version, where) of every scan the catalog plans."""
    seen: list[tuple] = []
    original = LakeContext.plan_scan

    def counting(self, table, *, version=None, timestamp=None, where=None, inlined_sources=False):
        seen.append((table, version, where))
        return original(self, table, version=version, timestamp=timestamp, where=where,
                        inlined_sources=inlined_sources)

    monkeypatch.setattr(LakeContext, "plan_scan", counting)
    return seen


def _two_files(lake) -> None:
    lake.create_table("t", "i BIGINT, s STRING")
    lake.write(pa.table({"i": list(range(100)), "s": ["a"] * 100}), "t")
    lake.write(pa.table({"i": list(range(100, 200)), "s": ["b"] * 100}), "t")


def _other(lake_catalog, tmp_path, spark) -> DuckLake:
    """Another handle on the same lake (its own plan cache, its own commits)."""
    return DuckLake.attach(lake_catalog, str(tmp_path / "data"), spark=spark)


@pytest.mark.lake(data_inlining_row_limit=0)
def test_a_plan_serves_later_statements_until_a_commit(lake, spark, plans, lake_catalog, tmp_path):
    """The same query twice plans once; after a commit by this handle or another, it is planned again and sees
    the new rows."""
    _two_files(lake)
    query = "SELECT count(*) AS n, sum(i) AS total FROM t WHERE i >= 100"
    assert lake.sql(query).collect()[0].n == 100
    assert lake.sql(query).collect()[0].n == 100
    assert len(plans) == 1
    lake.write(pa.table({"i": list(range(200, 250)), "s": ["c"] * 50}), "t")
    assert lake.sql(query).collect()[0].n == 150
    assert len(plans) == 2
    other = _other(lake_catalog, tmp_path, spark)
    other.delete("t", "i >= 240")
    row = lake.sql(query).collect()[0]
    assert (row.n, row.total) == (140, sum(range(100, 240)))
    assert [p[1] for p in plans if p[2] == "(i >= 100)"] == [3, 4, 5]  # the delete planned a scan of its own
    other.close()


@pytest.mark.lake(data_inlining_row_limit=0)
def test_a_table_named_twice_is_planned_once_at_one_snapshot(lake, spark, plans, lake_catalog, tmp_path,
                                                            monkeypatch):
    """Two references with the same pushed predicate share one plan; with different ones each is planned, both at
    the statement's snapshot even when another writer commits between them."""
    _two_files(lake)
    assert lake.sql("SELECT count(*) AS n FROM t a JOIN t b ON a.i = b.i").collect()[0].n == 200
    assert len(plans) == 1
    plans.clear()
    other = _other(lake_catalog, tmp_path, spark)
    counting = LakeContext.plan_scan

    def commit_after_first(self, table, **kwargs):
        plan = counting(self, table, **kwargs)
        if len(plans) == 1:  # between the two references' plans, another writer adds 50 rows
            other.write(pa.table({"i": list(range(1000, 1050)), "s": ["x"] * 50}), "t")
        return plan

    monkeypatch.setattr(LakeContext, "plan_scan", commit_after_first)
    row = lake.sql("SELECT (SELECT count(*) FROM t WHERE i >= 0) AS x, (SELECT count(*) FROM t WHERE i < 5000) "
                   "AS y").collect()[0]
    assert len(plans) == 2 and plans[0][1] == plans[1][1]  # one snapshot for both references
    assert (row.x, row.y) == (200, 200)  # neither sees the rows committed while the statement was being planned
    assert lake.sql("SELECT count(*) AS n FROM t a JOIN t b ON a.i = b.i").collect()[0].n == 250
    other.close()


@pytest.mark.lake(data_inlining_row_limit=0)
def test_time_travel_is_planned_per_reference(lake, spark, plans):
    """`AT (VERSION => n)` next to the latest read of the same table, in one statement and again from the plans
    kept for later statements."""
    _two_files(lake)
    first = lake.snapshots()[-1].snapshot_id
    lake.write(pa.table({"i": [7], "s": ["z"]}), "t")
    query = (f"SELECT 'old' AS k, count(*) AS n FROM t AT (VERSION => {first}) UNION ALL "
             "SELECT 'new' AS k, count(*) AS n FROM t ORDER BY k")
    for _ in range(2):
        assert [(r.k, r.n) for r in lake.sql(query, dialect="duckdb").collect()] == [("new", 201), ("old", 200)]
    assert len(plans) == 2 and plans[0][1] != plans[1][1]
    spark_query = f"SELECT (SELECT count(*) FROM t VERSION AS OF {first}) AS old, (SELECT count(*) FROM t) AS new"
    assert tuple(lake.sql(spark_query).collect()[0]) == (200, 201)
