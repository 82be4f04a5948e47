"""Commit throughput of concurrent writers on one PostgreSQL catalog: spark-ducklake vs DuckDB's extension.

    .venv/bin/python bench/commit_throughput.py [--writers 8] [--commits 100] [--dsn "host=127.0.0.1 ..."]
    .venv/bin/python bench/commit_throughput.py --curve 1,2,4,8,16 --commits 50
    .venv/bin/python bench/commit_throughput.py --profile [--writers 8] [--commits 100]

Every writer is an OS process appending one small (inlined) batch per commit to the same table, which is what
streaming ingest and many small jobs do. Both engines run the same workload against a fresh database each; the
script prints commits/s, failures and the ratio, then checks that no committed row or snapshot id was lost.
Goal: >= 300 commits/s aggregate with 8 writers, none lost. `--curve` repeats it for several writer counts (the
runner plots 1-16 writers: on 2 cores the curve shows where the machine, not the catalog, is the wall), and writes
results/concurrency_curve/.
`--profile` adds where the CPU went (cpu_profile.py): CPU seconds per commit of the writer processes and of
PostgreSQL, the share of all cores busy during the run, and the commit rate those CPU costs allow at most.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import shutil
import time
import uuid

import cpu_profile
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
    cpu, failures = time.process_time(), 0
    for i in range(commits):
        try:
            lake.write(pa.table({"w": pa.array([writer], pa.int64()), "i": pa.array([i], pa.int64())}), "t")
        except Exception:  # noqa: BLE001 - counted and reported
            failures += 1
    queue.put((time.perf_counter(), failures, time.process_time() - cpu))
    start.wait()  # held open until the run's CPU is read: PostgreSQL backends of exited writers are gone from /proc


def _reference(catalog: str, data: str, writer: int, commits: int, start, queue) -> None:
    from spark_ducklake.duckdb_reference import attach, connect

    con = connect()
    attach(con, f"postgres:{catalog}", data)
    con.execute("INSERT INTO lake.warm VALUES (?)", [writer])  # unmeasured, like ours
    start.wait()
    cpu, failures = time.process_time(), 0
    for i in range(commits):
        try:
            con.execute("INSERT INTO lake.t VALUES (?, ?)", [writer, i])
        except Exception:  # noqa: BLE001 - counted and reported
            failures += 1
    queue.put((time.perf_counter(), failures, time.process_time() - cpu))
    start.wait()  # held open until the run's CPU is read: PostgreSQL backends of exited writers are gone from /proc


def run(target, shared: tuple, commits: int, writers: int) -> tuple[float, int, float, cpu_profile.Window]:
    """Start `writers` processes, release them together; returns (seconds until the last finished, failures,
    CPU seconds the writer processes spent committing, the machine's and PostgreSQL's CPU meanwhile)."""
    ctx = mp.get_context("spawn")
    start, queue = ctx.Barrier(writers + 1), ctx.Queue()
    procs = [ctx.Process(target=target, args=(*shared, w, commits, start, queue)) for w in range(writers)]
    for p in procs:
        p.start()
    start.wait()
    began, window = time.perf_counter(), cpu_profile.Window()
    results = [queue.get(timeout=600) for _ in procs]
    window.stop()
    start.wait()  # the barrier again: lets the writers exit
    for p in procs:
        p.join()
    return (max(t for t, _, _ in results) - began, sum(f for _, f, _ in results), sum(c for _, _, c in results),
            window)


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
                seconds, failures, cpu, window = run(_ours, (catalog,), commits, writers)
            else:
                seconds, failures, cpu, window = run(_reference, (catalog, data), commits, writers)
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
                       "snapshots": snaps[0], "max_id": snaps[1], "gaps": snaps[1] + 1 - snaps[0],
                       "writer_cpu": cpu / max(1, committed), "postgres_cpu": window.postgres_cpu / max(1, committed),
                       "machine_busy": window.machine_busy, "cores": window.cores}
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


def profile_rows(writers: int, commits: int, dsn: str) -> list:
    """Where the CPU of one run went, per commit: the writer processes' own CPU seconds, PostgreSQL's (every
    `postgres` process on this machine), and the share of all cores busy (anything else running included)."""
    from report import Row

    res = measure(writers, commits, dsn)
    ours, ref = res["spark-ducklake"], res["duckdb-ducklake"]
    cores = ours["cores"]

    def ceiling(r):  # commits/s if every core did nothing but this engine's commits
        return cores / max(1e-9, r["writer_cpu"] + r["postgres_cpu"])

    def share(r):  # of all cores' time during the run, what the engine's writers and PostgreSQL used
        return (r["writer_cpu"] + r["postgres_cpu"]) * r["committed"] / (r["seconds"] * cores)

    size = f"{writers} writers x {commits} commits"
    return [
        Row("concurrency", f"commits/s, {size}", ours["rate"], ref["rate"], unit="commits/s",
            baseline_name="duckdb-ducklake", group="profile",
            notes=f"all {cores} cores {ours['machine_busy']:.0%} busy during ours (its writers and PostgreSQL: "
                  f"{share(ours):.0%}), {ref['machine_busy']:.0%} during duckdb ({share(ref):.0%})"),
        Row("concurrency", "writer CPU per commit", ours["writer_cpu"] * 1000, ref["writer_cpu"] * 1000, unit="ms",
            baseline_name="duckdb-ducklake", group="profile", notes="user + system CPU of the writer processes"),
        Row("concurrency", "PostgreSQL CPU per commit", ours["postgres_cpu"] * 1000, ref["postgres_cpu"] * 1000,
            unit="ms", baseline_name="duckdb-ducklake", group="profile", notes="every postgres process"),
        Row("concurrency", "CPU-bound ceiling", ceiling(ours), ceiling(ref), unit="commits/s",
            baseline_name="duckdb-ducklake", group="profile",
            notes=f"{cores} cores / (writer + PostgreSQL CPU per commit): the most this machine could commit"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--commits", type=int, default=100, help="commits per writer")
    parser.add_argument("--dsn", default="host=127.0.0.1 port=5432 user=postgres dbname=test")
    parser.add_argument("--curve", help="comma-separated writer counts: commits/s of both engines for each")
    parser.add_argument("--profile", action="store_true",
                        help="CPU per commit (writers, PostgreSQL) and machine saturation; writes results/"
                             "concurrency_profile/")
    args = parser.parse_args()
    if args.profile:
        _profile(args.writers, args.commits, args.dsn)
        return
    if args.curve:
        _curve(tuple(int(n) for n in args.curve.split(",")), args.commits, args.dsn)
        return

    res = measure(args.writers, args.commits, args.dsn)
    for engine, r in res.items():
        print(f"{engine:16s} {r['committed']}/{r['total']} commits in {r['seconds']:.2f}s -> {r['rate']:.0f} "
              f"commits/s; failed {r['failures']}; rows {r['rows']} (distinct {r['distinct']}, lost {r['lost']}); "
              f"snapshots {r['snapshots']} (max id {r['max_id']}, gaps {r['gaps']})")
    ratio = res["spark-ducklake"]["rate"] / res["duckdb-ducklake"]["rate"]
    print(f"ratio spark-ducklake / duckdb-ducklake commits/s: {ratio:.2f}"
          f" (goal: spark-ducklake >= 300 commits/s with {args.writers} writers)")


def _profile(writers: int, commits: int, dsn: str) -> None:
    _saved("profile", lambda: profile_rows(writers, commits, dsn))


def _curve(counts: tuple[int, ...], commits: int, dsn: str) -> None:
    _saved("curve", lambda: curve_rows(counts, commits, dsn))


def _saved(mode: str, measure_rows) -> None:
    """Print the rows `measure_rows()` gives and write them to results/concurrency_<mode>/ (report and plot)."""
    import os
    from datetime import datetime, timezone

    from run import HERE, write_report

    started, clock, load = datetime.now(timezone.utc), time.perf_counter(), os.getloadavg()[0]
    rows = measure_rows()
    lines = [f"{r.metric:28s} ours {r.ours:8.1f} {r.unit:9s} duckdb {r.baseline:8.1f}  ({r.notes})" for r in rows]
    print("\n".join(lines))
    out = os.path.join(HERE, "results", f"concurrency_{mode}")
    os.makedirs(out, exist_ok=True)
    os.environ["BENCH_RESULTS_DIR"] = out
    write_report(rows, mode, started, time.perf_counter() - clock, {}, {"commit_throughput": "\n".join(lines)},
                 load, out)


if __name__ == "__main__":
    main()
