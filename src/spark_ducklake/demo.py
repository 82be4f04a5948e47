"""The README's main job: a lake built and changed by Spark, time travel, and DuckDB reading it too."""

from __future__ import annotations

import os
import shutil

import pyarrow as pa
from rich.console import Console
from rich.table import Table

from .duckdb_reference import attach, connect
from .lake import DuckLake
from .terminal import snapshots_table


def run_demo(path: str, console: Console) -> int:
    """Run the demo in `path` (recreated); returns a process exit code."""
    from pyspark.sql import functions as F

    path = os.path.abspath(path)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    catalog = f"sqlite:{path}/meta.sqlite"
    console.rule("[bold]spark-ducklake demo")
    console.print(f"lake: catalog [cyan]{catalog}[/cyan], data [cyan]{path}/data/[/cyan]")
    # DuckLake 1.0, so that DuckDB 1.5 from PyPI (ducklake 1.5.x reads 1.0 only) can read it at the end.
    lake = DuckLake.attach(catalog, f"{path}/data/", author="demo", ducklake_version="1.0")

    console.print("creating table [bold]sales[/bold] from a Spark DataFrame (200,000 rows) ...")
    with console.status("starting Spark ..."):
        spark = lake.spark
    sales = (
        spark.range(200_000)
        .withColumn("region", F.element_at(F.array(*[F.lit(r) for r in ("north", "south", "east", "west")]),
                                           (F.col("id") % 4 + 1).cast("int")))
        .withColumn("amount", F.round(F.col("id") % 1000 * 1.25, 2))
        .withColumn("sold_at", F.timestamp_seconds(F.lit(1_700_000_000) + F.col("id") * 60).cast("timestamp_ntz"))
    )
    with console.status("writing 200,000 rows, then 50,000 more, on Spark ..."):
        first = lake.write(sales, "sales", mode="error", commit_message="initial load")
        lake.write(sales.where("id < 50000").withColumn("id", F.col("id") + 200_000), "sales",
                   commit_message="second batch")
    console.print("a 3-row insert without Spark (inlined into the catalog) ...")
    few = pa.table({"id": [1_000_001, 1_000_002, 1_000_003], "region": ["north", "south", "east"],
                    "amount": [9.5, 19.5, 29.5]})
    lake.write(few, "sales", commit_message="a few late sales")
    console.print(snapshots_table(lake.snapshots()))

    with console.status("reading the lake now and at the first snapshot ..."):
        now = lake.read("sales")
        then = lake.read("sales", version=first)
        total_now, total_then = now.count(), then.count()
    console.print(f"rows now: [bold]{total_now:,}[/bold]; at snapshot {first} (time travel): "
                  f"[bold]{total_then:,}[/bold]")
    with console.status("revenue by region on Spark ..."):
        totals = now.groupBy("region").agg(F.round(F.sum("amount"), 2).alias("total")).collect()
    by_region = {r["region"]: r["total"] for r in totals}

    try:
        import duckdb  # noqa: F401 - only to know whether the DuckDB part can run

    except ImportError:
        console.print("revenue by region (Spark):", by_region)
        console.print("[yellow]DuckDB is not installed: skipping the DuckDB part[/yellow]")
        return 0
    con = connect()
    attach(con, catalog, alias="lake")
    duck_count = con.execute("SELECT count(*) FROM lake.sales").fetchone()[0]
    duck_regions = dict(con.execute(
        "SELECT region, round(sum(amount), 2) FROM lake.sales GROUP BY region").fetchall())
    duck_then = con.execute(f"SELECT count(*) FROM lake.sales AT (VERSION => {first})").fetchone()[0]
    con.close()
    agree = duck_count == total_now and duck_then == total_then and all(
        abs(float(duck_regions[k]) - float(v)) < 1e-6 for k, v in by_region.items())
    console.print(f"DuckDB's ducklake extension reads the same lake: {duck_count:,} rows now, "
                  f"{duck_then:,} at snapshot {first}")
    table = Table(title="revenue by region")
    for col in ("region", "Spark", "DuckDB"):
        table.add_column(col)
    for region in sorted(by_region):
        table.add_row(region, f"{by_region[region]:,.2f}", f"{float(duck_regions.get(region, 0)):,.2f}")
    console.print(table)
    console.print("[green]DuckDB and Spark agree.[/green]" if agree else "[red]DuckDB and Spark DISAGREE[/red]")
    lake.close()
    return 0 if agree else 1
