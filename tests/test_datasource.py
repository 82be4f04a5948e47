"""`spark.read.format("ducklake")`: batch reads at a snapshot through the Python Data Source API, with pruning."""

from __future__ import annotations

import datetime

import pytest
from pyspark.sql.datasource import GreaterThanOrEqual

from spark_ducklake import DuckLake
from spark_ducklake.operations.datasource import DuckLakeBatchSource, PushdownBatchReader
from spark_ducklake.operations.streaming.sink import attach_string

pytestmark = pytest.mark.not_on_mysql("the data source is not run through MySQL catalogs yet (docs/sql.md)")


@pytest.fixture
def lake(catalog, tmp_path, spark):
    lake = DuckLake.attach(catalog, str(tmp_path / "data"), spark=spark, data_inlining_row_limit=5)
    yield lake
    lake.close()


def test_format_ducklake_reads_snapshots(lake, spark):
    lake.sql("CREATE TABLE t (id BIGINT, s STRING)")
    lake.sql("INSERT INTO t SELECT id, CAST(id AS STRING) AS s FROM range(100)")
    first = lake.current_snapshot()
    lake.sql("INSERT INTO t SELECT id, 'x' AS s FROM range(100, 200)")
    lake.sql("DELETE FROM t WHERE id < 10; ALTER TABLE t RENAME COLUMN s TO label")
    lake.sql("INSERT INTO t VALUES (500, 'inlined')")  # below the inlining limit: catalog rows
    lake.register(spark)
    now = spark.read.format("ducklake").option("table", "main.t").load()
    assert now.columns == ["id", "label"]
    expected = sorted(tuple(r) for r in lake.read("t").collect())
    assert sorted(tuple(r) for r in now.collect()) == expected and len(expected) == 191
    old = spark.read.format("ducklake").option("table", "t").option("versionAsOf", first).load()
    assert old.columns == ["id", "s"]
    assert sorted(r.id for r in old.collect()) == list(range(100))
    assert sorted(r.id for r in now.where("label = 'inlined' OR id < 12").collect()) == [10, 11, 500]


def test_pushed_filters_prune_files(lake, spark):
    lake.sql("CREATE TABLE t (id BIGINT)")
    for start in (0, 100, 200):
        lake.sql(f"INSERT INTO t SELECT id + {start} AS id FROM range(100)")
    source = DuckLakeBatchSource({"catalog": attach_string(lake), "data_path": lake.data_path, "table": "t",
                                  "filterPushdown": "true"})
    reader = source.reader(source.schema())
    assert isinstance(reader, PushdownBatchReader)
    every = len(reader.partitions())
    pushed = GreaterThanOrEqual(("id",), 250)
    assert list(reader.pushFilters([pushed])) == [pushed]  # Spark still applies it
    kept = reader.partitions()
    assert every >= 3 and 0 < len(kept) < every
    rows = [r for p in kept for batch in reader.read(p) for r in batch.to_pylist()]
    assert {r["id"] for r in rows if r["id"] >= 250} == set(range(250, 300))
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    try:
        lake.register(spark)  # records the conf: the source's readers then push filters
        frame = spark.read.format("ducklake").option("table", "t").load().where("id >= 250 AND id % 7 = 0")
        assert sorted(r.id for r in frame.collect()) == [i for i in range(250, 300) if i % 7 == 0]
    finally:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "false")
        spark.dataSource.register(DuckLakeBatchSource)


def test_format_ducklake_writes_append_and_overwrite(lake, spark, reference):
    from tests.support.reference import attach

    lake.sql("CREATE TABLE t (id BIGINT, s STRING, d DATE)")
    lake.register(spark)
    frame = spark.range(20).selectExpr("CAST(id AS STRING) AS S", "id", "DATE '2024-01-01' + CAST(id AS INT) AS d")
    frame.repartition(2).write.format("ducklake").mode("append").option("table", "t").save()
    appended = lake.snapshots()[-1]
    assert appended.changes == {"tables_inserted_into": ["1"]}
    frame.where("id >= 15").write.format("ducklake").mode("overwrite").option("table", "t").save()
    assert sorted(r.id for r in lake.read("t").collect()) == [15, 16, 17, 18, 19]
    assert sorted(r.id for r in lake.read("t", version=appended.snapshot_id).collect()) == list(range(20))
    assert lake.plan_scan("t", where="id < 15").files == []  # the written files carry min/max stats
    with pytest.raises(Exception, match="needs the table's columns|table's columns"):
        spark.range(3).write.format("ducklake").mode("append").option("table", "t").save()
    catalog = lake.location.attach_string()
    if catalog.startswith("duckdb:"):
        lake.close()  # one process at a time on a DuckDB catalog file
    attach(reference, catalog, lake.data_path)
    assert reference.execute("SELECT count(*), min(id), max(d), max(s) FROM lake.t").fetchone() == (
        5, 15, datetime.date(2024, 1, 20), "19")
