"""DuckLake 1.1's epoch transforms by their Spark names (`days(ts)`), the default-version setting for new catalogs,
and the reference's hive folder names when two partition keys share a name (`year=…/year_b=…`)."""

from __future__ import annotations

import datetime as dt
import sqlite3

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.errors import CatalogError, DuckLakeError
from tests.support.ref11 import attach_sql, require_ref11, run
from tests.support.reference import attach as attach_15
from tests.support.reference import connect as connect_15

pytestmark = pytest.mark.latest_default  # new catalogs 1.1; the binary's attach as they are

_SPARK_NAMES = {"years": "epoch_year", "months": "epoch_month", "days": "epoch_day", "hours": "epoch_hour",
                "epoch_year": "epoch_year", "epoch_month": "epoch_month", "epoch_day": "epoch_day",
                "epoch_hour": "epoch_hour"}


def _transforms(path, table: str) -> list[str]:
    con = sqlite3.connect(path)
    try:
        return [r[0] for r in con.execute(
            "SELECT c.transform FROM ducklake_partition_column c JOIN ducklake_partition_info i USING "
            "(partition_id, table_id) JOIN ducklake_table t USING (table_id) WHERE t.table_name = ? AND "
            "i.end_snapshot IS NULL AND t.end_snapshot IS NULL ORDER BY c.partition_key_index", (table,))]
    finally:
        con.close()


def _paths(path) -> list[str]:
    con = sqlite3.connect(path)
    try:
        return sorted(r[0] for r in con.execute("SELECT path FROM ducklake_data_file WHERE end_snapshot IS NULL"))
    finally:
        con.close()


@pytest.mark.parametrize("name", sorted(_SPARK_NAMES))
def test_spark_transform_names_on_a_11_catalog(tmp_path, name):
    """set_partitioning and lake.sql (both dialects) take `days(ts)` / `epoch_day(ts)` and record `epoch_day`."""
    meta = tmp_path / "meta.sqlite"
    lake = DuckLake.attach(f"sqlite:{meta}", str(tmp_path / "data"), ducklake_version="1.1")
    try:
        for table in ("api", "spark_sql", "duck_sql"):
            lake.create_table(table, "id BIGINT, ts TIMESTAMP_NTZ")
        lake.set_partitioning("api", [f"{name.upper() if name == 'days' else name}(ts)", "id"])
        lake.sql(f"ALTER TABLE spark_sql SET PARTITIONED BY ({name}(ts))")
        lake.sql(f"ALTER TABLE duck_sql SET PARTITIONED BY ({name}(ts))", dialect="duckdb")
    finally:
        lake.close()
    assert _transforms(meta, "api") == [_SPARK_NAMES[name], "identity"]
    assert _transforms(meta, "spark_sql") == [_SPARK_NAMES[name]]
    assert _transforms(meta, "duck_sql") == [_SPARK_NAMES[name]]


@pytest.mark.parametrize("name", ["years", "months", "days", "hours", "epoch_day"])
def test_spark_transform_names_refused_on_a_10_catalog(tmp_path, name):
    """A 1.0 catalog refuses them in the reference's words, pointing at the calendar transform and the migration."""
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"), ducklake_version="1.0")
    calendar = {"years": "year", "months": "month", "days": "day", "hours": "hour", "epoch_day": "day"}[name]
    try:
        lake.create_table("t", "ts TIMESTAMP_NTZ")
        for run_it in (lambda: lake.set_partitioning("t", [f"{name}(ts)"]),
                       lambda: lake.sql(f"ALTER TABLE t SET PARTITIONED BY ({name}(ts))"),
                       lambda: lake.sql(f"ALTER TABLE t SET PARTITIONED BY ({name}(ts))", dialect="duckdb")):
            with pytest.raises(DuckLakeError) as caught:
                run_it()
            text = str(caught.value)
            assert f"DuckLake 1.0 does not support the {_SPARK_NAMES[name]} partition transform" in text
            assert f"use {calendar}(ts)" in text and "calendar" in text
            assert 'automatic_migration=True with ducklake_version="1.1"' in text
    finally:
        lake.close()
    assert _transforms(tmp_path / "meta.sqlite", "t") == []


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_pruning_by_day(tmp_path, version):
    """A WHERE on the timestamp prunes files by their statistics under days(ts) (1.1) and day(ts) (1.0)."""
    key = "days(ts)" if version == "1.1" else "day(ts)"
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"), ducklake_version=version,
                           data_inlining_row_limit=0)
    try:
        lake.create_table("t", "id BIGINT, ts TIMESTAMP_NTZ")
        lake.set_partitioning("t", [key])
        start = dt.datetime(2024, 1, 1)
        lake.write(pa.table({"id": pa.array(range(96), pa.int64()),
                             "ts": pa.array([start + dt.timedelta(hours=i) for i in range(96)], pa.timestamp("us"))}),
                   "t")
        assert len(lake.plan_scan("t").files) == 4
        where = "ts >= TIMESTAMP '2024-01-02 00:00:00' AND ts < TIMESTAMP '2024-01-03 00:00:00'"
        plan = lake.plan_scan("t", where=where)
        assert len(plan.files) == 1
        assert len(lake.plan_scan("t", where="ts >= TIMESTAMP '2024-01-03 12:00:00'").files) == 2
        assert [f.record_count for f in plan.files] == [24]
    finally:
        lake.close()


