"""TPC-H on lake tables vs the same Parquet files read directly, and appending lineitem vs df.write.parquet.

    .venv/bin/python bench/tpch.py [--sf 1] [--queries all|1,3,6] [--repeat 3] [--deleted-only]

Data comes from DuckDB's `tpch` extension (`dbgen`), exported to Parquet and loaded through our writer (one
table per TPC-H table, SQLite catalog). Cases:

- scan: each query in Spark SQL over `lake.read(...)` views vs over `spark.read.parquet(<the lake's own data
  files>)` views (same files, same Spark session; alternating runs, medians); then again after deleting 5% of
  lineitem (`l_orderkey % 20 = 0`, positional delete files), still against the plain files (which then hold
  the deleted rows too: the ratio is the cost of merge-on-read).
- write: appending lineitem to a lake table vs `df.write.parquet` of the same DataFrame.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import tempfile

from common import paired, timed
from report import Row
from tpch_queries import QUERIES, QUICK, TABLES


def generate(folder: str, sf: float) -> dict[str, str]:
    """TPC-H tables at scale factor `sf` as one Parquet file each (DuckDB's dbgen): name -> path."""
    from spark_ducklake.duckdb_reference import connect

    os.makedirs(folder, exist_ok=True)
    con = connect()
    con.execute("LOAD tpch")
    con.execute(f"CALL dbgen(sf={sf})")
    out = {}
    for table in TABLES:
        out[table] = os.path.join(folder, f"{table}.parquet")
        con.execute(f"COPY {table} TO '{out[table]}' (FORMAT parquet)")
    con.close()
    return out


def _register(frames: dict) -> None:
    for name, frame in frames.items():
        frame.createOrReplaceTempView(name)


def _run(spark, frames: dict, sql: str):
    _register(frames)
    return spark.sql(sql).collect()


def _same(a: list, b: list) -> bool:
    def norm(rows):
        return sorted(tuple(round(v, 4) if isinstance(v, float) else v for v in r) for r in rows)

    return norm(a) == norm(b)


def scan_rows(lake, spark, queries: list[int], repeat: int, label: str, ours: dict, plain: dict,
              check: bool) -> list[Row]:
    """One row per query: lake views vs plain-Parquet views, alternating, medians."""
    rows = []
    for q in queries:
        sql = QUERIES[q]
        if check and not _same(_run(spark, ours, sql), _run(spark, plain, sql)):
            raise AssertionError(f"TPC-H Q{q}: lake and plain Parquet results differ")
        a, b = paired(lambda s=sql: _run(spark, ours, s), lambda s=sql: _run(spark, plain, s), repeat,
                      warmup=not check)  # the check ran both already
        rows.append(Row("tpch", f"Q{q}{label}", a, b, baseline_name="spark.read.parquet, same files",
                        group=f"queries{label}"))
    return rows


def used_tables(queries: list[int]) -> list[str]:
    """The TPC-H tables the queries read (lineitem always: it is deleted from and appended to)."""
    return [t for t in TABLES
            if t == "lineitem" or any(re.search(rf"\b{t}\b", QUERIES[q]) for q in queries)]


def bench_rows(quick: bool, *, sf: float | None = None, queries: list[int] | None = None,
               repeat: int | None = None, deleted_only: bool = False) -> list[Row]:
    """Cases 1 (scan) and 2 (write), medians of 3 (one timed run swung ratios by 0.2); quick: SF 0.01, 4 queries;
    full: SF 1, 22 queries.
    `deleted_only`: just the merge-on-read rows (5% of lineitem deleted), for a busy machine."""
    from spark_ducklake import DuckLake
    from spark_ducklake.catalog.reads import reader

    sf = sf if sf is not None else (0.01 if quick else 1.0)
    queries = queries or (list(QUICK) if quick else sorted(QUERIES))
    repeat = repeat or 3
    tables = used_tables(queries)
    root = tempfile.mkdtemp(prefix="bench-tpch-")
    rows: list[Row] = []
    try:
        sources = generate(f"{root}/gen", sf)
        # No inlining: region (5 rows) would live in the catalog, and both sides should read the same files.
        lake = DuckLake.attach(f"sqlite:{root}/meta.sqlite", f"{root}/data/", data_inlining_row_limit=0)
        spark = lake.spark
        load = {}
        for table in tables:  # only what the queries read: each load is a Spark job and a commit
            load[table] = timed(lake.write, spark.read.parquet(sources[table]), table, "error")
        ours = {t: lake.read(t) for t in tables}
        with lake.engine.connect() as conn:
            snap = reader.latest_snapshot(conn).snapshot_id
            files = {t: [f.path for f in reader.data_files(conn, lake.table_info(t), snap)] for t in tables}
        plain = {t: spark.read.parquet(*files[t]) for t in tables}
        note = (f"SF {sf}; {len(tables)} tables loaded through lake.write in {sum(load.values()):.1f}s; "
                f"{'1 timed run' if repeat == 1 else f'medians of {repeat}'}")
        if not deleted_only:
            rows += scan_rows(lake, spark, queries, repeat, "", ours, plain, check=True)
            geo = statistics.geometric_mean([r.ratio for r in rows])
            rows.append(Row("tpch", f"geometric mean of {len(queries)} queries", None, None, unit="", ratio=geo,
                            notes=note))

        lineitems = ours["lineitem"].count()
        deleted = lake.delete("lineitem", "l_orderkey % 20 = 0")
        ours_del = {t: lake.read(t) for t in tables}
        after = scan_rows(lake, spark, queries, repeat, " (5% deleted)", ours_del, plain, check=False)
        rows += after
        geo = statistics.geometric_mean([r.ratio for r in after])
        rows.append(Row("tpch", "geometric mean, 5% of lineitem deleted", None, None, unit="", ratio=geo,
                        notes=f"{deleted:,} of {lineitems:,} lineitem rows deleted; baseline reads them all"))
        if deleted_only:  # the check: deleted rows gone, every other row there
            expected = plain["lineitem"].where("l_orderkey % 20 <> 0").count()
            if ours_del["lineitem"].count() != expected or lineitems - deleted != expected:
                raise AssertionError("lineitem after the delete does not hold exactly the undeleted rows")
            lake.close()
            return rows

        source = spark.read.parquet(sources["lineitem"])
        lake.create_table("lineitem_append", source.schema)
        counter = iter(range(1_000_000))
        append, plain_write = paired(
            lambda: lake.write(source, "lineitem_append"),
            lambda: source.write.mode("overwrite").parquet(f"{root}/plain-{next(counter)}"),
            repeat)
        rows.append(Row("write", f"append lineitem ({lineitems:,} rows)", append, plain_write,
                        baseline_name="df.write.parquet", notes=f"SF {sf}; medians of {repeat}"))
        lake.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sf", type=float, default=1.0)
    parser.add_argument("--queries", default="all")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--deleted-only", action="store_true", help="only the 5%%-deleted scan rows")
    args = parser.parse_args()
    queries = None if args.queries == "all" else [int(q) for q in args.queries.split(",")]
    for row in bench_rows(False, sf=args.sf, queries=queries, repeat=args.repeat, deleted_only=args.deleted_only):
        print(row)


if __name__ == "__main__":
    main()
