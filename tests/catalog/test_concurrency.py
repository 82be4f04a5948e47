"""Several OS processes committing to one lake: every commit lands once, or fails with a clean ConflictError.

The mixed test runs 8 writer processes x 25 commits, moving data through one shared Spark Connect server:
appends to one table (never conflict, retried on lost races), deletes from each writer's own data file
(different files of one table: permitted concurrently) and deletes from one shared file (concurrent ones
conflict: one wins, the others raise ConflictError).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake
from tests.support.compare import duckdb_rows
from tests.support.reference import attach

WRITERS, COMMITS = 8, 25
OWNED_ROWS, SHARED_ROWS = 12, 16  # rows per (writer, seq): above the inlining limit (10), so delete files


def _plan(i: int) -> str:
    """What commit i of a writer does: 3 appends, 1 delete from its own file, 1 delete from the shared file."""
    return ("append", "append", "append", "own_delete", "shared_delete")[i % 5]


def _writer(catalog: str, writer: int, remote: str, queue) -> None:
    os.environ["SPARK_REMOTE"] = remote  # eight writers share one Spark Connect server, as on a cluster
    from spark_ducklake.errors import ConflictError

    lake = DuckLake.attach(catalog)
    outcome: dict[int, str] = {}
    for i in range(COMMITS):
        kind = _plan(i)
        try:
            if kind == "append":
                rows = pa.table({"writer": pa.array([writer] * 2, pa.int64()), "seq": pa.array([i] * 2, pa.int64()),
                                 "k": pa.array([0, 1], pa.int64())})
                lake.write(rows, "events", author=f"w{writer}")
            else:
                table = "owned" if kind == "own_delete" else "shared"
                deleted = lake.delete(table, f"writer = {writer} AND seq = {i}")
                assert deleted == (OWNED_ROWS if table == "owned" else SHARED_ROWS)
            outcome[i] = "ok"
        except ConflictError as exc:
            outcome[i] = f"conflict: {exc}"
        except Exception as exc:  # noqa: BLE001 - reported to the test, which fails on it
            outcome[i] = f"error: {type(exc).__name__}: {exc}"
    lake.close()
    queue.put((writer, outcome))


def _rows(writers: range, per_seq: int) -> pa.Table:
    keys = [(w, s, k) for w in writers for s in range(COMMITS) for k in range(per_seq)]
    return pa.table({name: pa.array([key[n] for key in keys], pa.int64())
                     for n, name in enumerate(("writer", "seq", "k"))})


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_mixed_writers_keep_every_commit_exactly_once(backend, tmp_path, request, spark, reference, connect_url):
    catalog = (f"sqlite:{tmp_path / 'meta.sqlite'}" if backend == "sqlite"
               else request.getfixturevalue("pg_catalog"))
    lake = DuckLake.attach(catalog, str(tmp_path / "data"))
    lake.create_table("events", "writer BIGINT, seq BIGINT, k BIGINT")
    for w in range(WRITERS):  # one data file per writer
        lake.write(spark.createDataFrame(_rows(range(w, w + 1), OWNED_ROWS).to_pandas()).coalesce(1), "owned")
    lake.write(spark.createDataFrame(_rows(range(WRITERS), SHARED_ROWS).to_pandas()).coalesce(1), "shared")
    setup_snapshots = len(lake.snapshots())
    assert len(lake.plan_scan("owned").files) == WRITERS and len(lake.plan_scan("shared").files) == 1

    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(catalog, w, connect_url, queue)) for w in range(WRITERS)]
    for p in procs:
        p.start()
    results = dict(queue.get(timeout=900) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0

    errors = [(w, i, o) for w, out in results.items() for i, o in out.items() if o.startswith("error")]
    assert not errors, errors[:5]
    failed = {(w, i) for w, out in results.items() for i, o in out.items() if o != "ok"}
    assert all(_plan(i) == "shared_delete" for _w, i in failed), sorted(failed)  # only the shared file conflicts
    shared_ok = {(w, i) for w in range(WRITERS) for i in range(COMMITS)
                 if _plan(i) == "shared_delete" and (w, i) not in failed}
    assert shared_ok, "some shared deletes must win"

    snaps = lake.snapshots()
    assert [s.snapshot_id for s in snaps] == list(range(len(snaps)))  # none lost, none duplicated
    assert len(snaps) == setup_snapshots + WRITERS * COMMITS - len(failed)

    appended = sorted((w, i, k) for w in range(WRITERS) for i in range(COMMITS) if _plan(i) == "append"
                      for k in range(2))
    owned_left = sorted((w, s, k) for w in range(WRITERS) for s in range(COMMITS) if _plan(s) != "own_delete"
                        for k in range(OWNED_ROWS))
    shared_left = sorted((w, s, k) for w in range(WRITERS) for s in range(COMMITS) if (w, s) not in shared_ok
                         for k in range(SHARED_ROWS))
    expected = {"events": appended, "owned": owned_left, "shared": shared_left}
    for table, rows in expected.items():
        ours = sorted(tuple(r) for r in lake.read(table).select("writer", "seq", "k").collect())
        assert ours == rows, table
    row_ids = lake.plan_scan("events").to_dataframe(spark, row_ids=True).select("rowid").collect()
    assert len({r[0] for r in row_ids}) == len(appended)
    lake.close()
    attach(reference, catalog)
    for table, rows in expected.items():
        assert sorted(duckdb_rows(reference, f"SELECT writer, seq, k FROM lake.{table}")) == rows, table


def test_a_lost_race_with_a_writer_that_does_not_queue_retries_with_fresh_ids(pg_catalog, lake, reference,
                                                                               monkeypatch):
    """DuckDB's extension does not take our commit lock: when it commits the snapshot id we are about to use, our
    insert of that id fails, and the whole attempt retries with new ids on top of DuckDB's snapshot."""
    from spark_ducklake.catalog.changes import data as data_ops
    from spark_ducklake.catalog.database.spec_tables import T
    from spark_ducklake.catalog.reads import reader

    lake.create_table("t", "a BIGINT")
    lake.create_table("u", "a BIGINT")
    attach(reference, pg_catalog)
    original, calls, attempts = data_ops.InlineInsert.apply, [], []
    original_list = reader.list_snapshots

    def racing_list(conn, since=None):
        out = original_list(conn, since=since)
        if since is not None:
            attempts.append(out[-1].snapshot_id + 1)
            if len(attempts) == 1:  # DuckDB commits after our first attempt chose its snapshot id
                reference.execute("INSERT INTO lake.u VALUES (42)")
        return out

    def recording_apply(self, ctx):
        calls.append(ctx.snapshot_id)
        return original(self, ctx)

    monkeypatch.setattr(reader, "list_snapshots", racing_list)
    monkeypatch.setattr(data_ops.InlineInsert, "apply", recording_apply)
    before = lake.current_snapshot()
    committed = lake.write(pa.table({"a": pa.array([1, 2], pa.int64())}), "t")
    # The first attempt failed on the snapshot's key before it wrote anything else; the retry drew fresh ids.
    assert attempts == [before + 1, before + 2] and calls == [before + 2] and committed == before + 2
    snaps = lake.snapshots()
    assert [s.snapshot_id for s in snaps] == list(range(len(snaps)))
    assert snaps[-2].changes == {"inlined_insert": ["2"]} and snaps[-1].changes == {"inlined_insert": ["1"]}
    assert sorted(duckdb_rows(reference, "SELECT a FROM lake.t")) == [(1,), (2,)]
    assert duckdb_rows(reference, "SELECT a FROM lake.u") == [(42,)]

    # A key violation that is not a race (nobody committed meanwhile) is reported, not retried.
    def broken_apply(self, ctx):
        calls.append(ctx.snapshot_id)
        original(self, ctx)
        snapshot = T["ducklake_snapshot"]  # a bug: writes the newest snapshot's id again
        ctx.conn.execute(snapshot.insert().values(snapshot_id=ctx.base.snapshot_id, snapshot_time=ctx.now,
                                                  schema_version=0, next_catalog_id=0, next_file_id=0))

    monkeypatch.setattr(reader, "list_snapshots", original_list)
    monkeypatch.setattr(data_ops.InlineInsert, "apply", broken_apply)
    calls.clear()
    with pytest.raises(Exception, match="(?i)duplicate|unique"):
        lake.write(pa.table({"a": pa.array([3], pa.int64())}), "t")
    assert len(calls) == 1 and lake.current_snapshot() == committed


