"""The optional JVM file index (dataplane/spark/jvm_index.py, dataplane/spark/jvm/DuckLakeFileList.java): when the jar
is built (scripts/build_jar.sh) scans read their file-sink log through it, with the same rows, `_metadata` columns and
pushed filters as Spark's own MetadataLogFileIndex (SPARK_DUCKLAKE_JVM_INDEX=0); without it they still work."""

from __future__ import annotations

import contextlib
import io
import os
import weakref

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spark_ducklake.dataplane.arrow import storage as paths
from spark_ducklake.dataplane.spark import file_log, jvm_index

pytestmark = pytest.mark.skipif(not jvm_index.JAR.is_file(), reason="jar not built (scripts/build_jar.sh)")

COUNT = 200  # more than Connect's CONNECT_MIN_FILES: Connect sessions get a log too


def _files(folder, count: int) -> list[str]:
    folder.mkdir(exist_ok=True)
    out = []
    for i in range(count):
        path = str(folder / f"f{i}.parquet")
        pq.write_table(pa.table({"id": pa.array([i * 10 + j for j in range(10)], pa.int64()),
                                 "v": pa.array([f"{i}-{j}" for j in range(10)])}), path)
        out.append(path)
    return out


def _plan(df) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        df.explain()
    return out.getvalue()


def _read(spark, files, monkeypatch, jvm: bool, schema="id long, v string"):
    monkeypatch.setenv("SPARK_DUCKLAKE_JVM_INDEX", "1" if jvm else "0")
    return file_log.read_parquet(spark, schema, files, [os.path.getsize(p) for p in files])


def _rows(df) -> list[tuple]:
    cols = ["id", "v", "_metadata.file_path", "_metadata.row_index", "_metadata.file_size"]
    return sorted(tuple(r) for r in df.select(*cols).collect())


@pytest.mark.spark
def test_scans_use_the_jvm_index_with_the_same_rows_as_spark_s_index(tmp_path, spark, monkeypatch):
    files = _files(tmp_path / "a dir%x", COUNT)  # characters a URI must encode
    ours, theirs = _read(spark, files, monkeypatch, True), _read(spark, files, monkeypatch, False)
    assert "LoggedFiles" in _plan(ours) and "LoggedFiles" not in _plan(theirs)
    assert sorted(ours.inputFiles()) == sorted(theirs.inputFiles()) == sorted(paths.spark_file_uri(p)
                                                                               for p in files)
    assert _rows(ours) == _rows(theirs)
    assert len(_rows(ours)) == 10 * COUNT
    where = "id < 25 AND v <> '1-3'"
    assert _rows(ours.where(where)) == _rows(theirs.where(where)) != []
    assert "PushedFilters: [IsNotNull(id), IsNotNull(v), LessThan(id,25)" in _plan(ours.where(where))
    assert ours.count() == ours.count() == 10 * COUNT  # analyzed again (as a Connect server does at every action)


@pytest.mark.spark
def test_files_not_in_the_log_are_not_read_and_logged_ones_not_stat_ed(tmp_path, spark, monkeypatch):
    files = _files(tmp_path / "d", COUNT)
    ghost = str(tmp_path / "d" / "never-written.parquet")
    monkeypatch.setenv("SPARK_DUCKLAKE_JVM_INDEX", "1")
    df = file_log.read_parquet(spark, "id long", files[1:] + [ghost],
                               [os.path.getsize(p) for p in files[1:]] + [1234])
    assert "LoggedFiles" in _plan(df)
    assert sorted(df.inputFiles()) == sorted(paths.spark_file_uri(p) for p in files[1:] + [ghost])
    df = file_log.read_parquet(spark, "id long", files[1:], [os.path.getsize(p) for p in files[1:]])
    assert df.count() == 10 * (COUNT - 1)


@pytest.mark.spark
@pytest.mark.lake(data_inlining_row_limit=0)
def test_lake_read_is_the_same_on_both_indexes(lake, spark, monkeypatch):
    """Field ids, positions, deletes and virtual columns over the JVM index as over Spark's."""
    lake.create_table("t", "id BIGINT, s VARCHAR")
    for i in range(40):
        lake.write(spark.createDataFrame([(i * 3 + j, f"s{i}") for j in range(3)], "id long, s string"), "t")
    lake.rename_column("t", "s", "name")
    lake.delete("t", "id % 7 = 0")
    results = {}
    for jvm in (True, False):
        monkeypatch.setenv("SPARK_DUCKLAKE_JVM_INDEX", "1" if jvm else "0")
        df = lake.read("t", virtual_columns=("rowid", "filename"))
        results[jvm] = (sorted(tuple(r) for r in df.collect()),
                        sorted(tuple(r) for r in lake.read("t", where="id > 100").collect()))
        assert ("LoggedFiles" in _plan(df)) == jvm
    assert results[True] == results[False]
    assert len(results[True][0]) == 120 - len(range(0, 120, 7))


@pytest.mark.spark
def test_a_session_that_cannot_resolve_it_keeps_spark_s_index(tmp_path, spark, monkeypatch):
    files = _files(tmp_path / "d", COUNT)
    monkeypatch.setattr(jvm_index, "_sessions", weakref.WeakKeyDictionary())
    monkeypatch.setattr(jvm_index, "SOURCE", "sparkducklake.NoSuchSource")
    df = _read(spark, files, monkeypatch, True)
    assert "LoggedFiles" not in _plan(df) and df.count() == 10 * COUNT
    assert jvm_index.reader(spark, "id long") is None  # remembered: not probed at every scan
    monkeypatch.setattr(jvm_index, "JAR", tmp_path / "missing.jar")
    monkeypatch.setattr(jvm_index, "_sessions", weakref.WeakKeyDictionary())
    assert not jvm_index.enabled() and jvm_index.reader(spark, "id long") is None
