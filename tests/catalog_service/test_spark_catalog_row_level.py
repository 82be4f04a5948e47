"""DELETE FROM, UPDATE and MERGE INTO through the Spark catalog plugin (issue 30, item 5), merge-on-read: Spark
finds the rows by `_file` / `_pos`, the plugin stages the changes with Spark's Parquet writer and the catalog service
commits them as one snapshot (position deletes, updated rows keeping their row ids). Run in one Spark session (the
plugin's tests' child process, tests/support/plugin_session.py), then read back with DuckLake and with DuckDB's
ducklake extension."""

from __future__ import annotations

import os
import textwrap

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.catalog_service import CatalogService
from spark_ducklake.dataplane.arrow.local_scan import read_plan
from tests.support.compare import duckdb_rows
from tests.support.reference import attach, connect

SCRIPT = textwrap.dedent("""
    spark = lake_session(args)
    out = {}
    run = recorder(spark, out, row=list)

    def rows(key):
        run(key, "SELECT id, name, score FROM lake.s.t ORDER BY id")

    run("create", "CREATE TABLE lake.s.t (id BIGINT, name STRING, score INT)")
    run("files", "INSERT INTO lake.s.t SELECT id, concat('n', id), CAST(id AS INT) FROM range(200)")
    run("inlined", "INSERT INTO lake.s.t VALUES (1000, 'a', 1), (1001, 'b', 2), (1002, 'c', 3)")
    run("delete", "DELETE FROM lake.s.t WHERE id % 10 = 3")  # 20 rows of the files: delete files
    rows("after_delete")
    run("delete_inlined", "DELETE FROM lake.s.t WHERE id = 1001")  # an inlined row
    rows("after_delete_inlined")
    run("failed", "UPDATE lake.s.t SET name = raise_error('boom') WHERE id = 7")  # no snapshot, no file left
    run("update", "UPDATE lake.s.t SET name = 'u', score = score + 1 WHERE id % 10 = 5 OR id = 1000")
    rows("after_update")
    run("src", "CREATE TABLE lake.s.src AS SELECT * FROM VALUES (1L, 'm', 7), (2L, 'gone', 0), (500L, 'new', 5) "
               "AS v(id, name, score)")
    run("merge", "MERGE INTO lake.s.t t USING lake.s.src s ON t.id = s.id "
                 "WHEN MATCHED AND s.name = 'gone' THEN DELETE "
                 "WHEN MATCHED THEN UPDATE SET name = s.name, score = s.score "
                 "WHEN NOT MATCHED THEN INSERT * "
                 "WHEN NOT MATCHED BY SOURCE AND t.id >= 1000 THEN UPDATE SET score = -1")
    rows("after_merge")
    run("delete_all", "DELETE FROM lake.s.src")  # no scan: the table is truncated
    run("src_after", "SELECT count(*) FROM lake.s.src")
    run("delete_none", "DELETE FROM lake.s.t WHERE id < 0")
    # a partitioned table (written with the Python API): DELETE, UPDATE and MERGE (its inserted rows partitioned
    # by the service)
    run("p_delete", "DELETE FROM lake.s.p WHERE region = 'eu' AND id % 4 = 0")
    run("p_update", "UPDATE lake.s.p SET region = 'us', id = id + 100 WHERE region = 'eu'")
    run("p_rows", "SELECT region, count(*), sum(id) FROM lake.s.p GROUP BY region ORDER BY region")
    run("p_merge", "MERGE INTO lake.s.p t USING (SELECT id + 1000 AS id FROM range(30) UNION ALL SELECT 1L) s "
                   "ON t.id = s.id WHEN MATCHED THEN DELETE "
                   "WHEN NOT MATCHED THEN INSERT (id, region) VALUES (s.id, IF(s.id % 2 = 0, 'x', 'y'))")
    run("p_after_merge", "SELECT region, count(*), sum(id) FROM lake.s.p GROUP BY region ORDER BY region")
""")