def test_default_version_setting(tmp_path, monkeypatch):
    """New catalogs are 1.1, as DuckDB 2.0 creates them. SPARK_DUCKLAKE_DEFAULT_VERSION is the reference's
    ducklake_default_version: the version asked for when ducklake_version is not given, of new and existing
    catalogs alike; unset, an existing catalog keeps its version unless automatic_migration=True (then 1.1)."""
    def version_of(name: str) -> str:
        con = sqlite3.connect(tmp_path / name)
        try:
            return con.execute("SELECT value FROM ducklake_metadata WHERE key = 'version'").fetchone()[0]
        finally:
            con.close()

    monkeypatch.delenv("SPARK_DUCKLAKE_DEFAULT_VERSION", raising=False)
    DuckLake.attach(f"sqlite:{tmp_path / 'plain.sqlite'}", str(tmp_path / "p")).close()
    assert version_of("plain.sqlite") == "1.1"
    monkeypatch.setenv("SPARK_DUCKLAKE_DEFAULT_VERSION", "1.0")
    DuckLake.attach(f"sqlite:{tmp_path / 'old.sqlite'}", str(tmp_path / "o")).close()
    assert version_of("old.sqlite") == "1.0"
    with pytest.raises(CatalogError, match="Cannot downgrade"):  # asked of an existing catalog, as the reference
        DuckLake.attach(f"sqlite:{tmp_path / 'plain.sqlite'}")
    DuckLake.attach(f"sqlite:{tmp_path / 'explicit.sqlite'}", str(tmp_path / "e"), ducklake_version="1.1").close()
    assert version_of("explicit.sqlite") == "1.1"
    monkeypatch.setenv("SPARK_DUCKLAKE_DEFAULT_VERSION", "1.1")
    with pytest.raises(CatalogError, match="version mismatch"):
        DuckLake.attach(f"sqlite:{tmp_path / 'old.sqlite'}")
    monkeypatch.delenv("SPARK_DUCKLAKE_DEFAULT_VERSION")
    DuckLake.attach(f"sqlite:{tmp_path / 'old.sqlite'}").close()  # unset: an existing catalog keeps its version
    assert version_of("old.sqlite") == "1.0"
    DuckLake.attach(f"sqlite:{tmp_path / 'old.sqlite'}", automatic_migration=True).close()
    assert version_of("old.sqlite") == "1.1"
    monkeypatch.setenv("SPARK_DUCKLAKE_DEFAULT_VERSION", "0.9")
    with pytest.raises(CatalogError, match="SPARK_DUCKLAKE_DEFAULT_VERSION"):
        DuckLake.attach(f"sqlite:{tmp_path / 'bad.sqlite'}", str(tmp_path / "b"))


_SHARED = ["year(a)", "year(b)", "month(a)", "bucket(2, c)", "bucket(3, d)", '"year"', "year_b"]
_ROW = "('2024-03-01', '2023-02-01', 1, 2, 5, 6)"


