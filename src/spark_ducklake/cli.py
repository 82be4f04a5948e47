"""The `spark-ducklake` command: demo, info, tables, snapshots."""

from __future__ import annotations

import argparse
import sys

from rich.console import Console
from rich.table import Table

from .catalog.database import bootstrap
from .demo import run_demo
from .errors import DuckLakeError
from .lake import DuckLake
from .terminal import snapshots_table

console = Console()


def _lake(args):
    return DuckLake.attach(args.catalog, create_if_missing=False, read_only=True)


def cmd_info(args) -> int:
    """Print what the lake is and where it lives."""
    lake = _lake(args)
    with lake.engine.connect() as conn:
        meta = bootstrap.read_global_metadata(conn)
    snaps = lake.snapshots()
    grid = Table(show_header=False, box=None)
    for key, value in [
        ("catalog", lake.location.describe()),
        ("data path", lake.data_path),
        ("spec version", meta.get("version")),
        ("created by", meta.get("created_by")),
        ("snapshots", f"{len(snaps)} (current {snaps[-1].snapshot_id})"),
        ("schemas", ", ".join(lake.schemas())),
        ("tables", str(len(lake.tables()))),
    ]:
        grid.add_row(f"[bold]{key}[/bold]", str(value))
    console.print(grid)
    lake.close()
    return 0


def cmd_tables(args) -> int:
    """List tables with their columns."""
    lake = _lake(args)
    out = Table(title="tables")
    for col in ("table", "id", "columns"):
        out.add_column(col)
    for t in lake.tables(args.schema):
        out.add_row(t.qualified_name, str(t.table_id), ", ".join(f"{c.name} {_type(c)}" for c in t.columns))
    console.print(out)
    lake.close()
    return 0


def _type(col) -> str:
    if col.type == "list":
        return f"{_type(col.children[0])}[]"
    if col.type == "struct":
        return "struct(" + ", ".join(f"{c.name} {_type(c)}" for c in col.children) + ")"
    if col.type == "map":
        return f"map({_type(col.children[0])}, {_type(col.children[1])})"
    return col.type


def cmd_snapshots(args) -> int:
    """List snapshots."""
    lake = _lake(args)
    console.print(snapshots_table(lake.snapshots()))
    lake.close()
    return 0


def cmd_demo(args) -> int:
    """Build a lake with Spark, change it, time-travel, and read it with DuckDB."""
    return run_demo(args.path, console)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `spark-ducklake` command."""
    parser = argparse.ArgumentParser(prog="spark-ducklake", description="DuckLake lakes on Apache Spark")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="build a demo lake (SQLite catalog + local folder) and show it off")
    demo.add_argument("--path", default="demo-lake", help="folder for the demo lake (recreated)")
    demo.set_defaults(func=cmd_demo)
    for name, func, text in [("info", cmd_info, "describe a lake"), ("tables", cmd_tables, "list tables"),
                             ("snapshots", cmd_snapshots, "list snapshots")]:
        p = sub.add_parser(name, help=text)
        p.add_argument("catalog", help="catalog string, e.g. sqlite:meta.sqlite or postgres:dbname=x")
        if name == "tables":
            p.add_argument("--schema", default=None)
        p.set_defaults(func=func)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except DuckLakeError as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
