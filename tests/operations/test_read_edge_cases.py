"""Wrong rows found by outside checks (issue 13): pruning at extreme floats, added columns' defaults in the table
stats, the change feed after a flush, year-1 timestamps inlined."""

from __future__ import annotations

import datetime as dt
import math
import re

import pyarrow as pa
import pytest

from tests.support.reference import attach

EXTREME = [1.7976931348623157e308, -1.7976931348623157e308, 1.5e308, math.inf, -math.inf, math.nan, -0.0, 0.0,
           1e301, 5e-324, 3.4028234663852886e38, 1.401298464324817e-45, 0.1]


@pytest.mark.lake(data_inlining_row_limit=0)
def test_pruning_keeps_every_file_holding_a_match_at_extreme_floats(lake, spark):
    """One Spark-written file per value (and one mixing NaN with numbers): read(where=...) returns exactly the
    rows a plain filter returns, for every comparison form pruning understands."""
    schema = "id INT, f64 DOUBLE, f32 FLOAT"
    lake.create_table("t", schema)
    rows = [(i, v, v) for i, v in enumerate(EXTREME)]
    # One file per value (range partitioning by id), then one mixing NaN with numbers.
    lake.write(spark.createDataFrame(rows, schema).repartitionByRange(len(rows), "id"), "t")
    lake.write(spark.createDataFrame([(100, 1.0, 1.0), (101, math.nan, math.nan), (102, -2.0, -2.0)], schema)
               .coalesce(1), "t")
    assert len(lake.plan_scan("t").files) == len(rows) + 1
    predicates = ["f64 > 1e300", "f64 >= 1.7976931348623157e308", "f64 = 0", "f64 <= -0.0",
                  "f64 > 1e9", "f64 BETWEEN 1e300 AND 1.7976931348623157e308", "f64 IN (0.0, 1.5e308)",
                  "f32 >= 3.4028234663852886e38", "f32 = 0.1", "f32 < 0.10000000149011612", "f32 > 1e30",
                  "f32 IN (1.0, -2.0)", "f32 > 1e38 AND f64 > 1e300"]
    for where in predicates:
        want = sorted(r.id for r in lake.read("t").where(where).select("id").collect())
        got = sorted(r.id for r in lake.read("t", where=where).select("id").collect())
        assert got == want, where


def test_added_column_default_is_not_ruled_out_by_table_stats(lake, lake_catalog, spark, reference):
    """After add_column(default=...), DuckDB's filter on the default finds the old rows on our lake."""
    lake.create_table("t", "id BIGINT")
    lake.write(spark.range(0, 392), "t")
    lake.add_column("t", "a", "string", default="fresh")
    lake.write(spark.range(1000, 1020).selectExpr("id", "'new' a"), "t")
    assert lake.read("t", where="a = 'fresh'").count() == 392
    lake.close()
    attach(reference, lake_catalog)
    assert reference.execute("SELECT count(*) FROM lake.t WHERE a = 'fresh'").fetchone()[0] == 392
    assert reference.execute("SELECT count(*) FROM lake.t WHERE a = 'new'").fetchone()[0] == 20


def _feed(rows) -> list[tuple]:
    return sorted((r[0], r[1], r[2], r[3]) for r in rows)


@pytest.mark.parametrize("catalog", ["sqlite", "duckdb"], indirect=True)
def test_change_feed_after_flush_equals_duckdb_per_snapshot(catalog, lake, spark, reference):
    """Insert rows to a file and inlined, delete one of each (inlined deletes), update one, flush: the feed of
    every single snapshot still equals DuckDB's (deletes as deletes, updates as pre/post pairs)."""
    lake.create_table("t", "id BIGINT, v STRING")
    lake.write(spark.range(0, 30, numPartitions=1).selectExpr("id", "concat('v', id) v"), "t")
    lake.write(pa.table({"id": pa.array([100, 101], pa.int64()), "v": ["x", "y"]}), "t")
    lake.delete("t", "id = 1")
    lake.delete("t", "id = 100")
    lake.update("t", "id IN (2, 101)", {"v": "'new'"})
    last = lake.current_snapshot()
    lake.flush_inlined_data()
    ours = {s: _feed(lake.table_changes("t", s, s).select("snapshot_id", "change_type", "id", "v").collect())
            for s in range(last - 2, last + 1)}
    lake.close()
    attach(reference, catalog)
    for s, feed in ours.items():
        want = _feed(reference.execute(
            f"SELECT snapshot_id, change_type, id, v FROM lake.table_changes('t', {s}, {s})").fetchall())
        assert feed == want, s
    assert [r[1] for r in ours[last]].count("update_preimage") == 2


@pytest.mark.parametrize("catalog", ["sqlite", "postgres"], indirect=True)
def test_year_one_timestamps_inlined_round_trip(catalog, lake, spark, reference):
    """Year-1 (and year-9999) timestamps inlined by us are stored with 4-digit years and read back by us and
    DuckDB; what older versions stored ('1-01-01 ...') still reads."""
    import sqlalchemy as sa

    lake.create_table("y", "id INT, ts TIMESTAMP_NTZ, tstz TIMESTAMP, d DATE")
    utc = dt.timezone.utc
    values = [(1, dt.datetime(1, 1, 1, 0, 0, 0, 500000), dt.datetime(1, 1, 1, tzinfo=utc), dt.date(1, 1, 1)),
              (2, dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
               dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=utc), dt.date(9999, 12, 31))]
    lake.write(pa.table({"id": pa.array([v[0] for v in values], pa.int32()),
                         "ts": pa.array([v[1] for v in values], pa.timestamp("us")),
                         "tstz": pa.array([v[2] for v in values], pa.timestamp("us", tz="UTC")),
                         "d": pa.array([v[3] for v in values], pa.date32())}), "y")
    want = [(1, "0001-01-01 00:00:00.5", "0001-01-01 00:00:00", "0001-01-01"),
            (2, "9999-12-31 23:59:59.999999", "9999-12-31 23:59:59.999999", "9999-12-31")]

    def ours():
        # Strings made on Spark: PySpark's collect() cannot turn year-1 instants into local datetimes.
        frame = lake.read("y").selectExpr(
            "id", "date_format(ts, 'yyyy-MM-dd HH:mm:ss.SSSSSS')", "date_format(tstz, 'yyyy-MM-dd HH:mm:ss.SSSSSS')",
            "cast(d AS string)").orderBy("id")
        return [(r[0], r[1].rstrip("0").rstrip("."), r[2].rstrip("0").rstrip("."), r[3]) for r in frame.collect()]

    spark.conf.set("spark.sql.session.timeZone", "UTC")
    assert ours() == want
    with lake.engine.begin() as conn:  # what older versions wrote: strftime's '1-01-01'
        table = sorted(n for n in sa.inspect(conn).get_table_names()
                       if re.fullmatch(r"ducklake_inlined_data_\d+_\d+", n))[-1]
        stored = conn.execute(sa.text(f'SELECT ts FROM "{table}" WHERE id = 1')).scalar()
        assert str(stored).startswith("0001-01-01")
        conn.execute(sa.text(f"UPDATE \"{table}\" SET ts = '1-01-01 00:00:00.5' WHERE id = 1"))
    assert ours() == want
    lake.close()
    attach(reference, catalog)
    got = reference.execute("SELECT id, ts::VARCHAR, d::VARCHAR FROM lake.y ORDER BY id").fetchall()
    assert got == [(1, "0001-01-01 00:00:00.5", "0001-01-01"), (2, "9999-12-31 23:59:59.999999", "9999-12-31")]
