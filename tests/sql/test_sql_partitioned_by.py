"""`CREATE TABLE ... PARTITIONED BY (...)` in lake.sql, both dialects: the table gets the partitioning
`lake.set_partitioning` gives (Spark's years/days/bucket spellings as there), in the snapshot that creates it.
Catalog-only but for CREATE TABLE ... AS SELECT, whose query runs on Spark."""

from __future__ import annotations

import sqlite3

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.errors import DuckLakeError, UnsupportedSqlError


@pytest.fixture
def lake(tmp_path):
    handle = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"), ducklake_version="1.1",
                             data_inlining_row_limit=0)
    yield handle
    handle.close()


def _catalog(tmp_path, sql: str, *args) -> list[tuple]:
    with sqlite3.connect(tmp_path / "meta.sqlite") as conn:
        return [tuple(r) for r in conn.execute(sql, args)]


def _partitioning(tmp_path, table: str) -> list[tuple]:
    """(key index, column name, transform) of the table's partitioning in force, and the snapshot it began."""
    return _catalog(tmp_path, """
        SELECT pc.partition_key_index, c.column_name, pc.transform, pi.begin_snapshot
        FROM ducklake_table t JOIN ducklake_partition_info pi ON pi.table_id = t.table_id
        JOIN ducklake_partition_column pc ON pc.partition_id = pi.partition_id AND pc.table_id = t.table_id
        JOIN ducklake_column c ON c.table_id = t.table_id AND c.column_id = pc.column_id AND c.end_snapshot IS NULL
        WHERE t.table_name = ? AND t.end_snapshot IS NULL AND pi.end_snapshot IS NULL
        ORDER BY pc.partition_key_index""", table)


def _created(tmp_path, table: str) -> int:
    return _catalog(tmp_path, "SELECT begin_snapshot FROM ducklake_table WHERE table_name = ? "
                              "AND end_snapshot IS NULL", table)[0][0]


@pytest.mark.parametrize("dialect", ["spark", "duckdb"])
def test_same_partitioning_as_set_partitioning_in_the_create_snapshot(lake, tmp_path, dialect):
    types = "id BIGINT, region VARCHAR, ts TIMESTAMP" if dialect == "duckdb" else \
        "id BIGINT, region STRING, ts TIMESTAMP_NTZ"
    keys = ["region", "days(ts)", "bucket(16, id)"] if dialect == "spark" else \
        ["region", "year(ts)", "bucket(16, id)"]
    before = _catalog(tmp_path, "SELECT MAX(snapshot_id) FROM ducklake_snapshot")[0][0]
    lake.sql(f"CREATE TABLE t ({types}) PARTITIONED BY ({', '.join(keys)})", dialect=dialect)
    lake.create_table("u", "id BIGINT, region STRING, ts TIMESTAMP_NTZ")
    lake.set_partitioning("u", keys)
    ours = _partitioning(tmp_path, "t")
    theirs = _partitioning(tmp_path, "u")
    assert [row[:3] for row in ours] == [row[:3] for row in theirs]
    assert [row[2] for row in ours][0] == "identity" and ours[2][2] == "bucket(16)"
    assert {row[3] for row in ours} == {_created(tmp_path, "t")} == {before + 1}  # one snapshot, partitioned
    lake.write(pa.table({"id": pa.array([1, 2], pa.int64()), "region": ["eu", "us"],
                         "ts": pa.array([0, 86_400_000_000], pa.timestamp("us"))}), "t")
    values = _catalog(tmp_path, "SELECT COUNT(DISTINCT data_file_id) FROM ducklake_file_partition_value")[0][0]
    assert values == 2  # written partitioned: a file per region
    assert sorted(lake.read_arrow("t").column("id").to_pylist()) == [1, 2]


def test_if_not_exists_and_transactions(lake, tmp_path):
    lake.sql("CREATE TABLE t (id BIGINT, region STRING) PARTITIONED BY (region)")
    lake.sql("CREATE TABLE IF NOT EXISTS t (id BIGINT, region STRING) PARTITIONED BY (id)")  # exists: no change
    assert [row[1:3] for row in _partitioning(tmp_path, "t")] == [("region", "identity")]
    lake.sql("BEGIN")
    lake.sql("CREATE TABLE v (id BIGINT, region STRING) PARTITIONED BY (bucket(4, id))")
    lake.sql("INSERT INTO v VALUES (1, 'a')")
    lake.sql("COMMIT")
    assert [row[1:3] for row in _partitioning(tmp_path, "v")] == [("id", "bucket(4)")]
    assert _partitioning(tmp_path, "v")[0][3] == _created(tmp_path, "v")


def test_bad_keys_leave_the_catalog_unchanged(lake, tmp_path):
    snapshots = _catalog(tmp_path, "SELECT COUNT(*) FROM ducklake_snapshot")
    with pytest.raises(DuckLakeError):
        lake.sql("CREATE TABLE t (id BIGINT) PARTITIONED BY (nope)")
    with pytest.raises(DuckLakeError):
        lake.sql("CREATE TABLE t (id BIGINT) PARTITIONED BY (bucket(0, id))")
    assert _catalog(tmp_path, "SELECT COUNT(*) FROM ducklake_snapshot") == snapshots
    assert _catalog(tmp_path, "SELECT COUNT(*) FROM ducklake_table") == [(0,)]
    with pytest.raises(UnsupportedSqlError, match="TBLPROPERTIES|not supported"):
        lake.sql("CREATE TABLE t (id BIGINT) PARTITIONED BY (id) TBLPROPERTIES ('a' = 'b')")


@pytest.mark.spark  # the query of AS SELECT runs on Spark
@pytest.mark.parametrize("dialect", ["spark", "duckdb"])
def test_create_as_select_writes_partitioned(spark, lake, tmp_path, dialect):
    lake.sql("CREATE TABLE t (id BIGINT, region VARCHAR)", dialect="duckdb")
    lake.sql("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    lake.sql('CREATE TABLE c PARTITIONED BY ("region") AS SELECT * FROM t' if dialect == "duckdb" else
             "CREATE TABLE c PARTITIONED BY (region) AS SELECT * FROM t", dialect=dialect)
    lake.sql("CREATE OR REPLACE TABLE c PARTITIONED BY (region) AS SELECT * FROM t", dialect=dialect)
    assert [row[1:3] for row in _partitioning(tmp_path, "c")] == [("region", "identity")]
    assert _partitioning(tmp_path, "c")[0][3] == _created(tmp_path, "c")
    assert sorted(_catalog(tmp_path, "SELECT v.partition_value FROM ducklake_file_partition_value v JOIN "
                                     "ducklake_data_file f USING (data_file_id) WHERE f.end_snapshot IS NULL "
                                     "AND f.table_id = (SELECT MAX(table_id) FROM ducklake_table)")) == [("a",), ("b",)]
    assert sorted(lake.read_arrow("c").column("id").to_pylist()) == [1, 2]
