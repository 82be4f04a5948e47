"""checkpoint(): the reference's six maintenance functions in its order, with the lake's options, leaving every
table reading the same in both engines and nothing a snapshot needs deleted."""

from __future__ import annotations

import os
import time

import pyarrow as pa
import pyarrow.parquet as pq

from spark_ducklake.operations.maintenance import checkpoint as checkpoint_module
from spark_ducklake.operations.maintenance.checkpoint import STEPS
from tests.support.compare import duckdb_rows, spark_rows
from tests.support.reference import attach
from tests.support.snapshots import referenced_files


def test_checkpoint_runs_every_step_in_the_reference_order(lake, lake_catalog, tmp_path, spark, reference,
                                                           monkeypatch):
    catalog, data = lake_catalog, tmp_path / "data"
    lake.create_table("t", "id BIGINT, v STRING")
    for start in (0, 100):  # small files to merge; the first one nearly all deleted below, to rewrite
        lake.write(spark.range(start, start + 100).selectExpr("id", "CAST(id AS STRING) AS v"), "t")
    outside = tmp_path / "added.parquet"  # an added file (read by name) merges like the others
    pq.write_table(pa.table({"id": pa.array(range(200, 220), pa.int64()), "v": [str(i) for i in range(200, 220)]}),
                   outside)
    lake.add_data_files("t", str(outside))
    lake.write(pa.table({"id": [1000, 1001], "v": ["a", "b"]}), "t")  # inlined: flushed to a file
    lake.delete("t", "id < 97")
    lake.create_table("kept", "id BIGINT")
    lake.write(pa.table({"id": [1, 2, 3]}), "kept")  # inlined, but auto_compact is off for this table
    lake.set_option("auto_compact", False, table_name="kept")
    lake.set_option("expire_older_than", "00:00:00")
    lake.set_option("delete_older_than", "00:00:00")
    lake.set_option("rewrite_delete_threshold", 0.9)
    orphan = data / "main" / "t" / "leftover.parquet"
    orphan.write_bytes(b"not parquet")
    then = time.time() - 60
    os.utime(orphan, (then, then))
    expected = spark_rows(lake.read("t"))
    disk_before = {str(p) for p in data.rglob("*.parquet")}

    called = []
    for step in STEPS:  # record the order, delegating to the real functions
        real = getattr(checkpoint_module, step)
        monkeypatch.setattr(checkpoint_module, step,
                            lambda *args, real=real, step=step, **kwargs: called.append(step) or real(*args, **kwargs))
    result = lake.checkpoint()
    assert called == list(STEPS)
    assert [(r.table_name, r.rows_flushed) for r in result.flushed] == [("t", 2)]
    assert result.expired and [s.snapshot_id for s in result.expired] == list(range(len(result.expired)))
    assert {r.table_name for r in result.rewritten} <= {"t"} and {r.table_name for r in result.merged} == {"t"}
    assert [r.path for r in result.orphans_deleted] == [str(orphan)]
    cleaned = {r.path for r in result.cleaned}
    assert str(outside) in cleaned  # the lake owned the added file
    assert disk_before - {str(p) for p in data.rglob('*.parquet')} <= cleaned | {str(orphan)}
    assert not any(os.path.exists(p) for p in cleaned)
    assert referenced_files(lake) <= {str(p) for p in data.rglob("*.parquet")}
    assert lake.plan_scan("kept").inlined.num_rows == 3  # auto_compact false: not flushed

    assert spark_rows(lake.read("t")) == expected
    lake.close()
    attach(reference, catalog)
    assert duckdb_rows(reference, "SELECT * FROM lake.t") == expected
    assert duckdb_rows(reference, "SELECT * FROM lake.kept") == [(1,), (2,), (3,)]