@pytest.mark.parametrize("version", ["1.0", "1.1-dev1"])
def test_hive_folder_names_of_shared_names(tmp_path, version):
    """Two keys with one folder name: the second is `<name>_<column>` (again while taken, case-insensitively), as
    both references write it; files added from such folders get their values back."""
    keys = _SHARED + (["epoch_day(a)", "epoch_day(b)"] if version != "1.0" else [])
    meta = tmp_path / "meta.sqlite"
    lake = DuckLake.attach(f"sqlite:{meta}", str(tmp_path / "data"), ducklake_version=version,
                           data_inlining_row_limit=0)
    try:
        lake.create_table("t", 'a TIMESTAMP_NTZ, b TIMESTAMP_NTZ, c INT, d INT, "year" INT, year_b INT')
        lake.set_partitioning("t", keys)
        lake.write(pa.table({"a": pa.array([dt.datetime(2024, 3, 1)], pa.timestamp("us")),
                             "b": pa.array([dt.datetime(2023, 2, 1)], pa.timestamp("us")),
                             "c": pa.array([1], pa.int32()), "d": pa.array([2], pa.int32()),
                             "year": pa.array([5], pa.int32()), "year_b": pa.array([6], pa.int32())}), "t")
    finally:
        lake.close()
    (ours,) = _paths(meta)
    folders = ours.split("/")[:-1]
    expected = ["year=2024", "year_b=2023", "month=3", "bucket=", "bucket_d=", "year_year=5", "year_b_year_b=6"]
    if version != "1.0":
        expected += ["epoch_day=19783", "epoch_day_b=19389"]
    assert [f if not f.startswith("bucket") else f.split("=")[0] + "=" for f in folders] == expected
    columns = "a TIMESTAMP, b TIMESTAMP, c INT, d INT, \"year\" INT, year_b INT"
    if version == "1.0":
        con = connect_15()
        attach_15(con, f"sqlite:{tmp_path / 'ref.sqlite'}", str(tmp_path / "ref") + "/", data_inlining_row_limit=0)
        con.execute(f"CREATE TABLE lake.t({columns})")
        con.execute(f"ALTER TABLE lake.t SET PARTITIONED BY ({', '.join(keys)})")
        con.execute(f"INSERT INTO lake.t VALUES {_ROW}")
        con.close()
    require_ref11()
    run(attach_sql(f"sqlite:{tmp_path / 'ref11.sqlite'}", str(tmp_path / "ref11") + "/", data_inlining_row_limit=0,
                   ducklake_version=version)
        + f"CREATE TABLE lake.t({columns}); ALTER TABLE lake.t SET PARTITIONED BY ({', '.join(keys)});"
        f"INSERT INTO lake.t VALUES {_ROW};")
    references = ["ref11.sqlite"] + (["ref.sqlite"] if version == "1.0" else [])
    for name in references:
        (theirs,) = _paths(tmp_path / name)
        assert theirs.split("/")[:-1] == folders, name
    if version != "1.0":  # the binary reads our folders' file back
        rows = run(attach_sql(f"sqlite:{meta}") + "SELECT count(*) AS n FROM lake.t WHERE year_b = 6;")
        assert rows[0][0]["n"] == 1


def test_add_files_reads_shared_name_folders(tmp_path):
    """add_data_files takes a file's values from the reference's folder names (`year=…/year_b=…`)."""
    import pyarrow.parquet as pq

    meta = tmp_path / "meta.sqlite"
    lake = DuckLake.attach(f"sqlite:{meta}", str(tmp_path / "data"))
    try:
        lake.create_table("t", "a TIMESTAMP_NTZ, b TIMESTAMP_NTZ")
        lake.set_partitioning("t", ["year(a)", "year(b)"])
        folder = tmp_path / "in" / "year=2024" / "year_b=2023"
        folder.mkdir(parents=True)
        pq.write_table(pa.table({"a": pa.array([dt.datetime(2024, 3, 1)], pa.timestamp("us")),
                                 "b": pa.array([dt.datetime(2023, 2, 1)], pa.timestamp("us"))}), folder / "f.parquet")
        lake.add_data_files("t", str(folder / "f.parquet"))
    finally:
        lake.close()
    con = sqlite3.connect(meta)
    try:
        values = con.execute("SELECT partition_key_index, partition_value FROM ducklake_file_partition_value "
                             "ORDER BY partition_key_index").fetchall()
    finally:
        con.close()
    assert values == [(0, "2024"), (1, "2023")]


