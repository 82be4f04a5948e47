"""Partitioned tables: the reference's layout and catalog rows, Iceberg's bucket hash, pruning by partition."""

from __future__ import annotations

import glob

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.catalog.changes.partitioning import bucket_of
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

    from spark_ducklake.catalog.changes.partitioning import bucket_int64

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
        (["nope"], NotFoundError, 'column "nope" does not exist'),
        (["year(id)"], SchemaMismatchError, "needs a date or timestamp"),
        (["hour(d)"], SchemaMismatchError, "hour\\(\\) needs a timestamp"),
        (["bucket(4, x)"], SchemaMismatchError, "does not hash float64"),
        (["bucket(0, id)"], SchemaMismatchError, "Bucket count must be positive"),
        (["bucket(-1, id)"], SchemaMismatchError, "Bucket count must be positive"),
        (["bucket(2147483648, id)"], SchemaMismatchError, "Bucket count cannot exceed"),
        (["bucket('abc', id)"], SchemaMismatchError, "Bucket count must be an integer"),
        (["bucket(x, id)"], SchemaMismatchError, "Bucket count must be a constant integer"),
        (["bucket(id)"], SchemaMismatchError, "Expected bucket\\(bucket_count, column\\)"),
        (["bucket(4, 'literal')"], SchemaMismatchError, "Expected bucket\\(bucket_count, column\\)"),
        (["bucket(4, nope)"], NotFoundError, 'column "nope" does not exist'),
        (["s"], SchemaMismatchError, "is a struct"),
        (["upper(id)"], SchemaMismatchError, "Unsupported partition function upper"),
        (["epoch_day(d)"], SchemaMismatchError, "DuckLake 1.0 does not support the epoch_day partition transform"),
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


def test_setting_the_same_partitioning_again_changes_nothing(lake):
    """As the reference: SET PARTITIONED BY with the keys the table has (or RESET of an unpartitioned table) adds
    no partition id and no schema version; another key order is a new partitioning."""
    import sqlalchemy as sa

    from spark_ducklake.catalog.database.spec_tables import T

    def counts():
        with lake.context.connect() as conn:
            return (conn.execute(sa.select(sa.func.count()).select_from(T["ducklake_partition_info"])).scalar(),
                    conn.execute(sa.select(sa.func.max(T["ducklake_snapshot"].c.schema_version))).scalar())

    lake.create_table("t", "k INT, v STRING")
    lake.set_partitioning("t", ["k"])
    first = counts()
    lake.set_partitioning("t", ["k"])
    assert counts() == first
    lake.set_partitioning("t", ["k", "v"])
    lake.set_partitioning("t", ["v", "k"])
    assert counts()[0] == first[0] + 2
    lake.reset_partitioning("t")
    reset = counts()
    lake.reset_partitioning("t")
    assert counts() == reset


def test_a_partition_or_sort_column_cannot_be_dropped(lake):
    """As the reference: DROP COLUMN of a column the table is partitioned or sorted by fails until RESET, also
    when the layout was set (or reset) earlier in the same transaction."""
    lake.create_table("t", "k INT, v INT, w INT")
    lake.set_partitioning("t", ["k"])
    with pytest.raises(SchemaMismatchError, match="the table is partitioned by this column"):
        lake.drop_column("t", "k")
    lake.reset_partitioning("t")
    lake.drop_column("t", "k")
    with lake.transaction() as tx:
        tx.set_sorted_by("t", ["v DESC"])
        with pytest.raises(SchemaMismatchError, match="the table is sorted by this column"):
            with tx.update_schema("t") as u:
                u.drop_column("v")
        tx.set_sorted_by("t", [])
        with tx.update_schema("t") as u:
            u.drop_column("v")
    assert [c.name for c in lake.table_info("t").columns] == ["w"]


def test_partitioning_a_table_created_in_the_same_transaction(lake):
    """CREATE TABLE, SET PARTITIONED BY and INSERT in one transaction: the files follow the partitioning and the
    catalog keeps it for the new table (as the reference commits it)."""
    with lake.transaction() as tx:
        tx.create_table("t", "k INT, v STRING")
        tx.set_partitioning("t", ["k"])
        tx.write(pa.table({"k": pa.array([0, 1, 0, 1] * 10, pa.int32()), "v": [str(i) for i in range(40)]}), "t")
    import sqlalchemy as sa

    from spark_ducklake.catalog.database.spec_tables import T

    with lake.context.connect() as conn:
        transforms = conn.execute(sa.select(T["ducklake_partition_column"].c.transform)).scalars().all()
    assert transforms == ["identity"]
    files = lake.list_files("t")
    assert len(files) == 2 and all("k=" in f.data_file for f in files)


def test_sorting_a_table_created_in_the_same_transaction(lake):
    """CREATE TABLE, SET SORTED BY and a write in one transaction: the rows are written in the sort order."""
    with lake.transaction() as tx:
        tx.create_table("t", "a INT, b INT")
        tx.set_sorted_by("t", ["b DESC"])
        tx.write(pa.table({"a": pa.array(range(40), pa.int32()), "b": pa.array(range(40), pa.int32())}), "t")
    (path,) = [f.data_file for f in lake.list_files("t")]
    assert pq.read_table(path).column("b").to_pylist() == list(range(39, -1, -1))


def test_layout_keys_may_name_a_column_added_in_the_same_transaction(lake):
    """ADD COLUMN then SET SORTED BY / SET PARTITIONED BY naming it, in one transaction."""
    lake.create_table("t", "a INT")
    with lake.transaction() as tx:
        with tx.update_schema("t") as u:
            u.add_column("c", "BIGINT")
        tx.set_sorted_by("t", ["a ASC", "c DESC"])
        tx.set_partitioning("t", ["c"])
    from spark_ducklake.catalog.changes.sorting import current_sort

    with lake.context.connect() as conn:
        keys = current_sort(conn, lake.table_info("t").table_id, lake.current_snapshot())
    assert [(k.expression, k.direction) for k in keys] == [("a", "ASC"), ("c", "DESC")]
    with pytest.raises(SchemaMismatchError, match="partitioned by this column"):
        lake.drop_column("t", "c")


def test_writes_after_a_layout_change_in_the_same_transaction_follow_it(lake):
    """SET PARTITIONED BY / SET SORTED BY then a write in one transaction: the files take the new partitioning
    (with its new partition id) and the rows the new order, as the reference stages them."""
    import sqlalchemy as sa

    from spark_ducklake.catalog.database.spec_tables import T

    lake.create_table("t", "k INT, v INT")
    with lake.transaction() as tx:
        tx.set_partitioning("t", ["k"])
        tx.set_sorted_by("t", ["v DESC"])
        tx.write(pa.table({"k": pa.array([0, 1] * 20, pa.int32()), "v": pa.array(range(40), pa.int32())}), "t")
    with lake.context.connect() as conn:
        (partition_id,) = conn.execute(sa.select(T["ducklake_partition_info"].c.partition_id)).scalars().all()
        ids = conn.execute(sa.select(T["ducklake_data_file"].c.partition_id)).scalars().all()
    assert ids == [partition_id, partition_id]
    for f in lake.list_files("t"):
        values = pq.read_table(f.data_file).column("v").to_pylist()
        assert values == sorted(values, reverse=True) and "k=" in f.data_file
