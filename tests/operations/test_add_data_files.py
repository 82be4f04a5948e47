"""add_data_files: the reference's catalog rows for the same files, DuckDB and we read registered files (with and
without field ids, hive paths, missing and extra columns) alike, clear errors, and the lake owns the files."""

from __future__ import annotations

import os
from datetime import datetime, timezone

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.errors import NotFoundError, SchemaMismatchError
from spark_ducklake.operations.maintenance import add_files
from tests.support.catalog_copy import catalog_copy, comparable_dump
from tests.support.compare import duckdb_rows, spark_rows
from tests.support.reference import attach, connect

STRUCT = pa.struct([("x", pa.int32()), ("Y", pa.string())])  # field names differ in case from the table's


def _rows(n: int, start: int = 0) -> pa.Table:
    return pa.table({
        "a": pa.array(range(start, start + n), pa.int16()),  # narrower than the table's INTEGER
        "B": [f"s{i}" if i % 3 else None for i in range(start, start + n)],
        "s": pa.array([{"x": i, "Y": f"y{i}"} if i % 4 else None for i in range(start, start + n)], STRUCT),
        "l": pa.array([[i, i + 1] if i % 5 else [] for i in range(start, start + n)], pa.list_(pa.int32())),
        "f": pa.array([i / 4 for i in range(start, start + n)], pa.float32()),
        "ts": pa.array([datetime(2024, 1, 1 + i % 20, tzinfo=timezone.utc) for i in range(start, start + n)],
                       pa.timestamp("us", tz="UTC")),
    })


TABLE = "a INTEGER, b VARCHAR, s STRUCT(x INTEGER, y VARCHAR), l INTEGER[], f DOUBLE, ts TIMESTAMPTZ, k BIGINT"
SPARK_TABLE = "a INT, b STRING, s STRUCT<x: INT, y: STRING>, l ARRAY<INT>, f DOUBLE, ts TIMESTAMP, k BIGINT"


def _write_inputs(root) -> list[str]:
    """Two plain files, and one in a hive folder whose `k` comes from the path."""
    (root / "k=5").mkdir(parents=True)
    paths = [str(root / "one.parquet"), str(root / "two.parquet"), str(root / "k=5" / "three.parquet")]
    pq.write_table(_rows(7).append_column("k", pa.array(range(7), pa.int64())), paths[0])
    # Several row groups, none of whose leaves is all NULL: for such a chunk the reference drops the file's
    # min/max (and then narrows the table's bounds past values the table holds); we keep the others' bounds.
    pq.write_table(_rows(4, 101).append_column("k", pa.array([9] * 4, pa.int32())), paths[1], row_group_size=2)
    pq.write_table(_rows(4, 200), paths[2])
    return paths


@pytest.mark.not_on_mysql("the reference fails a second INSERT into a table in a MySQL catalog (UPDATE with a join)")
def test_add_data_files_writes_the_reference_rows(catalog, tmp_path):
    inputs = _write_inputs(tmp_path / "incoming")
    con = connect()
    attach(con, catalog, str(tmp_path / "data"))
    con.execute(f"CREATE TABLE lake.t ({TABLE})")
    con.close()
    with catalog_copy(catalog, tmp_path) as theirs:
        con = connect()
        attach(con, theirs)
        for path in inputs[:2]:
            con.execute(f"CALL ducklake_add_data_files('lake', 't', '{path}')")
        con.execute(f"CALL ducklake_add_data_files('lake', 't', '{inputs[2]}')")
        con.close()
        lake = DuckLake.attach(catalog)
        assert lake.add_data_files("t", inputs[0]) == [inputs[0]]
        lake.add_data_files("t", [inputs[1]])
        lake.add_data_files("t", str(tmp_path / "incoming" / "k=*" / "*.parquet"))  # a glob
        lake.close()
        ours, reference = comparable_dump(catalog), comparable_dump(theirs)
    for table in ("ducklake_data_file", "ducklake_column_mapping", "ducklake_name_mapping",
                  "ducklake_file_column_stats", "ducklake_table_column_stats", "ducklake_table_stats",
                  "ducklake_snapshot_changes"):
        assert ours[table] == reference[table], table


