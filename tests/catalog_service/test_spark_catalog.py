"""The Spark catalog plugin (issue 30, first slice): lake tables read in plain Spark SQL through
`spark.sql.catalog.lake`, the JVM plugin asking our Python catalog service (spark_ducklake/catalog_service/).

The service is tested directly (no Spark); the plugin in the classic Spark session the plugin's tests share in a
child process (tests/support/plugin_session.py), where the plugin starts its own service (as in a Thrift or Connect
server)."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from datetime import timezone

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.catalog_service import (
    CATALOG_CLASS,
    CATALOG_JAR,
    TOKEN_HEADER,
    CatalogService,
    pruning_predicate,
    spark_catalog_conf,
)
from spark_ducklake.catalog_service.conf import OPTION_TYPES
from spark_ducklake.errors import InvalidArgumentError

ROWS = pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["a", "b"]})


def _jar_or_skip() -> None:
    if not CATALOG_JAR.is_file():
        assert not os.environ.get("CI"), "CI builds the catalog plugin's jar (scripts/build_jar.sh)"
        pytest.skip("the catalog plugin's jar is not built (scripts/build_jar.sh needs a JDK)")


def _lake(tmp_path, **options) -> tuple[DuckLake, str, str]:
    url, data = f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data")
    # Writes stay in-process whatever the lane's SPARK_DUCKLAKE_SMALL_DATA_BYTES: this process starts no Spark.
    return DuckLake.attach(url, data, small_data_threshold="1GB", **options), url, data


def test_conf_names_the_plugin_its_options_and_the_field_id_confs(tmp_path):
    _jar_or_skip()
    conf = spark_catalog_conf("lake", "sqlite:/x/meta.sqlite", "/x/data", read_only=True,
                              data_inlining_row_limit=0, python="/usr/bin/python3")
    assert conf["spark.sql.catalog.lake"] == CATALOG_CLASS
    assert conf["spark.sql.catalog.lake.url"] == "sqlite:/x/meta.sqlite"
    assert conf["spark.sql.catalog.lake.data_path"] == "/x/data"
    assert conf["spark.sql.catalog.lake.read_only"] == "true"
    assert conf["spark.sql.catalog.lake.data_inlining_row_limit"] == "0"
    assert conf["spark.sql.catalog.lake.python"] == "/usr/bin/python3"
    assert conf["spark.jars"] == str(CATALOG_JAR)
    assert conf["spark.sql.parquet.fieldId.read.enabled"] == "true"
    with pytest.raises(InvalidArgumentError, match="unknown catalog option 'colour'"):
        spark_catalog_conf("lake", "sqlite:/x/meta.sqlite", colour="red")
    with pytest.raises(InvalidArgumentError, match="catalog name"):
        spark_catalog_conf("my-lake", "sqlite:/x/meta.sqlite")
    with pytest.raises(InvalidArgumentError, match="catalog option read_only takes true or false: Could not convert "
                                                   "string 'maybe' to BOOL"):
        spark_catalog_conf("lake", "sqlite:/x/meta.sqlite", read_only="maybe")
    assert spark_catalog_conf("lake", "sqlite:/x/meta.sqlite", read_only="Yes")["spark.sql.catalog.lake.read_only"] \
        == "Yes"  # DuckDB's BOOL cast, as lake options take it


def test_every_attach_keyword_is_a_catalog_option():
    """The plugin's options follow DuckLake.attach: a keyword added there cannot be missing here (all but the
    session, and a snapshot time, which has no string form yet)."""
    keywords = set(inspect.signature(DuckLake.attach).parameters) - {"catalog", "data_path", "spark", "snapshot_time"}
    assert set(OPTION_TYPES) == keywords
    _jar_or_skip()
    conf = spark_catalog_conf("lake", "sqlite:/x/meta.sqlite", write_deletion_vectors=True)
    assert conf["spark.sql.catalog.lake.write_deletion_vectors"] == "true"


def test_service_answers_namespaces_tables_schema_and_scans(tmp_path):
    lake, _url, _data = _lake(tmp_path, data_inlining_row_limit=0)
    lake.create_schema("sales")
    lake.create_table("sales.orders", ROWS.schema)
    first = lake.write(ROWS, "sales.orders")
    lake.write(ROWS, "sales.orders")
    service = CatalogService(lake, str(tmp_path))
    assert service.answer({"op": "namespaces"}) == {"namespaces": ["main", "sales"]}
    assert service.answer({"op": "tables", "namespace": "sales"}) == {"tables": ["orders"]}
    table = service.answer({"op": "table", "namespace": "sales", "table": "orders", "version": str(first)})
    assert table["snapshot"] == first
    fields = json.loads(table["schema"])["fields"]
    assert [(f["name"], f["type"], f["metadata"]["parquet.field.id"]) for f in fields] == [
        ("id", "long", 1), ("name", "string", 2)]
    scan = service.answer({"op": "scan", "namespace": "sales", "table": "orders", "snapshot": first})
    assert scan["files"] == 1
    with open(os.path.join(scan["log"], "_spark_metadata", "0")) as log:
        lines = log.read().splitlines()
    assert lines[0] == "v1" and len(lines) == 2
    assert service.answer({"op": "scan", "namespace": "sales", "table": "orders",
                           "snapshot": lake.current_snapshot()})["files"] == 2
    assert service.answer({"op": "table", "namespace": "sales", "table": "nope"})["error"]["kind"] == "not_found"
    assert service.answer({"op": "tables", "namespace": "nope"})["error"]["kind"] == "not_found"
    assert service.answer({"op": "drop"})["error"]["message"] == "unknown catalog service request 'drop'"


def test_service_prunes_files_by_the_filters_spark_pushed(tmp_path):
    lake, _url, _data = _lake(tmp_path, data_inlining_row_limit=0)
    lake.create_table("t", ROWS.schema)
    lake.write(ROWS, "t")
    lake.write(pa.table({"id": pa.array([3], pa.int64()), "name": ["c"]}), "t")
    service = CatalogService(lake, str(tmp_path))

    def files(*filters):
        return service.answer({"op": "scan", "namespace": "main", "table": "t", "filters": list(filters)})["files"]

    assert files() == 2
    assert files({"column": "id", "op": ">", "values": [2]}) == 1
    assert files({"column": "name", "op": "in", "values": ["a", "zz"]}) == 1
    assert files({"column": "id", "op": ">", "values": [2]}, {"column": "name", "op": "=", "values": ["a"]}) == 0
    assert files({"column": "name", "op": "=", "values": ["it's"]}) == 2  # not written as SQL: nothing pruned


def test_pruning_predicate_writes_only_what_it_can_quote():
    assert pruning_predicate([{"column": "id", "op": ">=", "values": [2]},
                              {"column": "s", "op": "in", "values": ["a", "b"]},
                              {"column": "f", "op": "=", "values": [True]},
                              {"column": "x", "op": "is_null", "values": []}]) == (
        "`id` >= 2 AND `s` IN ('a', 'b') AND `f` = TRUE AND `x` IS NULL")
    assert pruning_predicate([{"column": "s", "op": "=", "values": ["a\\'"]},
                              {"column": "a`b", "op": "=", "values": [1]},
                              {"column": "d", "op": "=", "values": [float("nan")]},
                              {"column": "n", "op": "in", "values": [1, None]},
                              {"column": "id", "op": "like", "values": ["x"]}]) is None


def _scan_rows(service: CatalogService, snapshot: int) -> tuple[list[dict], list[str]]:
    """The rows of the files a scan hands to Spark (read here with pyarrow, by name: no rename in these tests)."""
    scan = service.answer({"op": "scan", "namespace": "main", "table": "t", "snapshot": snapshot})
    with open(os.path.join(scan["log"], "_spark_metadata", "0")) as log:
        paths = [json.loads(line)["path"].removeprefix("file://").removeprefix("file:")
                 for line in log.read().splitlines()[1:]]
    rows = pa.concat_tables([pq.read_table(p) for p in paths]) if paths else ROWS.schema.empty_table()
    return rows.sort_by("id").to_pylist(), paths


def test_service_materializes_inlined_rows_and_deletes_as_one_more_file(tmp_path):
    lake, _url, data = _lake(tmp_path)  # small writes are inlined in the catalog
    lake.create_table("t", ROWS.schema)
    lake.set_option("data_inlining_row_limit", 0, table_name="t")
    in_file = lake.write(pa.table({"id": pa.array(range(10, 20), pa.int64()), "name": ["f"] * 10}), "t")
    lake.set_option("data_inlining_row_limit", 10, table_name="t")
    inlined = lake.write(ROWS, "t")
    lake.delete("t", "id IN (1, 12)")  # one inlined row, one row of the file (an inlined delete)
    deleted = lake.current_snapshot()
    assert any(lake.plan_scan("t").inlined_deletes.values())
    service = CatalogService(lake, str(tmp_path / "service"))
    (tmp_path / "service").mkdir()
    for snapshot in (in_file, inlined, deleted):
        rows, paths = _scan_rows(service, snapshot)
        assert rows == lake.read_arrow("t", version=snapshot).sort_by("id").to_pylist()
        scratch = [p for p in paths if not p.startswith(data)]
        assert len(scratch) == (snapshot != in_file) and all(p.startswith(str(tmp_path / "service")) for p in scratch)
    assert len(paths) == 1  # the file with the inlined delete is read with its inlined rows, the delete applied
    assert pq.read_schema(paths[0]).field("name").metadata[b"PARQUET:field_id"] == b"2"
    assert _scan_rows(service, deleted)[1] == paths  # the rows at a snapshot never change: the file is reused
    lake.small_data_threshold = 10  # bytes: the file with the inlined delete is too big to rewrite in the service
    error = service.answer({"op": "scan", "namespace": "main", "table": "t", "snapshot": deleted})["error"]
    assert error["kind"] == "unsupported" and "inlined deletes in 1 data files" in error["message"]
    assert "flush_inlined_data" in error["message"]
    assert service.answer({"op": "scan", "namespace": "main", "table": "t", "snapshot": inlined})["files"] == 2


def test_service_reads_files_predating_a_column_default_itself_up_to_the_threshold(tmp_path):
    lake, _url, data = _lake(tmp_path, data_inlining_row_limit=0)
    lake.create_table("t", ROWS.schema)
    lake.write(ROWS, "t")
    service = CatalogService(lake, str(tmp_path / "service"))
    (tmp_path / "service").mkdir()
    lake.add_column("t", "plain", "BIGINT")  # older files read NULL for it: Spark's reader does that by field id
    assert _scan_rows(service, lake.current_snapshot())[1][0].startswith(data)  # the data file itself
    lake.add_column("t", "score", "BIGINT", default=5)
    # Spark's reader would read NULL for the default: the service reads the rows and writes them, filled in
    rows, paths = _scan_rows(service, lake.current_snapshot())
    assert rows == lake.read_arrow("t").sort_by("id").to_pylist() and {r["score"] for r in rows} == {5}
    assert len(paths) == 1 and paths[0].startswith(str(tmp_path / "service"))
    assert pq.read_schema(paths[0]).field("score").metadata[b"PARQUET:field_id"] == b"4"
    lake.small_data_threshold = 10  # bytes: too big to read in the service
    error = service.answer({"op": "scan", "namespace": "main", "table": "t"})["error"]
    assert error["kind"] == "unsupported" and "a column added with a default" in error["message"]
    assert "small-data threshold" in error["message"]


def test_service_process_speaks_http_with_a_token(tmp_path):
    lake, url, data = _lake(tmp_path)
    lake.close()
    child = subprocess.Popen([sys.executable, "-m", "spark_ducklake.catalog_service"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        child.stdin.write(json.dumps({"url": url, "data_path": data}) + "\n")
        child.stdin.flush()
        hello = json.loads(child.stdout.readline())

        def post(token: str) -> dict:
            request = urllib.request.Request(f"http://127.0.0.1:{hello['port']}/", data=b'{"op": "namespaces"}',
                                             headers={TOKEN_HEADER: token})
            with urllib.request.urlopen(request, timeout=30) as reply:
                return json.loads(reply.read())

        assert post(hello["token"]) == {"namespaces": ["main"]}
        with pytest.raises(urllib.error.HTTPError, match="403"):
            post("guessed")
        child.stdin.close()  # the JVM went away: the service ends
        assert child.wait(timeout=30) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


SCRIPT = textwrap.dedent("""
    import pytest
    from pyspark.errors import AnalysisException
    from spark_ducklake import spark_catalog_conf

    conf = spark_catalog_conf("lake", args["url"], args["data"])
    conf |= {k.replace(".lake", ".broken", 1): v for k, v in conf.items() if k.startswith("spark.sql.catalog.lake")}
    conf["spark.sql.catalog.broken.python"] = "/nonexistent/python"
    spark = plugin_session(conf | {"spark.sql.session.timeZone": "UTC"})

    def rows(query):
        return [r.asDict() for r in spark.sql(query).collect()]

    def error(query):
        try:
            spark.sql(query).collect()
        except Exception as e:  # noqa: BLE001 - the message is what is checked
            return str(e)
        return None

    def refused(query):  # our errors reach the user as Spark's analysis errors, no stack trace of ours
        with pytest.raises(AnalysisException) as caught:
            spark.sql(query).collect()
        assert "at sparkducklake." not in str(caught.value) and "Traceback" not in str(caught.value)
        return str(caught.value)

    out = {
        "namespaces": rows("SHOW NAMESPACES IN lake"),
        "tables": rows("SHOW TABLES IN lake.sales"),
        "latest": rows("SELECT * FROM lake.sales.orders ORDER BY id"),
        "filtered": rows("SELECT label FROM lake.sales.orders WHERE id > 1 ORDER BY label"),
        "pruned": rows("SELECT id FROM lake.sales.orders WHERE id >= 3 AND label IN ('c', 'q')"),
        "version": rows(f"SELECT * FROM lake.sales.orders VERSION AS OF {args['first']} ORDER BY id"),
        "timestamp": rows(f"SELECT * FROM lake.sales.orders TIMESTAMP AS OF '{args['when']}' ORDER BY id"),
        "describe": rows("DESCRIBE TABLE lake.sales.orders"),
        "reused": rows("SELECT id FROM lake.main.reused WHERE x IS NULL ORDER BY id"),
        # inlined rows and inlined deletes, at every snapshot
        "small": rows("SELECT * FROM lake.main.small ORDER BY id"),
        "small_at": {str(v): rows(f"SELECT * FROM lake.main.small VERSION AS OF {v} ORDER BY id")
                     for v in args["small_versions"]},
        "pruned_away": rows("SELECT id, name FROM lake.sales.parts WHERE id >= 3"),
        "spoiled": error("SELECT * FROM lake.sales.parts"),
        "missing": refused("SELECT * FROM lake.sales.nope"),
        "no_python": refused("SHOW NAMESPACES IN broken"),
        "no_schema": refused("SHOW TABLES IN lake.nope"),
        "no_version": refused("SELECT * FROM lake.sales.orders VERSION AS OF 999"),
        "bad_version": refused("SELECT * FROM lake.sales.orders VERSION AS OF 'abc'"),
        "exists": refused("CREATE TABLE lake.sales.orders (id BIGINT)"),
        "schema_exists": refused("CREATE NAMESPACE lake.sales"),
        "unsupported": refused("ALTER TABLE lake.sales.orders ADD COLUMN z INT FIRST"),
    }
    spark.sql("USE lake.sales")
    out["use"] = rows("SELECT count(*) AS n FROM orders")
