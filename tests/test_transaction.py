"""`with lake.transaction()`: many DDL and DML operations, one atomic snapshot."""

from __future__ import annotations

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.errors import DuckLakeError
from tests.support.compare import duckdb_rows
from tests.support.reference import attach


def test_everything_in_one_snapshot(catalog, tmp_path, spark, reference):
    lake = DuckLake.attach(catalog, str(tmp_path / "data"))
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


def test_exception_rolls_everything_back(tmp_path, spark):
    lake = DuckLake.attach(str(tmp_path / "meta.sqlite"), str(tmp_path / "data"), data_inlining_row_limit=0)
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
    with pytest.raises(DuckLakeError, match="one row-level change"):
        with lake.transaction() as tx:
            tx.delete("t", "id = 1")
            tx.delete("t", "id = 2")
    with pytest.raises(DuckLakeError, match="one row-level change"):  # an overwrite deletes rows too
        with lake.transaction() as tx:
            tx.write(spark.range(3), "t", mode="overwrite", where="id < 3")
            tx.delete("t", "id = 5")
    assert lake.snapshots() == before
    assert sorted((tmp_path / "data").rglob("*.parquet")) == files_before


def test_update_inside_a_transaction(tmp_path, spark, reference):
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    lake = DuckLake.attach(catalog, str(tmp_path / "data"))
    lake.write(spark.range(40).selectExpr("id", "'a' AS tag"), "t", mode="error")
    with lake.transaction() as tx:
        tx.update("t", {"tag": "'b'"}, "id >= 20")
        tx.write(pa.table({"id": pa.array([99], pa.int64()), "tag": ["c"]}), "t")
    assert len(lake.snapshots()) == 3
    lake.close()
    attach(reference, catalog)
    assert duckdb_rows(reference, "SELECT tag, count(*) FROM lake.t GROUP BY tag") == [("a", 20), ("b", 20), ("c", 1)]


def test_merge_inside_a_transaction_commits_with_the_rest(tmp_path, spark, reference):
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    lake = DuckLake.attach(catalog, str(tmp_path / "data"))
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


def test_failed_merge_in_a_transaction_leaves_nothing(tmp_path, spark):
    lake = DuckLake.attach(str(tmp_path / "meta.sqlite"), str(tmp_path / "data"), data_inlining_row_limit=0)
    lake.write(spark.range(10).selectExpr("id", "'old' AS tag"), "t", mode="error")
    before = lake.snapshots()
    files_before = sorted((tmp_path / "data").rglob("*.parquet"))
    doubled = spark.createDataFrame([(1, "a"), (1, "b")], "id LONG, tag STRING")
    with pytest.raises(DuckLakeError, match="more than once"):
        with lake.transaction() as tx:
            tx.write(spark.range(100, 200).selectExpr("id", "'x' AS tag"), "t")
            tx.merge(doubled, "t", "target.id = source.id").when_matched_update_all().execute()
    assert lake.snapshots() == before
    assert sorted((tmp_path / "data").rglob("*.parquet")) == files_before
