"""merge_adjacent_files and rewrite_data_files: every snapshot reads as before, for us and for DuckDB (row ids
included); sorted tables compact sorted; partitions and schema versions stay apart; hundreds of tiny files; we
read DuckDB's compactions; conflicts with concurrent deletes."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa

from spark_ducklake import DuckLake
from spark_ducklake.dataplane.spark import compaction_units as units_module
from spark_ducklake.errors import ConflictError, DuckLakeError
from tests.support.compare import duckdb_rows, spark_rows
from tests.support.races import commit_meanwhile
from tests.support.reference import attach, connect
from tests.support.snapshots import duckdb_history, first_snapshot_of, our_history


def _pair(i: int, **more) -> pa.Table:
    cols = {"a": pa.array([i * 10 + 1, i * 10], pa.int32()), "p": ["u", "v"]}
    cols.update(more)
    return pa.table(cols)


def _scheduled(lake: DuckLake) -> int:
    with lake.engine.connect() as conn:
        return conn.execute(sa.text("SELECT count(*) FROM ducklake_files_scheduled_for_deletion")).scalar()


@pytest.mark.lake(data_inlining_row_limit=0)
def test_merge_keeps_every_snapshot_for_us_and_duckdb(lake, lake_catalog, spark):
    catalog = lake_catalog
    lake.create_table("t", "a INT, p STRING, b STRING")
    for i in range(3):
        lake.write(_pair(i, b=["x", "y"]), "t")
    lake.delete("t", "a = 11")                                   # a file with deletes is left alone
    lake.update("t", "a = 20", {"b": "'upd'"})                   # a file of rows that kept their ids
    lake.set_partitioning("t", ["p"])
    for i in range(3, 5):
        lake.write(_pair(i, b=["x", "y"]), "t")
    lake.add_column("t", "c", "INT", default=5)                  # compatible: older files merge with newer
    for i in range(5, 7):
        lake.write(_pair(i, b=["x", "y"], c=pa.array([1, 2], pa.int32())), "t")
    lake.drop_column("t", "b")                                   # incompatible: older files merge apart
    for i in range(7, 9):
        lake.write(_pair(i, c=pa.array([3, 4], pa.int32())), "t")
    lake.set_sorted_by("t", ["a DESC"])
    first, last = first_snapshot_of(lake, "t"), lake.current_snapshot()
    live_before = len(lake.plan_scan("t").files)
    ours_before = our_history(lake, "t", first, last)
    lake.close()
    duck_before = duckdb_history(catalog, "t", first, last)
    assert duck_before == ours_before

    lake = DuckLake.attach(catalog, spark=spark)
    rows = lake.merge_adjacent_files()
    merged = lake.current_snapshot()
    # flushed_inlined beside it: DuckDB's check of its inlined deletes sees it
    # (tests/catalog/test_concurrency_duckdb.py)
    assert lake.snapshots()[-1].changes == {"merge_adjacent": ["1"], "flushed_inlined": ["1"]}
    assert all(r.schema_name == "main" and r.table_name == "t" and r.files_created == 1 for r in rows)
    processed = sum(r.files_processed for r in rows)
    assert _scheduled(lake) == processed
    files = lake.plan_scan("t").files
    assert len(files) == live_before - processed + len(rows)
    # Old-schema files (with b) merge among themselves, partitioned ones per partition, newer ones together.
    assert len(rows) >= 4 and {r.files_processed for r in rows} >= {2}
    for f in files:
        if f.partial_max is not None:
            column = pq.read_table(f.path)
            assert column.column("a").to_pylist() == sorted(column.column("a").to_pylist(), reverse=True)
            assert {"_ducklake_internal_row_id", "_ducklake_internal_snapshot_id"} <= set(column.column_names)
    assert our_history(lake, "t", first, last) == ours_before
    assert our_history(lake, "t", merged, merged)[merged] == ours_before[last]
    assert lake.merge_adjacent_files() == []
    lake.close()
    assert duckdb_history(catalog, "t", first, merged) == {**duck_before, merged: duck_before[last]}


def test_rewrite_drops_deleted_rows_and_keeps_row_ids(lake, lake_catalog, spark, reference):
    catalog = lake_catalog
    lake.create_table("t", "id BIGINT, s STRING")
    for lo in (0, 20):
        lake.write(spark.range(lo, lo + 20).selectExpr("id", "concat('v', id) AS s").coalesce(1), "t")
    lake.delete("t", "id < 3")                                   # inlined deletes
    lake.delete("t", "id >= 3 AND id < 15")                      # a delete file
    lake.delete("t", "id >= 25 AND id < 37")                     # 60% of the second file
    first, last = first_snapshot_of(lake, "t"), lake.current_snapshot()
    ours_before = our_history(lake, "t", first, last)
    assert lake.rewrite_data_files("t", delete_threshold=0.7) == [("main", "t", 1, 1)]
    lake.set_option("rewrite_delete_threshold", 0.0, table_name="t")
    assert lake.rewrite_data_files() == [("main", "t", 1, 1)]
    done = lake.current_snapshot()
    assert [s.changes for s in lake.snapshots()[-2:]] == [{"rewrite_delete": ["1"], "flushed_inlined": ["1"]}] * 2
    files = lake.plan_scan("t").files
    assert sum(f.record_count for f in files) == 13 and not any(f.delete_file for f in files)
    assert our_history(lake, "t", first, last) == ours_before
    assert our_history(lake, "t", done, done)[done] == ours_before[last]
    ours_feed = spark_rows(lake.table_changes("t", done, done))
    assert {r[2] for r in ours_feed} == {"update_preimage", "update_postimage"}
    lake.close()
    assert duckdb_history(catalog, "t", first, done) == {**ours_before, last + 1: ours_before[last],
                                                          done: ours_before[last]}
    attach(reference, catalog)
    # Rewritten rows read as updates, as in DuckDB's feed. (Not compared for the first rewrite: DuckDB's feed
    # lists the inlined deletes of a rewritten file as deleted again, with wrong values, on its own lakes too.)
    assert duckdb_rows(reference, f"FROM ducklake_table_changes('lake', 'main', 't', {done}, {done})") == ours_feed


def test_we_read_duckdb_compactions_at_every_snapshot(tmp_path, spark, reference):
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    attach(reference, catalog, str(tmp_path / "data"), data_inlining_row_limit=0)
    reference.execute("CREATE TABLE lake.t (a INTEGER, s VARCHAR)")
    reference.execute("ALTER TABLE lake.t SET SORTED BY (a DESC)")
    for i in range(6):
        reference.execute(f"INSERT INTO lake.t VALUES ({i * 10}, 'x{i}'), ({i * 10 + 1}, 'y{i}')")
    reference.execute("DELETE FROM lake.t WHERE a = 21")
    reference.execute("UPDATE lake.t SET s = 'u' WHERE a = 30")
    reference.execute("CALL ducklake_merge_adjacent_files('lake')")
    reference.execute("DELETE FROM lake.t WHERE a IN (0, 41)")
    reference.execute("CALL ducklake_rewrite_data_files('lake', delete_threshold => 0.0)")
    last = reference.execute("SELECT max(snapshot_id) FROM lake.snapshots()").fetchone()[0]
    theirs = {v: duckdb_rows(reference, f"SELECT *, rowid FROM lake.t AT (VERSION => {v})") for v in range(1, last + 1)}
    reference.execute("DETACH lake")
    lake = DuckLake.attach(catalog, spark=spark)
    assert our_history(lake, "t", 1, last) == theirs


def test_hundreds_of_one_row_files(tmp_path, spark):
    catalog = f"duckdb:{tmp_path / 'meta.ducklake'}"  # its driver reports no rowcounts: the commit counts
    con = connect()
    attach(con, catalog, str(tmp_path / "data"), data_inlining_row_limit=0)
    con.execute("CREATE TABLE lake.t (id BIGINT, s VARCHAR)")
    for i in range(300):
        con.execute(f"INSERT INTO lake.t VALUES ({i}, 'v{i}')")
    con.close()
    last = 2 + 299
    before = duckdb_history(catalog, "t", 1, last)
    lake = DuckLake.attach(catalog, spark=spark)
    lake.set_option("target_file_size", "8KB")                   # a few outputs, packed in commit order
    rows = lake.merge_adjacent_files(max_compacted_files=100)
    assert sum(r.files_processed for r in rows) == 300 and len(rows) > 2
    merged = lake.current_snapshot()
    ours = our_history(lake, "t", merged, merged)[merged]
    assert ours == before[last]
    assert our_history(lake, "t", 150, 150)[150] == before[150]
    assert lake.merge_adjacent_files(max_compacted_files=1) != []   # the outputs are small too: merged again
    assert len(lake.plan_scan("t").files) < len(rows)
    lake.close()
    after = duckdb_history(catalog, "t", 1, merged + 1)
    assert after == {**before, merged: before[last], merged + 1: before[last]}


@pytest.mark.lake(data_inlining_row_limit=0)
def test_compaction_arguments_options_and_conflicts(lake, lake_catalog, tmp_path, spark, monkeypatch):
    with pytest.raises(DuckLakeError, match="max_compacted_files"):
        lake.merge_adjacent_files(max_compacted_files=0)
    with pytest.raises(DuckLakeError, match="min_file_size must be less"):
        lake.merge_adjacent_files(min_file_size=10, max_file_size=10)
    with pytest.raises(DuckLakeError, match="between 0 and 1"):
        lake.rewrite_data_files(delete_threshold=2)
    lake.small_data_threshold = 0  # the races below hook the Spark writer (test_small_data_ops: the pyarrow one)
    lake.create_table("t", "a INT, p STRING")
    for i in range(3):
        lake.write(_pair(i), "t")
    lake.set_option("auto_compact", False, table_name="t")
    assert lake.merge_adjacent_files() == []                     # opted out, nothing started
    assert lake.merge_adjacent_files(min_file_size="1MB") == []  # no file that large
    # A concurrent delete while the files are being written: the merge fails and leaves no trace.
    other = DuckLake.attach(lake_catalog, spark=spark)
    original = commit_meanwhile(monkeypatch, units_module, "write_units", lambda: other.delete("t", "a = 0"))
    files = {f.path for f in lake.plan_scan("t").files}
    with pytest.raises(ConflictError, match="compact"):
        lake.merge_adjacent_files("t")
    assert {str(p) for p in (tmp_path / "data" / "main" / "t").glob("*.parquet")} == files
    # A concurrent insert does not conflict.
    monkeypatch.setattr(units_module, "write_units",
                        lambda *a, **k: (other.write(_pair(9), "t"), original(*a, **k))[1])
    processed = sum(r.files_processed for r in lake.merge_adjacent_files("t"))
    assert processed == len(files) - 1                           # the file with a delete stays
    assert sorted(r.a for r in lake.read("t").collect()) == [1, 10, 11, 20, 21, 90, 91]