def test_a_pooled_connection_the_server_dropped_is_replaced_before_a_commit(pg_catalog, tmp_path, monkeypatch):
    """Pooled connections are pinged only after sitting idle (no round trip per checkout); a stale one is then
    replaced instead of failing the commit."""
    import psycopg

    from spark_ducklake.catalog.database import connection

    lake = DuckLake.attach(pg_catalog, str(tmp_path / "data"))
    lake.create_table("t", "a BIGINT")
    dsn = pg_catalog.removeprefix("postgres:")

    def kill_the_pooled_connection():
        with lake.engine.connect() as conn:
            pid = conn.exec_driver_sql("SELECT pg_backend_pid()").scalar()
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", [pid])

    kill_the_pooled_connection()
    monkeypatch.setattr(connection, "IDLE_PING_SECONDS", 3600.0)  # not idle long enough: no ping, it fails
    with pytest.raises(Exception, match="terminat|closed|connection"):
        lake.write(pa.table({"a": pa.array([1], pa.int64())}), "t")
    kill_the_pooled_connection()
    monkeypatch.setattr(connection, "IDLE_PING_SECONDS", 0.0)
    lake.write(pa.table({"a": pa.array([2], pa.int64())}), "t")
    with lake.engine.connect() as conn:
        snapshots = conn.exec_driver_sql("SELECT count(*) FROM ducklake_snapshot").scalar()
        assert conn.exec_driver_sql("SELECT count(*) FROM ducklake_inlined_data_1_1").scalar() == 1
    assert snapshots == 3  # the lake's creation, the table, the one write that committed
    lake.close()


