"""Executor-side code on a Spark standalone cluster (two 1-core workers whose Python lacks spark_ducklake) through a
Spark Connect server: `scripts/cluster.sh start`, then this file with SPARK_DUCKLAKE_TEST_CLUSTER=1, then
`scripts/cluster.sh stop`. The CI lane also runs tests/deployment/test_readme_tour.py there (SPARK_REMOTE = the
cluster).
Skipped when no cluster is up, except in CI's cluster lane, where it must run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from spark_ducklake import DuckLake
from tests.conftest import IN_CI
from tests.support.compare import duckdb_rows, spark_rows
from tests.support.reference import attach

pytestmark = pytest.mark.cluster
ROOT = Path(__file__).resolve().parents[2]


def _cluster_url() -> str | None:
    """The cluster's Connect URL: SPARK_DUCKLAKE_CLUSTER_URL, else what scripts/cluster.sh reports."""
    if os.environ.get("SPARK_DUCKLAKE_CLUSTER_URL"):
        return os.environ["SPARK_DUCKLAKE_CLUSTER_URL"]
    done = subprocess.run(["bash", str(ROOT / "scripts" / "cluster.sh"), "url"], capture_output=True, text=True)
    return done.stdout.strip() or None if done.returncode == 0 else None


@pytest.fixture(scope="module")
def cluster(request):
    """A Spark Connect session on the cluster (a session of its own: the run's `spark` may be local)."""
    url = _cluster_url()
    if url is None:
        problem = "no Spark cluster up: run scripts/cluster.sh start"
        if IN_CI and os.environ.get("SPARK_DUCKLAKE_TEST_CLUSTER") == "1":
            pytest.fail(problem)
        pytest.skip(problem)
    from pyspark.sql import SparkSession

    session = SparkSession.builder.remote(url).create()
    yield session
    session.stop()


def test_arrow_read_path_on_the_cluster(cluster, tmp_path, reference):
    # uuid and time columns are read by pyarrow inside executor tasks (dataplane/spark/arrow_files.py)
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    attach(reference, catalog, str(tmp_path / "data"), data_inlining_row_limit=0)
    reference.execute("CREATE TABLE lake.t (id INTEGER, u UUID, tm TIME)")
    reference.execute("INSERT INTO lake.t SELECT i, uuid(), TIME '01:02:03' + INTERVAL (i) SECOND FROM range(50) t(i)")
    expected = duckdb_rows(reference, "SELECT id, u::VARCHAR, tm::VARCHAR FROM lake.t")
    reference.execute("DETACH lake")
    lake = DuckLake.attach(catalog, spark=cluster)
    assert spark_rows(lake.read("t")) == expected


def test_scans_plan_through_the_jvm_index_on_the_cluster(cluster, tmp_path, reference):
    # 39 files without deletes (more than CONNECT_MIN_FILES): the Connect server gets the jar as an artifact and
    # plans from the scan's log through it (dataplane/spark/jvm_index.py); rows as DuckDB reads them.
    import contextlib
    import io

    import pyarrow as pa

    from spark_ducklake.dataplane.spark import jvm_index

    if not jvm_index.JAR.is_file():
        if IN_CI:
            pytest.fail("the JVM index jar is not built (scripts/build_jar.sh runs in scripts/setup.sh)")
        pytest.skip("jar not built (scripts/build_jar.sh)")
    catalog, data = f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data")
    lake = DuckLake.attach(catalog, data, spark=cluster, data_inlining_row_limit=0)
    lake.create_table("t", "id BIGINT, s VARCHAR")
    for i in range(40):
        lake.write(pa.table({"id": pa.array([i * 3 + j for j in range(3)], pa.int64()),
                             "s": pa.array([f"s{i}"] * 3)}), "t")
    lake.delete("t", "id = 5")  # one file with a delete: the other 39 are one plain scan, over a log
    frame = lake.read("t")
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        frame.explain()
    assert "LoggedFiles" in shown.getvalue()
    got = spark_rows(frame)
    lake.close()
    attach(reference, catalog, data)
    assert got == duckdb_rows(reference, "SELECT id, s FROM lake.t") and len(got) == 119
