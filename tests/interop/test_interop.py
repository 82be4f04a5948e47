"""Interchangeability with DuckDB's ducklake extension, both directions, on every catalog backend."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest
from pyspark.sql import functions as F

from spark_ducklake import DuckLake
from tests.support.compare import duckdb_rows, spark_rows
from tests.support.interop_data import COLUMNS, duckdb_snapshots, duckdb_writes_every_kind, spark_frame
from tests.support.reference import attach

pytestmark = pytest.mark.every_backend  # the interchangeability the product promises, on every catalog


def test_duckdb_reads_what_we_write(catalog, lake, spark, reference):
    frame = spark_frame(spark, 500)
    first = lake.write(frame, "t", mode="error")
    lake.write(frame.where("id < 100"), "t")
    few = frame.where("id >= 495").toArrow()
    lake.write(few, "t")  # 5 rows: inlined
    ours_now = spark_rows(lake.read("t").select(*COLUMNS.split(", ")))
    ours_then = spark_rows(lake.read("t", version=first).select(*COLUMNS.split(", ")))
    lake.close()

    attach(reference, catalog)
    reference.execute("SET TimeZone = 'UTC'")
    assert duckdb_rows(reference, f"SELECT {COLUMNS} FROM lake.t") == ours_now
    assert duckdb_rows(reference, f"SELECT {COLUMNS} FROM lake.t AT (VERSION => {first})") == ours_then
    assert len(ours_now) == 605 and len(ours_then) == 500


@pytest.mark.not_on_mysql("the reference cannot create nested columns in a MySQL catalog (inlined table fails)")
def test_we_read_what_duckdb_writes_at_every_snapshot(catalog, tmp_path, spark, reference):
    attach(reference, catalog, str(tmp_path / "data"))
    reference.execute("SET TimeZone = 'UTC'")
    duckdb_writes_every_kind(reference)
    expected = duckdb_snapshots(reference)
    filtered = duckdb_rows(reference, "SELECT id, s FROM lake.t WHERE s = 'reused'")
    reference.execute("DETACH lake")

    lake = DuckLake.attach(catalog)
    for snap, (cols, rows) in expected.items():
        frame = lake.read("t", version=snap)
        assert frame.columns == cols, snap
        assert spark_rows(frame) == rows, f"snapshot {snap}"
    # the renamed column's old name is reused: filters must still resolve by field id
    assert spark_rows(lake.read("t").where(F.col("s") == "reused").select("id", "s")) == filtered
    lake.close()


@pytest.mark.not_on_mysql("the reference fails a second INSERT into a table in a MySQL catalog (UPDATE with a join)")
def test_alternating_writers(catalog, lake, spark, reference):
    lake.write(pa.table({"k": pa.array([1, 2, 3], pa.int64()), "v": ["a", "b", "c"]}), "t", mode="error")
    lake.write(spark.range(10, 60).selectExpr("id AS k", "concat('s', id) AS v"), "t")
    lake.close()
    attach(reference, catalog)
    reference.execute("INSERT INTO lake.t SELECT i, 'duck' || i FROM range(100, 150) r(i)")
    reference.execute("DELETE FROM lake.t WHERE k % 10 = 0")
    reference.execute("INSERT INTO lake.t VALUES (999, 'tiny')")
    reference.execute("DETACH lake")
    lake = DuckLake.attach(catalog)
    lake.write(spark.range(200, 230).selectExpr("id AS k", "concat('s', id) AS v"), "t")
    ours = spark_rows(lake.read("t"))
    lake.close()
    attach(reference, catalog)
    assert duckdb_rows(reference, "SELECT k, v FROM lake.t") == ours
    assert len(ours) == 3 + 50 + 50 - 10 + 1 + 30


def test_mismatched_append_names_columns_and_commits_nothing(lake, tmp_path, spark):
    lake.write(spark.range(20).selectExpr("id", "cast(id AS string) AS s"), "t", mode="error")
    before = lake.snapshots()
    from spark_ducklake.errors import SchemaMismatchError

    with pytest.raises(SchemaMismatchError, match="bogus"):
        lake.write(spark.range(20).selectExpr("id", "id AS bogus"), "t")
    with pytest.raises(SchemaMismatchError, match="s \\(array"):
        lake.write(spark.range(20).selectExpr("id", "array(id) AS s"), "t")
    assert lake.snapshots() == before
    assert not list((tmp_path / "data" / "main" / "t").glob("_staging*"))


@pytest.mark.lake(data_inlining_row_limit=0)
def test_decimal_and_dates_exact(lake, lake_catalog, spark, reference):
    data = pa.table({"amount": pa.array([Decimal("1.10"), Decimal("-99999.99")], pa.decimal128(7, 2)),
                     "day": pa.array([dt.date(1970, 1, 1), dt.date(2999, 12, 31)])})
    lake.write(spark.createDataFrame(data), "t", mode="error")
    lake.close()
    attach(reference, lake_catalog)
    assert duckdb_rows(reference, "SELECT amount, day FROM lake.t") == sorted(
        [(Decimal("1.1"), dt.date(1970, 1, 1)), (Decimal("-99999.99"), dt.date(2999, 12, 31))], key=repr)


def test_overwrite_and_drop_schema(catalog, lake, spark, reference):
    lake.create_schema("s")
    lake.write(spark.range(50).selectExpr("id", "id * 2 AS twice"), "s.t", mode="error")
    lake.write(pa.table({"id": pa.array([7], pa.int64()), "twice": pa.array([14], pa.int64())}), "s.t")
    before = lake.current_snapshot()
    lake.write(spark.range(100, 130).selectExpr("id", "id * 2 AS twice"), "s.t", mode="overwrite")
    assert lake.snapshots()[-1].changes == {"tables_deleted_from": ["2"], "inlined_delete": ["2"],
                                            "tables_inserted_into": ["2"]}
    assert spark_rows(lake.read("s.t")) == [(i, 2 * i) for i in range(100, 130)]
    assert lake.read("s.t", version=before).count() == 51
    lake.close()
    attach(reference, catalog)
    assert duckdb_rows(reference, "SELECT id, twice FROM lake.s.t") == [(i, 2 * i) for i in range(100, 130)]
    assert reference.execute(f"SELECT count(*) FROM lake.s.t AT (VERSION => {before})").fetchone()[0] == 51
    reference.execute("DETACH lake")
    lake = DuckLake.attach(catalog)
    with pytest.raises(Exception, match="not empty"):
        lake.drop_schema("s")
    lake.drop_schema("s", cascade=True)
    assert lake.schemas() == ["main"] and lake.tables() == []
    lake.close()


@pytest.mark.not_on_mysql("the reference fails a second INSERT into a table in a MySQL catalog (UPDATE with a join)")
def test_promoted_types_and_partitioned_tables_from_duckdb(catalog, tmp_path, spark, reference):
    attach(reference, catalog, str(tmp_path / "data"), data_inlining_row_limit=0)
    reference.execute("SET TimeZone = 'UTC'")
    reference.execute("CREATE TABLE lake.t (i INTEGER, f FLOAT, ts TIMESTAMP, k VARCHAR)")
    reference.execute("INSERT INTO lake.t SELECT i::INT, i / 4, TIMESTAMP '2020-06-01' + to_days(i * 40), "
                      "'k' || (i % 3) FROM range(30) r(i)")
    reference.execute("ALTER TABLE lake.t ALTER COLUMN i TYPE BIGINT")
    reference.execute("ALTER TABLE lake.t ALTER COLUMN f TYPE DOUBLE")
    reference.execute("ALTER TABLE lake.t SET PARTITIONED BY (year(ts), k)")
    reference.execute("INSERT INTO lake.t SELECT i + 3000000000, i / 3, TIMESTAMP '2021-01-01' + to_days(i * 50), "
                      "'k' || (i % 2) FROM range(40) r(i)")
    expected = duckdb_rows(reference, "SELECT * FROM lake.t")
    partitioned = duckdb_rows(reference, "SELECT i FROM lake.t WHERE ts >= TIMESTAMP '2022-01-01'")
    reference.execute("DETACH lake")
    lake = DuckLake.attach(catalog)
    frame = lake.read("t")
    assert [f.dataType.simpleString() for f in frame.schema.fields] == ["bigint", "double", "timestamp_ntz",
                                                                         "string"]
    assert spark_rows(frame) == expected
    assert spark_rows(lake.read("t", where="ts >= '2022-01-01'").select("i")) == partitioned
    lake.close()
