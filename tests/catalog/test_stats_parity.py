"""Our stats rows against the reference's for the same rows (file and table level, every Spark type), and
DuckDB's filters on our temporally partitioned lakes whatever the Spark session time zone."""

from __future__ import annotations

import datetime as dt
import math
import sqlite3
import struct
from decimal import Decimal

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake
from tests.support.reference import attach

UTC = dt.timezone.utc
DDL = ("id INT, b BOOLEAN, i8 TINYINT, i16 SMALLINT, i64 BIGINT, f32 FLOAT, f64 DOUBLE, dec DECIMAL(9,2), "
       "s VARCHAR, bl BLOB, d DATE, ts TIMESTAMP, tstz TIMESTAMPTZ")
SPARK = ("id INT, b BOOLEAN, i8 TINYINT, i16 SMALLINT, i64 BIGINT, f32 FLOAT, f64 DOUBLE, dec DECIMAL(9,2), "
         "s STRING, bl BINARY, d DATE, ts TIMESTAMP_NTZ, tstz TIMESTAMP")
ARROW = pa.schema([("id", pa.int32()), ("b", pa.bool_()), ("i8", pa.int8()), ("i16", pa.int16()),
                   ("i64", pa.int64()), ("f32", pa.float32()), ("f64", pa.float64()), ("dec", pa.decimal128(9, 2)),
                   ("s", pa.string()), ("bl", pa.binary()), ("d", pa.date32()), ("ts", pa.timestamp("us")),
                   ("tstz", pa.timestamp("us", tz="UTC"))])
NAN, INF = math.nan, math.inf
BATCHES = [
    [(1, True, -128, -32768, -2**63, 3.4e38, 1.7976931348623157e308, Decimal("1.50"), "ü€", b"\x00\xff",
      dt.date(1, 1, 1), dt.datetime(1, 1, 1), dt.datetime(1, 1, 1, tzinfo=UTC)),
     (2, False, 127, 32767, 2**63 - 1, INF, -INF, Decimal("-9999999.99"), "", b"", dt.date(9999, 12, 31),
      dt.datetime(9999, 12, 31, 23, 59, 59, 999999), dt.datetime(2024, 7, 2, 23, 59, 59, 500000, tzinfo=UTC))],
    [(3, None, None, None, None, NAN, NAN, None, None, None, None, None, None)],
    [(4, True, 0, 0, 0, -0.0, -0.0, Decimal("0"), "a", b"a", dt.date(2024, 7, 2), dt.datetime(2024, 7, 2, 0, 0, 0, 1),
      dt.datetime(2024, 7, 2, tzinfo=UTC)),
     (5, True, 1, 1, 1, NAN, NAN, Decimal("0.01"), "b", b"b", dt.date(2024, 7, 3), dt.datetime(2024, 7, 3),
      dt.datetime(2024, 7, 3, tzinfo=UTC))],
    [(6, False, 1, 1, 1, 1.401298464324817e-45, 5e-324, Decimal("0.01"), "b", b"b", dt.date(2024, 7, 3),
      dt.datetime(2024, 7, 3), dt.datetime(2024, 7, 3, tzinfo=UTC))],
]


def _stats(path: str) -> tuple[list, dict]:
    con = sqlite3.connect(path)
    names = dict(con.execute("SELECT column_id, column_name FROM ducklake_column"))
    files = con.execute("SELECT data_file_id, column_id, value_count, null_count, min_value, max_value, "
                        "contains_nan FROM ducklake_file_column_stats ORDER BY data_file_id, column_id").fetchall()
    table = {names[r[0]]: tuple(r[1:]) for r in con.execute(
        "SELECT column_id, contains_null, contains_nan, min_value, max_value FROM ducklake_table_column_stats")}
    con.close()
    by_file: dict[int, dict] = {}
    for fid, cid, *rest in files:
        by_file.setdefault(fid, {})[names[cid]] = _comparable(names[cid], rest)
    return [by_file[k] for k in sorted(by_file)], table


def _comparable(name: str, row) -> tuple:
    """Float texts as float32/float64 values (the shortest float32 text differs at times in the last digit)."""
    if name not in ("f32", "f64"):
        return tuple(row)
    def value(text):
        if text is None:
            return None
        x = float(text)
        return struct.unpack("f", struct.pack("f", x))[0] if name == "f32" and math.isfinite(x) else x
    *head, low, high, nan = row
    return (*head, value(low), value(high), None if nan is None else bool(nan))


