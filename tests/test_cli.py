"""The spark-ducklake command: demo, info, tables, snapshots."""

from __future__ import annotations

import pyarrow as pa

from spark_ducklake.cli import main


def test_demo_runs_and_duckdb_agrees(tmp_path, spark, capsys):
    assert main(["demo", "--path", str(tmp_path / "demo")]) == 0
    out = capsys.readouterr().out
    assert "DuckDB and Spark agree" in out
    assert "250,003" in out


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