@pytest.mark.spark
@pytest.mark.own_session
def test_delete_update_merge_through_plain_spark_sql(tmp_path, plugin_session):
    catalog, data = f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data")
    lake = DuckLake.attach(catalog, data)  # DuckLake 1.0, as DuckDB 1.5.5's extension reads it
    lake.create_schema("s")
    lake.create_table("s.p", "id BIGINT, region STRING")
    lake.set_partitioning("s.p", ["region"])
    lake.write(pa.table({"id": pa.array(range(40), pa.int64()), "region": ["eu", "us"] * 20}), "s.p")
    lake.close()
    out = plugin_session.run(SCRIPT, {"url": catalog, "data": data})

    rows = {i: [i, f"n{i}", i] for i in range(200)} | {1000: [1000, "a", 1], 1001: [1001, "b", 2],
                                                        1002: [1002, "c", 3]}
    for i in range(3, 200, 10):
        del rows[i]
    assert out["after_delete"] == sorted(rows.values()), out["after_delete"]
    del rows[1001]
    assert out["after_delete_inlined"] == sorted(rows.values())
    updated = [i for i in rows if i % 10 == 5 or i == 1000]
    for i in updated:
        rows[i] = [i, "u", rows[i][2] + 1]
    assert out["after_update"] == sorted(rows.values())
    rows[1] = [1, "m", 7]
    del rows[2]
    rows[500] = [500, "new", 5]
    rows[1000][2] = rows[1002][2] = -1
    assert out["after_merge"] == sorted(rows.values())
    assert out["src_after"] == [[0]]
    assert "boom" in out["failed"]
    moved = [i + 100 for i in range(2, 40, 4)]  # the eu rows (even ids) the DELETE left, now us
    assert out["p_delete"] == [] and out["p_update"] == []
    assert out["p_rows"] == [["us", 30, sum(range(1, 40, 2)) + sum(moved)]], out["p_rows"]
    assert out["p_merge"] == []
    x, y = [i for i in range(1000, 1030) if i % 2 == 0], [i for i in range(1000, 1030) if i % 2]
    p_rows = [("us", 29, sum(range(3, 40, 2)) + sum(moved)), ("x", 15, sum(x)), ("y", 15, sum(y))]  # 1 deleted
    assert out["p_after_merge"] == [list(r) for r in p_rows], out["p_after_merge"]
    expected = sorted(tuple(r) for r in rows.values())

    lake = DuckLake.attach(catalog, data)
    # One snapshot per statement; a DELETE matching nothing commits none.
    changes = [sorted(s.changes) for s in lake.snapshots()]
    ids = [s.snapshot_id for s in lake.snapshots()]
    first = 8  # main, s, p created, partitioned and written, t created, its two INSERTs: then the DELETE
    assert changes[first:-3] == [
        ["tables_deleted_from"],  # DELETE: a delete file per touched data file
        ["inlined_delete"],  # the inlined row's end
        ["inlined_delete", "tables_deleted_from", "tables_inserted_into"],  # UPDATE: 21 rows, new versions a file
        ["inlined_insert", "tables_created"],  # the merge source (CTAS of three rows: inlined)
        ["inlined_delete", "inlined_insert"],  # MERGE: 3 updates, 1 delete, 1 insert (few rows: inlined)
        ["inlined_delete", "tables_deleted_from"]], changes  # DELETE FROM src: truncated as INSERT OVERWRITE does
    assert "tables_inserted_into" in changes[-1], changes[-1]  # the MERGE into p: partitioned files
    assert sorted(tuple(r.values()) for r in lake.read_arrow("s.t").to_pylist()) == expected
    assert lake.read_arrow("s.src").num_rows == 0
    leftovers = [os.path.join(root, name) for root, dirs, files in os.walk(data) for name in dirs + files
                 if "_spark_staging" in name or name.startswith(("part-", "deletes-", "updates-"))]
    assert leftovers == []
    lake.close()

    con = connect()
    attach(con, catalog)
    assert duckdb_rows(con, "SELECT id, name, score FROM lake.s.t") == sorted(expected, key=repr)
    assert duckdb_rows(con, "SELECT region, count(*), sum(id) FROM lake.s.p GROUP BY region") == p_rows
    assert duckdb_rows(con, "SELECT count(*) FROM lake.s.p WHERE region = 'x'") == [(15,)]  # pruned by partition
    # Row lineage: an updated row keeps its row id (as DuckLake.update and DuckDB's UPDATE keep it).
    before_update, after_update = ids[first + 1], ids[first + 2]
    listed = ", ".join(str(i) for i in updated)
    before = duckdb_rows(con, f"SELECT rowid, id FROM lake.s.t AT (VERSION => {before_update}) WHERE id IN ({listed})")
    after = duckdb_rows(con, f"SELECT rowid, id FROM lake.s.t AT (VERSION => {after_update}) WHERE id IN ({listed})")
    assert before == after and len(after) == len(updated)
    con.close()


def _staged(service: CatalogService, rows: dict) -> str:
    """A staging folder of `begin_write` holding one Parquet file per kind (`deletes`, `updates`), as the
    plugin's DeltaWriter writes them."""
    staging = service.answer({"op": "begin_write", "namespace": "main", "table": "t"})["staging"]
    os.makedirs(staging)
    for kind, table in rows.items():
        pq.write_table(table, f"{staging}{kind}-0.parquet")
    return staging


