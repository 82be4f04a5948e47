"""Requests to an S3 server per scan and per written file: ours against plain Spark, in the same run.

Needs the local server (`scripts/s3.sh start`) and the s3a jars (`SPARK_DUCKLAKE_S3_JARS=$(scripts/s3_jars.sh)`).
Every request (Spark's s3a, pyarrow on the driver and in the Python workers) goes through a counting proxy on
127.0.0.1 (tests/support/s3.py). Writes a table of `--files` files with `lake.write`, then counts the requests
of planning a scan of it (`lake.read` + physical plan) and of a full count, and the same for
`spark.read.parquet(*paths)` over the same files; then `--baseline-files` files written by `df.write.parquet`
with Spark's default committer. Results: bench/results/s3_requests.json.

    python bench/s3_requests.py [--files 2000] [--baseline-files 200]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def _counted(proxy, fn):
    with proxy.counting() as counts:
        start = time.perf_counter()
        result = fn()
        seconds = time.perf_counter() - start
    return result, dict(sorted(counts.items())), sum(counts.values()), round(seconds, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--baseline-files", type=int, default=200)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "s3_requests.json"))
    args = parser.parse_args()

    from tests.support import s3

    s3.env_defaults()
    if problem := s3.problem():
        sys.exit(problem)
    proxy = s3.CountingProxy().__enter__()
    # Everything through the proxy: pyarrow reads AWS_ENDPOINT_URL (the Python workers inherit it), s3a its conf.
    os.environ["AWS_ENDPOINT_URL"] = proxy.endpoint
    jars = os.environ["SPARK_DUCKLAKE_S3_JARS"]
    confs = " ".join(f"--conf spark.hadoop.{k}={v}" for k, v in s3.s3a_conf(proxy.endpoint).items())
    os.environ["PYSPARK_SUBMIT_ARGS"] = f"--jars {jars} {confs} pyspark-shell"

    from spark_ducklake import DuckLake
    from spark_ducklake.dataplane.arrow.storage import spark_path
    from spark_ducklake.dataplane.spark.session import get_or_create_spark

    spark = get_or_create_spark()
    prefix = f"s3://{s3.BUCKET}/bench-{uuid.uuid4().hex[:8]}/"
    tmp = tempfile.mkdtemp()
    lake = DuckLake.attach(f"sqlite:{tmp}/meta.sqlite", prefix, spark=spark, data_inlining_row_limit=0)
    lake.create_table("t", "id BIGINT, v DOUBLE")
    rows = args.files * 1000
    columns = ("id", "CAST(id * 0.5 AS DOUBLE) AS v")
    frame = spark.range(0, rows, numPartitions=8).selectExpr(*columns).repartition(args.files)
    _, write_counts, write_total, write_s = _counted(proxy, lambda: lake.write(frame, "t"))
    files = lake.plan_scan("t").files
    assert len(files) == args.files, len(files)
    paths = [spark_path(f.path) for f in files]
    out: dict = {"files": args.files, "rows": rows,
                 "ours_write": {"requests": write_counts, "total": write_total, "per_file": write_total / args.files,
                                "seconds": write_s}}

    for name, make in (("ours", lambda: lake.read("t")), ("plain_spark", lambda: spark.read.parquet(*paths))):
        def plan(make=make):
            df = make()
            df._jdf.queryExecution().executedPlan()  # physical planning (file listing), as an action would
            return df
        df, counts, total, seconds = _counted(proxy, plan)
        _, ccounts, ctotal, cseconds = _counted(proxy, lambda df=df: df.count())
        out[f"{name}_scan"] = {"plan_requests": counts, "plan_total": total, "plan_per_file": total / args.files,
                               "plan_seconds": seconds, "count_requests": ccounts, "count_total": ctotal,
                               "count_seconds": cseconds}

    base = spark_path(f"{prefix}plain/")
    small = spark.range(0, args.baseline_files * 1000, numPartitions=8).selectExpr(*columns) \
        .repartition(args.baseline_files)
    _, counts, total, seconds = _counted(proxy, lambda: small.write.parquet(base))
    out["plain_spark_write"] = {"files": args.baseline_files, "requests": counts, "total": total,
                                "per_file": total / args.baseline_files, "seconds": seconds}
    lake.close()
    spark.stop()
    import pyarrow.fs as pafs

    fs, inner = pafs.FileSystem.from_uri(prefix)
    fs.delete_dir_contents(inner, missing_dir_ok=True)
    proxy.__exit__(None, None, None)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=2)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
