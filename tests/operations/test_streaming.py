"""Structured Streaming: the `ducklake` source emits exactly DuckDB's table_insertions / table_changes of each
range of snapshots, across micro-batches and restarts from a checkpoint; the sink commits every batch once (a
batch Spark re-runs after a crash is skipped), inlines small batches, and DuckDB reads what it wrote."""

from __future__ import annotations

import json
import os
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.catalog.changes.stream_guards import batch_info, last_committed_batch
from spark_ducklake.catalog.planners import stream as stream_plan
from spark_ducklake.catalog.reads import reader
from tests.catalog.test_inlined import DDL, ROWS
from tests.support.compare import duckdb_rows, spark_rows
from tests.support.reference import attach

# Streaming sources (and foreachBatch over Connect) run in Spark's non-daemon Python workers.
pytestmark = pytest.mark.python_workers

PHASE_1 = [
    "CREATE TABLE lake.t (id INTEGER, val VARCHAR)",
    "INSERT INTO lake.t SELECT i, 'a' || i FROM range(0, 40) r(i)",          # a data file
    "INSERT INTO lake.t VALUES (1000, 'x'), (1001, 'y')",                    # inlined rows
    "UPDATE lake.t SET val = 'u' WHERE id < 5",                              # new row versions, same row ids
    "DELETE FROM lake.t WHERE id BETWEEN 10 AND 24",                         # a delete file
    "INSERT INTO lake.t SELECT i, 'b' || i FROM range(100, 130) r(i)",
    "DELETE FROM lake.t WHERE id = 1001",                                    # an inlined row deleted
]
PHASE_2 = [
    "ALTER TABLE lake.t RENAME COLUMN val TO label",                         # files are read by field id
    "ALTER TABLE lake.t ADD COLUMN extra INTEGER DEFAULT 7",                 # older files read the default
    "INSERT INTO lake.t SELECT i, 'c' || i, i FROM range(200, 230) r(i)",
    "UPDATE lake.t SET label = 'w' WHERE id >= 100 AND id < 120",            # a file with row ids
    "DELETE FROM lake.t WHERE id = 1000",
    "INSERT INTO lake.t VALUES (2000, 'z', 2)",
    "CALL lake.merge_adjacent_files()",                                      # old rows in a new file: not new
    "CALL ducklake_flush_inlined_data('lake')",                              # inlined rows to a file: not new
    "INSERT INTO lake.t SELECT i, 'd' || i, i FROM range(300, 320) r(i)",
    "DELETE FROM lake.t WHERE id BETWEEN 300 AND 302",
]


def _duck(con, fn: str, start: int, end: int) -> list[tuple]:
    cols = ", ".join(f'"{r[0]}"' for r in con.execute(
        f"DESCRIBE SELECT * FROM ducklake_{fn}('lake', 'main', 't', {start}, {end})").fetchall())
    # table_changes' * holds snapshot_id, rowid, change_type; table_insertions' only the columns, as we emit them
    return duckdb_rows(con, f"SELECT {cols} FROM ducklake_{fn}('lake', 'main', 't', {start}, {end})")


def _run_to_files(stream, out, checkpoint) -> int:
    """Run a stream with Trigger.AvailableNow into Parquet files; returns the number of non-empty batches."""
    query = (stream.writeStream.format("parquet").option("path", str(out))
             .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start())
    query.awaitTermination()
    # Progress is a dict locally, a StreamingQueryProgress over Spark Connect (whose [] does not reach this field)
    return sum(1 for p in query.recentProgress if getattr(p, "numInputRows", None) or p["numInputRows"])


def _written(spark, out):
    """The files a file sink wrote (globbed: a sink directory changed on restart has no metadata log of its own)."""
    return spark.read.parquet(str(out / "*.parquet"))


def _snapshot(con) -> int:
    return con.execute("FROM lake.current_snapshot()").fetchone()[0]


