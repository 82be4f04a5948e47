"""The file-sink-log listing scans use on object stores (spark/paths.py): Spark takes the files and sizes from a
driver-local `_spark_metadata/0` and never lists them. Pinned on local files, so a Spark upgrade that changes the
behaviour fails here and not only in the S3 lane."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq

from spark_ducklake.spark import paths


def test_spark_reads_exactly_the_logged_files_with_their_logged_sizes(tmp_path, spark):
    data = tmp_path / "a dir%x"  # characters a URI must encode
    data.mkdir()
    files = []
    for i in range(3):
        path = str(data / f"f{i}.parquet")
        pq.write_table(pa.table({"id": pa.array([i * 10 + j for j in range(10)], pa.int64())}), path)
        files.append(path)
    logged = files[:2]  # the third file sits in the same folder but is not in the log: it must not be read
    folder = paths._file_log(logged, [os.path.getsize(p) for p in logged])
    df = spark.read.schema("id long").option("recursiveFileLookup", "true").parquet(folder)
    rows = df.select("id", "_metadata.file_path", "_metadata.file_size").collect()
    assert sorted(r["id"] for r in rows) == list(range(20))
    assert {r["file_path"] for r in rows} == {paths.spark_file_uri(p) for p in logged}
    assert {r["file_size"] for r in rows} == {os.path.getsize(p) for p in logged}
    os.remove(logged[0])  # the listing came from the log: planning another scan does not notice
    again = spark.read.schema("id long").option("recursiveFileLookup", "true").parquet(folder)
    assert sorted(again.inputFiles()) == sorted(paths.spark_file_uri(p) for p in logged)


def test_the_log_is_used_only_for_object_stores_with_known_sizes(spark):
    assert not paths._listed_by_log(spark, ["/tmp/a.parquet"], [10])
    assert not paths._listed_by_log(spark, ["s3://b/a.parquet"], [None])
    # The log is a folder on the client's disk: a Spark Connect server cannot read it, so Connect sessions list.
    connect = "connect" in type(spark).__module__
    assert paths._listed_by_log(spark, ["s3://b/a.parquet", "gs://c/d.parquet"], [10, 20]) is not connect
