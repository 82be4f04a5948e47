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


@pytest.mark.lake(data_inlining_row_limit=0)
def test_a_statement_reads_one_snapshot_and_runs_again_without_translation(lake, spark, plans, monkeypatch):
    """Per statement one catalog snapshot read and each table planned once however often it is named; the same
    text again at the same snapshot is neither parsed nor bound to new views (its reads are kept as global
    temporary views, dropped once a commit makes their snapshot old)."""
    from spark_ducklake.dataplane.arrow.storage import is_connect
    from spark_ducklake.sql import statements
    from spark_ducklake.sql.planning import VIEW_PREFIX

    _two_files(lake)
    lake.create_table("d", "i BIGINT, label STRING")
    lake.write(pa.table({"i": [1, 150], "label": ["x", "y"]}), "d")
    snapshot_reads, parses, binds = [], [], []
    read_snapshot, parse = LakeContext.snapshot_id, statements._parse
    monkeypatch.setattr(LakeContext, "snapshot_id", lambda self, conn, version=None, timestamp=None: (
        snapshot_reads.append(version), read_snapshot(self, conn, version, timestamp))[1])
    monkeypatch.setattr(statements, "_parse", lambda text, dialect: (parses.append(text), parse(text, dialect))[1])
    frame_class = type(spark.range(1))
    for method in ("createOrReplaceTempView", "createOrReplaceGlobalTempView"):
        bind = getattr(frame_class, method)
        monkeypatch.setattr(frame_class, method, lambda self, name, _bind=bind: (binds.append(name),
                                                                                _bind(self, name))[1])
    query = ("SELECT d.label, count(*) AS n FROM t a JOIN t b ON a.i = b.i JOIN main.d ON d.i = a.i "
             "GROUP BY d.label ORDER BY d.label")
    db = None if is_connect(spark) else spark.conf.get("spark.sql.globalTempDatabase")
    others = set() if db is None else {t.name for t in spark.catalog.listTables(db)}  # other handles' views
    for dialect in ("spark", "duckdb"):
        for run in range(3):
            snapshot_reads.clear()
            binds.clear()
            assert [tuple(r) for r in lake.sql(query, dialect=dialect).collect()] == [("x", 1), ("y", 1)]
            # one read of which snapshot is the latest, for views, names and plans (a new plan looks its
            # snapshot up by id); a repeated statement reads nothing else
            assert snapshot_reads.count(None) == 1 and (snapshot_reads == [None] or not run)
            assert len(binds) == (0 if run or is_connect(spark) else 2)  # t (named twice) and d: one view each
    assert len(parses) == 2  # once per dialect
    assert sorted(p[0] for p in plans) == [("main", "d"), ("main", "d"), ("main", "t"), ("main", "t")]
    if is_connect(spark):
        return
    views = {t.name for t in spark.catalog.listTables(db) if t.name.startswith(VIEW_PREFIX)} - others
    assert len(views) >= 4
    assert not any(t.name.startswith(VIEW_PREFIX) for t in spark.catalog.listTables())  # out of SHOW TABLES
    lake.write(pa.table({"i": [150], "s": ["c"]}), "t")
    assert [tuple(r) for r in lake.sql(query).collect()] == [("x", 1), ("y", 4)]  # 2 x 2 rows of i = 150
    assert len(parses) == 3  # a new snapshot: translated again
    assert not views & {t.name for t in spark.catalog.listTables(db)}  # the old snapshot's views are gone
    current = {t.name for t in spark.catalog.listTables(db)} - others - views
    assert current  # the new snapshot's views
    lake.close()
    assert not current & {t.name for t in spark.catalog.listTables(db)}  # and the handle's last ones with it


@pytest.mark.lake(data_inlining_row_limit=0)
def test_a_statement_never_names_a_view_dropped_to_make_room(lake, spark, monkeypatch):
    """When a snapshot's views reach VIEW_LIMIT they are all dropped, before a statement makes its own: the
    statement never runs with a view it made a moment earlier gone (Spark would log the failure as an ERROR)."""
    from pyspark.sql import SparkSession

    from spark_ducklake.dataplane.arrow.storage import is_connect
    from spark_ducklake.sql import planning

    if is_connect(spark):
        pytest.skip("Spark Connect binds reads inside the plan: no views")
    monkeypatch.setattr(planning, "VIEW_LIMIT", 4)
    for name in ("a", "b", "c"):
        lake.create_table(name, "i BIGINT")
        lake.write(pa.table({"i": [1, 2, 3]}), name)
    failed = []
    run_sql = SparkSession.sql

    def watched(self, text, *args, **kwargs):
        try:
            return run_sql(self, text, *args, **kwargs)
        except Exception as exc:
            failed.append(str(exc).splitlines()[0])
            raise

    monkeypatch.setattr(SparkSession, "sql", watched)
    assert lake.sql("SELECT count(*) FROM a JOIN b USING (i)").collect()[0][0] == 3  # two views
    # three new reads (pushed predicates): five views would pass the limit of four
    query = "SELECT count(*) FROM a JOIN b USING (i) JOIN c USING (i) WHERE a.i > 1 AND b.i > 1 AND c.i > 1"
    assert lake.sql(query).collect()[0][0] == 2
    assert lake.sql(query).collect()[0][0] == 2  # again: its views are still there
    assert not failed
