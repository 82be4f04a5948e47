"""Lakes on object storage: a PostgreSQL catalog with data on a real S3 server on 127.0.0.1 (scripts/s3.sh), read
and written by Spark (s3a) and pyarrow, and by DuckDB's extension (httpfs) on the same bucket.

Run with `SPARK_DUCKLAKE_TEST_S3=1 SPARK_DUCKLAKE_S3_JARS=$(scripts/s3_jars.sh) pytest -m s3` (the session then
gets the s3a jars); skipped on a laptop without the server, failing in CI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from datetime import timedelta

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa

from spark_ducklake import DuckLake
from spark_ducklake.catalog.database.spec_tables import METADATA
from spark_ducklake.errors import StorageError
from tests.conftest import _require
from tests.support import s3

pytestmark = pytest.mark.s3


@pytest.fixture(scope="module", autouse=True)
def _server():
    """Only the object-storage lane (SPARK_DUCKLAKE_TEST_S3=1, which gives the session the s3a jars) runs these;
    there, a missing server or jars skip on a laptop and fail in CI."""
    if os.environ.get("SPARK_DUCKLAKE_TEST_S3") != "1":
        pytest.skip("object-storage lane only: SPARK_DUCKLAKE_TEST_S3=1 (docs/object-storage.md)")
    s3.env_defaults()
    _require(s3.problem())


@pytest.fixture
def prefix():
    """A fresh `s3://lake/<random>/` data path, emptied afterwards."""
    name = f"t-{uuid.uuid4().hex[:10]}"
    yield f"s3://{s3.BUCKET}/{name}/"
    fs, _ = pafs.FileSystem.from_uri(f"s3://{s3.BUCKET}/")
    fs.delete_dir_contents(f"{s3.BUCKET}/{name}", missing_dir_ok=True)


@pytest.fixture
def lake(pg_catalog, prefix, spark):
    lake = DuckLake.attach(pg_catalog, prefix, spark=spark)
    yield lake
    lake.close()


def _objects(prefix: str) -> list[str]:
    fs, inner = pafs.FileSystem.from_uri(prefix)
    return sorted("s3://" + i.path for i in fs.get_file_info(pafs.FileSelector(inner, recursive=True))
                  if i.type == pafs.FileType.File)


def _ids(df, col: str = "id") -> list:
    return sorted(r[col] for r in df.collect())


def test_write_read_and_time_travel(lake, prefix, spark):
    lake.create_table("t", "id BIGINT, name VARCHAR")
    lake.write(spark.range(0, 100).selectExpr("id", "concat('n', id) AS name"), "t")
    first = lake.current_snapshot()
    lake.write(spark.range(100, 150).selectExpr("id", "concat('n', id) AS name"), "t")
    assert _ids(lake.read("t")) == list(range(150))
    assert _ids(lake.read("t", version=first)) == list(range(100))
    files = [f for f in _objects(prefix) if f.endswith(".parquet")]
    assert files and all(os.path.basename(f).startswith("ducklake-") for f in files)
    assert not [f for f in _objects(prefix) if "staging" in f or "_temporary" in f]


def test_partitioned_write_and_row_level_changes(lake, prefix, spark):
    lake.create_table("t", "id BIGINT, kind VARCHAR, amount DOUBLE")
    lake.set_partitioning("t", ["kind"])
    lake.write(spark.sql("SELECT id, CASE WHEN id % 2 = 0 THEN 'a/b' ELSE 'c' END AS kind, "
                         "CAST(id * 1.5 AS DOUBLE) AS amount FROM range(200)"), "t")
    dirs = {f.rsplit("/", 2)[1] for f in _objects(prefix) if f.endswith(".parquet")}
    assert dirs == {"kind=a%2Fb", "kind=c"}  # the reference's hive layout, literally on the store
    table = lake.table("t")
    table.delete("id < 20")
    table.update("id = 50", {"amount": "-1.0"})
    changes = spark.createDataFrame([(60, "c", 2.0), (5000, "new", 3.0)], "id long, kind string, amount double")
    result = table.merge(changes, "target.id = source.id").when_matched_update_all() \
        .when_not_matched_insert_all().execute()
    assert (result.inserted, result.updated) == (1, 1)
    rows = {r["id"]: (r["kind"], r["amount"]) for r in lake.read("t").collect()}
    assert sorted(rows) == list(range(20, 200)) + [5000]
    assert rows[50] == ("a/b", -1.0) and rows[60] == ("c", 2.0) and rows[61] == ("c", 91.5)


def test_maintenance_on_object_storage(lake, prefix, spark):
    lake.create_table("t", "id BIGINT")
    for start in range(0, 60, 20):                       # three small files
        lake.write(spark.range(start, start + 20).coalesce(1), "t")
    lake.write(spark.range(1000, 1003), "t")             # inlined
    lake.flush_inlined_data()
    assert lake.snapshots()[-1].changes and len(lake.plan_scan("t").files) == 4
    lake.merge_adjacent_files()
    assert len(lake.plan_scan("t").files) == 1
    assert _ids(lake.read("t")) == list(range(60)) + [1000, 1001, 1002]
    lake.expire_snapshots(older_than=timedelta(0))
    before = set(_objects(prefix))
    removed = {r.path for r in lake.cleanup_old_files(cleanup_all=True)}
    assert len(removed) == 4 and removed <= before and not removed & set(_objects(prefix))
    stray = f"{prefix}main/t/ducklake-stray.parquet"
    fs, inner = pafs.FileSystem.from_uri(stray)
    pq.write_table(pa.table({"id": [1]}), inner, filesystem=fs)
    assert [r.path for r in lake.delete_orphaned_files(cleanup_all=True)] == [stray]
    assert stray not in _objects(prefix)
    assert _ids(lake.read("t")) == list(range(60)) + [1000, 1001, 1002]


def test_add_data_files_from_the_store(lake, prefix, spark):
    lake.create_table("t", "id BIGINT, name VARCHAR")
    fs, inner = pafs.FileSystem.from_uri(prefix)
    for i in range(3):
        pq.write_table(pa.table({"id": pa.array(range(i * 10, i * 10 + 10), pa.int64()),
                                 "name": [f"n{j}" for j in range(10)]}), f"{inner}/inbox/f{i}.parquet", filesystem=fs)
    added = lake.add_data_files("t", f"{prefix}inbox/*.parquet")
    assert len(added) == 3
    assert _ids(lake.read("t")) == list(range(30))


def test_streaming_sink_batch(lake, spark):
    lake.create_table("t", "id BIGINT")
    write = lake.stream_writer("t", query_id="s3-query")
    write(spark.range(0, 50), 0)
    write(spark.range(0, 50), 0)                          # re-delivered: skipped
    write(spark.range(50, 60), 1)
    assert _ids(lake.read("t")) == list(range(60))


def _duckdb_s3(reference):
    """The reference connection with httpfs loaded (offline, from the duckdb-extension-httpfs wheel) and a secret
    for the local server."""
    reference.execute("LOAD httpfs")
    reference.execute(f"""CREATE OR REPLACE SECRET s3local (TYPE s3, KEY_ID '{os.environ["AWS_ACCESS_KEY_ID"]}',
        SECRET '{os.environ["AWS_SECRET_ACCESS_KEY"]}', ENDPOINT '127.0.0.1:{s3.PORT}', URL_STYLE 'path',
        USE_SSL false, REGION 'us-east-1')""")
    return reference


def test_duckdb_reads_our_lake_and_we_read_its_lake(pg_catalog, prefix, spark, reference):
    from tests.support.reference import attach

    lake = DuckLake.attach(pg_catalog, prefix, spark=spark)
    lake.create_table("ours", "id BIGINT, kind VARCHAR")
    lake.set_partitioning("ours", ["kind"])
    lake.write(spark.sql("SELECT id, concat('k', id % 3) AS kind FROM range(100)"), "ours")
    lake.table("ours").delete("id % 10 = 0")
    lake.close()
    con = _duckdb_s3(reference)
    attach(con, pg_catalog)
    assert con.execute("SELECT count(*), sum(id) FROM lake.ours").fetchone() == (90, 4950 - 450)
    con.execute("CREATE TABLE lake.theirs AS SELECT i AS id, 'x' || i AS name FROM range(500) r(i)")
    con.execute("DELETE FROM lake.theirs WHERE id < 100")
    con.execute("DETACH lake")
    assert any("/main/theirs/" in f for f in _objects(prefix))
    lake = DuckLake.attach(pg_catalog, spark=spark)
    assert _ids(lake.read("theirs")) == list(range(100, 500))
    lake.close()


def test_credentials_stay_out_of_catalog_reprs_and_errors(lake, pg_catalog, prefix, spark):
    secret = os.environ["AWS_SECRET_ACCESS_KEY"]
    key_id = os.environ["AWS_ACCESS_KEY_ID"]
    lake.create_table("t", "id BIGINT")
    lake.write(spark.range(100), "t")
    with lake.engine.connect() as conn:
        for table in METADATA.tables.values():  # the 1.0 layout the lake has: whole rows, only its columns
            if conn.dialect.has_table(conn, table.name):
                for row in conn.execute(sa.select(table)):
                    text = repr(tuple(row))
                    assert secret not in text and key_id not in text, table.name
    assert secret not in repr(lake) and key_id not in repr(lake)
    bad = DuckLake.attach(pg_catalog, spark=spark)  # a file the store refuses: the error must not carry keys
    with pytest.raises(Exception) as info:
        bad.add_data_files("t", "s3://no-such-bucket-here/x.parquet")
    assert secret not in str(info.value) and key_id not in str(info.value)
    bad.close()


@pytest.fixture
def new_bucket():
    """A bucket of its own: Spark then makes a new s3a filesystem for it (they are cached per bucket), which
    honours a per-bucket endpoint set at run time."""
    name = f"plan-{uuid.uuid4().hex[:10]}"
    admin = pafs.S3FileSystem(endpoint_override=s3.ENDPOINT, scheme="http", allow_bucket_creation=True,
                              allow_bucket_deletion=True)
    admin.create_dir(name)
    yield name
    admin.delete_dir(name)


def test_planning_makes_no_request_per_file(pg_catalog, new_bucket, spark):
    """~200 files; Spark's s3a reaches their bucket through a counting proxy."""
    lake = DuckLake.attach(pg_catalog, f"s3://{new_bucket}/lake/", spark=spark)
    lake.create_table("t", "id BIGINT")
    lake.write(spark.range(0, 200_000, numPartitions=1).repartition(200), "t")
    assert len(lake.plan_scan("t").files) == 200
    endpoint = f"fs.s3a.bucket.{new_bucket}.endpoint"
    with s3.CountingProxy() as proxy:
        spark.conf.set(endpoint, proxy.endpoint)
        try:
            with proxy.counting() as planning:
                df = lake.read("t")
                df.explain()
            with proxy.counting() as reading:
                assert df.count() == 200_000
        finally:
            spark.conf.unset(endpoint)
    lake.close()
    assert planning["HEAD"] == 0 and planning["LIST"] <= 2, planning
    assert reading["GET"] >= 200, reading  # the proxy is in Spark's path


