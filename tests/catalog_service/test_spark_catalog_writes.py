"""The Spark catalog plugin's DDL and writes (issue 30, items 3 and 4): CREATE/DROP NAMESPACE, CREATE TABLE
[PARTITIONED BY], ALTER TABLE, DROP TABLE, INSERT INTO / OVERWRITE, df.writeTo(...).append / overwritePartitions /
createOrReplace, CTAS / RTAS, each through plain `spark.sql` in one Spark session (the plugin's tests' child
process, tests/support/plugin_session.py), then read back with DuckLake.read and with DuckDB's ducklake extension.
Each statement is one snapshot; a failed one leaves neither a snapshot nor a file."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from spark_ducklake import DuckLake
from spark_ducklake.catalog_service import CatalogService, partition_keys
from spark_ducklake.errors import InvalidArgumentError
from tests.support.compare import duckdb_rows
from tests.support.reference import attach, connect

SCRIPT = textwrap.dedent("""
    from pyspark.sql import functions as F

    spark = lake_session(args)
    out = {}
    run = recorder(spark, out)

    run("ns", "CREATE NAMESPACE lake.s")
    run("create", "CREATE TABLE lake.s.t (id BIGINT NOT NULL, name STRING, score INT)")
    run("create_p", "CREATE TABLE lake.s.p (id BIGINT, region STRING, ts TIMESTAMP) "
                    "PARTITIONED BY (region, bucket(16, id))")
    run("create_days", "CREATE TABLE lake.s.d (ts TIMESTAMP) PARTITIONED BY (days(ts))")  # a 1.0 catalog
    run("values", "INSERT INTO lake.s.t VALUES (1, 'a', 10), (2, 'b', 20)")
    run("select", "INSERT INTO lake.s.t SELECT id + 100, concat('n', id), CAST(id AS INT) FROM range(50)")
    run("null", "INSERT INTO lake.s.t VALUES (NULL, 'x', 1)")
    run("failed", "INSERT INTO lake.s.t SELECT id, CASE WHEN id = 39 THEN raise_error('boom') ELSE 'q' END, "
                  "CAST(id AS INT) FROM range(40)")
    run("add", "ALTER TABLE lake.s.t ADD COLUMN extra STRING")
    run("rename_col", "ALTER TABLE lake.s.t RENAME COLUMN name TO label")
    run("widen", "ALTER TABLE lake.s.t ALTER COLUMN score TYPE BIGINT")
    run("drop_not_null", "ALTER TABLE lake.s.t ALTER COLUMN id DROP NOT NULL")
    run("set_not_null", "ALTER TABLE lake.s.t ALTER COLUMN label SET NOT NULL")
    run("drop_col", "ALTER TABLE lake.s.t DROP COLUMN extra")
    run("overwrite", "INSERT OVERWRITE lake.s.t SELECT id, concat('o', id), id FROM range(30)")
    spark.range(20).selectExpr("id + 1000 AS id", "'w' AS label", "id AS score").writeTo("lake.s.t").append()
    spark.range(15).selectExpr("id", "'d' AS label", "id * 2 AS score").writeTo("lake.s.t").overwritePartitions()
    # replaces the rows with id >= 10 by three new ones (inlined: few rows)
    spark.range(3).selectExpr("id + 500 AS id", "'v' AS label", "id AS score").writeTo("lake.s.t").overwrite(
        F.col("id") >= 10)
    spark.range(12).selectExpr("id", "'c' AS name").writeTo("lake.s.c").createOrReplace()
    run("ctas", "CREATE TABLE lake.s.ctas AS SELECT id, CAST(id AS STRING) AS s FROM range(40)")
    run("rtas", "REPLACE TABLE lake.s.ctas AS SELECT id, 'r' AS k FROM range(25)")
    run("ctas_failed", "CREATE TABLE lake.s.bad AS SELECT id, CASE WHEN id = 39 THEN raise_error('boom') "
                       "ELSE 'x' END AS x FROM range(40)")
    # a partitioned table: Spark's files partitioned by the service at commit, few rows inlined
    run("partitioned", "INSERT INTO lake.s.p SELECT id, IF(id % 3 = 0, 'eu', 'us'), TIMESTAMP'2026-01-01 10:00:00' "
                       "FROM range(60)")
    run("partitioned_few", "INSERT INTO lake.s.p VALUES (1000, 'eu', TIMESTAMP'2026-01-01 10:00:00')")
    try:
        spark.range(3).selectExpr("id", "'eu' AS region", "current_timestamp() AS ts").writeTo(
            "lake.s.p").overwritePartitions()
    except Exception as e:  # noqa: BLE001 - the message is what is checked
        out["p_dynamic"] = str(e).splitlines()[0]
    run("read_back", "SELECT count(*) AS n, min(k) AS k FROM lake.s.ctas")
    run("rename", "ALTER TABLE lake.s.c RENAME TO lake.s.c2")
    run("drop", "DROP TABLE lake.s.c2")
    run("ns2", "CREATE NAMESPACE lake.gone")
    run("drop_ns", "DROP NAMESPACE lake.gone")
    # CTAS into a partitioned table, then INSERT OVERWRITE of it: the whole table (Spark's static mode), one
    # partition (a PARTITION clause)
    run("ctas_p", "CREATE TABLE lake.s.cp PARTITIONED BY (region) AS "
                  "SELECT id, IF(id % 2 = 0, 'eu', 'us') AS region FROM range(40)")
    run("overwrite_p", "INSERT OVERWRITE lake.s.cp SELECT id, IF(id < 20, 'eu', 'us') FROM range(30)")
    run("overwrite_part", "INSERT OVERWRITE lake.s.cp PARTITION (region = 'us') SELECT id + 100 FROM range(25)")
    run("describe_p", "DESCRIBE TABLE lake.s.p")
