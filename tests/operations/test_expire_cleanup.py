"""expire_snapshots, cleanup_old_files and delete_orphaned_files: the same catalog rows and files as the reference's
functions, every surviving snapshot reads the same in both engines, and nothing a snapshot needs is deleted."""

from __future__ import annotations

import os
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import sqlalchemy as sa

from spark_ducklake import DuckLake
from spark_ducklake.catalog.database.spec_tables import T
from spark_ducklake.errors import DuckLakeError, NotFoundError
from tests.support.catalog_copy import catalog_copy, comparable_dump
from tests.support.compare import duckdb_rows, spark_rows
from tests.support.migration import describe_differences
from tests.support.reference import attach, connect
from tests.support.snapshots import referenced_files

# A history touching every kind of row expire can remove: files, delete files, a dropped (partitioned, inlined)
# table, a dropped schema with a renamed table and a view, renamed columns of a live table.
HISTORY = """CREATE TABLE t (a INT, b VARCHAR)
INSERT INTO t SELECT i, 'x' || i FROM range(100) r(i)
INSERT INTO t SELECT i, 'y' || i FROM range(100, 200) r(i)
DELETE FROM t WHERE a < 10
DELETE FROM t WHERE a < 20
UPDATE t SET b = 'z' WHERE a = 50
ALTER TABLE t ADD COLUMN c INT
ALTER TABLE t RENAME COLUMN b TO bb
CREATE TABLE u (x INT, l INT[])
INSERT INTO u SELECT i, [i] FROM range(30) r(i)
ALTER TABLE u SET PARTITIONED BY (x)
INSERT INTO u SELECT i, [i] FROM range(3) r(i)
DROP TABLE u
CREATE SCHEMA s2
CREATE TABLE s2.v (x INT)
INSERT INTO s2.v VALUES (1)
ALTER TABLE s2.v RENAME TO w
CREATE VIEW s2.vv AS SELECT 1
DROP VIEW s2.vv
DROP SCHEMA s2 CASCADE
CREATE TABLE keep (x INT)
ALTER TABLE keep RENAME TO keep2
DELETE FROM t
INSERT INTO t VALUES (1, 'q', 2)""".split("\n")


def _duckdb_history(catalog: str, data: Path) -> None:
    con = connect()
    attach(con, catalog, str(data), data_inlining_row_limit=2)
    con.execute("USE lake")
    for sql in HISTORY:
        con.execute(sql)
    con.close()


@pytest.mark.not_on_mysql("the reference fails UPDATE/DELETE in a MySQL catalog; test_expire_on_every_catalog")
@pytest.mark.parametrize("args", [{"versions": [2, 3, 5, 12, 14, 20]}, {"older_than": "now"}])
def test_expire_changes_the_catalog_exactly_as_the_reference(catalog, tmp_path, args):
    _duckdb_history(catalog, tmp_path / "data")
    with catalog_copy(catalog, tmp_path) as theirs_catalog:
        con = connect()
        attach(con, theirs_catalog)
        sql_arg = ("older_than => now()" if "older_than" in args
                   else f"versions => {args['versions']}")
        theirs = con.execute(f"CALL ducklake_expire_snapshots('lake', {sql_arg})").fetchall()
        con.close()

        lake = DuckLake.attach(catalog)
        ours = lake.expire_snapshots(**({"older_than": datetime.now(timezone.utc)} if "older_than" in args
                                        else args))
        lake.close()
        assert [r.snapshot_id for r in ours] == [r[0] for r in theirs]
        assert [tuple(r)[3] for r in ours] == [r[3] for r in theirs]  # changes, as snapshots() shows them
        assert describe_differences(comparable_dump(theirs_catalog), comparable_dump(catalog)) == []


