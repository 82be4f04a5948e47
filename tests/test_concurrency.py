"""Several OS processes committing to one lake: every commit lands once, or fails with a clean ConflictError."""

from __future__ import annotations

import multiprocessing as mp

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake

WRITERS, COMMITS = 4, 15


def _writer(catalog: str, writer: int, queue) -> None:
    lake = DuckLake.attach(catalog)
    done = 0
    for i in range(COMMITS):
        rows = pa.table({"writer": pa.array([writer] * 3, pa.int64()), "seq": pa.array([i] * 3, pa.int64()),
                         "k": pa.array([0, 1, 2], pa.int64())})
        lake.write(rows, "t", author=f"w{writer}")
        done += 1
    lake.close()
    queue.put((writer, done))


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_concurrent_appends_all_land_once(backend, tmp_path, request):
    catalog = (f"sqlite:{tmp_path / 'meta.sqlite'}" if backend == "sqlite"
               else request.getfixturevalue("pg_catalog"))
    lake = DuckLake.attach(catalog, str(tmp_path / "data"))
    lake.create_table("t", "writer BIGINT, seq BIGINT, k BIGINT")
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(catalog, w, queue)) for w in range(WRITERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=180)
        assert p.exitcode == 0
    results = dict(queue.get(timeout=5) for _ in procs)
    assert results == {w: COMMITS for w in range(WRITERS)}

    snaps = lake.snapshots()
    assert [s.snapshot_id for s in snaps] == list(range(len(snaps)))
    assert len(snaps) == 2 + WRITERS * COMMITS
    with lake.engine.connect() as conn:
        from spark_ducklake.catalog import inlined_tables

        info = lake.table_info("t")
        rows = inlined_tables.read_rows(conn, info.table_id, info.columns, snaps[-1].snapshot_id)
    seen = sorted(zip(rows["writer"].to_pylist(), rows["seq"].to_pylist(), rows["k"].to_pylist(), strict=True))
    assert seen == sorted((w, i, k) for w in range(WRITERS) for i in range(COMMITS) for k in range(3))
    assert len(set(rows["row_id"].to_pylist())) == rows.num_rows
    lake.close()
