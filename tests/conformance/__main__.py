"""`python -m tests.conformance [DIR ...] --catalog sqlite --ducklake-version 1.1-dev1 --json out.json --markdown
out.md`: run the reference's sqllogictest files through lake.sql and print per-directory counts (rich tables) and
the top failure reasons. `--summarize a.json b.json ... --markdown out.md` writes one page from earlier runs: per
catalog, the DuckLake versions' per-directory pass rates side by side, then each run's details (runs of the same
catalog and version are merged, a later run's file replacing an earlier run's)."""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import os
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from spark_ducklake.catalog.attach import DEFAULT_VERSION_ENV

from .execute import DEFAULT_DUCKLAKE_VERSION, DUCKLAKE_VERSIONS, FileRunner
from .parser import parse_text
from .report import merge_runs, side_by_side, to_json, to_markdown, v11_features
from .source import PINNED_COMMIT, test_files


def main(argv: list[str] | None = None) -> int:
    """Run the selected directories (all of test/sql by default); exit 0 (the counts are the result)."""
    args = _arguments(argv)
    if args.summarize:  # no run: one markdown page from earlier --json results
        pages = merge_runs([_with_features(_load(p), args.mirror) for p in args.summarize])
        text = side_by_side(pages) + "\n" + "\n".join(to_markdown(d, _title(d)) for d in pages)
        Path(args.markdown).write_text(_HEADER + text) if args.markdown else print(text)
        return 0
    root = test_files(args.commit, args.mirror) / "test" / "sql"
    paths = _select(root, args.dirs, args.match)
    if args.v11_features:
        paths = [p for p in paths if v11_features(str(p.relative_to(root.parent.parent)), p.read_text())]
    console = Console(width=150)
    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # "falling back to parsing as a Command" per CALL
    console.print(f"{len(paths)} files from duckdb/ducklake@{args.commit[:12]}, catalog {args.catalog}, "
                  f"DuckLake {args.ducklake_version}")
    # The runner names the version of every catalog it creates (FileRunner._version); the library's default-version
    # setting would also ask it of existing catalogs, which the reference's default does not.
    os.environ.pop(DEFAULT_VERSION_ENV, None)
    from spark_ducklake.dataplane.spark.session import get_or_create_spark

    os.environ.setdefault("SPARK_DUCKLAKE_MASTER", "local[2]")
    os.environ.setdefault("PYSPARK_SUBMIT_ARGS", "--conf spark.ui.showConsoleProgress=false pyspark-shell")
    spark = get_or_create_spark()
    runner = FileRunner(spark, args.catalog, slow=args.slow, ducklake_version=args.ducklake_version)
    results, started = [], time.monotonic()
    for index, path in enumerate(paths, 1):
        text, name = path.read_text(), str(path.relative_to(root.parent.parent))
        test = parse_text(text, name)
        result = runner.run(test)
        result.features = v11_features(name, text)
        results.append(result)
        good = sum(o.status in ("pass", "message") for o in result.outcomes)
        bad = sum(o.status == "fail" for o in result.outcomes)
        status = result.reason or f"{good} passed, {bad} failed"
        console.print(f"[{index}/{len(paths)}] {test.path} ({result.seconds:.1f}s): {status}", highlight=False)
        data = _save(args, results, time.monotonic() - started)  # after every file: a long run leaves its part
    data = _save(args, results, time.monotonic() - started)
    _print(console, data, args.top)
    if args.markdown:
        Path(args.markdown).write_text(_HEADER + to_markdown(data, _title(data)))
    return 0


def _title(data: dict) -> str:
    return f"Conformance: catalog {data['catalog']}, DuckLake {data.get('ducklake_version', '1.0')}"


def _with_features(data: dict, mirror: str | None) -> dict:
    """Each file's 1.1 features by the current rules, read from the test files (runs made before files carried
    them, or under older rules, are labelled alike)."""
    if not data["files"]:
        return data
    root = test_files(data.get("commit", PINNED_COMMIT), mirror)
    for entry in data["files"]:
        path = root / entry["path"]
        entry["features"] = v11_features(entry["path"], path.read_text()) if path.exists() else []
    return data


_HEADER = ("# Conformance: the reference's sqllogictest files through lake.sql\n\n"
           "Written by `python -m tests.conformance --summarize ...` (docs/sql.md, \"Conformance\"). "
           "`passed` includes expected errors raised with another message (`other message`).\n\n")