def test_expire_on_every_catalog(catalog, lake):
    """Our own history (catalog only): what expire removes, on every catalog database including MySQL."""
    import pyarrow as pa

    lake.create_table("t", "id BIGINT, s STRING")
    lake.write(pa.table({"id": [1, 2], "s": ["a", "b"]}), "t")
    lake.create_table("gone", "x BIGINT")
    lake.write(pa.table({"x": [1]}), "gone")
    lake.create_schema("s2")
    lake.create_table("s2.v", "x BIGINT")
    lake.rename_table("s2.v", "w")
    lake.drop_schema("s2", cascade=True)
    lake.drop_table("gone")
    lake.write(pa.table({"id": [3], "s": ["c"]}), "t")
    gone_id = lake.table_info("gone", version=4).table_id
    with lake.engine.connect() as conn:
        before_tables = set(sa.inspect(conn).get_table_names())
    assert any(name.startswith(f"ducklake_inlined_data_{gone_id}_") for name in before_tables)
    latest = lake.current_snapshot()

    expired = lake.expire_snapshots(older_than=datetime.now(timezone.utc))
    assert [r.snapshot_id for r in expired] == list(range(latest))
    assert [s.snapshot_id for s in lake.snapshots()] == [latest]
    with lake.engine.connect() as conn:
        names = set(sa.inspect(conn).get_table_names())
        assert not any(name.startswith(f"ducklake_inlined_data_{gone_id}_") for name in names)
        for name in ("ducklake_table", "ducklake_column", "ducklake_table_stats", "ducklake_schema_versions",
                     "ducklake_inlined_data_tables"):
            tbl = T[name]
            ids = set(conn.execute(sa.select(tbl.c.table_id)).scalars())
            assert ids == {lake.table_info("t").table_id}, name
        sc = T["ducklake_schema"]
        assert list(conn.execute(sa.select(sc.c.schema_name)).scalars()) == ["main"]
    plan = lake.plan_scan("t")
    assert sorted(plan.inlined.column("id").to_pylist()) == [1, 2, 3]
    assert lake.expire_snapshots(older_than=datetime.now(timezone.utc)) == []
    assert lake.cleanup_old_files(cleanup_all=True) == []  # inlined rows only: no files to delete


def test_expire_choice_and_options(lake, lake_catalog):
    catalog = lake_catalog
    for i in range(4):
        lake.create_table(f"t{i}", "x INT")
    latest = lake.current_snapshot()
    assert lake.expire_snapshots() == []  # no criterion and no expire_older_than: nothing, as the reference
    assert lake.expire_snapshots(versions=[]) == []
    assert lake.expire_snapshots(versions=[latest]) == []  # the newest snapshot is never expired
    with pytest.raises(ValueError, match="either versions or older_than"):
        lake.expire_snapshots(versions=[1], older_than=datetime.now(timezone.utc))
    with pytest.raises(DuckLakeError, match="only be set globally"):
        lake.set_option("expire_older_than", "1 week", table_name="t0")
    with pytest.raises(DuckLakeError, match="not an interval"):
        lake.set_option("expire_older_than", "a fortnight")
    lake.set_option("expire_older_than", "1 week")
    assert lake.expire_snapshots() == []  # everything is younger than a week
    assert [r.snapshot_id for r in lake.expire_snapshots(older_than=timedelta(days=-1), dry_run=True)] == \
        list(range(latest))
    assert len(lake.snapshots()) == latest + 1  # dry run
    assert [r.snapshot_id for r in lake.expire_snapshots(versions=[1, 3])] == [1, 3]
    lake.set_option("expire_older_than", "00:00:00")
    assert [r.snapshot_id for r in lake.expire_snapshots()] == [0, 2]
    assert [s.snapshot_id for s in lake.snapshots()] == [latest]
    for expired in (0, 1, 3):
        with pytest.raises(NotFoundError, match=f"snapshot {expired} does not exist"):
            lake.tables(version=expired)
        with pytest.raises(NotFoundError):
            DuckLake.attach(catalog, snapshot_version=expired)
    with pytest.raises(NotFoundError, match="no snapshot exists at or before"):
        DuckLake.attach(catalog, snapshot_time=datetime.now(timezone.utc) - timedelta(hours=1))
    assert [t.name for t in lake.tables()] == ["t0", "t1", "t2", "t3"]


def _files_on_disk(root: Path) -> set[str]:
    return {str(p) for p in root.rglob("*.parquet")}


