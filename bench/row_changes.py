"""DELETE and UPDATE of 1% of a 10M-row table vs one full scan of it, measured in one run.

    .venv/bin/python bench/row_changes.py [--rows 10000000] [--repeat 3]

Per repetition a fresh table is written, then timed: a full scan (Spark reads every row of the lake table into a
no-op sink; the baseline), `delete` of 1% of rows spread over every file, `update` of another 1% spread over every
file, `delete` of 1% clustered in one file, and DuckDB's extension running the same spread DELETE on the same
lake. Prints medians and ratios to the full scan (merge-on-read: a delete should cost about one scan of the
touched files plus small delete files, not a rewrite).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile

from common import timed


def one_round(lake, catalog: str, table: str, clustered: str) -> dict[str, float]:
    """Time the scan, our three changes and DuckDB's delete on one fresh table."""
    from spark_ducklake.duckdb_reference import attach, connect

    times = {
        "full scan": timed(lambda: lake.read(table).write.format("noop").mode("overwrite").save()),
        "delete 1% spread": timed(lake.delete, table, "id % 100 = 7"),
        "update 1% spread": timed(lake.update, table, {"v": "v + 1"}, "id % 100 = 8"),
        "delete 1% clustered": timed(lake.delete, table, clustered),
    }
    con = connect()
    con.execute("SET threads = 2")
    attach(con, catalog)
    times["duckdb delete 1% spread"] = timed(con.execute, f"DELETE FROM lake.{table} WHERE id % 100 = 9")
    con.close()
    return times


def measure(rows: int, repeat: int) -> tuple[dict[str, list[float]], int]:
    """Times of every round (after a warm-up round) and files per table."""
    from pyspark.sql import functions as F

    from spark_ducklake import DuckLake

    root = tempfile.mkdtemp(prefix="bench-dml-")
    catalog = f"sqlite:{root}/meta.sqlite"
    lake = DuckLake.attach(catalog, f"{root}/data/")
    spark = lake.spark
    df = (spark.range(rows)
          .withColumn("k", (F.col("id") % 1000).cast("int"))
          .withColumn("v", F.rand(7))
          .withColumn("s", F.concat(F.lit("name-"), (F.col("id") % 5000).cast("string"))))
    clustered = f"id < {rows // 100}"
    times: dict[str, list[float]] = {}
    files = 0
    try:
        for rep in range(repeat + 1):  # the first round warms Spark up and is not counted
            table = f"t{rep}"
            lake.write(df, table, mode="error")
            files = len(lake.plan_scan(table).files)
            round_times = one_round(lake, catalog, table, clustered)
            expected = df.where(f"NOT (id % 100 IN (7, 9) OR {clustered})").count()
            assert lake.read(table).count() == expected, "row count after the changes is wrong"
            if rep:
                for name, seconds in round_times.items():
                    times.setdefault(name, []).append(seconds)
    finally:
        lake.close()
        shutil.rmtree(root, ignore_errors=True)
    return times, files


def bench_rows(quick: bool) -> list:
    """Case 7 (row-level changes) for the runner; quick: 200k rows, 1 round; full: 10M rows, 3 rounds."""
    from report import Row

    rows, repeat = (200_000, 1) if quick else (10_000_000, 3)
    times, files = measure(rows, repeat)
    scan = statistics.median(times["full scan"])
    note = f"{rows:,} rows in {files} files; medians of {repeat}"
    out = [Row("dml", f"{name} vs full scan", statistics.median(values), scan, baseline_name="full scan",
               group="vs full scan", notes=note)
           for name, values in times.items() if name != "full scan" and not name.startswith("duckdb")]
    out.append(Row("dml", "delete 1% spread vs DuckDB", statistics.median(times["delete 1% spread"]),
                   statistics.median(times["duckdb delete 1% spread"]), baseline_name="duckdb-ducklake DELETE",
                   group="vs DuckDB", notes=note))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    times, files = measure(args.rows, args.repeat)
    print(f"rows: {args.rows:,}; files per table: {files}; repetitions: {args.repeat} (medians)")
    scan = statistics.median(times["full scan"])
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:24s} {median:6.2f}s  ratio to full scan {median / scan:.2f}")
    ours, theirs = statistics.median(times["delete 1% spread"]), statistics.median(times["duckdb delete 1% spread"])
    print(f"spread delete, spark-ducklake / duckdb-ducklake: {ours / theirs:.2f}")


if __name__ == "__main__":
    main()
