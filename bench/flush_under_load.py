"""flush_inlined_data while 8 writer processes append to the same table on one PostgreSQL catalog.

    .venv/bin/python bench/flush_under_load.py [--rounds 10] [--writers 8] [--quick]   # --quick: 3 rounds

Each round first gives the table what makes a flush re-encode deletes (a few inlined rows, one of them deleted,
and an inlined delete of a row of a Parquet file), then times `lake.flush_inlined_data()` (Spark already
started) while the writers keep appending small inlined batches (no Spark). The flush used to fail on every
round here: its deletes conflicted with every append committed while Spark wrote its files (issue 26 item 9).
Baseline: the same rounds with no writer running. Reported: the flush's success rate and median time under load
and idle, the appends committed meanwhile and any writer failure (must be 0), and that no acknowledged row is
lost.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import shutil
import statistics
import tempfile
import time

from common import PG_DSN, drop_pg_database, fresh_pg_database, pg_available

QUICK_ROUNDS = 3


def _appender(catalog: str, writer: int, stop, go, committed, queue) -> None:
    import pyarrow as pa

    from spark_ducklake import DuckLake

    lake = DuckLake.attach(catalog)
    seq, failures = 0, 0
    while not stop.is_set():
        if not go.wait(0.1):  # paused while a round's deletes are set up
            continue
        try:
            lake.write(pa.table({"writer": pa.array([writer] * 2, pa.int64()),
                                 "seq": pa.array([seq] * 2, pa.int64())}), "t")
            seq += 1
            with committed.get_lock():
                committed.value += 1
        except Exception:  # noqa: BLE001 - counted and reported
            failures += 1
    lake.close()
    queue.put((writer, seq, failures))


def _with_retries(action, attempts: int = 50):
    """Run a setup step that may lose to the appenders (a delete conflicts with appends committed meanwhile)."""
    from spark_ducklake.errors import ConflictError

    for _ in range(attempts - 1):
        try:
            return action()
        except ConflictError:
            time.sleep(0.05)
    return action()


def _prepare(lake, round_no: int) -> None:
    """Inlined rows with one deleted, a Parquet file with one row deleted inline: deletes for the flush."""
    import pyarrow as pa

    base = 1_000_000 * (round_no + 1)
    rows = pa.table({"writer": pa.array([-1] * 3, pa.int64()), "seq": pa.array(range(base, base + 3), pa.int64())})
    _with_retries(lambda: lake.write(rows, "t"))
    _with_retries(lambda: lake.delete("t", f"writer = -1 AND seq = {base + 1}"))
    many = pa.table({"writer": pa.array([-2] * 20, pa.int64()), "seq": pa.array(range(base, base + 20), pa.int64())})
    _with_retries(lambda: lake.write(many, "t"))  # above the inlining limit: a file
    _with_retries(lambda: lake.delete("t", f"writer = -2 AND seq = {base + 5}"))


def _rounds(lake, rounds: int, first: int, go=None) -> tuple[list[float], int, list[str]]:
    """(times of the flushes that committed, how many committed, errors of the others). `go`: the writers'
    switch, off while the round's deletes are set up (a DELETE conflicts with appends committed meanwhile)."""
    from spark_ducklake.errors import ConflictError

    times, errors = [], []
    for r in range(first, first + rounds):
        if go is not None:
            go.clear()
        _prepare(lake, r)
        if go is not None:
            go.set()
            time.sleep(0.5)  # the writers are appending again when the flush reads
        start = time.perf_counter()
        try:
            flushed = lake.flush_inlined_data()
            times.append(time.perf_counter() - start)
            assert flushed and flushed[0].rows_flushed > 0, flushed
        except ConflictError as exc:
            errors.append(str(exc))
    return times, len(times), errors


