"""Spark's Python workers without pyarrow (a user's venv not activated: PYSPARK_PYTHON unset means `python3` from
PATH): every operation that runs Python on the workers says so in one line, before its job starts, instead of a
`PythonException` buried in a JVM trace; what needs no Python on the workers keeps working, row-level changes of
a local lake included (their delete files come from Spark's own writer).

One local Spark session in a subprocess whose workers run a bare venv (the driver's Python, no packages: pyspark
reaches the workers through Spark's own PYTHONPATH, pyarrow does not)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake
from tests.support.reference import attach

pytestmark = pytest.mark.spark

_SCRIPT = textwrap.dedent("""
    import json, os, sys, time
    from pyspark.sql import SparkSession
    from spark_ducklake import DuckLake

    catalog, data, duckdb_catalog = sys.argv[1:4]
    spark = (SparkSession.builder.master("local[1]").appName("bare workers").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    lake = DuckLake.attach(catalog, data, spark=spark, small_data_threshold=0, data_inlining_row_limit=0)
    theirs = DuckLake.attach(duckdb_catalog, spark=spark, small_data_threshold=0)
    results = {}

    def attempt(name, action):
        started = time.monotonic()
        try:
            value = action()
            results[name] = {"ok": True, "value": value if isinstance(value, int) else None}
        except Exception as exc:
            results[name] = {"ok": False, "type": type(exc).__name__, "module": type(exc).__module__,
                             "message": str(exc), "seconds": time.monotonic() - started}

    attempt("read", lambda: lake.read("t").count())
    attempt("write", lambda: lake.write(spark.range(100, 200).selectExpr("id", "CAST(id AS STRING) AS v"), "t"))
    attempt("delete", lambda: lake.delete("t", "id < 10"))
    attempt("merge", lambda: lake.table("t").merge(spark.range(5).selectExpr("id", "'m' AS v"), "target.id = source.id")
            .when_matched_update_all().when_not_matched_insert_all().execute())
    attempt("bucket_write", lambda: lake.write(spark.range(10).selectExpr("id", "CAST(id AS STRING) AS v"), "b"))
    attempt("uuid_read", lambda: theirs.read("u").collect())
    attempt("read_after", lambda: lake.read("t").count())
    os.environ["SPARK_DUCKLAKE_CHECK_WORKERS"] = "0"  # no check: the job fails on the workers, and is translated
    attempt("unchecked_bucket_write", lambda: lake.write(spark.range(10).selectExpr("id", "'x' AS v"), "b"))
    print("RESULTS " + json.dumps(results))
""")


@pytest.fixture
def bare_python(tmp_path):
    """A venv of the driver's Python with no packages at all (so no pyarrow, pandas or numpy)."""
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import pyarrow"], capture_output=True, timeout=60)
    assert probe.returncode != 0, "the bare venv must not see pyarrow"
    return str(python)


def test_operations_needing_python_workers_say_so_before_the_job(tmp_path, reference, bare_python):
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    lake = DuckLake.attach(catalog, str(tmp_path / "data"), data_inlining_row_limit=0)
    lake.create_table("t", "id BIGINT, v VARCHAR")
    lake.write(pa.table({"id": pa.array(range(100), pa.int64()), "v": [str(i) for i in range(100)]}), "t")
    lake.create_table("b", "id BIGINT, v VARCHAR")
    lake.set_partitioning("b", ["bucket(4, id)"])
    lake.close()
    duckdb_catalog = f"sqlite:{tmp_path / 'duckdb.sqlite'}"  # a UUID column, which only DuckDB creates
    attach(reference, duckdb_catalog, str(tmp_path / "duckdb_data"), data_inlining_row_limit=0)
    reference.execute("CREATE TABLE lake.u (id UUID)")
    reference.execute("INSERT INTO lake.u SELECT uuid() FROM range(3)")
    reference.execute("DETACH lake")

    # A classic session of its own: the connect lane's Connect client leaves SPARK_CONNECT_MODE_ENABLED set.
    connect_vars = ("SPARK_REMOTE", "PYSPARK_", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE")
    env = {key: value for key, value in os.environ.items() if not key.startswith(connect_vars)}
    env["PYSPARK_PYTHON"] = bare_python
    env.pop("SPARK_DUCKLAKE_SMALL_DATA_BYTES", None)
    done = subprocess.run([sys.executable, "-c", _SCRIPT, catalog, str(tmp_path / "data"), duckdb_catalog], env=env,
                          capture_output=True, text=True, timeout=900)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULTS ")]
    assert lines, done.stdout[-2000:] + done.stderr[-4000:]
    results = json.loads(lines[-1][len("RESULTS "):])

    expected = (f"Spark's Python workers ({bare_python}) lack pyarrow, pandas, numpy: set PYSPARK_PYTHON to a "
                "Python with pyspark[sql]'s dependencies")  # the check's answer: every module the workers lack
    translated = [f"Spark's Python workers ({bare_python}) lack {module}: set PYSPARK_PYTHON to a Python with "
                  "pyspark[sql]'s dependencies" for module in ("pyarrow", "pandas", "numpy")]  # the one a worker lacked
    # What Spark does natively needs no Python on the workers; the rest fails in one line, from the check (the job
    # needing Python never started), or translated when the check is off.
    native = ("read", "write", "delete", "merge", "read_after")
    wrong = {name: results[name] for name in native if not results[name]["ok"]}
    wrong.update({name: results[name] for name in ("bucket_write", "uuid_read")
                  if results[name].get("message") != expected})
    if results["unchecked_bucket_write"].get("message") not in translated:
        wrong["unchecked_bucket_write"] = results["unchecked_bucket_write"]
    assert not wrong, "\n".join(f"{name}: {result.get('type')}: {result.get('message', '')[-300:]}"
                                 for name, result in wrong.items())
    assert (results["read"]["value"], results["read_after"]["value"]) == (100, 195)  # - 10 deleted + 5 merged
    assert all(results[name]["type"] == "SparkUnavailableError" for name in ("bucket_write", "unchecked_bucket_write"))
