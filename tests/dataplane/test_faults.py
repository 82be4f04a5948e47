"""A writer killed between writing files and committing leaves the catalog unchanged and no visible rows."""

from __future__ import annotations

import signal
import subprocess
import sys

import sqlalchemy as sa

from spark_ducklake import DuckLake

KILLED_WRITER = """
import os, signal, sys
import spark_ducklake.operations.context as context
from spark_ducklake import DuckLake

def die(*args, **kwargs):
    print("files staged, dying before the commit", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

context.commit = die
lake = DuckLake.attach(sys.argv[1])
lake.write(lake.spark.range(5000).selectExpr("id", "id * 2 AS x"), "t")
"""


def _dump(lake: DuckLake) -> dict[str, list[tuple]]:
    with lake.engine.connect() as conn:
        names = [n for n in sa.inspect(conn).get_table_names() if n.startswith("ducklake_")]
        return {n: sorted(map(tuple, conn.execute(sa.text(f'SELECT * FROM "{n}"'))), key=repr) for n in names}


def test_writer_killed_before_commit(lake, lake_catalog, tmp_path, spark):
    catalog = lake_catalog
    lake.write(spark.range(100).selectExpr("id", "id * 2 AS x"), "t", mode="error")
    before, rows_before = _dump(lake), lake.read("t").count()
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, catalog], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    assert "files staged" in proc.stdout
    assert _dump(lake) == before
    assert lake.read("t").count() == rows_before
    # The dead writer's files are on disk but no snapshot references them.
    on_disk = {p.name for p in (tmp_path / "data" / "main" / "t").glob("ducklake-*.parquet")}
    with lake.engine.connect() as conn:
        known = {p for (p,) in conn.execute(sa.text("SELECT path FROM ducklake_data_file"))}
    assert known < on_disk