""")


@pytest.mark.spark
@pytest.mark.own_session
def test_plain_spark_sql_reads_lake_tables_through_the_catalog(tmp_path, plugin_session):
    lake, url, data = _lake(tmp_path, data_inlining_row_limit=0)
    lake.create_schema("sales")
    lake.create_table("sales.orders", ROWS.schema)
    first = lake.write(ROWS, "sales.orders")
    lake.rename_column("sales.orders", "name", "label")  # read by field id, not by the files' column names
    lake.write(pa.table({"id": pa.array([3], pa.int64()), "label": ["c"]}), "sales.orders")
    lake.create_table("small", ROWS.schema)
    small_versions = [lake.write(pa.table({"id": pa.array([10, 11, 12], pa.int64()), "name": ["x", "y", "z"]}),
                                 "small")]
    # Pruning proven end to end: a file the filter rules out is unreadable, so only a pruned scan succeeds.
    lake.create_table("sales.parts", ROWS.schema)
    lake.write(ROWS, "sales.parts")
    unreadable = [f.path for f in lake.plan_scan("sales.parts").files]
    lake.write(pa.table({"id": pa.array([3], pa.int64()), "name": ["c"]}), "sales.parts")
    with open(unreadable[0], "wb") as spoiled:
        spoiled.write(b"not parquet")
    # `x` names two columns over time: a filter matched to the files by name would skip the old file's rows.
    lake.create_table("reused", pa.schema([("id", pa.int64()), ("x", pa.int64())]))
    lake.write(pa.table({"id": pa.array([1], pa.int64()), "x": pa.array([7], pa.int64())}), "reused")
    lake.drop_column("reused", "x")
    lake.add_column("reused", "x", "BIGINT")
    lake.write(pa.table({"id": pa.array([2], pa.int64()), "x": pa.array([7], pa.int64())}), "reused")
    expected_reused = lake.read_arrow("reused", where="x IS NULL").to_pylist()
    when = next(s.snapshot_time for s in lake.snapshots() if s.snapshot_id == first)
    expected_latest = lake.read_arrow("sales.orders").sort_by("id").to_pylist()
    expected_first = lake.read_arrow("sales.orders", version=first).sort_by("id").to_pylist()
    lake.close()
    inlining, _u, _d = _lake(tmp_path)  # the same lake; this handle inlines small writes
    small_versions.append(inlining.write(ROWS, "small"))
    inlining.delete("small", "id IN (1, 11)")  # an inlined row and a file's row (an inlined delete)
    small_versions.append(inlining.current_snapshot())
    assert any(inlining.plan_scan("small").inlined_deletes.values())
    expected_small = {str(v): inlining.read_arrow("small", version=v).sort_by("id").to_pylist()
                      for v in small_versions}
    inlining.close()

    args = {"url": url, "data": data, "first": first, "small_versions": small_versions,
            "when": when.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")}
    out = plugin_session.run(SCRIPT, args)  # the one classic session of the plugin's tests (a child process)

    assert out["namespaces"] == [{"namespace": "main"}, {"namespace": "sales"}]
    assert out["tables"] == [{"namespace": "sales", "tableName": "orders", "isTemporary": False},
                             {"namespace": "sales", "tableName": "parts", "isTemporary": False}]
    assert out["latest"] == expected_latest == [{"id": 1, "label": "a"}, {"id": 2, "label": "b"},
                                                {"id": 3, "label": "c"}]
    assert out["filtered"] == [{"label": "b"}, {"label": "c"}]
    assert out["pruned"] == [{"id": 3}]
    assert out["version"] == expected_first == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]
    assert out["timestamp"] == expected_first
    assert out["describe"][:2] == [{"col_name": "id", "data_type": "bigint", "comment": None},
                                   {"col_name": "label", "data_type": "string", "comment": None}]
    assert out["reused"] == [{"id": r["id"]} for r in expected_reused] == [{"id": 1}]
    assert out["use"] == [{"n": 3}]
    assert out["pruned_away"] == [{"id": 3, "name": "c"}]
    assert out["spoiled"] is not None and len(unreadable) == 1
    assert out["small_at"] == expected_small and len({json.dumps(v) for v in expected_small.values()}) == 3
    assert out["small"] == expected_small[str(small_versions[-1])] == [
        {"id": 2, "name": "b"}, {"id": 10, "name": "x"}, {"id": 12, "name": "z"}]
    assert "TABLE_OR_VIEW_NOT_FOUND" in out["missing"] and "nope" in out["missing"]
    assert "cannot start the lake catalog service with /nonexistent/python" in out["no_python"]
    assert "SCHEMA_NOT_FOUND" in out["no_schema"] and "nope" in out["no_schema"]
    assert "[DUCKLAKE_NOT_FOUND] sales.orders: snapshot 999 does not exist" in out["no_version"]
    assert "[DUCKLAKE_INVALID] sales.orders: VERSION AS OF takes a snapshot id, not 'abc'" in out["bad_version"]
    assert "TABLE_OR_VIEW_ALREADY_EXISTS" in out["exists"] and "orders" in out["exists"]
    assert "SCHEMA_ALREADY_EXISTS" in out["schema_exists"] and "sales" in out["schema_exists"]
    assert "[DUCKLAKE_UNSUPPORTED] sales.orders: ALTER TABLE AddColumn with a position" in out["unsupported"]
