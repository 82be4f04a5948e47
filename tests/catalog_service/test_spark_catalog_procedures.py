"""The Spark catalog plugin's procedures (issue 30, item 6): `CALL lake.system.<name>(...)` for the reference's
maintenance functions (expire_snapshots, cleanup_old_files, delete_orphaned_files, merge_adjacent_files,
rewrite_data_files, flush_inlined_data, add_data_files, set_option, checkpoint) and metadata (snapshots,
table_info, list_files, options, settings), with positional and named arguments, through plain `spark.sql` in one
Spark session (the plugin's tests' child process, tests/support/plugin_session.py). Their effects are checked on
the lake afterwards, with DuckLake and with DuckDB's ducklake extension; bad calls are Spark analysis errors naming
the procedure and the argument."""

from __future__ import annotations

import os
import textwrap
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.catalog_service import CatalogService
from tests.support.compare import duckdb_rows
from tests.support.reference import attach, connect

SCRIPT = textwrap.dedent("""
    spark = lake_session(args)
    out = {}
    run = recorder(spark, out)

    run("ns", "CREATE NAMESPACE lake.s")
    run("create", "CREATE TABLE lake.s.t (id BIGINT, name STRING)")
    for i in range(3):  # two files each (local[2]), 50 rows: above the inlining limit
        run(f"insert{i}", f"INSERT INTO lake.s.t SELECT id + {i * 100}, 'f' FROM range(50)")
    run("set_global", "CALL lake.system.set_option('target_file_size', '32MB')")
    run("set_table", "CALL lake.system.set_option('data_inlining_row_limit', 100, table_name => 't', "
                     "schema => 's')")
    run("inlined", "INSERT INTO lake.s.t SELECT id + 1000, 'i' FROM range(50)")  # inlined: the limit is 100 now
    spark.sql("CALL lake.system.flush_inlined_data(schema_name => 's', table_name => 't')")  # runs uncollected
    run("flush_again", "CALL lake.system.flush_inlined_data()")
    run("files_before", "CALL lake.system.list_files('t', 's')")
    run("files_at_4", "CALL lake.system.list_files('t', 's', snapshot_version => 4)")
    run("merge", "CALL lake.system.merge_adjacent_files('t', schema => 's')")
    run("files_after", "CALL lake.system.list_files(table_name => 't', schema => 's')")
    run("rewrite", "CALL lake.system.rewrite_data_files('t', 's', delete_threshold => 0.5)")
    run("add", f"CALL lake.system.add_data_files('t', '{args['extra']}', schema => 's')")
    run("snapshots", "CALL lake.system.snapshots()")
    run("expire_dry", "CALL lake.system.expire_snapshots(versions => array(2, 3), dry_run => true)")
    run("expire", "CALL lake.system.expire_snapshots(now())")
    run("snapshots_after", "CALL lake.system.snapshots()")
    run("cleanup_dry", "CALL lake.system.cleanup_old_files(cleanup_all => true, dry_run => true)")
    run("cleanup", "CALL lake.system.cleanup_old_files(NULL, true)")
    run("orphans", "CALL lake.system.delete_orphaned_files(older_than => now() - INTERVAL 1 HOUR)")
    run("checkpoint", "CALL lake.system.checkpoint()")
    run("table_info", "CALL lake.system.table_info()")
    run("options", "CALL lake.system.options()")
    run("settings", "CALL lake.system.settings()")
    run("read", "SELECT count(*) AS n, sum(id) AS total FROM lake.s.t")
    run("show", "SHOW PROCEDURES IN lake.system")
    # errors: Spark analysis errors naming the procedure and the argument
    run("unknown", "CALL lake.system.vacuum()")
    run("wrong_namespace", "CALL lake.s.snapshots()")
    run("bad_value", "CALL lake.system.expire_snapshots(dry_run => 'yes')")
    run("bad_name", "CALL lake.system.merge_adjacent_files(table => 't')")
    run("missing", "CALL lake.system.add_data_files('t')")
    run("no_table", "CALL lake.system.list_files('nope', 's')")
    run("both", "CALL lake.system.expire_snapshots(now(), array(1))")
""")


