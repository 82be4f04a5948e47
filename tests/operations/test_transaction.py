"""`with lake.transaction()`: many DDL and DML operations, one atomic snapshot."""

from __future__ import annotations

import pyarrow as pa
import pytest

from spark_ducklake.errors import DuckLakeError
from tests.support.compare import duckdb_rows, spark_rows
from tests.support.reference import attach


def test_everything_in_one_snapshot(catalog, lake, spark, reference):
    lake.write(spark.range(50).selectExpr("id", "id % 5 AS k"), "old", mode="error")
    lake.write(pa.table({"x": pa.array([1], pa.int64())}), "doomed", mode="error")
    before = len(lake.snapshots())
    with lake.transaction(commit_message="big bang", author="tx") as tx:
        tx.create_schema("s")
        tx.create_table("s.events", "id BIGINT, name STRING")
        tx.write(spark.range(100).selectExpr("id", "concat('e', id) AS name"), "s.events")
        tx.write(pa.table({"id": pa.array([1000], pa.int64()), "name": ["late"]}), "s.events")
        tx.write(spark.range(30).selectExpr("id AS n"), "s.counts", mode="error")
        tx.delete("old", "k = 0")
        tx.drop_table("doomed")
        tx.write(spark.range(500, 520).selectExpr("id", "1 AS k"), "old")
    snaps = lake.snapshots()
    assert len(snaps) == before + 1
    last = snaps[-1]
    assert (last.author, last.commit_message) == ("tx", "big bang")
    assert set(last.changes) >= {"schemas_created", "tables_created", "tables_dropped", "inlined_delete"}
    assert lake.read("s.events").count() == 101
    assert lake.read("s.counts").count() == 30
    assert lake.read("old").count() == 40 + 20
    lake.close()
    attach(reference, catalog)
    assert duckdb_rows(reference, "SELECT count(*) FROM lake.s.events") == [(101,)]
    assert duckdb_rows(reference, "SELECT count(*), sum(n) FROM lake.s.counts") == [(30, 435)]
    assert duckdb_rows(reference, "SELECT count(*) FROM lake.old") == [(60,)]
    assert duckdb_rows(reference, "SELECT count(*) FROM lake.old WHERE k = 0") == [(0,)]


@pytest.mark.lake(data_inlining_row_limit=0)
def test_exception_rolls_everything_back(lake, tmp_path, spark):
    lake.write(spark.range(10), "t", mode="error")
    before = lake.snapshots()
    files_before = sorted((tmp_path / "data").rglob("*.parquet"))
    with pytest.raises(RuntimeError, match="changed my mind"):
        with lake.transaction() as tx:
            tx.create_table("u", "a INT")
            tx.write(spark.range(1000), "t")
            tx.write(spark.range(100).selectExpr("cast(id AS INT) AS a"), "u")
            raise RuntimeError("changed my mind")
    assert lake.snapshots() == before
    assert [t.name for t in lake.tables()] == ["t"]
    assert lake.read("t").count() == 10
    assert sorted((tmp_path / "data").rglob("*.parquet")) == files_before  # staged files were deleted
    with pytest.raises(RuntimeError, match="changed my mind"):  # re-staged changes leave no file behind either
        with lake.transaction() as tx:
            assert tx.delete("t", "id = 1") == 1
            assert tx.delete("t", "id < 3") == 2  # sees the first delete
            assert tx.update("t", "id < 5", {"id": "id + 100"}) == 2
            assert sorted(r.id for r in tx.read("t").collect()) == [5, 6, 7, 8, 9, 103, 104]
            raise RuntimeError("changed my mind")
    with pytest.raises(DuckLakeError, match="only row-level change"):  # an overwrite deletes rows as of BEGIN
        with lake.transaction() as tx:
            tx.delete("t", "id = 5")
            tx.write(spark.range(3), "t", mode="overwrite", where="id < 3")
    assert lake.snapshots() == before
    assert sorted((tmp_path / "data").rglob("*.parquet")) == files_before


def test_update_inside_a_transaction(lake, lake_catalog, spark, reference):
    catalog = lake_catalog
    lake.write(spark.range(40).selectExpr("id", "'a' AS tag"), "t", mode="error")
    with lake.transaction() as tx:
        tx.update("t", "id >= 20", {"tag": "'b'"})
        tx.write(pa.table({"id": pa.array([99], pa.int64()), "tag": ["c"]}), "t")
    assert len(lake.snapshots()) == 3
    lake.close()
    attach(reference, catalog)
    assert duckdb_rows(reference, "SELECT tag, count(*) FROM lake.t GROUP BY tag") == [("a", 20), ("b", 20), ("c", 1)]


def test_merge_inside_a_transaction_commits_with_the_rest(lake, lake_catalog, spark, reference):
    catalog = lake_catalog
    lake.write(spark.range(10).selectExpr("id", "'old' AS tag"), "t", mode="error")
    source = spark.createDataFrame([(1, "new"), (2, "gone"), (20, "added")], "id LONG, tag STRING")
    with lake.transaction(commit_message="upsert") as tx:
        outcome = (tx.merge(source, "t", "target.id = source.id")
                   .when_matched_delete("source.tag = 'gone'")
                   .when_matched_update_all()
                   .when_not_matched_insert_all()
                   .execute())
        tx.create_table("audit", "n BIGINT")
        tx.write(pa.table({"n": pa.array([outcome.inserted + outcome.updated + outcome.deleted], pa.int64())}),
                 "audit")
        assert len(lake.snapshots()) == 2  # nothing visible before the block ends
    assert (outcome.inserted, outcome.updated, outcome.deleted) == (1, 1, 1)
    assert len(lake.snapshots()) == 3
    lake.close()
    attach(reference, catalog)
    assert duckdb_rows(reference, "SELECT id, tag FROM lake.t WHERE tag <> 'old' ORDER BY id") == [
        (1, "new"), (20, "added")]
    assert duckdb_rows(reference, "SELECT count(*) FROM lake.t") == [(10,)]
    assert duckdb_rows(reference, "SELECT n FROM lake.audit") == [(3,)]


