"""`add_data_files` of many small existing Parquet files vs DuckDB's `ducklake_add_data_files`, in one run.

    .venv/bin/python bench/add_files.py [--files 10000] [--repeat 3] [--quick]

Writes N small Parquet files (10 rows, 3 columns, no field ids) once with pyarrow, then per repetition registers
all of them in a fresh table of a fresh SQLite-catalog lake: with `lake.add_data_files` (footers read by one
Spark job, one commit), and with DuckDB's extension on an identical lake (same files, same glob). Both lakes are
then checked to hold N * 10 rows. Prints medians and the ratio (the reference took ~1000 s for 24k files in
its issue #898). `--quick` (also `run.py --quick`): 300 files, 1 repetition.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile

from common import timed


def write_files(folder: str, count: int) -> None:
    """`count` small Parquet files, as an outside writer would leave them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(folder)
    for i in range(count):
        pq.write_table(pa.table({"id": pa.array(range(i * 10, i * 10 + 10), pa.int64()),
                                 "name": [f"n{i}-{j}" for j in range(10)],
                                 "amount": pa.array([j * 0.5 for j in range(10)], pa.float64())}),
                       f"{folder}/part-{i:06d}.parquet")


def ours(root: str, files: str, spark) -> float:
    """Seconds for lake.add_data_files of every file (the table exists already)."""
    from spark_ducklake import DuckLake

    lake = DuckLake.attach(f"sqlite:{root}/ours.sqlite", f"{root}/ours-data/", spark=spark)
    lake.create_table("t", "id BIGINT, name STRING, amount DOUBLE")
    seconds = timed(lake.add_data_files, "t", f"{files}/*.parquet")
    lake.close()
    return seconds


def theirs(root: str, files: str) -> float:
    """Seconds for DuckDB's ducklake_add_data_files of the same files."""
    from spark_ducklake.duckdb_reference import attach, connect

    con = connect()
    con.execute("SET threads = 2")
    attach(con, f"sqlite:{root}/duck.sqlite", f"{root}/duck-data/")
    con.execute("CREATE TABLE lake.t (id BIGINT, name VARCHAR, amount DOUBLE)")
    seconds = timed(con.execute, f"CALL ducklake_add_data_files('lake', 't', '{files}/*.parquet')")
    con.close()
    return seconds


def count_rows(root: str, name: str) -> int:
    """Rows DuckDB reads from one of the lakes."""
    from spark_ducklake.duckdb_reference import attach, connect

    con = connect()
    attach(con, f"sqlite:{root}/{name}.sqlite")
    rows = con.execute("SELECT count(*) FROM lake.t").fetchone()[0]
    con.close()
    return rows


QUICK = (300, 1)  # files, repetitions
FULL = (10_000, 3)


def measure(count: int, repeat: int) -> dict[str, float]:
    """Median seconds per engine ("spark-ducklake", "duckdb-ducklake") over `repeat` rounds after a warm-up one."""
    from spark_ducklake.dataplane.spark.session import get_or_create_spark

    spark = get_or_create_spark()
    base = tempfile.mkdtemp(prefix="bench-add-")
    try:
        files = f"{base}/incoming"
        write_files(files, count)
        times: dict[str, list[float]] = {"spark-ducklake": [], "duckdb-ducklake": []}
        for rep in range(repeat + 1):  # the first round warms Spark and the page cache up and is not counted
            root = f"{base}/round{rep}"
            os.makedirs(root)
            pair = (("spark-ducklake", ours, (root, files, spark)), ("duckdb-ducklake", theirs, (root, files)))
            for name, run, run_args in (pair if rep % 2 == 0 else pair[::-1]):
                seconds = run(*run_args)
                if rep:
                    times[name].append(seconds)
            for name in ("ours", "duck"):
                assert count_rows(root, name) == count * 10, f"{name}: wrong row count"
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return {name: statistics.median(values) for name, values in times.items()}


def bench_rows(quick: bool, *, files: int | None = None, repeat: int | None = None) -> list:
    """The add_files case for the runner; quick: 300 files, 1 run; full: 10,000 files, medians of 3."""
    from report import Row

    files = files or (QUICK if quick else FULL)[0]
    repeat = repeat or (QUICK if quick else FULL)[1]
    res = measure(files, repeat)
    ours_s, theirs_s = res["spark-ducklake"], res["duckdb-ducklake"]
    runs = "1 run" if repeat == 1 else f"medians of {repeat}"
    return [Row("add_files", f"add_data_files, {files:,} files of 10 rows", ours_s, theirs_s,
                baseline_name="duckdb-ducklake ducklake_add_data_files",
                notes=f"ours {files / ours_s:,.0f} files/s, DuckDB {files / theirs_s:,.0f} files/s; {runs}")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=FULL[0])
    parser.add_argument("--repeat", type=int, default=FULL[1])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK[0]} files, {QUICK[1]} repetition")
    args = parser.parse_args()
    if args.quick:
        args.files, args.repeat = QUICK

    res = measure(args.files, args.repeat)
    ours_s, theirs_s = res["spark-ducklake"], res["duckdb-ducklake"]
    print(f"files: {args.files:,} (10 rows each); repetitions: {args.repeat} (medians)")
    print(f"spark-ducklake  add_data_files          {ours_s:7.2f}s  ({args.files / ours_s:,.0f} files/s)")
    print(f"duckdb-ducklake ducklake_add_data_files {theirs_s:7.2f}s  ({args.files / theirs_s:,.0f} files/s)")
    print(f"ratio spark-ducklake / duckdb-ducklake: {ours_s / theirs_s:.3f}")


if __name__ == "__main__":
    main()