@pytest.mark.spark
@pytest.mark.own_session
def test_call_procedures_through_plain_spark_sql(tmp_path, plugin_session):
    catalog, data = f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data")
    DuckLake.attach(catalog, data).close()  # DuckLake 1.0, as DuckDB 1.5.5's extension reads it
    extra = tmp_path / "extra.parquet"  # registered with add_data_files
    pq.write_table(pa.table({"id": pa.array([5000, 5001], pa.int64()), "name": ["a", "a"]}), extra)
    orphan = tmp_path / "data" / "s" / "orphan.parquet"  # a file the catalog does not know, two hours old
    orphan.parent.mkdir(parents=True)
    pq.write_table(pa.table({"x": [1]}), orphan)
    os.utime(orphan, (time.time() - 7200, time.time() - 7200))
    out = plugin_session.run(SCRIPT, {"url": catalog, "data": data, "extra": str(extra)})

    # set_option: the option's rows as options() shows them
    assert [(r["option_name"], r["value"], r["scope"]) for r in out["set_global"]] == [
        ("target_file_size", "32000000", "GLOBAL")]
    assert [(r["value"], r["scope"], r["scope_entry"]) for r in out["set_table"]] == [("100", "TABLE", "s.t")]
    # the inlined rows were flushed by the first (uncollected) CALL: nothing is left for the second
    assert "inlined_insert" in out["snapshots"][6]["changes"], out["snapshots"][6]
    assert out["flush_again"] == []
    assert len(out["files_before"]) == 7 and out["merge"] == [  # 3 inserts of 2 files, the flushed rows' file
        {"schema_name": "s", "table_name": "t", "files_processed": 7, "files_created": 1}]
    assert len(out["files_at_4"]) == 4 and len(out["files_after"]) == 1  # snapshot 4: after the second insert
    assert out["rewrite"] == []  # no deleted rows to rewrite
    assert out["add"] == [{"path": str(extra)}]
    ids = [r["snapshot_id"] for r in out["snapshots"]]
    assert [r["snapshot_id"] for r in out["expire_dry"]] == [2, 3]
    assert [r["snapshot_id"] for r in out["expire"]] == ids[:-1]  # all but the current one
    assert [r["snapshot_id"] for r in out["snapshots_after"]] == ids[-1:]
    assert out["snapshots"][2]["changes"] == {"tables_created": ["s.t"]}  # a map of lists
    merged_away = sorted(r["data_file"] for r in out["files_before"])
    assert sorted(r["path"] for r in out["cleanup_dry"]) == merged_away
    assert sorted(r["path"] for r in out["cleanup"]) == merged_away
    assert not any(os.path.exists(p) for p in merged_away)
    assert [r["path"] for r in out["orphans"]] == [str(orphan)] and not orphan.exists()
    assert [r["step"] for r in out["checkpoint"]] == [
        "flush_inlined_data", "expire_snapshots", "merge_adjacent_files", "rewrite_data_files",
        "cleanup_old_files", "delete_orphaned_files"]
    assert [(r["table_name"], r["file_count"]) for r in out["table_info"]] == [("t", 1)]  # checkpoint merged
    assert {"target_file_size", "data_inlining_row_limit"} <= {r["option_name"] for r in out["options"]}
    assert out["settings"][0]["catalog_type"] == "sqlite"
    expected_total = sum(range(50)) * 4 + (100 + 200 + 1000) * 50 + 5000 + 5001
    assert out["read"] == [{"n": 202, "total": expected_total}]
    assert {r["procedure_name"] for r in out["show"]} >= {"expire_snapshots", "checkpoint", "snapshots"}, out["show"]

    assert out["unknown"].startswith("ERROR AnalysisException [DUCKLAKE_NOT_FOUND] lake.system.vacuum: no "
                                     "procedure 'vacuum'"), out["unknown"]
    assert "[DUCKLAKE_NOT_FOUND] lake.s.snapshots" in out["wrong_namespace"], out["wrong_namespace"]
    assert ("[DUCKLAKE_INVALID] lake.system.expire_snapshots: argument dry_run of expire_snapshots must be true "
            "or false") in out["bad_value"], out["bad_value"]
    assert "UNRECOGNIZED_PARAMETER_NAME" in out["bad_name"] and "`table`" in out["bad_name"]
    assert "REQUIRED_PARAMETER_NOT_FOUND" in out["missing"] and "`file_path`" in out["missing"]
    assert "[DUCKLAKE_NOT_FOUND] lake.system.list_files" in out["no_table"] and "nope" in out["no_table"]
    assert "[DUCKLAKE_INVALID] lake.system.expire_snapshots" in out["both"] and "versions" in out["both"]

    lake = DuckLake.attach(catalog, data)
    assert lake.option("target_file_size") == "32000000"
    snapshots = lake.snapshots()
    rows = sorted(tuple(r.values()) for r in lake.read_arrow("s.t").to_pylist())
    assert len(rows) == 202 and rows[-2:] == [(5000, "a"), (5001, "a")]
    lake.close()
    con = connect()
    attach(con, catalog)
    assert duckdb_rows(con, "SELECT count(*), sum(id) FROM lake.s.t") == [(202, expected_total)]
    assert duckdb_rows(con, "SELECT count(*) FROM ducklake_snapshots('lake')") == [(len(snapshots),)]
    con.close()


def test_service_describes_and_refuses_procedure_arguments(tmp_path):
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"))
    service = CatalogService(lake, str(tmp_path))
    described = service.answer({"op": "procedure", "name": "merge_adjacent_files"})
    assert [(p["name"], p["type"], p["required"]) for p in described["parameters"]] == [
        ("table_name", "string", False), ("schema", "string", False), ("min_file_size", "bigint", False),
        ("max_file_size", "bigint", False), ("max_compacted_files", "bigint", False)]
    reply = service.answer({"op": "call", "name": "set_option", "args": {
        "option": {"type": "string", "value": "parquet_compression"}, "value": {"type": "string", "value": "zstd"}}})
    assert reply["rows"] == [["parquet_compression", reply["rows"][0][1], "zstd", "GLOBAL", None]]
    bad = service.answer({"op": "call", "name": "merge_adjacent_files",
                          "args": {"max_compacted_files": {"type": "string", "value": "ten"}}})
    assert bad["error"] == {"kind": "invalid", "message": "argument max_compacted_files of merge_adjacent_files "
                                                          "must be an integer, not string 'ten'"}
    stamp = service.answer({"op": "call", "name": "snapshots"})["rows"][0][1]
    assert isinstance(stamp, int)  # microseconds since the epoch, as Spark keeps timestamps
    lake.close()
