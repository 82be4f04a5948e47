"""The write path: inlining threshold, file layout and options, stats, failed commits leave nothing behind."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa

from spark_ducklake import DuckLake
from spark_ducklake.errors import ConflictError


def _rows(lake: DuckLake, sql: str) -> list[tuple]:
    with lake.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(sa.text(sql))]


def test_inlining_threshold_matches_the_reference(lake, spark):
    lake.create_table("t", "id BIGINT")
    lake.write(spark.range(10), "t")          # == limit (10): inlined
    lake.write(spark.range(11), "t")          # > limit: Parquet
    changes = [s.changes for s in lake.snapshots()[2:]]
    assert changes == [{"inlined_insert": ["1"]}, {"tables_inserted_into": ["1"]}]
    assert lake.read("t").count() == 21
    lake.set_option("data_inlining_row_limit", 0, table_name="t")
    lake.write(pa.table({"id": pa.array([1], pa.int64())}), "t")
    assert lake.snapshots()[-1].changes == {"tables_inserted_into": ["1"]}


def test_a_frame_is_computed_once_whether_inlined_or_not(lake, spark, tmp_path):
    """Written first, inlined after when few: an aggregation upstream runs once (a head fetched first to decide
    whether to inline ran it twice), and the files of an inlined write are gone."""
    from pyspark.sql import functions as F

    marks = tmp_path / "marks"
    marks.mkdir()
    folder = str(marks)

    @F.udf("long")
    def mark(v):  # one empty file per evaluation
        import os
        import uuid

        open(os.path.join(folder, uuid.uuid4().hex), "w").close()
        return v

    def frame(groups: int):
        return (spark.range(40).withColumn("m", mark("id")).groupBy((F.col("m") % groups).alias("k"))
                .agg(F.count("*").alias("n")))

    lake.create_table("t", "k BIGINT, n BIGINT")
    lake.write(frame(20), "t")  # 20 rows: Parquet
    assert len(list(marks.iterdir())) == 40
    lake.write(frame(5), "t")  # 5 rows: inlined, read back from the files Spark wrote
    assert len(list(marks.iterdir())) == 80
    assert [s.changes for s in lake.snapshots()[2:]] == [{"tables_inserted_into": ["1"]},
                                                         {"inlined_insert": ["1"]}]
    rows = sorted(tuple(r) for r in lake.read("t").collect())
    assert rows == sorted([(k, 2) for k in range(20)] + [(k, 8) for k in range(5)])
    committed = {r[0].rsplit("/", 1)[-1] for r in _rows(lake, "SELECT path FROM ducklake_data_file")}
    assert {p.name for p in (tmp_path / "data").rglob("*.parquet")} == committed


@pytest.mark.lake(data_inlining_row_limit=0)
def test_files_are_named_placed_and_described_like_the_reference(lake, tmp_path, spark):
    lake.create_schema("s")
    lake.create_table("s.t", "id BIGINT, name STRING, day DATE")
    lake.set_option("parquet_compression", "zstd", schema="s")
    lake.set_option("target_file_size", "200KB", table_name="t", schema="s")
    frame = spark.range(60_000).selectExpr(
        "id", "concat('n', id) AS name", "date_add(DATE'2024-01-01', cast(id % 300 AS INT)) AS day")
    lake.write(frame, "s.t")
    files = _rows(lake, "SELECT data_file_id, path, path_is_relative, record_count, file_size_bytes, footer_size, "
                        "row_id_start FROM ducklake_data_file ORDER BY data_file_id")
    assert len(files) > 1  # target_file_size split the output
    assert sum(f[3] for f in files) == 60_000
    starts = sorted(f[6] for f in files)
    assert starts[0] == 0 and len(set(starts)) == len(starts)
    for _fid, path, relative, count, size, footer, _start in files:
        assert relative is None or relative in (1, True)
        assert path.startswith("ducklake-") and path.endswith(".parquet")
        full = tmp_path / "data" / "s" / "t" / path
        meta = pq.read_metadata(full)
        assert meta.num_rows == count and full.stat().st_size == size and meta.serialized_size == footer
        assert meta.row_group(0).column(0).compression == "ZSTD"
        assert [meta.schema.column(i).name for i in range(3)] == ["id", "name", "day"]
    assert not [p for p in (tmp_path / "data" / "s" / "t").iterdir() if not p.name.startswith("ducklake-")]
    stats = _rows(lake, "SELECT column_id, min(min_value), max(max_value), sum(null_count) "
                        "FROM ducklake_file_column_stats GROUP BY column_id ORDER BY column_id")
    assert stats[2] == (3, "2024-01-01", "2024-10-26", 0)
    table_stats = _rows(lake, "SELECT record_count, next_row_id FROM ducklake_table_stats")
    assert table_stats == [(60_000, 60_000)]
    tcs = _rows(lake, "SELECT column_id, min_value, max_value FROM ducklake_table_column_stats ORDER BY column_id")
    assert tcs[0] == (1, "0", "59999")


@pytest.mark.lake(data_inlining_row_limit=0)
def test_failed_commit_removes_written_files(lake, tmp_path, spark, monkeypatch):
    lake.create_table("t", "id BIGINT")
    before = lake.snapshots()

    def conflict(*args, **kwargs):
        raise ConflictError("simulated: another writer dropped the table")

    import spark_ducklake.operations.context as context

    monkeypatch.setattr(context, "commit", conflict)
    with pytest.raises(ConflictError):
        lake.write(spark.range(100), "t", commit_message="never lands")
    assert lake.snapshots() == before
    assert list((tmp_path / "data" / "main" / "t").glob("*")) == []
    assert _rows(lake, "SELECT count(*) FROM ducklake_data_file") == [(0,)]


@pytest.mark.lake(data_inlining_row_limit=0)
def test_row_group_and_version_options(lake, tmp_path, spark):
    lake.create_table("t", "id BIGINT, x BIGINT")
    lake.set_option("parquet_row_group_size", 2048)
    lake.set_option("parquet_version", 2)
    lake.write(spark.range(50_000).selectExpr("id", "id * 7 AS x").coalesce(1), "t")
    (path,) = [p for (p,) in _rows(lake, "SELECT path FROM ducklake_data_file")]
    meta = pq.read_metadata(tmp_path / "data" / "main" / "t" / path)
    assert meta.num_row_groups > 3
    assert "DELTA_BINARY_PACKED" in meta.row_group(0).column(0).encodings  # Parquet v2 writer


@pytest.mark.lake(data_inlining_row_limit=0)
def test_appends_of_one_shape_reuse_their_projection_and_follow_schema_changes(lake, tmp_path, spark, monkeypatch):
    import pyspark.sql.functions as functions

    from spark_ducklake.dataplane.arrow.storage import is_connect

    lake.create_table("p", "id BIGINT, name STRING")
    built = []
    col = functions.col
    monkeypatch.setattr(functions, "col", lambda name: built.append(name) or col(name))
    frame = spark.range(3).selectExpr("id", "concat('n', id) AS name")
    lake.write(frame, "p")
    first = len(built)
    lake.write(frame, "p")
    # the second append built no column expression (over Spark Connect columns cost nothing and are not kept)
    assert first and (is_connect(spark) or len(built) == first)
    lake.write(spark.range(3, 5).selectExpr("cast(id AS INT) AS id", "concat('n', id) AS name"), "p")
    assert len(built) > first  # other frame types: their own casts
    lake.rename_column("p", "name", "label")
    lake.add_column("p", "extra", "INT")
    lake.write(spark.range(5, 6).selectExpr("id", "'x' AS label", "7 AS extra"), "p")
    newest = max((tmp_path / "data" / "main" / "p").iterdir(), key=lambda p: p.stat().st_mtime_ns)
    schema = pq.read_schema(newest)
    assert [(f.name, f.metadata[b"PARQUET:field_id"]) for f in schema] == [("id", b"1"), ("label", b"2"),
                                                                          ("extra", b"3")]
    got = sorted(tuple(r) for r in lake.read("p").collect())
    assert got == sorted([(i, f"n{i}", None) for i in (0, 1, 2, 0, 1, 2, 3, 4)] + [(5, "x", 7)])