def measure(rounds: int, writers: int = 8, dsn: str = PG_DSN) -> dict:
    """Flush rounds under load, then idle, on a fresh database; the numbers of both."""
    from spark_ducklake import DuckLake

    dsn_db, name = fresh_pg_database(dsn)
    root = tempfile.mkdtemp(prefix="dl_flush_load_")
    catalog = f"postgres:{dsn_db}"
    try:
        lake = DuckLake.attach(catalog, os.path.join(root, "data"))
        lake.create_table("t", "writer BIGINT, seq BIGINT")
        lake.spark.range(1).count()  # Spark up before the writers start
        ctx = mp.get_context("spawn")
        queue, stop, go, committed = ctx.Queue(), ctx.Event(), ctx.Event(), ctx.Value("i", 0)
        go.set()
        procs = [ctx.Process(target=_appender, args=(catalog, w, stop, go, committed, queue))
                 for w in range(writers)]
        for p in procs:
            p.start()
        try:
            while committed.value < 2 * writers:
                time.sleep(0.1)
            loaded, ok_loaded, errors, appends = [], 0, [], []
            for r in range(rounds):
                at_start = committed.value
                times, ok, errs = _rounds(lake, 1, r, go)
                if times:
                    appends.append((committed.value - at_start) / times[0])
                loaded, ok_loaded, errors = loaded + times, ok_loaded + ok, errors + errs
            appends_per_s = statistics.median(appends) if appends else 0.0
        finally:
            stop.set()
            done = [queue.get(timeout=300) for _ in procs]
            for p in procs:
                p.join(timeout=60)
        idle, ok_idle, idle_errors = _rounds(lake, rounds, rounds)
        acknowledged = sum(seq for _w, seq, _f in done)
        appended = lake.read_arrow("t", where="writer >= 0").num_rows
        lake.close()
        return {"rounds": rounds, "writers": writers, "loaded": loaded, "ok_loaded": ok_loaded, "errors": errors,
                "idle": idle, "ok_idle": ok_idle, "idle_errors": idle_errors, "appends_per_s": appends_per_s,
                "writer_failures": sum(f for _w, _s, f in done), "lost": 2 * acknowledged - appended}
    finally:
        drop_pg_database(name, dsn)
        shutil.rmtree(root, ignore_errors=True)


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _fmt(values: list[float]) -> str:
    median = _median(values)
    return "-" if median is None else f"{median:.1f}"


def report(res: dict) -> list[str]:
    """Printable lines."""
    lines = [f"flush_inlined_data, {res['rounds']} rounds beside {res['writers']} appending writers: "
             f"{res['ok_loaded']}/{res['rounds']} committed, median {_fmt(res['loaded'])} s; idle: "
             f"{res['ok_idle']}/{res['rounds']}, median {_fmt(res['idle'])} s",
             f"appends while a flush ran: {res['appends_per_s']:.0f} commits/s, "
             f"writer failures {res['writer_failures']}, rows lost {res['lost']}"]
    lines += [f"  flush failed: {e}" for e in res["errors"][:3]]
    return lines


def bench_rows(quick: bool, *, rounds: int | None = None, dsn: str | None = None) -> list:
    """The flush_under_load case for the runner: 3 rounds quick, 10 full."""
    from report import Row

    dsn = dsn or PG_DSN
    if not pg_available(dsn):
        return [Row("flush_under_load", "flush beside 8 writers", None, None,
                    notes="PostgreSQL not reachable: skipped")]
    res = measure(rounds or (QUICK_ROUNDS if quick else 10), dsn=dsn)
    n = res["rounds"]
    return [
        Row("flush_under_load", f"flush success rate, {res['writers']} appending writers", res["ok_loaded"] / n,
            res["ok_idle"] / n, unit="share", baseline_name="the same flushes, no writers",
            notes=f"{res['ok_loaded']}/{n} committed under load (before issue 26 item 9: 0)"
                  + "".join(f"; {e}" for e in res["errors"][:1])),
        Row("flush_under_load", "flush time (median)", _median(res["loaded"]), _median(res["idle"]),
            baseline_name="the same flushes, no writers",
            notes="each flush re-encodes an inlined delete of a file row and a deleted inlined row; Spark started"),
        Row("flush_under_load", "appends while a flush ran (median)", res["appends_per_s"], None, unit="commits/s",
            notes=f"writer failures {res['writer_failures']} (must be 0), rows lost {res['lost']} (must be 0)"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_ROUNDS} rounds")
    args = parser.parse_args()
    print("\n".join(report(measure(QUICK_ROUNDS if args.quick else args.rounds, args.writers))))


if __name__ == "__main__":
    main()