@pytest.mark.lake(data_inlining_row_limit=0)
def test_expire_and_cleanup_keep_every_surviving_snapshot_readable(lake, lake_catalog, tmp_path, spark, reference):
    catalog = lake_catalog
    lake.write(spark.range(0, 300).selectExpr("id", "id * 2 AS v"), "t", mode="error")
    lake.write(spark.range(300, 400).selectExpr("id", "id * 2 AS v"), "t")
    lake.delete("t", "id % 10 = 0")
    lake.update("t", "id BETWEEN 100 AND 120", {"v": "-v"})  # replaces delete files: those become history
    lake.write(spark.range(0, 50).selectExpr("id", "id AS v"), "t", mode="overwrite")
    lake.write(spark.range(0, 10).selectExpr("id"), "gone", mode="error")
    lake.drop_table("gone")
    lake.write(spark.range(0, 5).selectExpr("id", "id AS v"), "t")
    snapshots = [s.snapshot_id for s in lake.snapshots()]
    attach(reference, catalog)
    before = {s: duckdb_rows(reference, f"SELECT * FROM lake.t AT (VERSION => {s})")
              for s in snapshots if s >= 2}
    reference.execute("DETACH lake")
    disk_before = _files_on_disk(tmp_path / "data")

    survivors = [snapshots[-1], snapshots[-3], 4]
    expired = [s for s in snapshots if s not in survivors]
    assert lake.expire_snapshots(versions=expired, dry_run=True)
    assert _files_on_disk(tmp_path / "data") == disk_before and len(lake.snapshots()) == len(snapshots)
    assert [r.snapshot_id for r in lake.expire_snapshots(versions=expired)] == expired
    assert _files_on_disk(tmp_path / "data") == disk_before  # expiring only schedules
    scheduled = {r.path for r in lake.cleanup_old_files(cleanup_all=True, dry_run=True)}
    assert scheduled and scheduled <= disk_before
    assert lake.cleanup_old_files() == []  # scheduled just now: younger than the default two days
    removed = {r.path for r in lake.cleanup_old_files(cleanup_all=True)}
    assert removed == scheduled
    disk_after = _files_on_disk(tmp_path / "data")
    assert disk_after == disk_before - removed
    assert referenced_files(lake) <= disk_after  # nothing a surviving snapshot needs is gone
    assert lake.cleanup_old_files(cleanup_all=True) == []

    for s in survivors:
        assert spark_rows(lake.read("t", version=s)) == before[s], f"snapshot {s}"
    with pytest.raises(NotFoundError):
        lake.read("t", version=expired[-1])
    attach(reference, catalog)
    for s in survivors:
        assert duckdb_rows(reference, f"SELECT * FROM lake.t AT (VERSION => {s})") == before[s]
    with pytest.raises(Exception, match="(?i)snapshot"):
        reference.execute(f"SELECT * FROM lake.t AT (VERSION => {expired[-1]})").fetchall()


def test_we_clean_up_after_duckdb_expires_and_read_the_rest(tmp_path, spark, reference):
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    attach(reference, catalog, str(tmp_path / "data"), data_inlining_row_limit=0)
    reference.execute("CREATE TABLE lake.t (a INT, b VARCHAR)")
    reference.execute("INSERT INTO lake.t SELECT i, 'x' || i FROM range(100) r(i)")
    reference.execute("INSERT INTO lake.t SELECT i, 'y' || i FROM range(100, 200) r(i)")
    reference.execute("DELETE FROM lake.t WHERE a < 150")
    reference.execute("UPDATE lake.t SET b = 'z' WHERE a > 190")
    expected = duckdb_rows(reference, "SELECT * FROM lake.t")
    reference.execute("CALL ducklake_expire_snapshots('lake', older_than => now())")
    reference.execute("DETACH lake")

    lake = DuckLake.attach(catalog)
    removed = {r.path for r in lake.cleanup_old_files(cleanup_all=True)}
    assert removed and not any(os.path.exists(p) for p in removed)
    assert referenced_files(lake) <= _files_on_disk(tmp_path / "data")
    assert spark_rows(lake.read("t")) == expected
    attach(reference, catalog)
    assert duckdb_rows(reference, "SELECT * FROM lake.t") == expected


def _age(path: str, hours: float) -> None:
    then = time.time() - hours * 3600
    os.utime(path, (then, then))


