"""A Spark write killed mid-job leaves a staging folder (Parquet parts, `.crc` files, Hadoop's `_temporary/`):
`delete_orphaned_files` reclaims all of it once it is older than the threshold, and never a referenced file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import timedelta

import pyarrow as pa
import pytest
import sqlalchemy as sa

from spark_ducklake.operations.maintenance.catalog_files import known_files

# The whole writer (driver, JVM, Python workers) dies at once, like a lost machine, while a task is mid-file:
# a UDF kills the process group once the task has written a few thousand rows.
KILLED_WRITER = """
import os, signal, sys
from pyspark.sql import functions as F
from pyspark.sql.types import LongType
from spark_ducklake import DuckLake

WRITER_GROUP = os.getpgid(0)  # the driver's process group (the JVM's too); Python workers get their own


@F.udf(LongType())
def crash_at(value):
    if value == 6000:
        os.killpg(WRITER_GROUP, signal.SIGKILL)
    return value

lake = DuckLake.attach(sys.argv[1], data_inlining_row_limit=0)
print("writing", flush=True)
lake.write(lake.spark.range(0, 20000, 1, 1).select(crash_at("id").alias("id"), (F.col("id") * 2).alias("x")), "t")
"""


def _tree(root: str) -> tuple[set[str], set[str]]:
    files, dirs = set(), set()
    for top, names, found in os.walk(root):
        dirs.update(os.path.join(top, n) for n in names)
        files.update(os.path.join(top, n) for n in found)
    return files, dirs


@pytest.mark.lake(data_inlining_row_limit=0)
def test_cleanup_reclaims_what_a_killed_writer_left(lake, lake_catalog, tmp_path, spark):
    catalog, data = lake_catalog, str(tmp_path / "data")
    lake.write(pa.table({"id": pa.array(range(100), pa.int64()), "x": pa.array(range(100), pa.int64())}), "t",
               mode="error")
    rows_before, snapshot_before = lake.read("t").count(), lake.current_snapshot()
    files_before, _ = _tree(data)

    # The writer runs its own local Spark, also on the Connect lane: killing a Connect client leaves the server's
    # job running, and it would finish its staging folder while the cleanup below runs.
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED")}
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, catalog], capture_output=True, text=True,
                          timeout=600, start_new_session=True, env=env)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-3000:]
    assert "writing" in proc.stdout
    files, dirs = _tree(data)
    left = files - files_before
    staging = [d for d in dirs if os.path.basename(d).startswith("_staging-")]
    assert staging and left, "the killed writer left nothing to clean up"
    assert any(f.endswith(".crc") for f in left) and any("/_temporary/" in f for f in left)

    # Younger than the threshold: kept (it could be a live writer's).
    assert lake.delete_orphaned_files(older_than=timedelta(hours=1)) == []
    assert _tree(data) == (files, dirs)

    dry = {row.path for row in lake.delete_orphaned_files(cleanup_all=True, dry_run=True)}
    assert dry == left and _tree(data) == (files, dirs)
    removed = {row.path for row in lake.delete_orphaned_files(cleanup_all=True)}
    assert removed == left
    files_after, dirs_after = _tree(data)
    with lake.engine.connect() as conn:
        referenced = known_files(conn, lake.data_path)
    assert files_after == files_before and files_after <= referenced  # every referenced file kept
    assert not [d for d in dirs_after if "_staging-" in d or "_temporary" in d]
    assert all(os.listdir(d) for d in dirs_after)  # no empty folder left
    assert lake.read("t").count() == rows_before and lake.current_snapshot() == snapshot_before
    with lake.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM ducklake_data_file")).scalar() == len(files_before)