def test_spark_write_days_and_shared_names(tmp_path, spark):
    """Spark's writer: `days(ts)` on a 1.1 catalog, folders named as the reference names them, and a WHERE on the
    timestamp reads the pruned files only."""
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"), ducklake_version="1.1-dev1",
                           data_inlining_row_limit=0, spark=spark, small_data_threshold=0)
    try:
        lake.create_table("t", "id BIGINT, ts TIMESTAMP_NTZ, u TIMESTAMP_NTZ")
        lake.set_partitioning("t", ["days(ts)", "epoch_day(u)", "year(ts)", "year(u)"])
        frame = spark.sql("SELECT id, CAST(TIMESTAMP_NTZ '2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, "
                          "CAST(id AS INT), 0, 0) AS TIMESTAMP_NTZ) AS ts, TIMESTAMP_NTZ '2023-06-01 00:00:00' AS u "
                          "FROM range(72)").coalesce(1)  # one task: one file per day
        lake.write(frame, "t")
        folders = sorted({f.data_file.split("/main/t/", 1)[1].rsplit("/", 1)[0] for f in lake.list_files("t")})
        assert folders == [f"epoch_day={19723 + d}/epoch_day_u=19509/year=2024/year_u=2023" for d in range(3)]
        where = "ts >= '2024-01-02' AND ts < '2024-01-03'"
        plan = lake.plan_scan("t", where=where)
        assert (len(plan.files), plan.total_files) == (1, 3)
        assert lake.read("t", where=where).count() == 24
    finally:
        lake.close()
    rows = run(attach_sql(f"sqlite:{tmp_path / 'meta.sqlite'}") + "SELECT count(*) AS n FROM lake.t "
               "WHERE ts >= TIMESTAMP '2024-01-02' AND ts < TIMESTAMP '2024-01-03';")
    assert rows[0][0]["n"] == 24


@pytest.mark.spark
def test_timestamp_ns_literals_and_epoch_flush(tmp_path, spark):
    """Spark has no nanosecond timestamps: `TIMESTAMP_NS '...'` literals (and casts) are taken as microsecond
    timestamps, the precision a timestamp_ns column reads at, and a flush of its inlined rows writes them as an
    INSERT does (Parquet TIMESTAMP(MICROS)), floored into epoch partitions as the reference floors them
    (test/sql/partitioning/epoch_transforms.test); the binary reads the flushed files."""
    catalog, data = f"sqlite:{tmp_path / 'm.sqlite'}", f"{tmp_path}/data/"
    lake = DuckLake.attach(catalog, data, spark=spark, ducklake_version="1.1-dev1")
    lake.sql("CREATE TABLE ns_tbl(id INTEGER, ts TIMESTAMP_NS)", dialect="duckdb")
    lake.sql("ALTER TABLE ns_tbl SET PARTITIONED BY (epoch_hour(ts))", dialect="duckdb")
    lake.sql("INSERT INTO ns_tbl VALUES (1, TIMESTAMP_NS '1969-12-31 23:59:59.999999999'), "
             "(2, TIMESTAMP_NS '1970-01-01 00:59:59.999999999'), (3, '1970-01-01 00:00:00.000000001'::TIMESTAMP_NS)",
             dialect="duckdb")
    lake.flush_inlined_data()
    values = lake.sql("SELECT partition_value, count(*) AS n FROM __ducklake_metadata_lake.ducklake_file_partition_"
                      "value GROUP BY 1 ORDER BY 1", dialect="duckdb").collect()
    assert [(r[0], r[1]) for r in values] == [("-1", 1), ("0", 1)]
    expected = [(1, dt.datetime(1969, 12, 31, 23, 59, 59, 999999)), (2, dt.datetime(1970, 1, 1, 0, 59, 59, 999999)),
                (3, dt.datetime(1970, 1, 1))]
    assert [tuple(r) for r in lake.sql("SELECT id, ts FROM ns_tbl ORDER BY id", dialect="duckdb").collect()] == expected
    lake.close()
    rows = run(attach_sql(catalog, data) + "SELECT id, CAST(ts AS VARCHAR) AS ts FROM lake.ns_tbl ORDER BY id;")[-1]
    assert [(r["id"], r["ts"]) for r in rows] == [(1, "1969-12-31 23:59:59.999999"), (2, "1970-01-01 00:59:59.999999"),
                                                   (3, "1970-01-01 00:00:00")]
