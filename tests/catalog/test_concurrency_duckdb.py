"""Our writers beside DuckDB's on one PostgreSQL catalog: nobody deadlocks, every acknowledged commit lands once.

DuckDB's extension does not take our advisory lock; it inserts the snapshot row first and retries only when a
commit fails on a key ("primary key", "unique"), a conflict or concurrent access (never on `deadlock detected`).
Our commit takes its rows in the same order, so two writers that race for one snapshot id meet on that row's
primary key before either has locked anything else: the loser waits, then fails on the key and retries.
"""

from __future__ import annotations

import multiprocessing as mp
import os

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.errors import ConflictError
from tests.support.compare import duckdb_rows
from tests.support.reference import attach, connect

OURS, THEIRS, COMMITS = 8, 2, 20


def _our_writer(catalog: str, writer: int, start, queue) -> None:
    lake = DuckLake.attach(catalog)
    start.wait()
    outcome: dict[int, str] = {}
    for seq in range(COMMITS):
        rows = pa.table({"writer": pa.array([writer] * 2, pa.int64()), "seq": pa.array([seq] * 2, pa.int64()),
                         "k": pa.array([0, 1], pa.int64())})
        try:
            lake.write(rows, "events")
            outcome[seq] = "ok"
        except Exception as exc:  # noqa: BLE001 - reported to the test, which classifies it
            outcome[seq] = f"{type(exc).__name__}: {exc}"
    lake.close()
    queue.put((writer, outcome))


def _duckdb_writer(catalog: str, writer: int, start, queue) -> None:
    con = connect()
    attach(con, catalog)  # DuckDB's retry settings left at their defaults
    start.wait()
    outcome: dict[int, str] = {}
    for seq in range(COMMITS):
        try:
            con.execute(f"INSERT INTO lake.events VALUES ({writer}, {seq}, 0), ({writer}, {seq}, 1)")
            outcome[seq] = "ok"
        except Exception as exc:  # noqa: BLE001 - reported to the test, which classifies it
            outcome[seq] = f"{type(exc).__name__}: {exc}"
    con.close()
    queue.put((writer, outcome))