def test_source_emits_each_insertion_once_across_batches_and_restarts(tmp_path, spark, reference):
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    attach(reference, catalog, str(tmp_path / "data"))
    for sql in PHASE_1:
        reference.execute(sql)
    created, first_end = 1, _snapshot(reference)
    expected_1 = _duck(reference, "table_insertions", created, first_end)
    reference.execute("DETACH lake")

    lake = DuckLake.attach(catalog, spark=spark)
    checkpoint = tmp_path / "checkpoint"
    # Snapshots 2..7 change the table (creating it names it, not its id): three batches of two snapshots each,
    # every one inserting something.
    batches = _run_to_files(lake.read_stream("t", max_snapshots_per_trigger=2), tmp_path / "out1", checkpoint)
    assert batches == 3
    assert spark_rows(_written(spark, tmp_path / "out1")) == expected_1

    attach(reference, catalog)
    for sql in PHASE_2:
        reference.execute(sql)
    last = _snapshot(reference)
    expected_2 = _duck(reference, "table_insertions", first_end + 1, last)
    reference.execute("DETACH lake")
    # Restarted from its checkpoint (now with the renamed and added column): only what came since.
    _run_to_files(lake.read_stream("t", max_snapshots_per_trigger=5), tmp_path / "out2", checkpoint)
    got = _written(spark, tmp_path / "out2")
    assert got.columns == ["id", "label", "extra"]
    assert spark_rows(got) == expected_2
    assert {r[0] for r in expected_2} >= {200, 2000, 300, 100}  # new rows and updated versions, no compacted ones
    # Nothing new: a restart emits nothing.
    assert _run_to_files(lake.read_stream("t"), tmp_path / "out3", checkpoint) == 0
    lake.close()


def test_source_change_rows_equal_duckdb_table_changes(tmp_path, spark, reference):
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    attach(reference, catalog, str(tmp_path / "data"))
    for sql in PHASE_1 + PHASE_2:
        reference.execute(sql)
    start, last = 3, _snapshot(reference)
    expected = _duck(reference, "table_changes", start, last)
    reference.execute("DETACH lake")
    assert {r[2] for r in expected} == {"insert", "delete", "update_preimage", "update_postimage"}

    lake = DuckLake.attach(catalog, spark=spark)
    stream = lake.read_stream("t", include_changes=True, starting_snapshot=start, max_snapshots_per_trigger=6)
    assert stream.columns == ["snapshot_id", "rowid", "change_type", "id", "label", "extra"]
    batches = _run_to_files(stream, tmp_path / "out", tmp_path / "checkpoint")
    assert batches >= 3
    assert spark_rows(_written(spark, tmp_path / "out")) == expected
    lake.close()


def test_source_reads_every_type_by_field_id(tmp_path, spark, reference):
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    attach(reference, catalog, str(tmp_path / "data"))
    reference.execute("SET TimeZone = 'UTC'")
    reference.execute(f"CREATE TABLE lake.t ({DDL})")
    reference.execute(f"INSERT INTO lake.t VALUES {ROWS}")                                       # inlined
    reference.execute("INSERT INTO lake.t SELECT t.* REPLACE (INTERVAL '1 year 2 months 3 days 04:05:06.789' AS iv, "
                      "NULL AS lst) FROM lake.t, range(4) r(i)")  # Parquet (which holds no negative interval)
    reference.execute("ALTER TABLE lake.t RENAME COLUMN s TO s_renamed")
    reference.execute("ALTER TABLE lake.t ADD COLUMN extra INTEGER DEFAULT 7")
    reference.execute("DETACH lake")

    lake = DuckLake.attach(catalog, spark=spark)
    name = f"types_{uuid.uuid4().hex[:8]}"
    query = (lake.read_stream("t").writeStream.format("memory").queryName(name)
             .option("checkpointLocation", str(tmp_path / "checkpoint")).trigger(availableNow=True).start())
    query.awaitTermination()
    got = spark.table(name)
    assert got.columns == lake.read("t").columns
    assert spark_rows(got) == spark_rows(lake.read("t"))
    assert got.count() == 15
    lake.close()


def test_source_stops_when_the_schema_changes_after_the_query_started(lake, tmp_path, spark):
    lake.create_table("t", "id BIGINT")
    lake.write(pa.table({"id": pa.array([1, 2], pa.int64())}), "t")
    query = (lake.read_stream("t").writeStream.format("parquet").option("path", str(tmp_path / "out"))
             .option("checkpointLocation", str(tmp_path / "checkpoint")).start())
    try:
        query.processAllAvailable()
        lake.add_column("t", "extra", "INT")
        lake.write(pa.table({"id": pa.array([3], pa.int64()), "extra": pa.array([1], pa.int32())}), "t")
        with pytest.raises(Exception, match="restart the streaming query"):
            query.processAllAvailable()
    finally:
        query.stop()
    assert sorted(r[0] for r in _written(spark, tmp_path / "out").collect()) == [1, 2]


