"""Partitioned tables: the reference's layout and catalog rows, Iceberg's bucket hash, pruning by partition."""

from __future__ import annotations

import glob

import pyarrow.parquet as pq
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.catalog.operations.partitioning import bucket_of
from spark_ducklake.errors import NotFoundError, SchemaMismatchError
from tests.support.compare import duckdb_rows, spark_rows
from tests.support.reference import attach

ROWS = """SELECT id, concat('s', id) AS s,
                 timestamp_ntz'2023-12-31 23:00:00' + make_interval(0, 0, 0, 0, cast(id AS INT), 0, 0) AS ts,
                 date_add(date'2024-01-01', cast(id AS INT)) AS d,
                 CASE WHEN id % 2 = 0 THEN 'eu' ELSE 'us/x' END AS r
          FROM range(40)"""
SPECS = (["year(ts)", "month(ts)", "bucket(4, id)", "r"], ["bucket(3, s)", "day(d)", "hour(ts)"])


def _directories(root: str, table: str) -> set[str]:
    return {p.split(f"/main/{table}/")[1].rsplit("/", 1)[0]
            for p in glob.glob(f"{root}/main/{table}/**/*.parquet", recursive=True) if "=" in p}


@pytest.mark.not_on_mysql("the reference fails a second INSERT into a table in a MySQL catalog (UPDATE with a join)")
def test_partitioned_writes_lay_out_files_like_duckdb(catalog, lake, tmp_path, spark, reference):
    data = str(tmp_path / "data")
    df = spark.sql(ROWS)
    lake.create_table("t", df.schema)
    for keys in SPECS:
        lake.set_partitioning("t", keys)
        lake.write(df, "t")
    lake.reset_partitioning("t")
    lake.write(df, "t")
    files = lake.plan_scan("t").files
    assert len({f.partition_id for f in files}) == 3  # two specs and the unpartitioned files (None)
    ours = {v: spark_rows(lake.read("t", version=v)) for v in range(1, lake.current_snapshot() + 1)}
    lake.close()
    attach(reference, catalog)
    for version, rows in ours.items():  # every snapshot, across the partition changes
        assert duckdb_rows(reference, f"SELECT * FROM lake.t AT (VERSION => {version})") == rows, version
    assert len(ours[max(ours)]) == 120
    # DuckDB writing the same rows under the same specs puts them in exactly the same partitions.
    reference.execute("CREATE TABLE lake.u AS SELECT * FROM lake.t LIMIT 0")
    for keys in SPECS:
        reference.execute(f"ALTER TABLE lake.u SET PARTITIONED BY ({', '.join(keys)})")
        reference.execute("INSERT INTO lake.u SELECT * FROM lake.t AT (VERSION => 4)")
    created = reference.execute("SELECT max(snapshot_id) FROM lake.snapshots()").fetchone()[0] - 4
    theirs_rows = {v: duckdb_rows(reference, f"SELECT * FROM lake.u AT (VERSION => {v})")
                   for v in range(created, created + 5)}
    reference.execute("DETACH lake")
    lake = DuckLake.attach(catalog)  # we read DuckDB's bucket-partitioned table at each of its snapshots
    assert {v: spark_rows(lake.read("u", version=v)) for v in theirs_rows} == theirs_rows
    assert len(theirs_rows[created + 4]) == 80
    lake.close()
    ours_dirs, theirs_dirs = _directories(data, "t"), _directories(data, "u")
    assert len(ours_dirs) == 49 and ours_dirs == theirs_dirs
    assert "year=2024/month=1/bucket=3/r=us%2Fx" in ours_dirs
    attach(reference, catalog)
    rows = reference.execute("""
        SELECT pc.partition_key_index, pc.transform, count(DISTINCT fpv.partition_value)
        FROM __ducklake_metadata_lake.ducklake_partition_column pc
        JOIN __ducklake_metadata_lake.ducklake_file_partition_value fpv USING (table_id, partition_key_index)
        JOIN __ducklake_metadata_lake.ducklake_data_file df USING (data_file_id)
        WHERE df.partition_id = pc.partition_id AND df.table_id = 1 GROUP BY ALL ORDER BY ALL""").fetchall()
    assert rows == [(0, "bucket(3)", 3), (0, "year", 2), (1, "day", 31), (1, "month", 2), (2, "bucket(4)", 4),
                    (2, "hour", 24), (3, "identity", 2)]


