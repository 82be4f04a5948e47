"""Run the benchmark suite and write bench/results/results.md plus PNG plots.

    .venv/bin/python bench/run.py --quick                  # every case, small sizes (~6 min on 2 idle cores)
    .venv/bin/python bench/run.py --full                   # the sizes the issue asks for (SF1, 100k files, ...)
    .venv/bin/python bench/run.py --quick --only planning,small_commits

Each case module has `bench_rows(quick) -> list[report.Row]`: rows of (case, metric, ours, baseline, ratio,
notes), both sides measured in this run. The cases share one Spark session (started by the first that needs it).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
import traceback
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from report import Row, markdown, plot, plot_ratios  # noqa: E402

# runner case -> its module
CASES = {
    "small_commits": "small_commits",
    "concurrency": "commit_throughput",
    "catalog_load": "catalog_load",
    "planning": "planning",
    "tpch": "tpch",
    "row_changes": "row_changes",
    "partition_pruning": "partition_pruning",
    "change_feed": "change_feed",
    "compaction": "compaction",
    "flush_under_load": "flush_under_load",
    "add_files": "add_files",
    "small_data": "small_data",
    "tpcds": "tpcds",
    "tpcds_maintenance": "tpcds_maintenance",
    "catalog_plugin": "catalog_plugin",
}

SECTIONS = {
    "tpch": "1. Scan: TPC-H in Spark SQL, lake tables vs the same Parquet files",
    "write": "2. Write: appending lineitem vs df.write.parquet",
    "planning": "3. Planning a scan of a table with many files and snapshots",
    "catalog_load": "4. Catalog load: attach and list a lake with thousands of tables",
    "small_commits": "5. Small commits: 10-row inserts, one writer, no Spark",
    "concurrency": "6. Concurrency: 8 writer processes on PostgreSQL",
    "dml": "7. DML: row-level changes and partition pruning",
    "change_feed": "8. Change feed: table_changes vs a full scan and DuckDB",
    "compaction": "9. Compaction: merge_adjacent_files of one-row files",
    "flush_under_load": "9b. Maintenance under load: flush_inlined_data beside 8 appending writers (PostgreSQL)",
    "add_files": "10. Adding existing Parquet files: add_data_files",
    "small_data": "11. Small data without Spark: pyarrow path vs DuckDB vs Spark path",
    "tpcds": "12. TPC-DS through lake.sql (both dialects) and register() vs the same Parquet files",
    "tpcds_maintenance": "12b. TPC-DS after 5% of store_sales deleted and a MERGE of returns",
    "catalog_plugin": "13. TPC-H through the Spark catalog plugin vs lake.read views",
}
SECTION_OF = {"row_changes": "dml", "partition_pruning": "dml"}  # where a failing case is reported; else its name


def write_report(rows: list[Row], mode: str, started: datetime, seconds: float, errors: dict[str, str],
                 outputs: dict[str, str], load: float | None, out: str) -> None:
    """results.md, results.json and the plots (`outputs`: script output kept in older results.json files)."""
    for case in dict.fromkeys([*SECTIONS, *(r.case for r in rows)]):
        plot(rows, case, SECTIONS.get(case, case), os.path.join(out, f"{case}.png"))
    plot_ratios(rows, os.path.join(out, "ratios.png"))
    text = markdown(rows, mode, started, seconds, SECTIONS, errors, load)
    if outputs:
        text += "\n## Output of scripts run as they are\n"
        for case, output in outputs.items():
            text += f"\n### {case}\n\n```\n{output}\n```\n"
    text += "\n## All ratios\n\n![ratios](ratios.png)\n"
    with open(os.path.join(out, "results.md"), "w") as fh:
        fh.write(text)
    with open(os.path.join(out, "results.json"), "w") as fh:
        json.dump({"mode": mode, "started": started.isoformat(), "seconds": seconds, "load_at_start": load,
                   "rows": [r.as_dict() for r in rows], "errors": errors, "outputs": outputs}, fh, indent=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="small sizes (default)")
    mode.add_argument("--full", action="store_true", help="the sizes of the issue: SF1, 100k files, 1000 commits")
    parser.add_argument("--only", default="", help=f"comma-separated cases: {', '.join(CASES)}")
    parser.add_argument("--out", default=os.path.join(HERE, "results"), help="folder for results.md and plots")
    parser.add_argument("--render", action="store_true", help="only redo results.md and plots from results.json")
    args = parser.parse_args()
    if args.render:
        with open(os.path.join(args.out, "results.json")) as fh:
            saved = json.load(fh)
        os.environ["BENCH_RESULTS_DIR"] = args.out
        write_report([Row(**r) for r in saved["rows"]], saved["mode"], datetime.fromisoformat(saved["started"]),
                     saved["seconds"], saved["errors"], saved.get("outputs", {}), saved.get("load_at_start"),
                     args.out)
        return
    quick = not args.full
    wanted = [c.strip() for c in args.only.split(",") if c.strip()] or list(CASES)
    unknown = [c for c in wanted if c not in CASES]
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(CASES)}")
    os.makedirs(args.out, exist_ok=True)
    os.environ["BENCH_RESULTS_DIR"] = args.out

    started, clock, load = datetime.now(timezone.utc), time.perf_counter(), os.getloadavg()[0]
    rows: list[Row] = []
    errors: dict[str, str] = {}
    for case in wanted:
        module_name = CASES[case]
        if not os.path.exists(os.path.join(HERE, f"{module_name}.py")):
            print(f"[{case}] {module_name}.py not present: skipped", flush=True)
            continue
        print(f"[{case}] running ({'quick' if quick else 'full'})...", flush=True)
        case_start = time.perf_counter()
        try:
            module = importlib.import_module(module_name)
            if not hasattr(module, "bench_rows"):
                raise RuntimeError(f"{module_name}.py has no bench_rows(quick)")
            got = module.bench_rows(quick)
        except Exception as exc:  # noqa: BLE001 - one failing case must not lose the others
            traceback.print_exc()
            errors[SECTION_OF.get(case, case)] = f"{case}: {type(exc).__name__}: {str(exc)[:300]}"
            continue
        rows += got
        for r in got:
            ratio = "" if r.ratio is None else f"  ratio {r.ratio:.2f}"
            print(f"  {r.case:14s} {r.metric:60s} ours {r.ours!s:.8}  baseline {r.baseline!s:.8}{ratio}", flush=True)
        print(f"[{case}] done in {time.perf_counter() - case_start:.0f}s", flush=True)

    seconds = time.perf_counter() - clock
    write_report(rows, "quick" if quick else "full", started, seconds, errors, {}, load, args.out)
    print(f"wrote {os.path.join(args.out, 'results.md')} ({len(rows)} rows, {len(errors)} failed cases, "
          f"{seconds / 60:.1f} min)")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