def test_stats_rows_equal_the_reference_for_the_same_rows(tmp_path, spark, reference):
    spark.conf.set("spark.sql.session.timeZone", "Asia/Tokyo")  # must not matter
    try:
        ours = DuckLake.attach(f"sqlite:{tmp_path / 'ours.sqlite'}", str(tmp_path / "ours"), spark=spark,
                               data_inlining_row_limit=0)
        ours.create_table("t", SPARK)
        for rows in BATCHES:
            ours.write(spark.createDataFrame(rows, SPARK).coalesce(1), "t")
        ours.close()
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
    attach(reference, f"sqlite:{tmp_path / 'ref.sqlite'}", str(tmp_path / "ref"), data_inlining_row_limit=0)
    reference.execute(f"CREATE TABLE lake.t ({DDL})")
    for rows in BATCHES:
        batch = pa.Table.from_pylist([dict(zip(ARROW.names, r, strict=True)) for r in rows], schema=ARROW)
        reference.register("batch", batch)
        reference.execute("INSERT INTO lake.t SELECT * FROM batch")
        reference.unregister("batch")
    reference.execute("DETACH lake")
    our_files, our_table = _stats(str(tmp_path / "ours.sqlite"))
    ref_files, ref_table = _stats(str(tmp_path / "ref.sqlite"))
    for ours_f, ref_f in zip(our_files, ref_files, strict=True):
        for name in ref_f:
            if name in ("f32", "f64") and ours_f[name] != ref_f[name]:
                # Spark's footers lose the largest number beside a NaN: a looser max (inf) is all we may write.
                o, r = ours_f[name], ref_f[name]
                assert o[:3] == r[:3] and o[3] == INF and o[4] is True and r[4] is True, (name, o, r)
                continue
            assert ours_f[name] == ref_f[name], (name, ours_f[name], ref_f[name])
    for name, row in ref_table.items():
        if name in ("f32", "f64"):  # DuckDB 1.5.5 resets float table bounds after a NaN-only file: ours cover all
            assert our_table[name][:2] == row[:2] == (0, 1), (name, our_table[name], row)
            continue
        assert our_table[name] == row, (name, our_table[name], row)


@pytest.mark.parametrize("transform", ["year", "month", "day", "hour"])
def test_duckdb_filters_our_temporally_partitioned_lakes(lake, lake_catalog, spark, reference, transform):
    """Partitioned by transform(tstz) and transform(ts) under a non-UTC session: DuckDB's range filters find
    every matching row."""
    catalog = lake_catalog
    lake.create_table("t", "id INT, tstz TIMESTAMP, ts TIMESTAMP_NTZ")
    lake.set_partitioning("t", [f"{transform}(tstz)", f"{transform}(ts)"])
    base = dt.datetime(2024, 6, 29, 20, tzinfo=UTC)
    rows = [(i, base + dt.timedelta(minutes=53 * i), (base + dt.timedelta(minutes=53 * i)).replace(tzinfo=None))
            for i in range(300)]
    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    try:
        lake.write(spark.createDataFrame(rows[:4], "id INT, tstz TIMESTAMP, ts TIMESTAMP_NTZ"), "t")  # inlined
        lake.write(spark.createDataFrame(rows[4:], "id INT, tstz TIMESTAMP, ts TIMESTAMP_NTZ"), "t")
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
    lake.close()
    low, high = dt.datetime(2024, 7, 2, tzinfo=UTC), dt.datetime(2024, 7, 3, tzinfo=UTC)
    want = sum(1 for r in rows if low <= r[1] < high)
    attach(reference, catalog)
    reference.execute("SET TimeZone = 'UTC'")
    assert reference.execute("SELECT count(*) FROM lake.t WHERE tstz >= TIMESTAMPTZ '2024-07-02 00:00:00+00' "
                             "AND tstz < TIMESTAMPTZ '2024-07-03 00:00:00+00'").fetchone()[0] == want
    assert reference.execute("SELECT count(*) FROM lake.t WHERE ts >= TIMESTAMP '2024-07-02 00:00:00' "
                             "AND ts < TIMESTAMP '2024-07-03 00:00:00'").fetchone()[0] == want
