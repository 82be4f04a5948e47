"""Deleted positions applied as a bitmap filter (spark/position_filter.py) instead of an anti-join."""

from __future__ import annotations

import contextlib
import io

import pyarrow as pa
import pytest
from pyspark.sql import functions as F

from spark_ducklake.spark import position_filter
from spark_ducklake.spark.columns import POS


def test_bitmap_words_set_one_bit_per_position_including_the_sign_bit():
    words = position_filter.bitmap_words(pa.array([0, 63, 64, 130, 130], pa.int64()))
    assert words.tolist() == [1 | -(2**63), 1, 1 << 2]
    assert position_filter.bitmap_words(pa.array([], pa.int64())).tolist() == []


def test_negative_positions_are_named_as_corrupt():
    with pytest.raises(ValueError, match="negative"):
        position_filter.bitmap_words(pa.array([3, -1], pa.int64()))


def test_fits_caps_the_bitmap_size():
    assert position_filter.fits(pa.array([], pa.int64()))
    assert position_filter.fits(pa.array([64 * position_filter.MAX_WORDS - 1], pa.int64()))
    assert not position_filter.fits(pa.array([64 * position_filter.MAX_WORDS], pa.int64()))


def test_filter_keeps_exactly_the_rows_not_deleted(spark):
    deleted = [0, 1, 62, 63, 64, 127, 500, 999]
    frame = spark.range(0, 1200).withColumn(POS, F.col("id"))
    kept = frame.where(position_filter.not_deleted(pa.array(deleted, pa.int64()), POS))
    # rows past the last deleted position fall outside the bitmap: kept
    assert sorted(r.id for r in kept.collect()) == sorted(set(range(1200)) - set(deleted))
    assert frame.where(position_filter.not_deleted(pa.array([], pa.int64()), POS)).count() == 1200


@pytest.mark.lake(data_inlining_row_limit=0)
def test_a_file_with_deletes_is_filtered_not_joined_at_every_snapshot(lake, spark):
    lake.write(spark.range(0, 400).coalesce(1), "t", mode="error")
    assert len(lake.plan_scan("t").files) == 1
    lake.delete("t", "id % 7 = 0")
    first = lake.snapshots()[-1].snapshot_id
    lake.delete("t", "id >= 390 OR id = 64")  # a second delete of the file: a partial delete file
    frame = lake.read("t")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        frame.explain()
    assert "Anti" not in out.getvalue() and "Filter" in out.getvalue()
    assert sorted(r.id for r in frame.collect()) == [i for i in range(390) if i % 7 and i != 64]
    assert sorted(r.id for r in lake.read("t", version=first).collect()) == [i for i in range(400) if i % 7]


def test_fits_all_caps_the_bitmaps_together():
    half = pa.array([64 * (position_filter.MAX_WORDS // 2) - 1], pa.int64())
    assert position_filter.fits_all([half, half, pa.array([], pa.int64())])
    assert not position_filter.fits_all([half, half, pa.array([0], pa.int64())])


def test_filter_by_file_drops_each_files_own_positions(spark):
    frame = spark.range(0, 600).select(F.when(F.col("id") % 3 == 0, "a").when(F.col("id") % 3 == 1, "b")
                                       .otherwise("c").alias("path"), (F.col("id") / 3).cast("long").alias(POS))
    gone = {"a": [0, 5, 64, 199], "b": [1, 63], "c": []}
    keep = position_filter.not_deleted_in({k: pa.array(v, pa.int64()) for k, v in gone.items()}, "path", POS)
    assert sorted((r.path, r[POS]) for r in frame.where(keep).collect()) == sorted(
        (r.path, r[POS]) for r in frame.collect() if r[POS] not in gone[r.path])
    only_a = position_filter.not_deleted_in({"a": pa.array([3], pa.int64()), "b": pa.array([], pa.int64())},
                                            "path", POS)  # one bitmap: a path comparison, no map
    assert frame.where(only_a).count() == 599


@pytest.mark.lake(data_inlining_row_limit=0)
def test_files_with_deletes_share_one_scan_and_no_join(lake, spark):
    for start in (0, 100, 200):
        lake.write(spark.range(start, start + 100).coalesce(1), "t")
    assert len(lake.plan_scan("t").files) == 3
    lake.delete("t", "id % 9 = 0 OR id = 150")
    frame = lake.read("t")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        frame.explain()
    assert "Join" not in out.getvalue() and "Union" not in out.getvalue()
    assert sorted(r.id for r in frame.collect()) == [i for i in range(300) if i % 9 and i != 150]
    assert sorted(lake.read("t").where("id < 50").select("id").toPandas()["id"]) == [i for i in range(50) if i % 9]