def _drop_file(inbox, index: int, ids: range) -> None:
    path = str(inbox / f"part-{index:03}.parquet")
    pq.write_table(pa.table({"id": pa.array(list(ids), pa.int64()), "name": [f"n{i}" for i in ids]}), path)
    stamp = 1_700_000_000 + index * 60  # Spark's file source takes the oldest first: make the order certain
    os.utime(path, (stamp, stamp))


def test_sink_commits_every_batch_once_across_restarts_and_reruns(lake, lake_catalog, tmp_path, spark, reference):
    catalog = lake_catalog
    inbox, checkpoint = tmp_path / "inbox", tmp_path / "checkpoint"
    inbox.mkdir()
    for index, ids in enumerate([range(0, 4), range(4, 30), range(30, 33)]):
        _drop_file(inbox, index, ids)
    source = spark.readStream.schema("id long, name string").option("maxFilesPerTrigger", 1).parquet(str(inbox))
    lake.write_stream(source, "copy", checkpoint_location=str(checkpoint),
                      trigger={"availableNow": True}).awaitTermination()
    assert sorted(r[0] for r in lake.read("copy").collect()) == list(range(33))
    query_id = json.loads((checkpoint / "metadata").read_text())["id"]

    # A crash after our commit of batch 2 but before Spark recorded it: the restarted query runs batch 2 again.
    for name in ("2", ".2.crc"):
        os.remove(checkpoint / "commits" / name)
    _drop_file(inbox, 3, range(33, 36))
    query = lake.write_stream(source, "copy", checkpoint_location=str(checkpoint), trigger="0 seconds")
    query.processAllAvailable()
    query.stop()
    assert sorted(r[0] for r in lake.read("copy").collect()) == list(range(36))

    commits = [(s.changes, json.loads(s.commit_extra_info)["spark_streaming"]) for s in lake.snapshots()
               if s.commit_extra_info]
    assert [info["batch_id"] for _changes, info in commits] == [0, 1, 2, 3]
    assert {info["query_id"] for _changes, info in commits} == {query_id}
    # Batches of at most data_inlining_row_limit rows are inlined, the 26-row batch is a Parquet file.
    assert ["inlined_insert" in changes for changes, _info in commits] == [True, False, True, True]
    lake.close()

    attach(reference, catalog)
    assert sorted(reference.execute("SELECT id, name FROM lake.copy").fetchall()) == [(i, f"n{i}") for i in range(36)]


def test_sink_skips_a_redelivered_batch_id(lake, spark):
    lake.create_table("t", "id BIGINT")
    write = lake.stream_writer("t", query_id="orders-to-t")
    write(spark.range(0, 3), 0)
    write(spark.range(0, 3), 0)                       # re-delivered: skipped
    write(spark.range(3, 5), 1)
    write(spark.range(0, 3), 0)                       # an older batch: skipped too
    lake.stream_writer("t", query_id="another-query")(spark.range(5, 6), 0)   # another query's batch 0
    assert sorted(r[0] for r in lake.read("t").collect()) == [0, 1, 2, 3, 4, 5]
    with pytest.raises(ValueError, match="query_id"):
        lake.stream_writer("t")


@pytest.mark.lake(data_inlining_row_limit=0)
def test_a_batch_delivered_twice_at_once_lands_once(lake, tmp_path, spark, monkeypatch):
    """Both deliveries pass the early check (as when they run side by side); the check inside the commit, under the
    writers' lock, refuses the second, and its staged files are deleted."""
    from spark_ducklake.operations.streaming import sink

    lake.create_table("t", "id BIGINT")
    write = lake.stream_writer("t", query_id="q")
    monkeypatch.setattr(sink, "holds_batch", lambda *_args: False)
    write(spark.range(0, 3), 0)
    files = sorted((tmp_path / "data").rglob("*.parquet"))
    snapshots = lake.snapshots()
    write(spark.range(0, 3), 0)
    assert lake.snapshots() == snapshots
    assert sorted((tmp_path / "data").rglob("*.parquet")) == files
    assert sorted(r[0] for r in lake.read("t").collect()) == [0, 1, 2]


