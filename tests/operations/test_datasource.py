"""`spark.read.format("ducklake")`: batch reads at a snapshot through the Python Data Source API, with pruning."""

from __future__ import annotations

import datetime

import pytest
from pyspark.sql.datasource import GreaterThanOrEqual

from spark_ducklake import DuckLake
from spark_ducklake.operations.datasource import DuckLakeBatchSource, PushdownBatchReader
from spark_ducklake.operations.streaming.catalog_ref import attach_string

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


@pytest.mark.every_backend
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


def _layout(lake, table):
    """(directory under the table, partition values, rows) of every live file, as the catalog holds them."""
    import sqlalchemy as sa

    from spark_ducklake.catalog.database.spec_tables import T

    info = lake.table_info(table)
    df, pv = T["ducklake_data_file"], T["ducklake_file_partition_value"]
    with lake.engine.connect() as conn:
        files = conn.execute(sa.select(df.c.data_file_id, df.c.path, df.c.record_count).where(
            df.c.table_id == info.table_id, df.c.end_snapshot.is_(None))).all()
        values = conn.execute(sa.select(pv.c.data_file_id, pv.c.partition_key_index, pv.c.partition_value).where(
            pv.c.table_id == info.table_id)).all()
    by_file: dict = {}
    for file_id, index, value in values:
        by_file.setdefault(file_id, {})[index] = value
    return sorted((path.rsplit("/", 1)[0] if "/" in path else "", tuple(sorted(by_file.get(fid, {}).items())), n)
                  for fid, path, n in files)


def test_format_ducklake_writes_partitioned_and_inlined_as_lake_write(lake, spark, reference):
    from tests.support.reference import attach

    columns = "id BIGINT, region STRING, day DATE, ts TIMESTAMP, amount DOUBLE, flag BOOLEAN, price DECIMAL(6,2)"
    layouts = {"a": "region, year(day), bucket(4, id)", "b": "flag, amount, hour(ts), price, month(ts)"}
    for name, keys in layouts.items():
        for target in (name, f"{name}_ref"):
            lake.sql(f"CREATE TABLE {target} ({columns}); ALTER TABLE {target} SET PARTITIONED BY ({keys})")
    frame = spark.range(60).selectExpr(
        "id", "CASE WHEN id % 3 = 0 THEN 'eu' WHEN id % 3 = 1 THEN 'us/west' ELSE NULL END AS region",
        "DATE '2023-12-30' + CAST(id % 4 AS INT) AS day",
        "TIMESTAMP '2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, CAST(id % 3 AS INT), 0, id % 2 * 0.5) AS ts",
        "CASE WHEN id % 4 = 0 THEN 1.5 WHEN id % 4 = 1 THEN 1e10 WHEN id % 4 = 2 THEN -0.0001 END AS amount",
        "id % 2 = 0 AS flag", "CAST(id % 5 / 4 AS DECIMAL(6,2)) AS price").repartition(3)
    lake.register(spark)
    for name in layouts:
        frame.write.format("ducklake").mode("append").option("table", name).save()
        lake.write(frame, f"{name}_ref")
        assert lake.snapshots()[-2].changes == {"tables_inserted_into": [str(lake.table_info(name).table_id)]}
        ours, theirs = _layout(lake, name), _layout(lake, f"{name}_ref")
        assert [(values, n) for _d, values, n in ours] == [(values, n) for _d, values, n in theirs]
        assert len(ours) > 6 and sum(n for *_x, n in ours) == 60
        assert sorted(d for d, _v, _n in ours) == sorted(d for d, _v, _n in theirs)
        expected = sorted(tuple(r) for r in lake.read(f"{name}_ref").collect())
        assert sorted(tuple(r) for r in lake.read(name).collect()) == expected
    pruned = lake.plan_scan("a", where="region = 'eu'")
    assert 0 < len(pruned.files) < pruned.total_files  # partition values prune as lake.write's do

    lake.sql("CREATE TABLE small (id BIGINT, s STRING)")  # the lake fixture inlines up to 5 rows
    three = spark.range(3).selectExpr("id", "CAST(id AS STRING) AS s").repartition(2)
    three.write.format("ducklake").mode("append").option("table", "small").save()
    plan = lake.plan_scan("small")
    assert plan.files == [] and plan.inlined.num_rows == 3
    assert lake.snapshots()[-1].changes == {"inlined_insert": [str(plan.table.table_id)]}
    eight = spark.range(10, 18).selectExpr("id", "'x' AS s").repartition(2)  # small tasks, too many together
    eight.write.format("ducklake").mode("append").option("table", "small").save()
    assert len(lake.plan_scan("small").files) == 1
    assert sorted(r.id for r in lake.read("small").collect()) == [0, 1, 2, *range(10, 18)]
    catalog = lake.location.attach_string()
    if catalog.startswith("duckdb:"):
        lake.close()  # one process at a time on a DuckDB catalog file
    attach(reference, catalog, lake.data_path)
    query = "SELECT count(*), sum(id), count(region), count(amount), min(amount), max(ts), sum(price) FROM lake.{}"
    for name in layouts:
        ours, theirs = (reference.execute(query.format(t)).fetchall() for t in (name, f"{name}_ref"))
        assert ours == theirs
    assert reference.execute("SELECT count(*), sum(id) FROM lake.small").fetchall() == [(11, 111)]
    assert reference.execute("SELECT count(*) FROM lake.a WHERE region = 'us/west'").fetchall() == [(20,)]