@pytest.mark.not_on_mysql("the reference fails DELETE in a MySQL catalog; test_expire_on_every_catalog covers it")
def test_orphans_and_old_files_as_the_reference_lists_them(catalog, tmp_path, reference):
    data = tmp_path / "data"
    attach(reference, catalog, str(data), data_inlining_row_limit=0)
    reference.execute("CREATE TABLE lake.t (a INT)")
    reference.execute("INSERT INTO lake.t SELECT * FROM range(10)")
    reference.execute("INSERT INTO lake.t SELECT * FROM range(10)")
    reference.execute("DELETE FROM lake.t WHERE a < 5")
    reference.execute("DELETE FROM lake.t WHERE a < 7")
    reference.execute("INSERT INTO lake.t SELECT * FROM range(3)")
    reference.execute("CALL ducklake_expire_snapshots('lake', versions => [2, 3])")
    for p in _files_on_disk(data):
        _age(p, 72)  # known files look old too: age alone never makes an orphan
    (data / "main" / "t" / "stale.parquet").write_bytes(b"x")  # a crashed writer's leftover
    (data / "old.parquet").write_bytes(b"x")
    (data / "notes.txt").write_bytes(b"x")  # not a Parquet file: never touched
    (data / "main" / "t" / "staging").mkdir()
    (data / "main" / "t" / "staging" / "part-0.parquet").write_bytes(b"x")  # a writer's, staged just now
    for p in ("main/t/stale.parquet", "old.parquet", "notes.txt"):
        _age(str(data / p), 72)

    def theirs(sql: str) -> list[str]:
        return sorted(r[0] for r in reference.execute(sql).fetchall())

    expected_orphans_old = theirs("CALL ducklake_delete_orphaned_files('lake', dry_run => true)")
    expected_orphans_all = theirs("CALL ducklake_delete_orphaned_files('lake', dry_run => true, cleanup_all => true)")
    expected_old = theirs("CALL ducklake_cleanup_old_files('lake', dry_run => true, cleanup_all => true)")
    expected_young = theirs("CALL ducklake_cleanup_old_files('lake', dry_run => true, older_than => now() - "
                            "INTERVAL 1 HOUR)")
    reference.execute("DETACH lake")

    lake = DuckLake.attach(catalog)
    assert sorted(r.path for r in lake.delete_orphaned_files(dry_run=True)) == expected_orphans_old == \
        [str(data / "main/t/stale.parquet"), str(data / "old.parquet")]
    assert sorted(r.path for r in lake.delete_orphaned_files(cleanup_all=True, dry_run=True)) == \
        expected_orphans_all
    assert sorted(r.path for r in lake.cleanup_old_files(cleanup_all=True, dry_run=True)) == expected_old
    assert sorted(r.path for r in lake.cleanup_old_files(older_than="1 hour", dry_run=True)) == []
    if not catalog.startswith("sqlite:"):  # the reference's time filter does not work on SQLite (all files pass)
        assert expected_young == []
    with pytest.raises(ValueError, match="either cleanup_all or older_than"):
        lake.cleanup_old_files(cleanup_all=True, older_than="1 hour")

    disk = _files_on_disk(data)
    assert sorted(r.path for r in lake.delete_orphaned_files()) == expected_orphans_old
    assert _files_on_disk(data) == disk - set(expected_orphans_old)
    assert (data / "notes.txt").exists() and (data / "main/t/staging/part-0.parquet").exists()
    lake.set_option("delete_older_than", "0 seconds")
    assert sorted(r.path for r in lake.cleanup_old_files()) == expected_old
    assert not any(os.path.exists(p) for p in expected_old)
    assert referenced_files(lake) <= _files_on_disk(data)
    assert lake.cleanup_old_files(cleanup_all=True) == []
    lake.close()
    attach(reference, catalog)
    assert duckdb_rows(reference, "SELECT * FROM lake.t") == [(i,) for i in (0, 1, 2, 7, 7, 8, 8, 9, 9)]


def test_dry_runs_change_nothing(lake, lake_catalog, tmp_path):
    catalog = lake_catalog
    lake.create_table("t", "x INT")
    lake.drop_table("t")
    lake.create_table("t", "x INT")
    (tmp_path / "data").mkdir(exist_ok=True)
    (tmp_path / "data" / "orphan.parquet").write_bytes(b"x")
    before = comparable_dump(catalog)
    assert lake.expire_snapshots(older_than=timedelta(0), dry_run=True)
    assert lake.cleanup_old_files(cleanup_all=True, dry_run=True) == []
    assert [r.path for r in lake.delete_orphaned_files(cleanup_all=True, dry_run=True)] == \
        [str(tmp_path / "data" / "orphan.parquet")]
    assert (tmp_path / "data" / "orphan.parquet").exists()
    assert describe_differences(before, comparable_dump(catalog)) == []