def test_last_committed_batch_per_query_and_table(catalog, lake):
    lake.create_table("t", "id BIGINT")
    lake.create_table("u", "id BIGINT")
    rows = pa.table({"id": pa.array([1], pa.int64())})
    for query, table, batch in [("q%_1", "main.t", 0), ("q%_1", "main.t", 1), ("q", "main.t", 5),
                                ("q%_1", "main.u", 9), ("Q%_1", "main.t", 7)]:
        lake.write(rows, table, extra_info=batch_info(query, table, batch))
    lake.write(rows, "t", extra_info="not json")
    with lake.engine.connect() as conn:
        assert last_committed_batch(conn, "q%_1", "main.t") == 1     # LIKE wildcards and case do not leak
        assert last_committed_batch(conn, "q", "main.t") == 5
        assert last_committed_batch(conn, "q%_1", "main.u") == 9
        assert last_committed_batch(conn, "q_x", "main.t") is None


def test_batches_are_planned_from_the_catalog_alone(catalog, lake):
    lake.create_table("t", "id BIGINT")
    lake.create_table("u", "id BIGINT")
    ours = []
    for i in range(4):  # snapshots of t interleaved with snapshots of another table
        ours.append(lake.write(pa.table({"id": pa.array([i], pa.int64())}), "t"))
        lake.write(pa.table({"id": pa.array([i], pa.int64())}), "u")
    last = lake.current_snapshot()
    with lake.engine.connect() as conn:
        info = reader.find_table(conn, last, lake.data_path, "main", "t")
        assert stream_plan.table_snapshots(conn, info.table_id, 0, last) == ours
        assert stream_plan.batch_end(conn, info.table_id, ours[0], last, 2) == ours[2]   # two of t's snapshots
        assert stream_plan.batch_end(conn, info.table_id, ours[2], last, 2) == last
        assert stream_plan.batch_end(conn, info.table_id, ours[0], last, None) == last
        plan = stream_plan.plan_batch(conn, info, ours[1], ours[2], deletes=True)
        assert plan.files == [] and plan.inlined.column("id").to_pylist() == [1, 2]
        stream_plan.check_columns(conn, info, last, last)


def test_a_lake_table_streams_into_another_exactly_once_across_restarts(lake, lake_catalog, tmp_path, spark, reference):
    """read_stream -> write_stream: the copy holds each inserted row version once, through a restart, a crash
    between our commit and Spark's, updates (new versions) and deletes (nothing to insert)."""
    catalog = lake_catalog
    lake.write(spark.range(0, 50).selectExpr("id", "'a' AS v"), "src", mode="error")     # a file
    lake.write(pa.table({"id": pa.array([100, 101], pa.int64()), "v": ["b", "b"]}), "src")  # inlined
    checkpoint = tmp_path / "checkpoint"

    def run() -> None:
        lake.write_stream(lake.read_stream("src", max_snapshots_per_trigger=1), "copy",
                          checkpoint_location=str(checkpoint), trigger={"availableNow": True}).awaitTermination()

    run()
    assert sorted(lake.read("copy").collect()) == sorted(lake.read("src").collect())
    lake.table("src").update("id < 3", {"v": "'u'"})        # three new row versions
    lake.delete("src", "id >= 40")                          # nothing inserted
    lake.write(pa.table({"id": pa.array([200], pa.int64()), "v": ["c"]}), "src")
    run()
    # The newest batch ran again after a crash before Spark recorded it: skipped by the sink.
    last = max(int(p.name) for p in (checkpoint / "commits").iterdir() if p.name.isdigit())
    for name in (str(last), f".{last}.crc"):
        os.remove(checkpoint / "commits" / name)
    run()
    copied = sorted(tuple(r) for r in lake.read("copy").collect())
    expected = sorted([(i, "a") for i in range(50)] + [(100, "b"), (101, "b"), (200, "c")]
                      + [(i, "u") for i in range(3)])
    assert copied == expected
    lake.close()
    attach(reference, catalog)
    assert sorted(reference.execute("SELECT id, v FROM lake.copy").fetchall()) == expected