""")


@pytest.mark.spark
@pytest.mark.own_session
def test_ddl_and_writes_through_plain_spark_sql(tmp_path, plugin_session):
    catalog, data = f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data")
    DuckLake.attach(catalog, data).close()  # DuckLake 1.0, as DuckDB 1.5.5's extension reads it
    out = plugin_session.run(SCRIPT, {"url": catalog, "data": data})

    assert "NOT_NULL_ASSERT_VIOLATION" in out["null"]
    assert "boom" in out["failed"] and "boom" in out["ctas_failed"]
    assert "DuckLake 1.0 does not support the epoch_day partition transform" in out["create_days"]
    assert "Cannot change nullable column to non-nullable" in out["set_not_null"]  # Spark's own analysis check
    assert out["partitioned"] == [] and out["partitioned_few"] == []
    assert out["ctas_p"] == [] and out["overwrite_p"] == [] and out["overwrite_part"] == [], out
    # Spark sees the partitioning (DESCRIBE's partition section; INSERT ... PARTITION resolves against it)
    described = [(r["col_name"], r["data_type"]) for r in out["describe_p"]]
    assert described[described.index(("# Partitioning", "")) + 1:] == [
        ("Part 0", "region"), ("Part 1", "bucket(16, id)")], described
    # the service's errors as Spark analysis errors naming the table and the cause (issue 30, item 10)
    assert out["p_dynamic"].startswith("[DUCKLAKE_UNSUPPORTED] s.p: the lake catalog cannot overwrite the "
                                       "partitions of s.p dynamically"), out["p_dynamic"]
    assert out["create_days"].startswith("ERROR AnalysisException [DUCKLAKE_INVALID] s.d: DuckLake 1.0"), out
    assert out["rename"] == [] and out["drop"] == [] and out["drop_ns"] == []
    assert out["read_back"] == [{"n": 25, "k": "r"}]  # the RTAS table read through the catalog

    lake = DuckLake.attach(catalog, data)
    # One snapshot per statement, none for the failed ones.
    changes = [sorted(s.changes) for s in lake.snapshots()][1:]
    replaced = changes.pop(13)  # overwrite(condition): the matched rows deleted, the new ones inlined
    assert "inlined_insert" in replaced and {"inlined_delete", "tables_deleted_from"} & set(replaced), replaced
    assert changes == [
        ["schemas_created"], ["tables_created"], ["tables_created"],  # CREATE TABLE p with its partitioning
        ["inlined_insert"], ["tables_inserted_into"],  # VALUES (2 rows) inlined, the SELECT written as files
        *[["tables_altered"]] * 5,
        ["inlined_delete", "tables_deleted_from", "tables_inserted_into"],  # INSERT OVERWRITE
        ["tables_inserted_into"], ["tables_deleted_from", "tables_inserted_into"],  # append, overwritePartitions
        ["tables_created", "tables_inserted_into"],  # createOrReplace of a new table
        ["tables_created", "tables_inserted_into"], ["tables_created", "tables_dropped", "tables_inserted_into"],
        ["tables_inserted_into"], ["inlined_insert"],  # the partitioned table: files, then one inlined row
        ["tables_created"], ["tables_dropped"], ["schemas_created"], ["schemas_dropped"],
        ["tables_created", "tables_inserted_into"],  # CTAS into the partitioned table
        ["tables_deleted_from", "tables_inserted_into"], ["tables_deleted_from", "tables_inserted_into"]], changes
    assert [t.name for t in lake.tables("s")] == ["t", "p", "ctas", "cp"]
    expected_cp = [(i, "eu") for i in range(20)] + [(100 + i, "us") for i in range(25)]
    assert sorted(tuple(r.values()) for r in lake.read_arrow("s.cp").to_pylist()) == expected_cp
    t = lake.table_info("s.t")
    assert [(c.name, c.type, c.nullable) for c in t.columns] == [
        ("id", "int64", True), ("label", "varchar", True), ("score", "int64", True)]
    expected_t = [(i, "d", i * 2) for i in range(10)] + [(500 + i, "v", i) for i in range(3)]
    assert sorted(tuple(r.values()) for r in lake.read_arrow("s.t").to_pylist()) == expected_t
    expected_ctas = [(i, "r") for i in range(25)]
    assert sorted(tuple(r.values()) for r in lake.read_arrow("s.ctas").to_pylist()) == expected_ctas
    # Nothing of the failed statements is left (staging folders removed, only committed files in the tables).
    leftovers = [os.path.join(root, name) for root, dirs, files in os.walk(data) for name in dirs + files
                 if "_spark_staging" in name or name.startswith("part-")]
    assert leftovers == []
    lake.close()

    con = connect()
    attach(con, catalog)
    con.execute("SET TimeZone = 'UTC'")
    assert duckdb_rows(con, "SELECT * FROM lake.s.t") == sorted(expected_t, key=repr)  # duckdb_rows' order
    assert duckdb_rows(con, "SELECT * FROM lake.s.ctas") == sorted(expected_ctas, key=repr)
    assert duckdb_rows(con, "SELECT * FROM lake.s.cp") == sorted(expected_cp, key=repr)
    assert duckdb_rows(con, "SELECT count(*) FROM lake.s.cp WHERE region = 'us'") == [(25,)]
    keys = duckdb_rows(con, "SELECT c.partition_key_index, c.transform FROM __ducklake_metadata_lake."
                            "ducklake_partition_column c JOIN __ducklake_metadata_lake.ducklake_table t "
                            "USING (table_id) WHERE t.table_name = 'p' AND t.end_snapshot IS NULL")
    assert keys == [(0, "identity"), (1, "bucket(16)")]
    # each file of p holds one partition (DuckDB prunes files by their partition values: a wrong one loses rows)
    eu = [i for i in range(60) if i % 3 == 0] + [1000]
    assert duckdb_rows(con, "SELECT count(*), sum(id) FROM lake.s.p WHERE region = 'eu'") == [(len(eu), sum(eu))]
    assert duckdb_rows(con, "SELECT count(*), sum(id) FROM lake.s.p WHERE id = 7") == [(1, 7)]
    assert duckdb_rows(con, "SELECT count(*) FROM lake.s.p") == [(61,)]
    spread = duckdb_rows(con, "SELECT count(*), count(DISTINCT v.data_file_id) FROM __ducklake_metadata_lake."
                              "ducklake_file_partition_value v JOIN __ducklake_metadata_lake.ducklake_table t "
                              "USING (table_id) WHERE t.table_name = 'p' AND v.partition_key_index = 0")
    assert spread[0][0] == spread[0][1] > 2, spread  # one region value per file, several files
    con.close()


def test_service_maps_partition_transforms_and_refuses_others(tmp_path):
    assert partition_keys([{"transform": "identity", "column": "region"},
                           {"transform": "days", "column": "ts"},
                           {"transform": "bucket", "column": "id", "buckets": 16}]) == [
        "region", "days(ts)", "bucket(16, id)"]
    with pytest.raises(InvalidArgumentError, match="truncate"):
        partition_keys([{"transform": "truncate", "column": "s", "text": "truncate(s, 3)"}])
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"),
                           small_data_threshold="1GB")
    service = CatalogService(lake, str(tmp_path))
    schema = json.dumps({"type": "struct", "fields": [{"name": "id", "type": "long", "nullable": True,
                                                       "metadata": {}}]})
    assert service.answer({"op": "create_table", "namespace": "main", "table": "t", "schema": schema})["snapshot"]
    assert service.answer({"op": "create_table", "namespace": "main", "table": "t",
                           "schema": schema})["error"]["kind"] == "exists"
    error = service.answer({"op": "alter_table", "namespace": "main", "table": "t",
                            "changes": [{"change": "other", "column": "id", "what": "UpdateColumnComment"}]})
    assert error["error"]["kind"] == "unsupported" and "UpdateColumnComment" in error["error"]["message"]
    before = lake.current_snapshot()
    error = service.answer({"op": "commit_write", "namespace": "main", "table": "t", "staging": str(tmp_path / "x/"),
                            "mode": "overwrite", "filters": [{"column": "id", "op": "like", "values": ["1"]}]})
    assert error["error"]["kind"] == "unsupported" and lake.current_snapshot() == before
    lake.close()