def test_duckdb_and_we_read_added_files_alike(lake, lake_catalog, tmp_path, spark, reference):
    inputs = _write_inputs(tmp_path / "incoming")
    ids = tmp_path / "with_ids.parquet"  # field ids of the table (as a file of another DuckLake writer has them)
    table = pa.table({"a": pa.array([1000, 1001], pa.int32()), "b": ["x", "y"], "k": pa.array([1, 2], pa.int64())})
    schema = pa.schema([f.with_metadata({"PARQUET:field_id": str(fid)})
                        for f, fid in zip(table.schema, (1, 2, 10), strict=True)])
    pq.write_table(table.cast(schema), ids)
    extra = tmp_path / "extra.parquet"
    pq.write_table(_rows(3, 300).append_column("k", pa.array([1, 2, 3], pa.int64()))
                   .append_column("unused", pa.array([1, 2, 3])), extra)
    many = tmp_path / "many"
    many.mkdir()
    for i in range(add_files.DRIVER_FILES + 4):  # more than the driver reads itself: footers read by Spark
        pq.write_table(pa.table({"a": pa.array([i], pa.int32()), "k": pa.array([i], pa.int64())}),
                       many / f"{i}.parquet")
    lake.create_table("t", SPARK_TABLE)
    lake.add_data_files("t", inputs)
    lake.add_data_files("t", str(ids), allow_missing=True)
    lake.add_data_files("t", str(extra), ignore_extra_columns=True)
    added = lake.add_data_files("t", str(many / "*.parquet"), allow_missing=True)
    assert len(added) == add_files.DRIVER_FILES + 4
    lake.write(spark.createDataFrame([(1, "w", None, [1], 1.5, datetime(2024, 2, 1), 77)], SPARK_TABLE), "t")
    ours = spark_rows(lake.read("t"))
    assert len(ours) == 7 + 4 + 4 + 2 + 3 + len(added) + 1
    assert spark_rows(lake.read("t", where="k = 5")) == [r for r in ours if r[6] == 5]  # hive values prune/filter
    attach(reference, lake_catalog)
    reference.execute("SET TimeZone = 'UTC'")
    assert duckdb_rows(reference, "SELECT * FROM lake.t") == ours


def test_errors_name_the_file_and_column(lake, tmp_path):
    lake.create_table("t", "a INT, d DECIMAL(6,2), s STRUCT<x: INT>")
    good = {"a": pa.array([1], pa.int32()), "d": pa.array([1], pa.decimal128(5, 2)),
            "s": pa.array([{"x": 1}], pa.struct([("x", pa.int32())]))}

    def attempt(name: str, columns: dict, **kwargs):
        path = tmp_path / f"{name}.parquet"
        pq.write_table(pa.table(columns), path)
        return lambda: lake.add_data_files("t", str(path), **kwargs)

    snapshots = len(lake.snapshots())
    cases = [
        ("bigint", {**good, "a": pa.array([1], pa.int64())},
         r'Failed to map column "a" from file ".*bigint.parquet" to the column in table "t"\n\* Expected one of '
         r"INTEGER, .*found type BIGINT"),
        ("nested", {**good, "s": pa.array([{"x": "1"}], pa.struct([("x", pa.string())]))},
         r'(?s)column "s.x" .*Expected one of INTEGER.*found type VARCHAR'),
        ("decimal", {**good, "d": pa.array([1], pa.decimal128(9, 2))}, r"found precision 9, scale 2"),
        ("extra", {**good, "zz": [1]}, r'Column "zz" exists in file ".*" but was not found in table "t"'),
        ("missing", {"a": good["a"], "s": good["s"]}, r'Column "d" exists in table "t" but was not found in file'),
        ("struct", {**good, "s": pa.array([1], pa.int32())}, r'Expected "STRUCT", found type INTEGER'),
    ]
    for name, columns, message in cases:
        with pytest.raises(SchemaMismatchError, match=message):
            attempt(name, columns)()
    wrong_ids = pa.schema([pa.field("a", pa.int32(), metadata={"PARQUET:field_id": "99"})])
    pq.write_table(pa.table({"a": [1]}, schema=wrong_ids), tmp_path / "ids.parquet")
    with pytest.raises(SchemaMismatchError, match="field ID 99 is not a live field"):
        lake.add_data_files("t", str(tmp_path / "ids.parquet"), allow_missing=True)
    (tmp_path / "a=abc").mkdir()
    pq.write_table(pa.table({"d": good["d"], "s": good["s"]}), tmp_path / "a=abc" / "f.parquet")
    with pytest.raises(SchemaMismatchError, match='hive partition with value "abc", but this value cannot be cast'):
        lake.add_data_files("t", str(tmp_path / "a=abc" / "f.parquet"))
    with pytest.raises(NotFoundError, match="no file"):
        lake.add_data_files("t", str(tmp_path / "nope.parquet"))
    with pytest.raises(NotFoundError, match="no file matches"):
        lake.add_data_files("t", str(tmp_path / "nothing" / "*.parquet"))
    assert len(lake.snapshots()) == snapshots  # every failure left the catalog alone
    lake.add_data_files("t", str(tmp_path / "a=abc" / "f.parquet"), hive_partitioning=False, allow_missing=True)
    assert lake.add_data_files("t", str(tmp_path / "extra.parquet"), ignore_extra_columns=True)


