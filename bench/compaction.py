"""Compacting a table of 10,000 one-row files: our merge_adjacent_files vs DuckDB's on an identical lake.

    .venv/bin/python bench/compaction.py [--files 10000] [--quick]   # --quick (also run.py --quick): 200 files

DuckDB's extension writes the files (one INSERT of one row per file, 100 per transaction) into a SQLite-catalog
lake, which is then copied (catalog and data) so both engines compact the same lake. Timed:
`lake.merge_adjacent_files()` (catalog planning, one Spark job reading every file and writing the merged one, the
commit; Spark already started), and `CALL ducklake_merge_adjacent_files('lake')` in DuckDB. Prints both times,
the ratio and the files left; if DuckDB fails (its issue #536 and relatives), that is printed instead.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import tempfile
import time

from common import timed

QUICK_FILES = 200


def build(root: str, files: int) -> str:
    """A lake of `files` one-row files written by DuckDB; returns its catalog string."""
    from spark_ducklake.duckdb_reference import attach, connect

    catalog = f"sqlite:{root}/meta.sqlite"
    os.makedirs(root)
    con = connect()
    attach(con, catalog, f"{root}/data/", data_inlining_row_limit=0)
    con.execute("CREATE TABLE lake.t (id BIGINT, s VARCHAR, v DOUBLE)")
    for start in range(0, files, 100):
        con.execute("BEGIN")
        for i in range(start, min(files, start + 100)):
            con.execute(f"INSERT INTO lake.t VALUES ({i}, 'name-{i}', {i * 0.5})")
        con.execute("COMMIT")
    con.close()
    return catalog


def copy_lake(source: str, target: str) -> str:
    """A copy of the lake at `target` (data path rewritten in the copied catalog); returns its catalog string."""
    shutil.copytree(source, target)
    con = sqlite3.connect(f"{target}/meta.sqlite")
    con.execute("UPDATE ducklake_metadata SET value = replace(value, ?, ?) WHERE key = 'data_path'",
                (source, target))
    con.commit()
    con.close()
    return f"sqlite:{target}/meta.sqlite"


def live_files(catalog: str) -> int:
    """Data files visible now."""
    con = sqlite3.connect(catalog.removeprefix("sqlite:"))
    try:
        return con.execute("SELECT count(*) FROM ducklake_data_file WHERE end_snapshot IS NULL").fetchone()[0]
    finally:
        con.close()


def measure(files: int) -> dict:
    """Times and files left for both engines on identical lakes."""
    from spark_ducklake import DuckLake
    from spark_ducklake.duckdb_reference import attach, connect

    root = tempfile.mkdtemp(prefix="bench-compaction-")
    try:
        started = time.perf_counter()
        ours_catalog = build(f"{root}/ours", files)
        built = time.perf_counter() - started
        theirs_catalog = copy_lake(f"{root}/ours", f"{root}/theirs")
        lake = DuckLake.attach(ours_catalog)
        lake.spark.range(1).collect()  # Spark started before the clock runs
        ours = timed(lake.merge_adjacent_files)
        rows = lake.read("t").count()
        lake.close()
        con = connect()
        attach(con, theirs_catalog)
        error = None
        try:
            theirs = timed(con.execute, "CALL ducklake_merge_adjacent_files('lake')")
            their_rows = con.execute("SELECT count(*) FROM lake.t").fetchone()[0]
        except Exception as exc:  # noqa: BLE001 - the reference failing is a result to report
            theirs, their_rows, error = None, None, f"{type(exc).__name__}: {exc}".splitlines()[0]
        con.close()
        return {"files": files, "built": built, "ours": ours, "theirs": theirs, "error": error, "rows": rows,
                "their_rows": their_rows, "ours_left": live_files(ours_catalog),
                "theirs_left": live_files(theirs_catalog)}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def report(result: dict) -> list[str]:
    """Lines describing a measurement."""
    lines = [f"{result['files']:,} one-row files (written by DuckDB in {result['built']:.1f}s)",
             f"spark-ducklake merge_adjacent_files  {result['ours']:7.2f}s  -> {result['ours_left']} file(s), "
             f"{result['rows']:,} rows"]
    if result["error"]:
        lines.append(f"duckdb-ducklake merge_adjacent_files failed: {result['error']}")
    else:
        lines.append(f"duckdb-ducklake merge_adjacent_files {result['theirs']:7.2f}s  -> {result['theirs_left']} "
                     f"file(s), {result['their_rows']:,} rows")
        lines.append(f"ratio spark-ducklake / duckdb-ducklake: {result['ours'] / result['theirs']:.2f}")
    return lines


def bench_rows(quick: bool) -> list:
    """The compaction case for the runner: 200 files quick, 10,000 full."""
    from report import Row

    result = measure(QUICK_FILES if quick else 10_000)
    note = f"{result['files']:,} one-row files -> ours {result['ours_left']}, DuckDB {result['theirs_left']}"
    if result["error"]:
        note += f"; DuckDB failed: {result['error']}"
    return [Row("compaction", f"merge_adjacent_files, {result['files']:,} one-row files", result["ours"],
                result["theirs"], baseline_name="duckdb-ducklake merge_adjacent_files", notes=note)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_FILES} files")
    args = parser.parse_args()
    print("\n".join(report(measure(QUICK_FILES if args.quick else args.files))))


if __name__ == "__main__":
    main()
