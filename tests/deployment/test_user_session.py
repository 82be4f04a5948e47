"""Any session works: confs the user set the other way (before or after attach) are re-checked on every job, and
the code that runs on executors imports nothing an executor lacks (tests/conftest.py `user_session` is the lane
that runs whole test files this way)."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.dataplane.spark.session import REQUIRED_CONF
from tests.conftest import HOSTILE_CONF
from tests.support.compare import duckdb_rows, spark_rows
from tests.support.reference import attach


@pytest.fixture
def hostile(spark):
    """Set HOSTILE_CONF on the session (as a user might, at any time); returns a function that does it again.
    Restores the previous values afterwards."""
    saved = {key: spark.conf.get(key, None) for key in HOSTILE_CONF}

    def flip():
        for key, value in HOSTILE_CONF.items():
            spark.conf.set(key, value)

    flip()
    yield flip
    for key, value in saved.items():
        spark.conf.unset(key) if value is None else spark.conf.set(key, value)


def test_renamed_column_with_reused_name_reads_right_on_a_hostile_session(tmp_path, spark, reference, hostile):
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    attach(reference, catalog, str(tmp_path / "data"), data_inlining_row_limit=0)
    reference.execute("CREATE TABLE lake.t (id INTEGER, a VARCHAR)")
    reference.execute("INSERT INTO lake.t SELECT i, 'old' || i FROM range(5) t(i)")
    reference.execute("ALTER TABLE lake.t RENAME COLUMN a TO b")
    reference.execute("ALTER TABLE lake.t ADD COLUMN a VARCHAR")
    reference.execute("INSERT INTO lake.t SELECT i, 'b' || i, 'new' || i FROM range(5, 8) t(i)")
    snapshots = [r[0] for r in reference.execute("SELECT snapshot_id FROM lake.snapshots()").fetchall()]
    reference.execute("DETACH lake")

    lake = DuckLake.attach(catalog, spark=spark)
    attach(reference, catalog)
    for snap in snapshots[2:]:
        hostile()  # flipped again before every read: each read must check for itself
        expected = duckdb_rows(reference, f"SELECT * FROM lake.t AT (VERSION => {snap})")
        assert spark_rows(lake.read("t", version=snap)) == expected
    assert spark_rows(lake.read("t", where="a = 'new6'")) == [(6, "b6", "new6")]
    assert len(expected) == 8


@pytest.mark.lake(data_inlining_row_limit=0)
def test_written_timestamps_are_micros_with_field_ids_on_a_hostile_session(lake, tmp_path, spark, hostile):
    lake.create_table("t", "id BIGINT, ts TIMESTAMP_NTZ, tstz TIMESTAMPTZ")
    hostile()
    lake.write(spark.sql("SELECT id, TIMESTAMP_NTZ'2024-05-06 07:08:09.123456' AS ts, "
                         "TIMESTAMP'2024-05-06 07:08:09.5' AS tstz FROM range(3)"), "t")
    files = [p for p in (tmp_path / "data").rglob("*.parquet")]
    assert files
    for path in files:
        schema = pq.ParquetFile(path).schema_arrow
        for name in ("ts", "tstz"):
            assert str(schema.field(name).type).startswith("timestamp[us"), schema  # INT96 reads as [ns]
        assert all(f.metadata and b"PARQUET:field_id" in f.metadata for f in schema), schema
    hostile()
    assert lake.read("t").where("id = 0").count() == 1


def test_confs_never_set_on_the_session_are_set_for_a_write(lake, spark):
    """A session where our confs were never set (unset: Spark's typed defaults) writes and reads; a check that
    passed "" as the default broke here (found by the wheel smoke test)."""
    for key in REQUIRED_CONF:
        spark.conf.unset(key)
    lake.create_table("t", "id BIGINT")
    lake.write(spark.range(20), "t")
    assert {key: spark.conf.get(key) for key in REQUIRED_CONF} == REQUIRED_CONF
    assert lake.read("t").count() == 20


@pytest.mark.lake(data_inlining_row_limit=0)
def test_confs_flipped_after_attach_are_set_again_and_the_lake_still_reads(lake, lake_catalog, spark, reference,
                                                                          hostile):
    lake.write(spark.sql("SELECT id, cast(id AS string) AS s FROM range(10)"), "t", mode="error")
    lake.rename_column("t", "s", "s_old")
    lake.add_column("t", "s", "VARCHAR")
    lake.write(spark.sql("SELECT id, 'x' AS s_old, 'y' AS s FROM range(10, 12)"), "t")
    hostile()
    assert sorted(r.s_old for r in lake.read("t").collect() if r.id < 10) == sorted(str(i) for i in range(10))
    assert {key: spark.conf.get(key) for key in REQUIRED_CONF} == REQUIRED_CONF
    hostile()
    assert lake.table("t").delete("id < 5") == 5
    hostile()
    assert lake.table("t").update("id = 11", {"s": "'z'"}) == 1
    attach(reference, lake_catalog)
    assert duckdb_rows(reference, "SELECT id, s_old, s FROM lake.t") == spark_rows(lake.read("t"))


_EXECUTOR_MODULES = ("spark_ducklake.dataplane.arrow.delete_files", "spark_ducklake.dataplane.spark.arrow_files",
                     "spark_ducklake.dataplane.spark.partition", "spark_ducklake.spec.bucket_hash",
                     "spark_ducklake.dataplane.arrow.footers", "spark_ducklake.dataplane.spark.encrypted.read",
                     "spark_ducklake.dataplane.spark.encrypted.write")


def test_executor_modules_import_with_only_pyarrow_pandas_numpy():
    # What executors have: pyspark, pyarrow, pandas, numpy; none of the catalog layer's dependencies.
    blocked = ("sqlalchemy", "mmh3", "duckdb", "sqlglot", "psycopg", "pymysql")
    code = (f"import sys\nfor m in {blocked!r}: sys.modules[m] = None\n"
            + "".join(f"import {m}\n" for m in _EXECUTOR_MODULES))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    from spark_ducklake.dataplane.arrow import delete_files
    from spark_ducklake.dataplane.spark import write

    assert (delete_files.SNAPSHOT_ID_COLUMN, delete_files.SNAPSHOT_ID_FIELD_ID) == (
        write.SNAPSHOT_ID_COLUMN, write.SNAPSHOT_ID_FIELD_ID)


def test_numpy_murmur3_equals_mmh3_on_random_inputs():
    import mmh3
    import numpy as np

    from spark_ducklake.spec.bucket_hash import bucket_int64, bucket_many, murmur3_32

    rng = random.Random(12)
    blobs = [rng.randbytes(rng.randrange(0, 40)) for _ in range(2000)] + [b"", b"a", b"ab", b"abc", b"abcd"]
    assert murmur3_32(blobs).tolist() == [mmh3.hash(b, 0, signed=False) for b in blobs]
    ints = [rng.randrange(-2**63, 2**63) for _ in range(2000)]
    assert bucket_int64(np.array(ints, dtype=np.int64), 1000).tolist() == bucket_many(ints, "int64", 1000).tolist()
    assert bucket_many(ints, "int64", 1000).tolist() == [
        (mmh3.hash(i.to_bytes(8, "little", signed=True), 0, signed=True) & 0x7FFFFFFF) % 1000 for i in ints]
    words = ["iceberg", "", "ü" * 7, "a b c"]
    assert bucket_many(words, "varchar", 2**31 - 1).tolist() == [
        (mmh3.hash(w.encode(), 0, signed=True) & 0x7FFFFFFF) % (2**31 - 1) for w in words]


@pytest.mark.spark  # its child process starts a session
def test_update_before_any_session_exists(tmp_path):
    # A fresh process: no Spark session yet when update() builds its Columns (pyspark's F.expr needs one).
    code = ("from spark_ducklake import DuckLake\n"
            f"lake = DuckLake.attach({str(tmp_path / 'meta.sqlite')!r}, {str(tmp_path / 'data')!r})\n"
            "lake.create_table('t', 'id BIGINT, s VARCHAR')\n"
            "print('updated', lake.update('t', 'id = 1', {'s': \"'x'\"}))\n"
            "lake.spark.stop()\n")
    env = dict(os.environ, SPARK_DUCKLAKE_DRIVER_MEMORY="1g")
    for key in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE"):  # a local session, as a user's
        env.pop(key, None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "updated 0" in done.stdout
