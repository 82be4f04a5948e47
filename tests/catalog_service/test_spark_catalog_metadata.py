"""Metadata tables and the change feed through the Spark catalog plugin (issue 30, items 6 and 7):
`SELECT * FROM lake.s.t.snapshots` / `.files` / `.table_info` (with VERSION AS OF) give the rows of the
procedures of the same name and of the Python API, and Spark's `CHANGES FROM ... TO ...` clause (and
`spark.read.changes`) gives the rows of `DuckLake.table_changes` and of DuckDB's `ducklake_table_changes`. Run in
one Spark session (the plugin's tests' child process, tests/support/plugin_session.py)."""

from __future__ import annotations

import textwrap

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.catalog_service import CatalogService
from tests.support.compare import duckdb_rows
from tests.support.reference import attach, connect

SCRIPT = textwrap.dedent("""
    spark = lake_session(args)
    out = {}
    run = recorder(spark, out)

    run("ns", "CREATE NAMESPACE lake.s")                                            # snapshot 1
    run("create", "CREATE TABLE lake.s.t (id BIGINT, name STRING)")                # 2
    run("files", "INSERT INTO lake.s.t SELECT id, concat('n', id) FROM range(50)")  # 3: two files (local[2])
    run("inlined", "INSERT INTO lake.s.t VALUES (100, 'a'), (101, 'b')")           # 4: inlined rows
    run("delete", "DELETE FROM lake.s.t WHERE id IN (3, 101)")                     # 5
    run("update", "UPDATE lake.s.t SET name = 'u' WHERE id IN (7, 100)")           # 6
    # metadata tables, and the procedures they mirror
    run("snapshots", "SELECT * FROM lake.s.t.snapshots")
    run("call_snapshots", "CALL lake.system.snapshots()")
    run("snapshots_at_3", "SELECT snapshot_id FROM lake.s.t.snapshots VERSION AS OF 3")
    run("files_now", "SELECT * FROM lake.s.t.files")
    run("call_files", "CALL lake.system.list_files('t', 's')")
    run("files_at_3", "SELECT data_file, delete_file FROM lake.s.t.files VERSION AS OF 3")
    run("info", "SELECT * FROM lake.s.t.table_info")
    run("call_info", "CALL lake.system.table_info()")
    run("count_files", "SELECT count(*) AS n FROM lake.s.t.files WHERE delete_file IS NOT NULL")
    # the change feed
    run("changes", "SELECT * FROM lake.s.t CHANGES FROM VERSION 3 TO VERSION 6")
    run("changes_open", "SELECT * FROM lake.s.t CHANGES FROM VERSION 5")
    run("changes_exclusive", "SELECT * FROM lake.s.t CHANGES FROM VERSION 4 TO VERSION 6 EXCLUSIVE")
    run("changes_net", "SELECT id, name, _change_type FROM lake.s.t CHANGES FROM VERSION 4 "
                       "WITH (deduplicationMode = 'netChanges')")
    stamp = spark.sql("SELECT snapshot_time FROM lake.s.t.snapshots WHERE snapshot_id = 5").first()[0]
    run("changes_time", f"SELECT * FROM lake.s.t CHANGES FROM TIMESTAMP '{stamp}'")
    out["reader"] = [r.asDict() for r in spark.read.option("startingVersion", "5").changes("lake.s.t").collect()]
    # errors
    run("no_metadata", "SELECT * FROM lake.s.t.history")
    run("no_table", "SELECT * FROM lake.s.nope.snapshots")
    run("no_snapshot", "SELECT * FROM lake.s.t.files VERSION AS OF 99")
    run("changes_no_table", "SELECT * FROM lake.s.nope CHANGES FROM VERSION 1")
    run("changes_no_snapshot", "SELECT * FROM lake.s.t CHANGES FROM VERSION 99")
""")

FEED = ("id", "name", "rowid", "_change_type", "_commit_version")


def _feed(rows) -> list[tuple]:
    return sorted(tuple(r[k] for k in FEED) for r in rows)


