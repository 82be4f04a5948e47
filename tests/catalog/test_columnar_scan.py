"""Scans over a FileList (catalog/reads/file_list.py) build no DataFile yet read what scans over DataFile objects
read: files before and after an added column, files with deletes, files after the next snapshot's incremental
load (file_cache.py)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from spark_ducklake.catalog.reads import file_cache, file_list

BIG = 1 << 40  # writes go through the in-process pyarrow path


@pytest.fixture
def columnar(monkeypatch):
    """Every table, however small, planned as a FileList and kept by the handle's cache."""
    monkeypatch.setattr(file_list, "FEW", 0)
    monkeypatch.setattr(file_cache, "FEW", 0)


def _rows(frame) -> list[tuple]:
    return sorted(tuple(r) for r in frame.collect())


@pytest.mark.lake(data_inlining_row_limit=0)
def test_scan_from_columns_matches_scan_from_objects(lake, spark, columnar):
    lake.small_data_threshold = BIG
    lake.context.file_cache.min_files = 1
    lake.create_table("t", "id BIGINT")
    for i in range(3):
        lake.write(pa.table({"id": pa.array([i, i + 10], pa.int64())}), "t")
    lake.add_column("t", "c", "INT", default=7)  # the first files predate it: they read its default
    lake.write(pa.table({"id": pa.array([20], pa.int64()), "c": pa.array([1], pa.int32())}), "t")
    lake.delete("t", "id = 1")  # a delete file on one of the old files

    plan = lake.plan_scan("t")
    assert isinstance(plan.files, file_list.FileList) and len(plan.files) == 4
    from_columns = _rows(plan.to_dataframe(spark))
    assert not plan.files.annotated()  # paths, sizes, groups and deletes read from the columns
    expected = [(0, 7), (2, 7), (10, 7), (11, 7), (12, 7), (20, 1)]
    assert from_columns == expected

    # The next snapshot's list comes from this one plus the files added in between.
    lake.write(pa.table({"id": pa.array([30], pa.int64()), "c": pa.array([2], pa.int32())}), "t")
    following = lake.plan_scan("t")
    assert isinstance(following.files, file_list.FileList) and not following.files.annotated()
    assert _rows(following.to_dataframe(spark)) == expected + [(30, 2)]
    assert list(following.files.ids().to_pylist()) == sorted(f.data_file_id for f in following.files)

    # The same plan once its DataFile objects exist (scans then read them).
    assert plan.files.full_paths() == [f.path for f in plan.files]
    assert plan.files.annotated() and _rows(plan.to_dataframe(spark)) == expected
