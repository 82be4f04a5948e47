"""The spark-ducklake command: demo, info, tables, snapshots."""

from __future__ import annotations

import os
import subprocess
import sys

import pyarrow as pa
import pytest

from spark_ducklake.cli import main


@pytest.mark.spark
def test_demo_runs_quietly_and_duckdb_agrees(tmp_path):
    """The demo as a user runs it, in a process of its own (so the Spark session is one we start): DuckDB agrees,
    and Spark's start-up warnings and stage progress bars stay out of the output."""
    demo = subprocess.run([sys.executable, "-m", "spark_ducklake.cli", "demo", "--path", str(tmp_path / "demo")],
                          capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "100"})
    out = demo.stdout + demo.stderr
    assert demo.returncode == 0, out
    assert "DuckDB and Spark agree" in out and "250,003" in out
    for noise in (" WARN ", "[Stage ", "log4j profile", "setLogLevel"):
        assert noise not in out, out


def test_info_tables_snapshots(lake, lake_catalog, tmp_path, capsys):
    catalog = lake_catalog
    lake.write(pa.table({"id": pa.array([1], pa.int64()), "name": ["x"]}), "people", mode="error",
               commit_message="first person")
    lake.close()
    assert main(["info", catalog]) == 0
    assert main(["tables", catalog]) == 0
    assert main(["snapshots", catalog]) == 0
    out = capsys.readouterr().out
    assert "1.0" in out and str(tmp_path / "data") in out
    assert "main.people" in out and "id int64" in out
    assert "first person" in out


def test_cli_errors_are_readable(tmp_path, capsys):
    assert main(["info", str(tmp_path / "missing.sqlite")]) == 2
    assert "no DuckLake catalog" in capsys.readouterr().out