def race(catalog: str, data_path: str) -> dict[int, dict[int, str]]:
    """OURS of our writers (ids 0..) and THEIRS DuckDB writers (ids 100..) appending COMMITS small batches each
    to one table at once; (writer -> seq -> "ok" or the error)."""
    lake = DuckLake.attach(catalog, data_path)
    lake.create_table("events", "writer BIGINT, seq BIGINT, k BIGINT")
    lake.close()
    ctx = mp.get_context("spawn")
    queue, start = ctx.Queue(), ctx.Barrier(OURS + THEIRS)
    procs = [ctx.Process(target=_our_writer, args=(catalog, w, start, queue)) for w in range(OURS)]
    procs += [ctx.Process(target=_duckdb_writer, args=(catalog, 100 + w, start, queue)) for w in range(THEIRS)]
    for p in procs:
        p.start()
    results = dict(queue.get(timeout=600) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    return results


def test_our_writers_and_duckdbs_on_postgres_never_deadlock_and_lose_nothing(pg_catalog, tmp_path):
    results = race(pg_catalog, str(tmp_path / "data"))
    failures = [(w, s, o) for w, out in results.items() for s, o in out.items() if o != "ok"]
    deadlocks = [f for f in failures if "deadlock" in f[2].lower()]
    assert not deadlocks, f"{len(deadlocks)} deadlocks, e.g. {deadlocks[:2]}"
    # Ours retry until they land; DuckDB's may give up after its default 10 retries, never for another reason.
    assert not [f for f in failures if f[0] < 100], failures[:3]
    assert all("ducklake_max_retry_count" in o for _w, _s, o in failures), failures[:3]
    acknowledged = sorted((w, s, k) for w, out in results.items() for s, o in out.items() if o == "ok"
                          for k in (0, 1))
    lake = DuckLake.attach(pg_catalog)
    assert sorted(tuple(r.values()) for r in lake.read_arrow("events").to_pylist()) == acknowledged
    snaps = lake.snapshots()
    assert [s.snapshot_id for s in snaps] == list(range(len(snaps)))
    assert len(snaps) == 2 + len(acknowledged) // 2  # the lake, the table, one per acknowledged commit
    lake.close()
    reference = connect()
    attach(reference, pg_catalog)
    assert sorted(duckdb_rows(reference, "SELECT writer, seq, k FROM lake.events")) == acknowledged
    assert duckdb_rows(reference, "SELECT count(*) FROM lake.events") == [(len(acknowledged),)]
    reference.close()


def _four_files(catalog: str, data_path: str) -> DuckLake:
    """A lake whose table t holds ids 0..39 ('x') in four small Parquet files, deletes inlined from now on."""
    lake = DuckLake.attach(catalog, data_path, data_inlining_row_limit=0)
    lake.create_table("t", "id BIGINT, v VARCHAR")
    for i in range(4):
        lake.write(pa.table({"id": pa.array(range(i * 10, i * 10 + 10), pa.int64()), "v": ["x"] * 10}), "t")
    lake.set_option("data_inlining_row_limit", 10)  # DuckDB now inlines a few deletes of those files
    assert len(lake.plan_scan("t").files) == 4
    return lake


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_duckdb_delete_racing_our_compaction_fails_instead_of_losing_rows(backend, tmp_path, request):
    """DuckDB begins a DELETE and an UPDATE (both inline their deletes), we merge the table's files, DuckDB commits.
    Its conflict check ignores compactions for inlined deletes: with `merge_adjacent` alone in our changes_made
    it committed positions of the retired files (id 3 kept, id 25 twice); our `inline_flush` beside it makes
    DuckDB refuse the commit instead."""
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}" if backend == "sqlite" else request.getfixturevalue("pg_catalog")
    lake = _four_files(catalog, str(tmp_path / "data"))
    duck = connect()
    attach(duck, catalog)
    duck.execute("BEGIN")
    duck.execute("DELETE FROM lake.t WHERE id = 3")
    duck.execute("UPDATE lake.t SET v = 'u' WHERE id = 25")
    assert [tuple(r)[2:] for r in lake.merge_adjacent_files("t")] == [(4, 1)]
    assert lake.snapshots()[-1].changes == {"merge_adjacent": ["1"], "flushed_inlined": ["1"]}
    with pytest.raises(Exception, match="flushed the inlined data"):
        duck.execute("COMMIT")
    duck.close()
    expected = [(i, "x") for i in range(40)]
    assert sorted(tuple(r.values()) for r in lake.read_arrow("t").to_pylist()) == expected
    reference = connect()
    attach(reference, catalog)
    assert sorted(duckdb_rows(reference, "SELECT id, v FROM lake.t")) == expected
    # Retried on top of the compaction, DuckDB's delete and update land once.
    reference.execute("DELETE FROM lake.t WHERE id = 3")
    reference.execute("UPDATE lake.t SET v = 'u' WHERE id = 25")
    reference.close()
    after = sorted(tuple(r.values()) for r in lake.read_arrow("t").to_pylist())
    assert after == [(i, "u" if i == 25 else "x") for i in range(40) if i != 3]
    lake.close()


def test_our_delete_racing_a_compaction_gets_a_conflict_error(pg_catalog, tmp_path):
    """Our own deletes (positions inlined, or a delete file) see the compaction's `merge_adjacent` and fail
    cleanly, leaving every row."""
    lake = _four_files(pg_catalog, str(tmp_path / "data"))
    other = DuckLake.attach(pg_catalog)
    ids = list(range(40))
    for condition in ("id = 3", "id < 20"):
        with pytest.raises(ConflictError, match="cannot delete from table 1"):
            with lake.transaction() as tx:
                tx.delete("t", condition)
                assert other.merge_adjacent_files("t")
        assert sorted(r["id"] for r in lake.read_arrow("t").to_pylist()) == ids
        more = list(range(100, 120))  # above the inlining limit: a second file to merge
        other.write(pa.table({"id": pa.array(more, pa.int64()), "v": ["y"] * len(more)}), "t")
        ids += more
    lake.close()
    other.close()


if __name__ == "__main__":  # a measurement, not a test: python -m tests.catalog.test_concurrency_duckdb <catalog> <dir>
    import sys

    outcome = race(sys.argv[1], os.path.join(sys.argv[2], "data"))
    errors = [o for out in outcome.values() for o in out.values() if o != "ok"]
    print({"commits": sum(len(out) for out in outcome.values()), "failed": len(errors),
           "deadlocks": sum("deadlock" in e.lower() for e in errors)})
    for e in errors[:5]:
        print(e[:300])
