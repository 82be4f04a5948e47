"""Commit throughput of concurrent writers on one PostgreSQL catalog: spark-ducklake vs DuckDB's extension.

    .venv/bin/python bench/commit_throughput.py [--writers 8] [--commits 100] [--dsn "host=127.0.0.1 ..."]
    .venv/bin/python bench/commit_throughput.py --curve 1,2,4,8,16 --commits 50

Every writer is an OS process appending one small (inlined) batch per commit to the same table, which is what
streaming ingest and many small jobs do. Both engines run the same workload against a fresh database each; the
script prints commits/s, failures and the ratio, then checks that no committed row or snapshot id was lost.
Goal: >= 300 commits/s aggregate with 8 writers, none lost. `--curve` repeats it for several writer counts (the
runner plots 1-16 writers: on 2 cores the curve shows where the machine, not the catalog, is the wall).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import shutil
import time
import uuid

import psycopg


def _fresh_db(dsn: str) -> str:
    name = f"dl_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute(f'CREATE DATABASE "{name}"')
    base = " ".join(p for p in dsn.split() if not p.startswith("dbname="))
    return f"dbname={name} {base}", name


def _drop_db(dsn: str, name: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _ours(catalog: str, writer: int, commits: int, start, queue) -> None:
    import pyarrow as pa

    from spark_ducklake import DuckLake

    lake = DuckLake.attach(f"postgres:{catalog}")
    lake.write(pa.table({"w": pa.array([writer], pa.int64())}), "warm")  # imports and connections, unmeasured
    start.wait()
    failures = 0
    for i in range(commits):
        try:
            lake.write(pa.table({"w": pa.array([writer], pa.int64()), "i": pa.array([i], pa.int64())}), "t")
        except Exception:  # noqa: BLE001 - counted and reported
            failures += 1
    queue.put((time.perf_counter(), failures))


def _reference(catalog: str, data: str, writer: int, commits: int, start, queue) -> None:
    from spark_ducklake.duckdb_reference import attach, connect

    con = connect()
    attach(con, f"postgres:{catalog}", data)
    con.execute("INSERT INTO lake.warm VALUES (?)", [writer])  # unmeasured, like ours
    start.wait()
    failures = 0
    for i in range(commits):
        try:
            con.execute("INSERT INTO lake.t VALUES (?, ?)", [writer, i])
        except Exception:  # noqa: BLE001 - counted and reported
            failures += 1
    queue.put((time.perf_counter(), failures))


def run(target, shared: tuple, commits: int, writers: int) -> tuple[float, int]:
    """Start `writers` processes, release them together; returns (seconds until the last finished, failures)."""
    ctx = mp.get_context("spawn")
    start, queue = ctx.Barrier(writers + 1), ctx.Queue()
    procs = [ctx.Process(target=target, args=(*shared, w, commits, start, queue)) for w in range(writers)]
    for p in procs:
        p.start()
    start.wait()
    began = time.perf_counter()
    results = [queue.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    return max(t for t, _ in results) - began, sum(f for _, f in results)


def measure(writers: int, commits: int, dsn: str) -> dict[str, dict]:
    """Both engines on fresh databases: per engine committed, total, seconds, rate, failures, rows, snapshots."""
    import tempfile

    from spark_ducklake import DuckLake
    from spark_ducklake.duckdb_reference import attach, connect

    total = writers * commits
    out = {}
    for engine in ("spark-ducklake", "duckdb-ducklake"):
        catalog, name = _fresh_db(dsn)
        data = tempfile.mkdtemp(prefix="dl-bench-") + "/"
        try:
            lake = DuckLake.attach(f"postgres:{catalog}", data)
            lake.create_table("t", "w BIGINT, i BIGINT")
            lake.create_table("warm", "w BIGINT")
            if engine == "spark-ducklake":
                seconds, failures = run(_ours, (catalog,), commits, writers)
            else:
                seconds, failures = run(_reference, (catalog, data), commits, writers)
            con = connect()
            attach(con, f"postgres:{catalog}", data)
            rows = con.execute("SELECT count(*), count(DISTINCT (w, i)) FROM lake.t").fetchone()
            snaps = con.execute("SELECT count(*), max(snapshot_id) FROM lake.snapshots()").fetchone()
            snaps = (snaps[0] - writers, snaps[1] - writers)  # without the warm-up commits
            con.close()
            lake.close()
        finally:
            _drop_db(dsn, name)
            shutil.rmtree(data, ignore_errors=True)
        committed = total - failures
        out[engine] = {"committed": committed, "total": total, "seconds": seconds, "rate": committed / seconds,
                       "failures": failures, "rows": rows[0], "distinct": rows[1], "lost": committed - rows[1],
                       "snapshots": snaps[0], "max_id": snaps[1], "gaps": snaps[1] + 1 - snaps[0]}
    return out


CURVE = (1, 2, 4, 8, 16)


def bench_rows(quick: bool, *, writers: int = 8, commits: int | None = None, dsn: str | None = None,
               curve: tuple[int, ...] = CURVE) -> list:
    """Case 6 for the runner: 8 writers, then commits/s over `curve` writers; quick: 10 commits each, full: 100."""
    from common import PG_DSN, pg_available
    from report import Row

    dsn = dsn or PG_DSN
    if not pg_available(dsn):
        return [Row("concurrency", "8 writers", None, None, notes="PostgreSQL not reachable: skipped")]
    commits = commits or (10 if quick else 100)
    res = measure(writers, commits, dsn)
    ours, ref = res["spark-ducklake"], res["duckdb-ducklake"]

    def note(r):
        return (f"{r['committed']}/{r['total']} committed, failed {r['failures']}, lost {r['lost']}, "
                f"snapshot gaps {r['gaps']}")

    return [
        Row("concurrency", f"{writers} writers x {commits} commits, PostgreSQL", ours["rate"], ref["rate"],
            unit="commits/s", baseline_name="duckdb-ducklake", group="commits/s",
            notes=f"ours: {note(ours)}; duckdb: {note(ref)}; goal >= 300 commits/s"),
        Row("concurrency", "lost rows (ours)", float(ours["lost"]), float(ref["lost"]), unit="rows",
            baseline_name="duckdb-ducklake", notes="must be 0"),
    ] + curve_rows(curve, commits, dsn, measured={writers: res})


def curve_rows(counts: tuple[int, ...], commits: int, dsn: str, measured: dict | None = None) -> list:
    """Commits/s of both engines for each writer count (one fresh database per engine and count)."""
    from report import Row

    rows = []
    for n in counts:
        res = (measured or {}).get(n) or measure(n, commits, dsn)
        ours, ref = res["spark-ducklake"], res["duckdb-ducklake"]
        rows.append(Row("concurrency", f"{n} writer{'s' if n > 1 else ''}", ours["rate"], ref["rate"],
                        unit="commits/s", baseline_name="duckdb-ducklake", group="commits/s by writers",
                        notes=f"{commits} commits each; lost ours {ours['lost']}, duckdb {ref['lost']}; "
                              f"failed ours {ours['failures']}, duckdb {ref['failures']}"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--commits", type=int, default=100, help="commits per writer")
    parser.add_argument("--dsn", default="host=127.0.0.1 port=5432 user=postgres dbname=test")
    parser.add_argument("--curve", help="comma-separated writer counts: commits/s of both engines for each")
    args = parser.parse_args()
    if args.curve:
        for row in curve_rows(tuple(int(n) for n in args.curve.split(",")), args.commits, args.dsn):
            print(f"{row.metric:11s} ours {row.ours:7.1f} commits/s  duckdb {row.baseline:7.1f}  "
                  f"ratio {row.ratio:.2f}  ({row.notes})")
        return

    res = measure(args.writers, args.commits, args.dsn)
    for engine, r in res.items():
        print(f"{engine:16s} {r['committed']}/{r['total']} commits in {r['seconds']:.2f}s -> {r['rate']:.0f} "
              f"commits/s; failed {r['failures']}; rows {r['rows']} (distinct {r['distinct']}, lost {r['lost']}); "
              f"snapshots {r['snapshots']} (max id {r['max_id']}, gaps {r['gaps']})")
    ratio = res["spark-ducklake"]["rate"] / res["duckdb-ducklake"]["rate"]
    print(f"ratio spark-ducklake / duckdb-ducklake commits/s: {ratio:.2f}"
          f" (goal: spark-ducklake >= 300 commits/s with {args.writers} writers)")


if __name__ == "__main__":
    main()
