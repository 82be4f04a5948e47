"""The change feed of a 10M-row table vs one full scan of it, and vs DuckDB's extension on the same lake.

    .venv/bin/python bench/change_feed.py [--rows 10000000] [--repeat 3]

The table is written once (about ten files), then changed twice: an append of 1% new rows (one file) and an
update of 1% of the rows clustered in one file (a delete file plus a file of new row versions). Timed, alternating
and as medians: a full scan into a no-op sink (the baseline), `table_changes` of the update snapshot alone (only
the two files it touched are read), `table_changes` over the whole history (every file), and DuckDB's
`table_changes` for the same two ranges (`count(*)`, 2 threads). `run.py --quick`: 200k rows, 1 timed run.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile

from common import timed


def measure(rows: int, repeat: int) -> tuple[dict[str, list[float]], int, dict[str, int]]:
    """Times of every workload (after one warm-up each), files of the table, and rows of both feeds."""
    from pyspark.sql import functions as F

    from spark_ducklake import DuckLake
    from spark_ducklake.duckdb_reference import attach, connect

    root = tempfile.mkdtemp(prefix="bench-cdf-")
    catalog = f"sqlite:{root}/meta.sqlite"
    lake = DuckLake.attach(catalog, f"{root}/data/")
    con = None
    try:
        spark = lake.spark
        df = spark.range(rows).withColumn("k", (F.col("id") % 1000).cast("int")).withColumn("v", F.rand(7))
        first = lake.write(df, "t", mode="error")
        extra = spark.range(rows, rows + rows // 100).withColumn("k", F.lit(1)).withColumn("v", F.lit(0.5))
        lake.write(extra, "t")
        lake.update("t", f"id < {rows // 100}", {"v": "v + 1"})
        last = lake.current_snapshot()
        files = len(lake.plan_scan("t").files)
        con = connect()
        con.execute("SET threads = 2")
        attach(con, catalog)

        def sink(frame):
            return lambda: frame.write.format("noop").mode("overwrite").save()

        work = {
            "full scan": sink(lake.read("t")),
            "table_changes(update)": sink(lake.table_changes("t", last, last)),
            "table_changes(history)": sink(lake.table_changes("t", first, last)),
            "duckdb table_changes(update)": lambda: con.execute(
                f"SELECT count(*) FROM lake.table_changes('t', {last}, {last})").fetchall(),
            "duckdb table_changes(history)": lambda: con.execute(
                f"SELECT count(*) FROM lake.table_changes('t', {first}, {last})").fetchall(),
        }
        counts = {
            "update": lake.table_changes("t", last, last).count(),
            "history": lake.table_changes("t", first, last).count(),
        }
        assert counts["update"] == 2 * (rows // 100)
        assert counts["history"] == rows + rows // 100 + 2 * (rows // 100)
        times: dict[str, list[float]] = {name: [] for name in work}
        for fn in work.values():  # warm-up
            fn()
        for rep in range(repeat):
            for name, fn in (list(work.items()) if rep % 2 == 0 else list(reversed(work.items()))):
                times[name].append(timed(fn))
    finally:
        if con is not None:
            con.close()
        lake.close()
        shutil.rmtree(root, ignore_errors=True)
    return times, files, counts


def bench_rows(quick: bool, *, rows: int | None = None, repeat: int | None = None) -> list:
    """The change feed case for the runner; quick: 200k rows, 1 run; full: 10M rows, medians of 3."""
    from report import Row

    rows = rows or (200_000 if quick else 10_000_000)
    repeat = repeat or (1 if quick else 3)
    times, files, counts = measure(rows, repeat)
    med = {name: statistics.median(values) for name, values in times.items()}
    note = (f"{rows:,} rows in {files} files; feed rows: update {counts['update']:,}, history "
            f"{counts['history']:,}; {'1 run' if repeat == 1 else f'medians of {repeat}'}")
    out = []
    for feed in ("update", "history"):
        out.append(Row("change_feed", f"table_changes({feed}) vs full scan", med[f"table_changes({feed})"],
                       med["full scan"], baseline_name="full scan", group="vs full scan", notes=note))
    for feed in ("update", "history"):
        out.append(Row("change_feed", f"table_changes({feed}) vs DuckDB", med[f"table_changes({feed})"],
                       med[f"duckdb table_changes({feed})"], baseline_name="duckdb-ducklake table_changes",
                       group="vs DuckDB", notes=note))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    times, files, counts = measure(args.rows, args.repeat)
    print(f"rows: {args.rows:,}; files: {files}; feed rows: update {counts['update']:,}, history "
          f"{counts['history']:,}; repetitions: {args.repeat} (medians)")
    scan = statistics.median(times["full scan"])
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:30s} {median:6.2f}s  ratio to full scan {median / scan:.2f}")


if __name__ == "__main__":
    main()