def test_bucket_hash_is_icebergs():
    # Values from Iceberg's spec (appendix B): murmur3_x86_32 of the documented byte encodings.
    assert bucket_of(34, "int64", 2**31 - 1) == 2017239379
    assert bucket_of("iceberg", "varchar", 2**31 - 1) == 1210000089
    import datetime as dt

    assert bucket_of(dt.date(2017, 11, 16), "date", 2**31 - 1) == (-653330422 & 0x7FFFFFFF) % (2**31 - 1)
    import numpy as np

    from spark_ducklake.catalog.operations.partitioning import bucket_int64

    values = [0, 1, -1, 34, 2**62, -(2**63), 2**63 - 1, 123456789]
    assert list(bucket_int64(np.array(values, dtype=np.int64), 97)) == [bucket_of(v, "int64", 97) for v in values]


def test_filters_prune_files_by_partition(lake, spark):
    df = spark.sql("SELECT id, timestamp_ntz'2020-01-01 00:00:00' + make_interval(cast(id % 5 AS INT)) AS ts "
                   "FROM range(2000)")
    lake.create_table("e", df.schema)
    lake.set_partitioning("e", ["bucket(8, id)", "year(ts)"])
    lake.write(df.repartition(1), "e")
    everything = lake.plan_scan("e")
    assert len(everything.files) == 40  # 8 buckets x 5 years, one task
    one = lake.plan_scan("e", where="id = 1234")
    assert len(one.files) == 5 and {f.partition_id for f in one.files} == {everything.files[0].partition_id}
    read = lake.read("e", where="id = 1234")
    assert [r.id for r in read.collect()] == [1234]
    # The files Spark reads are the pruned ones (inputFiles: the scan's files, also over Spark Connect).
    assert sorted(p.split("/")[-1] for p in read.inputFiles()) == sorted(f.path.split("/")[-1] for f in one.files)
    assert len(lake.plan_scan("e", where="id IN (1, 2, 3)").files) <= 15
    assert len(lake.plan_scan("e", where="ts >= '2024-01-01'").files) == 8  # year 2024 by min/max stats
    assert lake.read("e", where="ts >= '2024-01-01'").count() == 400


def test_bad_partition_keys_change_nothing(lake):
    lake.create_table("t", "id BIGINT, x DOUBLE, d DATE, s STRUCT<a: INT>")
    before = lake.snapshots()
    for keys, error, text in [
        (["nope"], NotFoundError, "no column 'nope'"),
        (["year(id)"], SchemaMismatchError, "needs a date or timestamp"),
        (["hour(d)"], SchemaMismatchError, "hour\\(\\) needs a timestamp"),
        (["bucket(4, x)"], SchemaMismatchError, "does not hash float64"),
        (["bucket(0, id)"], SchemaMismatchError, "positive bucket count"),
        (["s"], SchemaMismatchError, "is a struct"),
        (["upper(id)"], SchemaMismatchError, "unknown partition transform"),
    ]:
        with pytest.raises(error, match=text):
            lake.set_partitioning("t", keys)
    assert lake.snapshots() == before


def test_every_write_path_follows_the_partitioning_and_sort_order(lake, lake_catalog, spark, reference):
    """Files written by update, merge, a transaction and a schema-merging write are laid out like plain writes."""
    lake.set_option("data_inlining_row_limit", 0)  # every write below makes Parquet files
    df = spark.sql("SELECT id, CAST((id * 7919) % 1000 AS INT) AS k, CASE WHEN id % 2 = 0 THEN 'eu' ELSE 'us' END "
                   "AS r FROM range(200)").repartition(2)
    lake.create_table("t", df.schema)
    lake.set_partitioning("t", ["r"])
    lake.set_sorted_by("t", ["k DESC"])
    lake.write(df, "t")
    lake.table("t").update("id < 50", {"k": "k + 1"})
    source = spark.sql("SELECT id, 5 AS k, 'us' AS r FROM range(190, 230)")
    lake.table("t").merge(source, "target.id = source.id").when_matched_update_all() \
        .when_not_matched_insert_all().execute()
    with lake.transaction() as tx:
        tx.write(df.selectExpr("id + 1000 AS id", "k", "r"), "t")
    lake.write(df.selectExpr("id + 2000 AS id", "k", "r", "id AS extra"), "t", merge_schema=True)
    files = lake.plan_scan("t").files
    assert len(files) >= 10
    for f in files:  # every file of every path: in a partition folder, rows of that partition, sorted by k
        assert f.partition_id is not None, f.path
        region = f.path.split("/r=")[1].split("/")[0]
        got = pq.read_table(f.path, columns=["k", "r"])
        assert set(got.column("r").to_pylist()) == {region}, f.path
        keys = got.column("k").to_pylist()
        assert keys == sorted(keys, reverse=True), f.path
    expected = spark_rows(lake.read("t"))
    assert len(expected) == 200 + 30 + 200 + 200
    lake.close()
    attach(reference, lake_catalog)
    assert duckdb_rows(reference, "SELECT * FROM lake.t") == expected