def _save(args, results: list, seconds: float) -> dict:
    data = to_json(results, {"commit": args.commit, "catalog": args.catalog, "ducklake_version": args.ducklake_version,
                             "seconds": round(seconds, 1), "directories_run": args.dirs or ["(all)"],
                             "selection": "v11 features" if args.v11_features else args.match or "all"})
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(data, default=str).encode()
        partial = Path(f"{args.json}.partial")  # renamed over the old file: a run stopped mid-write keeps its last
        partial.write_bytes(gzip.compress(text) if args.json.endswith(".gz") else text)
        os.replace(partial, args.json)
    return data


def _load(path: str) -> dict:
    """A run's `--json` results; `.json.gz` (how the runs kept in bench/results/conformance/ are stored) too."""
    raw = Path(path).read_bytes()
    return json.loads(gzip.decompress(raw) if path.endswith(".gz") else raw)


def _arguments(argv):
    parser = argparse.ArgumentParser(prog="python -m tests.conformance", description=__doc__)
    parser.add_argument("dirs", nargs="*", help="directories under test/sql (default: all)")
    parser.add_argument("--catalog", choices=("sqlite", "duckdb", "postgres"), default="sqlite")
    parser.add_argument("--ducklake-version", choices=DUCKLAKE_VERSIONS, default=DEFAULT_DUCKLAKE_VERSION,
                        help="version of the catalogs an ATTACH without DUCKLAKE_VERSION creates, and the target of "
                             "AUTOMATIC_MIGRATION (default: %(default)s, what the pinned test files expect)")
    parser.add_argument("--json", help="write the full results here")
    parser.add_argument("--markdown", help="write a summary here")
    parser.add_argument("--commit", default=PINNED_COMMIT, help="duckdb/ducklake commit (default: pinned)")
    parser.add_argument("--mirror", help="a local git dir of duckdb/ducklake (default: $DUCKLAKE_TESTS_MIRROR)")
    parser.add_argument("--match", help="only files whose path contains this")
    parser.add_argument("--slow", action="store_true", help="also run .test_slow files")
    parser.add_argument("--v11-features", action="store_true",
                        help="only files that test a DuckLake 1.1 feature (report.V11_FEATURES)")
    parser.add_argument("--top", type=int, default=20, help="failure reasons shown")
    parser.add_argument("--summarize", nargs="+", metavar="JSON",
                        help="write --markdown from these results only (runs of one catalog side by side)")
    return parser.parse_args(argv)


def _select(root: Path, dirs: list[str], match: str | None) -> list[Path]:
    bases = [root / d for d in dirs] if dirs else [root]
    missing = [str(b) for b in bases if not b.exists()]
    if missing:
        raise SystemExit(f"no such test directory: {', '.join(missing)}")
    paths = sorted({p for b in bases for p in ([b] if b.is_file() else b.rglob("*.test*"))})
    return [p for p in paths if match is None or match in str(p)]


def _print(console: Console, data: dict, top: int) -> None:
    table = Table(title=f"conformance, catalog {data['catalog']}, {data['seconds']:.0f} s")
    for column in ("directory", "files (out)", "statements", "skipped", "in scope", "passed", "other msg", "failed",
                   "%"):
        table.add_column(column, justify="left" if column == "directory" else "right")
    for name, row in data["directories"].items():
        table.add_row(name, f"{row['files']} ({row['files_out']})", str(row["statements"]),
                      str(sum(row["skipped"].values())), str(row["in_scope"]), str(row["passed"]),
                      str(row["message"]), str(row["failed"]), f"{row['percent']:.1f}",
                      style="bold" if name == "TOTAL" else None)
    console.print(table)
    skipped = Table(title="skipped, by reason")
    skipped.add_column("reason")
    skipped.add_column("statements", justify="right")
    for reason, n in data["directories"]["TOTAL"]["skipped"].items():
        skipped.add_row(reason, str(n))
    console.print(skipped)
    failures = Table(title=f"top {top} failure reasons")
    for column in ("count", "reason", "example"):
        failures.add_column(column)
    for row in data["failure_reasons"][:top]:
        failures.add_row(str(row["count"]), row["reason"], row["example"])
    console.print(failures)


if __name__ == "__main__":
    sys.exit(main())
