"""Point and range queries on a partitioned 10M-row table, with and without pruning, measured in one run.

    .venv/bin/python bench/partition_pruning.py [--rows 10000000] [--repeat 5]

The table is partitioned by bucket(16, id) and month(ts). "pruned" passes the filter to `lake.read(where=...)`, so
bucket and min/max pruning drop files before Spark plans the scan; "unpruned" reads every file and filters in
Spark (Parquet row-group skipping still applies). Prints files planned and the median time ratio.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time

from common import median_time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from spark_ducklake import DuckLake

    root = tempfile.mkdtemp(prefix="bench-part-")
    lake = DuckLake.attach(f"sqlite:{root}/meta.sqlite", f"{root}/data/")
    spark = lake.spark
    df = spark.sql(f"SELECT id, timestamp_ntz'2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id * 3) AS ts,"
                   f" rand(3) AS v FROM range({args.rows})")  # ~1 year of timestamps
    lake.create_table("t", df.schema)
    lake.set_partitioning("t", ["bucket(16, id)", "month(ts)"])
    start = time.perf_counter()
    lake.write(df, "t")
    print(f"partitioned write of {args.rows:,} rows: {time.perf_counter() - start:.1f}s, "
          f"{len(lake.plan_scan('t').files)} files")
    queries = {"point (id = 4242)": "id = 4242",
               "range (one month of ts)": "ts >= '2024-03-01' AND ts < '2024-04-01'"}
    for name, where in queries.items():
        pruned = median_time(lambda w=where: lake.read("t", where=w).agg({"v": "sum"}).collect(), args.repeat)
        full = median_time(lambda w=where: lake.read("t").where(w).agg({"v": "sum"}).collect(), args.repeat)
        files = len(lake.plan_scan("t", where=where).files)
        print(f"{name:26s} pruned {pruned:.2f}s ({files} files) vs unpruned {full:.2f}s "
              f"({len(lake.plan_scan('t').files)} files) -> ratio {pruned / full:.2f}")
    lake.close()
    spark.stop()
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