@pytest.mark.spark
@pytest.mark.own_session
def test_metadata_tables_and_changes_through_plain_spark_sql(tmp_path, plugin_session):
    catalog, data = f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data")
    DuckLake.attach(catalog, data).close()  # DuckLake 1.0, as DuckDB 1.5.5's extension reads it
    out = plugin_session.run(SCRIPT, {"url": catalog, "data": data})
    for key in ("files", "inlined", "delete", "update"):
        assert out[key] == [], (key, out[key])

    # metadata tables: the procedures' rows (the lake's snapshots, the table's files and its table_info row)
    assert out["snapshots"] == out["call_snapshots"] and len(out["snapshots"]) == 7
    assert [r["snapshot_id"] for r in out["snapshots_at_3"]] == [0, 1, 2, 3]
    assert out["files_now"] == out["call_files"] and len(out["files_now"]) == 2
    assert out["count_files"] == [{"n": 0}]  # few positions deleted: inlined deletes, no delete file
    assert len(out["files_at_3"]) == 2 and all(r["delete_file"] is None for r in out["files_at_3"])
    assert out["info"] == [r for r in out["call_info"] if r["table_name"] == "t"] and out["info"][0]["file_count"] == 2

    # the change feed: DuckLake's table_changes rows, with Spark's changelog columns
    lake = DuckLake.attach(catalog, data)
    assert [tuple(r.values()) for r in out["snapshots"]][-1][0] == lake.current_snapshot() == 6
    by_snapshot = {r["snapshot_id"]: r["snapshot_time"] for r in out["snapshots"]}

    def ours(start, end):
        return sorted((r["id"], r["name"], r["rowid"], r["change_type"], r["snapshot_id"])
                      for r in lake.table_changes_arrow("s.t", start, end).to_pylist())

    assert _feed(out["changes"]) == ours(3, 6) and len(out["changes"]) == 50 + 2 + 2 + 4
    assert {r["_change_type"] for r in out["changes"]} == {"insert", "delete", "update_preimage", "update_postimage"}
    assert all(r["_commit_timestamp"] == by_snapshot[r["_commit_version"]] for r in out["changes"])
    assert list(out["changes"][0]) == ["id", "name", *FEED[2:], "_commit_timestamp"]
    assert _feed(out["changes_open"]) == ours(5, 6) == _feed(out["reader"]) == _feed(out["changes_time"])
    assert _feed(out["changes_exclusive"]) == ours(4, 5)  # EXCLUSIVE: the end bound
    # netChanges (Spark's, by rowid): row 100 inserted then updated is one insert, 101 inserted then deleted is gone,
    # and without computeUpdates Spark shows the net update of row 7 as a delete and an insert
    assert sorted((r["id"], r["name"], r["_change_type"]) for r in out["changes_net"]) == [
        (3, "n3", "delete"), (7, "n7", "delete"), (7, "u", "insert"), (100, "u", "insert")]
    con = connect()
    attach(con, catalog)
    theirs = duckdb_rows(con, "SELECT id, name, rowid, change_type, snapshot_id "
                              "FROM ducklake_table_changes('lake', 's', 't', 3, 6)")
    assert _feed(out["changes"]) == sorted(theirs)
    con.close()
    lake.close()

    assert "[DUCKLAKE_NOT_FOUND] lake.s.t.history: table s.t has no metadata table 'history'" in out["no_metadata"]
    assert "TABLE_OR_VIEW_NOT_FOUND" in out["no_table"], out["no_table"]
    assert "[DUCKLAKE_NOT_FOUND] lake.s.t.files" in out["no_snapshot"] and "99" in out["no_snapshot"]
    assert "TABLE_OR_VIEW_NOT_FOUND" in out["changes_no_table"], out["changes_no_table"]
    assert "[DUCKLAKE_NOT_FOUND] s.t" in out["changes_no_snapshot"], out["changes_no_snapshot"]


def test_service_refuses_change_feed_columns_it_would_shadow(tmp_path):
    """A table with a column named as one of the feed's own columns: refused, naming it, not silently renamed."""
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"))
    lake.create_table("t", pa.schema([("rowid", pa.int64()), ("x", pa.int64())]))
    service = CatalogService(lake, str(tmp_path))
    reply = service.answer({"op": "changes", "namespace": "main", "table": "t", "start": "0"})
    assert reply["error"]["kind"] == "unsupported" and "rowid" in reply["error"]["message"], reply
    lake.close()


def test_a_change_range_asked_again_reuses_its_file(tmp_path):
    # The service writes a CHANGES range's rows once: the same range asked again (a dashboard re-running its
    # query) lists the same file, so the scratch folder grows with distinct ranges, not with queries.
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"))
    lake.create_table("t", "id BIGINT")
    lake.write(pa.table({"id": pa.array([1, 2], pa.int64())}), "t")
    lake.write(pa.table({"id": pa.array([3], pa.int64())}), "t")
    (tmp_path / "service").mkdir()
    service = CatalogService(lake, str(tmp_path / "service"))
    ask = {"op": "changes", "namespace": "main", "table": "t", "start": 1}
    first, again = service.answer(ask), service.answer(ask)
    assert first["rows"] == again["rows"] == 3
    assert len(list((tmp_path / "service").rglob("changes-*.parquet"))) == 1
    later = service.answer({**ask, "start": 3})
    assert later["rows"] == 1 and len(list((tmp_path / "service").rglob("changes-*.parquet"))) == 2
    lake.close()
