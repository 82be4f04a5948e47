"""Scan and append of a lake table vs plain Spark Parquet on the same data, measured in one run.

    .venv/bin/python bench/scan_append.py [--rows 10000000] [--repeat 3]

Prints: scan ratio (lake.read vs spark.read.parquet on the same files) and append ratio (lake.write vs
df.write.parquet of the same DataFrame). Targets: scan <= 1.05x, append <= 1.15x.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile

from common import paired


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from pyspark.sql import functions as F

    from spark_ducklake import DuckLake

    root = tempfile.mkdtemp(prefix="bench-scan-")
    lake = DuckLake.attach(f"sqlite:{root}/meta.sqlite", f"{root}/data/")
    spark = lake.spark
    df = (spark.range(args.rows)
          .withColumn("k", (F.col("id") % 1000).cast("int"))
          .withColumn("v", F.rand(7))
          .withColumn("s", F.concat(F.lit("name-"), (F.col("id") % 5000).cast("string"))))
    lake.create_table("t", df.schema)
    counter = iter(range(1_000_000))

    append_lake, append_plain = paired(
        lambda: lake.write(df, "t"),
        lambda: df.write.mode("overwrite").parquet(f"{root}/plain-{next(counter)}"),
        args.repeat,
    )

    info = lake.table_info("t")
    from spark_ducklake.catalog.reads import reader

    with lake.engine.connect() as conn:
        files = [f.path for f in reader.data_files(conn, info, lake.current_snapshot())]

    def query(frame):
        return frame.where(F.col("k") < 500).agg(F.sum("v"), F.count("s")).collect()

    scan_lake, scan_plain = paired(lambda: query(lake.read("t")), lambda: query(spark.read.parquet(*files)),
                                   args.repeat)

    total = lake.read("t").count()
    print(f"rows per append: {args.rows:,}; table rows at scan: {total:,}; files: {len(files)}")
    print(f"append: lake.write {append_lake:.2f}s vs df.write.parquet {append_plain:.2f}s "
          f"-> ratio {append_lake / append_plain:.3f} (target <= 1.15)")
    print(f"scan:   lake.read  {scan_lake:.2f}s vs spark.read.parquet {scan_plain:.2f}s "
          f"-> ratio {scan_lake / scan_plain:.3f} (target <= 1.05)")
    lake.close()
    spark.stop()
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
