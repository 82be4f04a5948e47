"""The reference's catalog functions (table_info, list_files, settings, options, snapshots, last_committed_snapshot)
return the extension's rows on the same lake, and a lake attached at a past snapshot shows everything as of then."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

import spark_ducklake
from spark_ducklake import DuckLake
from spark_ducklake.errors import NotFoundError, ReadOnlyError
from tests.support.reference import attach


def _rows(con, sql: str) -> list[tuple]:
    return sorted((tuple(str(v) if type(v).__name__ == "UUID" else v for v in r) for r in con.execute(sql).fetchall()),
                  key=repr)


def _ours(rows) -> list[tuple]:
    return sorted((tuple(r) for r in rows), key=repr)


@pytest.mark.not_on_mysql("the reference fails a second INSERT into a table in a MySQL catalog (UPDATE with a join)")
def test_catalog_functions_match_the_reference_on_a_duckdb_lake(catalog, tmp_path, reference):
    attach(reference, catalog, str(tmp_path / "data"))
    for sql in [
        "CREATE SCHEMA lake.s", "CREATE TABLE lake.s.t (a INTEGER, b VARCHAR)", "CREATE TABLE lake.u (x INTEGER)",
        "INSERT INTO lake.s.t SELECT i, 'v' || i FROM range(0, 100) r(i)",
        "INSERT INTO lake.s.t SELECT i, 'w' || i FROM range(100, 150) r(i)",
        "DELETE FROM lake.s.t WHERE a < 30", "INSERT INTO lake.u VALUES (1)",
        "CREATE TABLE lake.gone (y INTEGER)", "DROP TABLE lake.gone",
        "CALL lake.set_option('parquet_compression', 'zstd')",
    ]:
        reference.execute(sql)
    snaps = reference.execute("SELECT snapshot_id, snapshot_time, changes FROM lake.snapshots() ORDER BY 1").fetchall()
    first_insert = next(s for s, _t, changes in snaps if "tables_inserted_into" in changes)
    theirs = {
        "table_info": _rows(reference, "FROM ducklake_table_info('lake')"),
        "files": _rows(reference, "FROM ducklake_list_files('lake', 't', schema => 's')"),
        "files_then": _rows(reference, f"FROM ducklake_list_files('lake', 't', schema => 's', "
                                       f"snapshot_version => {first_insert})"),
        "files_at_time": _rows(reference, f"FROM ducklake_list_files('lake', 't', schema => 's', "
                                          f"snapshot_time => '{snaps[first_insert][1].isoformat()}')"),
        "settings": _rows(reference, "FROM lake.settings()"),
        "options": _rows(reference, "FROM lake.options()"),
        "current": reference.execute("FROM lake.current_snapshot()").fetchone()[0],
        "snapshots": [(r[0], r[2], r[3]) for r in reference.execute("FROM lake.snapshots() ORDER BY 1").fetchall()],
    }
    reference.execute("DETACH lake")

    lake = DuckLake.attach(catalog)
    assert _ours(lake.table_info()) == theirs["table_info"]
    assert [r.table_name for r in lake.table_info()] == ["t", "u"]
    assert lake.table_info()[0]._fields == ("table_name", "schema_id", "table_id", "table_uuid", "file_count",
                                            "file_size_bytes", "delete_file_count", "delete_file_size_bytes")
    assert lake.table_info("s.t").name == "t"  # with a name: our TableInfo, as before
    assert _ours(lake.list_files("t", "s")) == theirs["files"] == _ours(lake.list_files("s.t"))
    assert len(theirs["files"]) == 2 and sum(r[4] is not None for r in theirs["files"]) == 1
    assert _ours(lake.list_files("t", schema="s", snapshot_version=first_insert)) == theirs["files_then"]
    assert _ours(lake.list_files("s.t", snapshot_time=snaps[first_insert][1])) == theirs["files_at_time"]
    (settings,) = lake.settings()
    assert (settings.catalog_type, settings.data_path) == theirs["settings"][0][::2]
    assert settings.extension_version == spark_ducklake.__version__
    assert _ours(lake.options()) == theirs["options"]
    assert lake.current_snapshot() == theirs["current"]
    assert [(s.snapshot_id, s.schema_version, s.changes) for s in lake.snapshots()] == theirs["snapshots"]

    assert lake.last_committed_snapshot() is None  # like a fresh DuckDB connection
    made = lake.create_schema("more")
    assert lake.last_committed_snapshot() == made == lake.current_snapshot()
    wrote = lake.write(pa.table({"x": pa.array([2], pa.int32())}), "u")  # the writer's commit path
    assert lake.last_committed_snapshot() == wrote == made + 1
    assert not lake.context.spark_started  # catalog functions never start Spark
    lake.close()


def test_catalog_functions_match_the_reference_on_our_lake(lake, lake_catalog, spark, reference):
    lake.create_table("t", "id BIGINT, s STRING")
    lake.write(spark.range(0, 200, numPartitions=2).selectExpr("id", "cast(id as string) s"), "t")
    lake.delete("t", "id < 40")
    lake.write(pa.table({"id": pa.array([1000], pa.int64()), "s": ["x"]}), "t")
    ours = (_ours(lake.table_info()), _ours(lake.list_files("t")), _ours(lake.list_files("t", snapshot_version=2)))
    lake.close()
    attach(reference, lake_catalog)
    assert ours[0] == _rows(reference, "FROM ducklake_table_info('lake')")
    assert ours[1] == _rows(reference, "FROM ducklake_list_files('lake', 't')")
    assert ours[2] == _rows(reference, "FROM ducklake_list_files('lake', 't', snapshot_version => 2)")
    assert ours[0][0][4:] == (2, sum(r[1] for r in ours[1]), 1, sum(r[5] or 0 for r in ours[1]))


def test_a_lake_attached_at_a_snapshot_shows_everything_as_of_then(lake, lake_catalog):
    catalog = lake_catalog
    lake.create_schema("s")
    lake.create_table("s.a", "x INT")
    then = lake.write(pa.table({"x": pa.array([1, 2], pa.int32())}), "s.a")
    then_time = lake.snapshots()[-1].snapshot_time
    lake.create_table("s.b", "y INT")
    lake.write(pa.table({"x": pa.array([3], pa.int32())}), "s.a")
    lake.drop_table("s.a")
    lake.create_schema("later")

    pinned = DuckLake.attach(catalog, snapshot_version=then)
    for view in (pinned, DuckLake.attach(catalog, snapshot_time=then_time + dt.timedelta(microseconds=1))):
        assert view.current_snapshot() == then
        assert view.schemas() == ["main", "s"]
        assert [t.qualified_name for t in view.tables()] == ["s.a"]
        assert [r.table_name for r in view.table_info()] == ["a"]
        assert view.table_info("s.a").name == "a"
        assert view.plan_scan("s.a").inlined.column("x").to_pylist() == [1, 2]
        assert view.list_files("s.a") == []
        assert view.snapshots()[-1].snapshot_id == then
        with pytest.raises(NotFoundError, match="table s.b does not exist"):
            view.table_info("s.b")
        with pytest.raises(NotFoundError, match=f"newer than the attached snapshot {then}"):
            view.plan_scan("s.a", version=then + 1)
        with pytest.raises(ReadOnlyError):
            view.create_schema("x")
        view.close()
    assert [t.qualified_name for t in lake.tables()] == ["s.b"]
    with pytest.raises(NotFoundError, match="snapshot 99 does not exist"):
        DuckLake.attach(catalog, snapshot_version=99)
    with pytest.raises(NotFoundError, match="no snapshot exists at or before 2000-01-01"):
        DuckLake.attach(catalog, snapshot_time=dt.datetime(2000, 1, 1))
    with pytest.raises(NotFoundError, match="snapshot 99 does not exist"):
        lake.list_files("s.b", snapshot_version=99)
    with pytest.raises(NotFoundError, match="no snapshot exists at or before 2000-01-01"):
        lake.plan_scan("s.b", timestamp=dt.datetime(2000, 1, 1))
    assert not lake.context.spark_started
