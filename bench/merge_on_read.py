"""Merge-on-read cost, and the two ways a scan drops deleted rows, in one run: TPC-H with 5% of lineitem deleted.

    .venv/bin/python bench/merge_on_read.py [--sf 0.1] [--queries 1,3,6,14] [--repeat 3]

Three views of the same tables in one Spark session, each query timed alternately (medians): the lake's own data
files read directly with `spark.read.parquet` (the baseline: it reads the deleted rows too), `lake.read` as it
is (files with deletes filtered by a bitmap of their deleted positions, dataplane/spark/position_filter.py), the same
with the bitmaps forced into the plan as literals or forced into a broadcast, and `lake.read` with the previous
broadcast anti-join on the row position. Writes results/merge_on_read/.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from datetime import datetime, timezone

from report import Row
from tpch import _run, generate, used_tables
from tpch_queries import QUERIES, QUICK

# How `lake.read` drops deleted rows in each view: (bitmap filter on, bitmaps broadcast past this many words)
MODES = {"bitmap": (True, None), "literal": (True, 1 << 62), "broadcast": (True, 0), "join": (False, None)}
WHAT = {"bitmap": "bitmap filter (now)", "literal": "bitmaps in the plan", "broadcast": "bitmaps broadcast",
        "join": "anti-join (before)"}


def _views(lake, tables: list[str], mode: str) -> dict:
    from spark_ducklake.dataplane.spark import position_filter, scan

    bitmap, words = MODES[mode]
    default = position_filter.BROADCAST_WORDS
    scan.BITMAP_FILTER = bitmap
    position_filter.BROADCAST_WORDS = default if words is None else words
    try:
        return {t: lake.read(t) for t in tables}
    finally:
        scan.BITMAP_FILTER = True
        position_filter.BROADCAST_WORDS = default


def bench_rows(sf: float, queries: list[int], repeat: int) -> list[Row]:
    """Per query: each way of dropping deleted rows against the plain read; then their geometric means."""
    from spark_ducklake import DuckLake
    from spark_ducklake.catalog.reads import reader

    tables = used_tables(queries)
    root = tempfile.mkdtemp(prefix="bench-mor-")
    try:
        sources = generate(f"{root}/gen", sf)
        lake = DuckLake.attach(f"sqlite:{root}/meta.sqlite", f"{root}/data/", data_inlining_row_limit=0)
        spark = lake.spark
        for table in tables:
            lake.write(spark.read.parquet(sources[table]), table, "error")
        with lake.engine.connect() as conn:
            snap = reader.latest_snapshot(conn).snapshot_id
            files = {t: [f.path for f in reader.data_files(conn, lake.table_info(t), snap)] for t in tables}
        deleted = lake.delete("lineitem", "l_orderkey % 20 = 0")
        views = {"plain": {t: spark.read.parquet(*files[t]) for t in tables}}
        views.update({mode: _views(lake, tables, mode) for mode in MODES})
        rows, ratios = [], {mode: [] for mode in MODES}
        for q in queries:
            times: dict[str, list[float]] = {k: [] for k in views}
            for k in views:
                _run(spark, views[k], QUERIES[q])  # warm-up
            for i in range(repeat):
                for k in (list(views) if i % 2 == 0 else list(views)[::-1]):
                    start = time.perf_counter()
                    _run(spark, views[k], QUERIES[q])
                    times[k].append(time.perf_counter() - start)
            med = {k: statistics.median(v) for k, v in times.items()}
            for k in MODES:
                ratios[k].append(med[k] / med["plain"])
                rows.append(Row("tpch", f"Q{q} (5% deleted, {k})", med[k], med["plain"],
                                baseline_name="spark.read.parquet, same files", group=f"5% deleted, {k}"))
        note = (f"SF {sf}; {deleted:,} lineitem rows deleted; "
                f"{len(files['lineitem'])} lineitem file(s); medians of {repeat}")
        for k, what in WHAT.items():
            rows.append(Row("tpch", f"geometric mean, 5% deleted, {what}", None, None, unit="",
                            ratio=statistics.geometric_mean(ratios[k]), notes=note))
        lake.close()
        return rows
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    from run import HERE, write_report

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sf", type=float, default=0.1)
    parser.add_argument("--queries", default=",".join(str(q) for q in QUICK))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    started, clock, load = datetime.now(timezone.utc), time.perf_counter(), os.getloadavg()[0]
    rows = bench_rows(args.sf, [int(q) for q in args.queries.split(",")], args.repeat)
    lines = [f"{r.metric:45s} ratio {r.ratio:.2f}" for r in rows]
    print("\n".join(lines))
    out = os.path.join(HERE, "results", "merge_on_read")
    os.makedirs(out, exist_ok=True)
    os.environ["BENCH_RESULTS_DIR"] = out
    write_report(rows, f"merge_on_read SF {args.sf}", started, time.perf_counter() - clock, {},
                 {"merge_on_read": "\n".join(lines)}, load, out)


if __name__ == "__main__":
    main()