def test_service_commits_changes_after_the_read_snapshot_with_the_conflict_rules(tmp_path):
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"),
                           small_data_threshold="1GB")
    lake.create_table("main.t", "id BIGINT, name STRING")
    lake.write(pa.table({"id": pa.array(range(100), pa.int64()), "name": [f"n{i}" for i in range(100)]}), "main.t")
    service = CatalogService(lake, str(tmp_path))
    read = lake.current_snapshot()
    (data_file,) = lake.plan_scan("main.t").files

    def commit(staging: str, **files) -> dict:
        return service.answer({"op": "commit_row_level", "namespace": "main", "table": "t", "snapshot": read,
                               "staging": staging, **{k: [f"{staging}{k}-0.parquet"] for k in files}})

    # UPDATE of 12 rows (above the inlining limit): new versions written as a file keeping the old row ids, by the
    # service itself whatever the small-data threshold (it has no Spark to hand them to).
    lake.small_data_threshold = 0
    versions = pa.table({"id": pa.array(range(12), pa.int64()), "name": ["u"] * 12,
                         "_dl_file_path": [data_file.path] * 12, "_dl_pos": pa.array(range(12), pa.int64())})
    staging = _staged(service, {"updates": versions})
    done = commit(staging, updates=True)
    assert "snapshot" in done, done
    assert not os.path.exists(staging)
    rows = read_plan(lake.plan_scan("main.t"), row_ids=True).to_pylist()
    assert sorted((r["rowid"], r["id"], r["name"]) for r in rows) == [
        (i, i, "u" if i < 12 else f"n{i}") for i in range(100)]

    # A DELETE that read the table before that UPDATE: the same data file changed since, so it conflicts,
    # commits nothing and leaves no file.
    before = lake.current_snapshot()
    staging = _staged(service, {"deletes": pa.table({"file_path": [data_file.path],
                                                          "pos": pa.array([50], pa.int64())})})
    refused = commit(staging, deletes=True)
    assert refused["error"]["kind"] == "conflict", refused
    assert lake.current_snapshot() == before and not os.path.exists(staging)
    lake.close()


CONFLICT_SCRIPT = textwrap.dedent("""
    import os
    import threading
    import time

    a, b = lake_session(args), lake_session(args)  # two sessions, as two users of a Thrift server
    out = {}
    a.sql("CREATE TABLE lake.main.c (id BIGINT, name STRING)")
    a.sql("INSERT INTO lake.main.c SELECT id, concat('n', id) FROM range(40)")  # files, not inlined
    scanning, b_done = os.path.join(args["dir"], "a_scanning"), os.path.join(args["dir"], "b_done")

    def gate(x):  # holds A's scan, which read the table's snapshot already, until B has committed
        if x != 5:  # one task waits, the other's slot (local[2]) runs B's statement
            return True
        open(scanning, "w").close()
        deadline = time.time() + 120
        while not os.path.exists(b_done) and time.time() < deadline:
            time.sleep(0.05)
        return True

    a.udf.register("gate", gate, "boolean")

    def statement_a():
        try:
            a.sql("UPDATE lake.main.c SET name = 'a' WHERE id = 5 AND gate(id)")
            out["a"] = "committed"
        except Exception as e:  # noqa: BLE001 - the message is what is checked
            out["a"] = f"{type(e).__name__}: {str(e).splitlines()[0]}"

    thread = threading.Thread(target=statement_a)
    thread.start()
    deadline = time.time() + 120
    while not os.path.exists(scanning) and time.time() < deadline:
        time.sleep(0.05)
    b.sql("DELETE FROM lake.main.c WHERE id = 5")
    out["b"] = "committed"
    open(b_done, "w").close()
    thread.join()
    out["rows"] = [list(r) for r in b.sql("SELECT count(*), min(name), max(name) FROM lake.main.c").collect()]
""")


@pytest.mark.spark
@pytest.mark.own_session
def test_conflicting_row_level_statements_of_two_sessions(tmp_path, plugin_session):
    """Two sessions change the same row: the one committing first wins, the other gets the Python API's conflict as
    a Spark analysis error naming the table, and commits nothing."""
    catalog, data = f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data")
    DuckLake.attach(catalog, data).close()
    out = plugin_session.run(CONFLICT_SCRIPT, {"url": catalog, "data": data, "dir": str(tmp_path)})
    assert out["b"] == "committed"
    assert out["a"].startswith("AnalysisException: [DUCKLAKE_CONFLICT] main.c: "), out["a"]
    assert out["rows"] == [[39, "n0", "n9"]]  # B's delete only; nothing of A's update
    lake = DuckLake.attach(catalog, data)
    # main, the table, its rows, B's delete (one position: inlined); no snapshot of A's
    assert [sorted(s.changes) for s in lake.snapshots()][1:] == [["tables_created"], ["tables_inserted_into"],
                                                                  ["inlined_delete"]]
    assert not any("_spark_staging" in name for _root, dirs, _files in os.walk(data) for name in dirs)
    lake.close()