def _appender(catalog: str, writer: int, stop, committed, queue) -> None:
    """Append two inlined rows per commit until told to stop (at most 2,000 commits)."""
    lake = DuckLake.attach(catalog)
    acknowledged, error = [], None
    try:
        while not stop.is_set() and len(acknowledged) < 2000:
            seq = len(acknowledged)
            lake.write(pa.table({"writer": pa.array([writer] * 2, pa.int64()), "seq": pa.array([seq] * 2, pa.int64())}),
                       "t")
            acknowledged.append(seq)
            with committed.get_lock():
                committed.value += 1
    except Exception as exc:  # noqa: BLE001 - reported to the test, which fails on it
        error = f"{type(exc).__name__}: {exc}"
    lake.close()
    queue.put((writer, acknowledged, error))


def test_flush_commits_while_four_writers_append(pg_catalog, tmp_path, spark):
    """A flush that re-encodes deletes (an inlined row deleted, an inlined delete of a file row) as delete files
    evaluates no predicate, so appends committed while Spark writes its files do not conflict with it (the
    reference's flush conflicts only with drops, inlined deletes and other flushes): it used to fail every time
    under load, and with it every later flush, the deleted rows never leaving the catalog."""
    lake = DuckLake.attach(pg_catalog, str(tmp_path / "data"), spark=spark)
    lake.create_table("t", "writer BIGINT, seq BIGINT")
    lake.write(pa.table({"writer": pa.array([-1] * 3, pa.int64()), "seq": pa.array([0, 1, 2], pa.int64())}), "t")
    lake.delete("t", "seq = 1")                                            # an inlined row ended
    lake.write(pa.table({"writer": pa.array([-2] * 20, pa.int64()), "seq": pa.array(range(20), pa.int64())}), "t")
    lake.delete("t", "writer = -2 AND seq = 5")                            # an inlined delete of a file row
    before = {(-1, 0), (-1, 2)} | {(-2, i) for i in range(20) if i != 5}
    spark.range(1).count()  # Spark started before the writers, so they are still appending when the flush commits

    ctx = mp.get_context("spawn")
    queue, stop, committed = ctx.Queue(), ctx.Event(), ctx.Value("i", 0)
    procs = [ctx.Process(target=_appender, args=(pg_catalog, w, stop, committed, queue))
             for w in range(4)]
    for p in procs:
        p.start()
    try:
        deadline = time.monotonic() + 300
        while committed.value < 16 and time.monotonic() < deadline:
            time.sleep(0.1)
        flushes = []
        for _ in range(2):
            at_start = committed.value
            flushes.append((lake.flush_inlined_data(), committed.value - at_start))
    finally:
        stop.set()
        results = {w: (acks, err) for w, acks, err in (queue.get(timeout=300) for _ in procs)}
        for p in procs:
            p.join(timeout=60)
    assert not [err for _acks, err in results.values() if err], results
    assert all(rows and rows[0].rows_flushed > 0 for rows, _ in flushes), flushes
    assert all(appended > 0 for _, appended in flushes), flushes  # writers committed while each flush ran
    changes = [s.changes for s in lake.snapshots() if "flushed_inlined" in s.changes]
    assert changes[0] == {"tables_deleted_from": ["1"], "flushed_inlined": ["1"]} and len(changes) == 2
    expected = before | {(w, s) for w, (acks, _e) in results.items() for s in acks}
    rows = [tuple(r.values()) for r in lake.read_arrow("t").to_pylist()]
    assert len(rows) == len(before) + 2 * sum(len(acks) for acks, _e in results.values())
    assert set(rows) == expected
    lake.close()