@pytest.mark.lake(data_inlining_row_limit=0)
def test_failed_merge_in_a_transaction_leaves_nothing(lake, tmp_path, spark):
    lake.write(spark.range(10).selectExpr("id", "'old' AS tag"), "t", mode="error")
    before = lake.snapshots()
    files_before = sorted((tmp_path / "data").rglob("*.parquet"))
    source = spark.createDataFrame([(1, "a"), (2, "b")], "id LONG, tag STRING")
    with pytest.raises(Exception, match="no_such_column"):  # the MERGE fails after a write was staged
        with lake.transaction() as tx:
            tx.write(spark.range(100, 200).selectExpr("id", "'x' AS tag"), "u", mode="error")
            tx.merge(source, "t", "target.id = source.no_such_column").when_matched_update_all().execute()
    with pytest.raises(DuckLakeError, match="after other writes"):  # it would not see the rows written before
        with lake.transaction() as tx:
            tx.write(spark.range(100, 200).selectExpr("id", "'x' AS tag"), "t")
            tx.merge(source, "t", "target.id = source.id").when_matched_update_all().execute()
    assert lake.snapshots() == before
    assert sorted((tmp_path / "data").rglob("*.parquet")) == files_before


@pytest.mark.lake(data_inlining_row_limit=0)
def test_alters_in_a_transaction(lake, lake_catalog, spark, reference):
    """Column changes, partitioning and sort keys of several tables, and writes to others: one snapshot."""
    catalog = lake_catalog
    for name in ("t", "u", "v"):
        lake.write(spark.range(5).selectExpr("id", "cast(id AS STRING) AS s"), name, mode="error")
    before = lake.current_snapshot()
    with lake.transaction(commit_message="reshape") as tx:
        with tx.update_schema("t") as change:
            change.add_column("extra", "INT", default=7).rename_column("s", "label")
        tx.set_partitioning("u", ["s"])
        tx.write(spark.range(5, 8).selectExpr("id", "cast(id AS STRING) AS s"), "v")
        tx.write(spark.range(5, 6).selectExpr("id", "'5' AS label", "50 AS extra"), "t")  # after its ALTER
        tx.set_sorted_by("v", ["id DESC"])  # a table written in the same block
        # sees the rows written after the ALTER, and the committed ones with the altered columns
        assert tx.update("t", "id >= 4", {"extra": "extra + 1"}) == 2
    assert lake.current_snapshot() == before + 1
    assert lake.snapshots()[-1].commit_message == "reshape"
    assert [c.name for c in lake.table_info("t").columns] == ["id", "label", "extra"]
    lake.write(spark.range(8, 10).selectExpr("id", "cast(id AS STRING) AS s"), "u")  # follows the new partitioning
    assert {f.partition_id is not None for f in lake.plan_scan("u").files} == {False, True}
    rows = {name: spark_rows(lake.read(name)) for name in ("t", "u", "v")}
    lake.close()
    attach(reference, catalog)
    for name, expected in rows.items():
        assert duckdb_rows(reference, f"SELECT * FROM lake.{name}") == expected, name
    assert rows["t"][0] == (0, "0", 7) and rows["t"][-2:] == [(4, "4", 8), (5, "5", 51)] and len(rows["v"]) == 8


def test_reads_inside_a_transaction_see_its_staged_changes(catalog, lake, spark, reference):
    lake.sql("CREATE TABLE t (id BIGINT); INSERT INTO t SELECT id FROM range(30)")  # one Parquet file
    before = lake.current_snapshot()
    with lake.transaction() as tx:
        tx.write(spark.range(100, 103), "t")  # inlined: below the limit of 10
        tx.write(spark.range(200, 250), "t")  # a staged Parquet file
        tx.delete("t", "id < 5")              # a staged delete of committed rows
        tx.create_table("u", "x INT")
        tx.write(pa.table({"x": pa.array([7], pa.int32())}), "u")
        staged = sorted(r.id for r in tx.read("t").collect())
        assert staged == list(range(5, 30)) + [100, 101, 102] + list(range(200, 250))
        assert sorted(r.id for r in tx.read("t", where="id >= 101 AND id < 201").collect()) == [101, 102, 200]
        assert [tuple(r) for r in tx.read("u").collect()] == [(7,)]
        # nobody else sees any of it, this handle's own lake.read neither, and nothing was committed
        assert lake.read("t").count() == 30 and lake.current_snapshot() == before
        assert "u" not in [t.name for t in lake.tables()]
    assert lake.current_snapshot() == before + 1
    assert sorted(r.id for r in lake.read("t").collect()) == staged
    with pytest.raises(RuntimeError, match="boom"):
        with lake.transaction() as tx:
            tx.write(spark.range(300, 302), "t")
            assert tx.read("t").count() == len(staged) + 2
            raise RuntimeError("boom")
    assert lake.read("t").count() == len(staged)
    lake.close()
    attach(reference, catalog)
    assert duckdb_rows(reference, "SELECT count(*), min(id), max(id) FROM lake.t") == [(len(staged), 5, 249)]
    assert duckdb_rows(reference, "SELECT x FROM lake.u") == [(7,)]