def _within(seconds: float, action):
    """Run `action` in a thread; return what it raised (None: nothing) and how long it took, failing the test when
    it is still running after `seconds` (the thread is left to finish once the store thaws)."""
    outcome: dict = {}

    def run():
        started = time.monotonic()
        try:
            action()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            outcome["error"] = exc
        outcome["seconds"] = time.monotonic() - started

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s against a frozen store"
    return outcome.get("error"), outcome["seconds"]


def test_frozen_store_fails_with_storage_error_within_the_timeouts(tmp_path, new_bucket, monkeypatch):
    """The store stops answering (SIGSTOPped, a dead network path): in-process writes and reads fail with a
    StorageError naming the endpoint and path within the configured timeouts, instead of hanging."""
    with s3.FreezableProxy() as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)  # the bucket's filesystem is made on first use
        monkeypatch.setenv("SPARK_DUCKLAKE_S3_CONNECT_TIMEOUT", "2")
        monkeypatch.setenv("SPARK_DUCKLAKE_S3_REQUEST_TIMEOUT", "2")
        monkeypatch.setenv("SPARK_DUCKLAKE_S3_MAX_ATTEMPTS", "2")
        lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", f"s3://{new_bucket}/lake/",
                               data_inlining_row_limit=0)
        lake.create_table("t", "id BIGINT")
        lake.write(pa.table({"id": pa.array(range(10), pa.int64())}), "t")
        assert lake.read_arrow("t").num_rows == 10
        proxy.freeze()
        try:
            for action in (lambda: lake.write(pa.table({"id": pa.array([99], pa.int64())}), "t"),
                           lambda: lake.read_arrow("t")):
                error, seconds = _within(90, action)
                assert isinstance(error, StorageError), repr(error)
                assert proxy.endpoint in str(error) and f"s3://{new_bucket}/lake/main/t/" in str(error), str(error)
                assert seconds < 60, seconds
        finally:
            proxy.thaw()
        assert lake.read_arrow("t").num_rows == 10  # nothing committed by the failed write
        lake.close()


