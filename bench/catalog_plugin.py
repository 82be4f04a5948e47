"""TPC-H through the Spark catalog plugin (`spark.sql` on `lake.main.<table>`) vs through `lake.read` views.

    .venv/bin/python bench/catalog_plugin.py [--sf 1] [--queries all|1,3,6] [--repeat 3]

Issue 30, item 2: rows and speed through plain Spark SQL on the catalog plugin must be those of `lake.read`
(goal: ratio <= 1.05). One Spark session built with `spark_catalog_conf(...)` holds both: the plugin's tables
(`lake.main.lineitem`, planned by the catalog service at each query) and `lake.read(...)` DataFrames bound to
temporary views (planned by the Python API when read). The same lake, the same files, the same Spark Parquet
reader; alternating runs, medians of `repeat`; every query's rows are compared between the two first.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import sqlglot
from common import paired
from report import Row
from sqlglot import exp
from tpch import _same, generate, used_tables
from tpch_queries import QUERIES, QUICK

CATALOG = "lake"


def through_catalog(sql: str, tables: list[str]) -> str:
    """The query with every TPC-H table named through the catalog plugin (`lake.main.lineitem`); table
    references only (sqlglot), not the column aliases that share a table's name (Q8's `AS nation`)."""
    tree = sqlglot.parse_one(sql, read="spark")
    for table in tree.find_all(exp.Table):
        if table.name in tables and not table.db:
            table.set("db", exp.to_identifier("main"))
            table.set("catalog", exp.to_identifier(CATALOG))
    return tree.sql(dialect="spark")


def plugin_session(url: str, data: str):
    """A local session with the catalog plugin configured, as a user would build it."""
    from pyspark.sql import SparkSession

    from spark_ducklake import spark_catalog_conf

    conf = spark_catalog_conf(CATALOG, url, data, data_inlining_row_limit=0)
    return (SparkSession.builder.master("local[*]").appName("bench-catalog-plugin")
            .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "8")
            .config("spark.driver.memory", "4g").config("spark.sql.session.timeZone", "UTC")
            .config(map=conf).getOrCreate())


def bench_rows(quick: bool, *, sf: float | None = None, queries: list[int] | None = None,
               repeat: int | None = None) -> list[Row]:
    """Quick: SF 0.01, the quick TPC-H queries; full: SF 1, all 22; medians of 3. In a process whose JVM runs
    already (run.py's earlier cases), in a child process: the plugin's jar is only read when a JVM starts."""
    from pyspark import SparkContext

    from spark_ducklake import DuckLake

    if SparkContext._gateway is not None:  # noqa: SLF001 - pyspark's one JVM per process
        return _in_child(quick, sf, queries, repeat)

    sf = sf if sf is not None else (0.01 if quick else 1.0)
    queries = queries or (list(QUICK) if quick else sorted(QUERIES))
    repeat = repeat or 3
    tables = used_tables(queries)
    root = tempfile.mkdtemp(prefix="bench-catalog-plugin-")
    rows: list[Row] = []
    try:
        sources = generate(f"{root}/gen", sf)
        url, data = f"sqlite:{root}/meta.sqlite", f"{root}/data/"
        spark = plugin_session(url, data)
        lake = DuckLake.attach(url, data, spark=spark, data_inlining_row_limit=0)
        for table in tables:
            lake.write(spark.read.parquet(sources[table]), table, "error")

        def via_read(sql: str):
            for table in tables:
                lake.read(table).createOrReplaceTempView(table)  # planned by the Python API, as a user does
            # the text through sqlglot as through_catalog's (comma joins become CROSS JOINs): the same plan
            return spark.sql(sqlglot.parse_one(sql, read="spark").sql(dialect="spark")).collect()

        def via_catalog(sql: str):
            return spark.sql(through_catalog(sql, tables)).collect()

        for q in queries:
            sql = QUERIES[q]
            if not _same(via_catalog(sql), via_read(sql)):
                raise AssertionError(f"TPC-H Q{q}: the catalog plugin and lake.read give different rows")
            ours, base = paired(lambda s=sql: via_catalog(s), lambda s=sql: via_read(s), repeat, warmup=False)
            rows.append(Row("catalog_plugin", f"Q{q} spark.sql on {CATALOG}.main.*", ours, base,
                            baseline_name="spark.sql over lake.read views", group="queries"))
        geo = statistics.geometric_mean([r.ratio for r in rows])
        rows.append(Row("catalog_plugin", f"geometric mean of {len(queries)} queries", None, None, unit="",
                        ratio=geo, notes=f"SF {sf}; medians of {repeat}; rows equal for every query"))
        lake.close()
        spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return rows


def _in_child(quick: bool, sf: float | None, queries: list[int] | None, repeat: int | None) -> list[Row]:
    args = [sys.executable, os.path.abspath(__file__), "--rows-json"]
    args += ["--quick"] if quick else []
    args += [] if sf is None else ["--sf", str(sf)]
    args += [] if queries is None else ["--queries", ",".join(map(str, queries))]
    args += [] if repeat is None else ["--repeat", str(repeat)]
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    return [Row(**fields) for fields in json.loads(done.stdout.strip().splitlines()[-1])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sf", type=float, default=1.0)
    parser.add_argument("--queries", default="all")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="SF 0.01 and the quick queries unless --sf/--queries say")
    parser.add_argument("--rows-json", action="store_true", help="print the rows as one JSON line (run.py)")
    args = parser.parse_args()
    queries = None if args.queries == "all" else [int(q) for q in args.queries.split(",")]
    sf = args.sf if not args.quick or args.sf != 1.0 else None
    rows = bench_rows(args.quick, sf=sf, queries=queries, repeat=args.repeat)
    if args.rows_json:
        print(json.dumps([dataclasses.asdict(row) for row in rows]))
        return
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
