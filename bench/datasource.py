"""`spark.read.format("ducklake")` (Python Data Source API) vs `lake.read` (Spark's native Parquet scan), one run.

    .venv/bin/python bench/datasource.py [--rows 2000000] [--files 8] [--repeat 3]

Builds a SQLite-catalog lake with one table (id BIGINT, k INT, s STRING) written as `--files` inserts, then times,
alternately and after a warm-up, (1) a full scan aggregate and (2) a selective filter (id in the last file's
range; the data source with filter pushdown on, so both prune by the catalog's min/max stats), with each reader.
Prints medians and the ratio data source / lake.read.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile

from common import paired


def build(root: str, rows: int, files: int, spark):
    """A lake whose table holds `rows` rows in `files` data files (ids ascending by file)."""
    from spark_ducklake import DuckLake

    lake = DuckLake.attach(f"sqlite:{root}/meta.sqlite", f"{root}/data/", spark=spark, data_inlining_row_limit=0)
    lake.create_table("t", "id BIGINT, k INT, s STRING")
    per = rows // files
    for i in range(files):
        frame = spark.range(i * per, (i + 1) * per).selectExpr("id", "CAST(id % 97 AS INT) AS k",
                                                               "CAST(id AS STRING) AS s")
        lake.write(frame.coalesce(1), "t")
    return lake


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from spark_ducklake.dataplane.spark.session import get_or_create_spark

    spark = get_or_create_spark()
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    root = tempfile.mkdtemp(prefix="bench-datasource-")
    try:
        lake = build(root, args.rows, args.files, spark)
        lake.register(spark)  # the data source, with this lake and pushdown as defaults
        low = args.rows - args.rows // args.files // 2

        def native(where=None):
            frame = lake.read("t", where=where)
            return (frame.where(where) if where else frame).selectExpr("count(*)", "sum(k)").collect()

        def source(where=None):
            frame = spark.read.format("ducklake").option("table", "t").load()
            return (frame.where(where) if where else frame).selectExpr("count(*)", "sum(k)").collect()

        assert native() == source() and native(f"id >= {low}") == source(f"id >= {low}")
        print(f"{args.rows} rows in {args.files} files, median of {args.repeat}:")
        for label, where in (("full scan count+sum", None), (f"filter id >= {low}", f"id >= {low}")):
            ours, theirs = paired(lambda w=where: source(w), lambda w=where: native(w), args.repeat)
            print(f"  {label:28s} format('ducklake') {ours:7.2f} s   lake.read {theirs:7.2f} s   "
                  f"ratio {ours / theirs:5.2f}x")
        lake.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
