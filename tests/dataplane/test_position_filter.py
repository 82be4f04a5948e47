"""Deleted positions applied as a bitmap filter (dataplane/spark/position_filter.py) instead of an anti-join."""

from __future__ import annotations

import contextlib
import io

import pyarrow as pa
import pytest
from pyspark.sql import functions as F

from spark_ducklake.dataplane.arrow.scan_columns import POS
from spark_ducklake.dataplane.spark import position_filter


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


@pytest.mark.lake(data_inlining_row_limit=0)
def test_one_file_with_deletes_reads_no_file_path(lake, spark):
    lake.write(spark.range(0, 300).coalesce(1), "t")
    lake.delete("t", "id % 9 = 0")
    frame = lake.read("t")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        frame.explain()
    # Spark builds `_metadata` into a struct per row: the file path string would be copied into every row
    assert "file_path" not in out.getvalue() and "row_index" in out.getvalue()
    assert sorted(r.id for r in frame.collect()) == [i for i in range(300) if i % 9]


def test_drop_deleted_broadcasts_each_files_bitmap_keyed_by_size(spark):
    frame = spark.range(0, 600).select((F.col("id") % 3 * 10 + 10).alias("size"),
                                       (F.col("id") / 3).cast("long").alias(POS))
    gone = {10: [0, 5, 64, 199], 20: [1, 63]}  # no entry for size 30: its rows are all kept
    kept = position_filter.drop_deleted(spark, frame, {k: pa.array(v, pa.int64()) for k, v in gone.items()},
                                        "size", POS)
    assert kept.columns == [POS]  # the key and the bitmaps are dropped with the deleted rows
    assert kept.count() == 600 - 6
    one = spark.range(0, 300).select(F.col("id").alias(POS))
    kept_one = position_filter.drop_deleted(spark, one, {0: pa.array([2, 130], pa.int64())}, None, POS)
    assert sorted(r[POS] for r in kept_one.collect()) == [i for i in range(300) if i not in (2, 130)]


def _plan(frame) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        frame.explain()
    return out.getvalue()


@pytest.mark.lake(data_inlining_row_limit=0)
@pytest.mark.parametrize("counts", [(100, 150, 250), (100, 100), (300,)])
def test_big_bitmaps_travel_as_a_broadcast_not_a_literal(lake, spark, monkeypatch, counts):
    """Past BROADCAST_WORDS the bitmaps are broadcast, joined on the file size (files of distinct sizes, classic
    sessions: Spark's sizes are then the catalog's) or, one file, given to every row; same sizes (here two files
    of the same rows count) keep the literal. Rows, row ids and later deletes stay right either way."""
    from spark_ducklake.dataplane.arrow import storage as paths
    from spark_ducklake.dataplane.spark import scan

    monkeypatch.setattr(position_filter, "BROADCAST_WORDS", 0)
    start = 0
    for count in counts:
        lake.write(spark.range(start, start + count).coalesce(1), "t")
        start += count
    lake.delete("t", "id % 9 = 0 OR id = 150")
    expected = [i for i in range(start) if i % 9 and i != 150]
    frame = lake.read("t")
    plan = _plan(frame)
    sizes = {f.file_size_bytes for f in lake.plan_scan("t").files}
    keyed = len(counts) > 1 and len(sizes) == len(counts) and not paths.is_connect(spark)
    assert (scan.SIZE in plan or "file_size" in plan) == keyed
    literal = "split(" in plan or "map(keys:" in plan  # the bitmaps' literal, as built or as folded (Connect)
    assert literal == (len(counts) > 1 and not keyed)
    assert sorted(r.id for r in frame.collect()) == expected
    with_ids = lake.read("t", virtual_columns=["rowid"])
    assert sorted((r.id, r.rowid) for r in with_ids.collect()) == [(i, i) for i in expected]
    lake.delete("t", "id = 1")
    assert sorted(r.id for r in lake.read("t").collect()) == [i for i in expected if i != 1]
