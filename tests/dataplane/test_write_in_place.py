"""The object-store write path (files written under their final names by pyarrow in Spark tasks, no staging
rename), exercised on local disk so it runs everywhere: the same files, catalog rows and reads as Spark's writer
gives, and DuckDB reads them. tests/deployment/test_s3.py runs it on a real S3 server."""

from __future__ import annotations

import pytest

from spark_ducklake.dataplane.arrow import file_layout
from spark_ducklake.dataplane.spark import compaction_units as units
from spark_ducklake.dataplane.spark import write
from tests.dataplane import test_write_path
from tests.operations import test_compaction, test_partitioning
from tests.support.compare import duckdb_rows, spark_rows
from tests.support.reference import attach


@pytest.fixture(autouse=True)
def in_place(monkeypatch):
    """Every data file write goes through write_in_place; Spark's own writer would fail the test."""
    def no_native(*_args, **_kwargs):
        raise AssertionError("Spark's staging writer used")

    monkeypatch.setattr(file_layout, "writes_in_place", lambda _path: True)
    for module in (write, units):
        monkeypatch.setattr(module, "configure_writer", no_native)


@pytest.mark.lake(data_inlining_row_limit=0)
def test_files_are_named_placed_and_described_like_the_reference(lake, tmp_path, spark):
    test_write_path.test_files_are_named_placed_and_described_like_the_reference(lake, tmp_path, spark)


def test_partitioned_writes_lay_out_files_like_duckdb(lake, lake_catalog, tmp_path, spark, reference):
    test_partitioning.test_partitioned_writes_lay_out_files_like_duckdb(lake_catalog, lake, tmp_path, spark,
                                                                        reference)


@pytest.mark.lake(data_inlining_row_limit=0)
def test_merge_keeps_every_snapshot_for_us_and_duckdb(lake, lake_catalog, spark):
    test_compaction.test_merge_keeps_every_snapshot_for_us_and_duckdb(lake, lake_catalog, spark)


def test_rewrite_drops_deleted_rows_and_keeps_row_ids(lake, lake_catalog, spark, reference):
    test_compaction.test_rewrite_drops_deleted_rows_and_keeps_row_ids(lake, lake_catalog, spark, reference)


NESTED = """SELECT id, CAST(id * 1.5 AS DECIMAL(9, 2)) AS dec, CAST(id % 100 AS TINYINT) AS tiny,
                   timestamp'2024-01-01 00:00:00' + make_interval(0, 0, 0, cast(id AS INT)) AS ts,
                   CASE WHEN id % 3 = 0 THEN NULL ELSE concat('s', id) END AS s,
                   array(id, id + 1) AS l, named_struct('a', id, 'b', concat('b', id)) AS st,
                   map(concat('k', id), id) AS m, CAST(CAST(id AS STRING) AS BINARY) AS bin
            FROM range(500)"""


@pytest.mark.lake(data_inlining_row_limit=0)
def test_every_type_reads_back_in_both_engines(lake, lake_catalog, spark, reference):
    catalog = lake_catalog
    df = spark.sql(NESTED)
    lake.create_table("t", df.schema)
    lake.write(df.repartition(3), "t")
    assert spark_rows(lake.read("t")) == spark_rows(df)
    assert len(lake.plan_scan("t").files) == 3
    ours = spark_rows(lake.read("t").drop("m", "bin"))
    lake.close()
    attach(reference, catalog)
    assert duckdb_rows(reference, "SELECT * EXCLUDE (m, bin) FROM lake.t") == ours
    assert reference.execute("SELECT sum(m['k7']), count(bin) FROM lake.t").fetchone() == (7, 500)


def test_the_executor_side_imports_without_the_catalog_layer():
    import subprocess
    import sys

    blocked = ("sqlalchemy", "mmh3", "duckdb", "sqlglot", "psycopg", "pymysql")
    code = (f"import sys\nfor m in {blocked!r}: sys.modules[m] = None\n"
            "from spark_ducklake.dataplane.spark import write_in_place\n"
            "from spark_ducklake.dataplane.arrow import task_writer\nprint(task_writer.new_uuid())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()[14] == "7"  # a version-7 UUID, as the reference names files