_SPARK_DOWN = textwrap.dedent("""
    import json, os, sys
    from tests.support import s3
    proxy = s3.FreezableProxy()
    os.environ["AWS_ENDPOINT_URL"] = proxy.endpoint  # Spark's Python workers inherit it
    os.environ["PYSPARK_SUBMIT_ARGS"] = s3.submit_args(proxy.endpoint)
    from spark_ducklake import DuckLake
    from spark_ducklake.dataplane.spark.session import get_or_create_spark

    spark = get_or_create_spark()
    lake = DuckLake.attach(sys.argv[1], sys.argv[2], spark=spark, small_data_threshold=0)
    lake.create_table("t", "id BIGINT")
    lake.write(spark.range(100), "t")
    lake.write(spark.range(100, 103), "t")  # inlined
    results = {}
    proxy.close()
    for name, action in (("write", lambda: lake.write(spark.range(1000, 2000), "t")),
                         ("flush", lambda: lake.flush_inlined_data())):
        try:
            action()
            results[name] = "no error"
        except Exception as exc:
            results[name] = {"type": type(exc).__name__, "message": str(exc)}
    print("RESULTS " + json.dumps(results))
""")


def test_spark_write_and_flush_with_the_store_down_raise_storage_error(tmp_path, new_bucket):
    """The store down under a Spark write and a flush (pyarrow on the Python workers): a StorageError naming the
    cause, not a PythonException. A local session in a subprocess, its workers pointed at a proxy that closes."""
    env = {key: value for key, value in os.environ.items() if key not in ("SPARK_REMOTE", "PYSPARK_SUBMIT_ARGS")}
    env.update(SPARK_DUCKLAKE_S3_CONNECT_TIMEOUT="2", SPARK_DUCKLAKE_S3_REQUEST_TIMEOUT="2",
               SPARK_DUCKLAKE_S3_MAX_ATTEMPTS="2", SPARK_DUCKLAKE_DRIVER_MEMORY="1g")
    done = subprocess.run([sys.executable, "-c", _SPARK_DOWN, f"sqlite:{tmp_path / 'meta.sqlite'}",
                           f"s3://{new_bucket}/lake/"], env=env, capture_output=True, text=True, timeout=400,
                          cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULTS ")]
    assert lines, done.stdout[-2000:] + done.stderr[-4000:]
    results = json.loads(lines[-1][len("RESULTS "):])
    for name in ("write", "flush"):
        assert results[name] != "no error", name
        assert results[name]["type"] == "StorageError", (name, results[name])
        message = results[name]["message"]
        assert "cannot be reached" in message and "127.0.0.1" in message and "\n" not in message, (name, message)
