"""Point and range queries on a partitioned 10M-row table, with and without pruning, measured in one run.

    .venv/bin/python bench/partition_pruning.py [--rows 10000000] [--repeat 5] [--step 3]

The table is partitioned by bucket(16, id) and month(ts); row `id` has ts = 2024-01-01 + id * step seconds (10M
rows, 3 s: about a year, 208 files; the suite's quick mode: 200k rows, 150 s: the same year and files).
"pruned" passes the filter to `lake.read(where=...)`, so bucket and min/max pruning drop files before Spark plans
the scan; "unpruned" reads every file and filters in Spark (Parquet row-group skipping still applies). Prints
files planned and the median time ratio.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time

from common import median_time


def _middle_month(rows: int, step: int) -> tuple[str, str]:
    """First day of the month holding the middle row's ts, and of the month after (a month the data covers)."""
    from datetime import datetime, timedelta

    mid = datetime(2024, 1, 1) + timedelta(seconds=rows * step // 2)
    start = mid.replace(day=1)
    end = (start + timedelta(days=32)).replace(day=1)
    return start.date().isoformat(), end.date().isoformat()


def measure(rows: int, repeat: int, step: int = 3) -> tuple[float, int, dict[str, tuple[float, int, float, int]]]:
    """(write seconds, files, {query: (pruned s, files planned, unpruned s, all files)})."""
    from spark_ducklake import DuckLake

    root = tempfile.mkdtemp(prefix="bench-part-")
    lake = DuckLake.attach(f"sqlite:{root}/meta.sqlite", f"{root}/data/")
    spark = lake.spark
    try:
        df = spark.sql(f"SELECT id, timestamp_ntz'2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, "
                       f"id * {step}) AS ts, rand(3) AS v FROM range({rows})")
        lake.create_table("t", df.schema)
        lake.set_partitioning("t", ["bucket(16, id)", "month(ts)"])
        start = time.perf_counter()
        lake.write(df, "t")
        write = time.perf_counter() - start
        total = len(lake.plan_scan("t").files)
        month = _middle_month(rows, step)
        queries = {"point (id = 4242)": "id = 4242",
                   "range (one month of ts)": f"ts >= '{month[0]}' AND ts < '{month[1]}'"}
        out = {}
        for name, where in queries.items():
            pruned = median_time(lambda w=where: lake.read("t", where=w).agg({"v": "sum"}).collect(), repeat)
            full = median_time(lambda w=where: lake.read("t").where(w).agg({"v": "sum"}).collect(), repeat)
            out[name] = (pruned, len(lake.plan_scan("t", where=where).files), full, total)
    finally:
        lake.close()
        shutil.rmtree(root, ignore_errors=True)
    return write, total, out


def bench_rows(quick: bool) -> list:
    """Case 7 (partition pruning) for the runner; quick: 200k rows, 1 run; full: 10M rows, 5 runs (both about a
    year of ts, so the same ~208 files)."""
    from report import Row

    rows, repeat, step = (200_000, 1, 150) if quick else (10_000_000, 5, 3)
    write, total, res = measure(rows, repeat, step)
    return [Row("dml", f"partition pruning: {name}", pruned, full, baseline_name="same query, unpruned",
                group="partition pruning",
                notes=f"{files} of {all_files} files planned; {rows:,} rows, partitioned write {write:.1f}s")
            for name, (pruned, files, full, all_files) in res.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--step", type=int, default=3, help="seconds of ts between consecutive rows")
    args = parser.parse_args()

    write, total, res = measure(args.rows, args.repeat, args.step)
    print(f"partitioned write of {args.rows:,} rows: {write:.1f}s, {total} files")
    for name, (pruned, files, full, all_files) in res.items():
        print(f"{name:26s} pruned {pruned:.2f}s ({files} files) vs unpruned {full:.2f}s "
              f"({all_files} files) -> ratio {pruned / full:.2f}")


if __name__ == "__main__":
    main()