def test_partitioned_table_takes_files_from_hive_folders(lake, lake_catalog, tmp_path, spark, reference):
    lake.create_table("t", "region STRING, y INT, v BIGINT")
    lake.set_partitioning("t", ["region"])
    for region in ("eu", "us"):
        folder = tmp_path / "in" / f"region={region}"
        folder.mkdir(parents=True)
        pq.write_table(pa.table({"y": pa.array([1, 2], pa.int32()), "v": [10, 20]}), folder / "f.parquet")
    pq.write_table(pa.table({"region": ["eu"], "y": pa.array([1], pa.int32()), "v": [1]}), tmp_path / "flat.parquet")
    with pytest.raises(SchemaMismatchError, match="invalid partition value for the table configuration"):
        lake.add_data_files("t", str(tmp_path / "flat.parquet"))
    lake.add_data_files("t", str(tmp_path / "in" / "*" / "*.parquet"))
    assert len(lake.plan_scan("t", where="region = 'us'").files) == 1  # pruned by the partition value
    ours = spark_rows(lake.read("t"))
    assert ours == sorted([(r, y, v) for r in ("eu", "us") for y, v in ((1, 10), (2, 20))], key=repr)
    attach(reference, lake_catalog)
    assert duckdb_rows(reference, "SELECT * FROM lake.t") == ours
    assert duckdb_rows(reference, "SELECT partition_value FROM __ducklake_metadata_lake."
                                  "ducklake_file_partition_value") == [("eu",), ("us",)]


def test_the_lake_owns_added_files(lake, tmp_path):
    """As the reference documents: once no snapshot needs an added file, cleanup deletes it."""
    lake.create_table("t", "a BIGINT")
    outside = tmp_path / "mine.parquet"
    pq.write_table(pa.table({"a": [1, 2, 3]}), outside)
    lake.add_data_files("t", str(outside))
    lake.write(pa.table({"a": [4]}), "t", mode="overwrite")  # inlined: ends the added file
    assert lake.cleanup_old_files(cleanup_all=True) == []  # still needed by the add's snapshot
    lake.expire_snapshots(older_than=datetime.now(timezone.utc))
    assert [r.path for r in lake.cleanup_old_files(cleanup_all=True)] == [str(outside)]
    assert not os.path.exists(outside)
    assert lake.plan_scan("t").inlined.column("a").to_pylist() == [4]


def test_schema_argument_names_the_tables_schema(lake, tmp_path):
    lake.create_schema("s")
    lake.create_table("s.t", "a INT")
    lake.create_table("t", "a INT")
    path = str(tmp_path / "x.parquet")
    pq.write_table(pa.table({"a": pa.array([1, 2], pa.int32())}), path)
    assert lake.add_data_files("t", path, schema="s") == [path]
    assert [f.record_count for f in lake.plan_scan("s.t").files] == [2]
    assert lake.plan_scan("t").files == []
