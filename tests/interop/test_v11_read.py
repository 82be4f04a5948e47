"""Reading DuckLake 1.1 catalogs made by the 1.1 reference (a DuckDB binary built from its sources, version
'1.1-dev1'): every table at every snapshot, the change feed, epoch partitions, multi-snapshot deletion vectors and
view-column comments, compared with what the binary itself reads."""

from __future__ import annotations

import datetime as dt
import math
import sqlite3

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.dataplane.arrow.local_scan import read_plan
from tests.support.ref11 import attach_sql, compare_variant_snapshots, query, readable_copy, require_ref11, run

pytestmark = pytest.mark.latest_default  # new catalogs 1.1; the binary's attach as they are

# Every table is changed by inlined and Parquet inserts, deletes and updates, schema evolution and maintenance.
_HISTORY = """
CREATE TABLE lake.t(id INTEGER, s VARCHAR, ts TIMESTAMP, row_id BIGINT, begin_snapshot BIGINT);
INSERT INTO lake.t VALUES (1, 'a', '2020-01-01 10:00:00', 100, 1000), (2, 'b', '1969-12-31 23:30:00', 200, 2000);
DELETE FROM lake.t WHERE id = 1;
UPDATE lake.t SET s = 'bb' WHERE id = 2;
INSERT INTO lake.t SELECT i, 'x' || i, TIMESTAMP '2000-01-01' + INTERVAL (i) HOUR, i, -i FROM range(10, 60) r(i);
DELETE FROM lake.t WHERE id % 7 = 0;
UPDATE lake.t SET s = 'u' || id WHERE id BETWEEN 20 AND 24;
ALTER TABLE lake.t ADD COLUMN z INTEGER DEFAULT 7;
INSERT INTO lake.t VALUES (3, 'c', NULL, 3, 3, 33);
ALTER TABLE lake.t RENAME COLUMN s TO label;
ALTER TABLE lake.t ALTER COLUMN id SET DATA TYPE BIGINT;
INSERT INTO lake.t VALUES (4, 'd', '2030-05-05 05:05:05', 4, 4, NULL);
CALL ducklake_flush_inlined_data('lake');
DELETE FROM lake.t WHERE id = 3;
CALL ducklake_merge_adjacent_files('lake');

CREATE TABLE lake.p(id INTEGER, ts TIMESTAMP, d DATE, tz TIMESTAMPTZ);
ALTER TABLE lake.p SET PARTITIONED BY (epoch_day(ts));
INSERT INTO lake.p SELECT i, TIMESTAMP '1969-12-30 12:00:00' + INTERVAL (i * 7) HOUR,
    DATE '1969-11-01' + INTERVAL (i * 9) DAY, TIMESTAMPTZ '1969-12-31 22:00:00+00' + INTERVAL (i * 3) HOUR
    FROM range(0, 30) r(i);
ALTER TABLE lake.p SET PARTITIONED BY (epoch_year(d), epoch_month(ts));
INSERT INTO lake.p SELECT i, TIMESTAMP '1968-06-01' + INTERVAL (i * 40) DAY, DATE '1967-01-01' + INTERVAL (i * 100) DAY,
    NULL FROM range(30, 50) r(i);
ALTER TABLE lake.p SET PARTITIONED BY (year(ts), epoch_hour(tz));
INSERT INTO lake.p SELECT i, TIMESTAMP '1970-01-01' + INTERVAL (i) MINUTE * 37, NULL,
    TIMESTAMPTZ '1969-12-31 23:00:00+00' + INTERVAL (i * 25) MINUTE FROM range(50, 70) r(i);
DELETE FROM lake.p WHERE id IN (3, 33, 55);

CREATE TABLE lake.dv(id INTEGER, v VARCHAR);
INSERT INTO lake.dv SELECT i, 'v' || i FROM range(100) r(i);
DELETE FROM lake.dv WHERE id = 5;
DELETE FROM lake.dv WHERE id = 50;
DELETE FROM lake.dv WHERE id IN (51, 52);
UPDATE lake.dv SET v = 'changed' WHERE id = 60;

CREATE VIEW lake.v AS SELECT id, label FROM lake.t;
COMMENT ON COLUMN lake.v.id IS 'the id';
COMMENT ON COLUMN lake.v.label IS 'first label';
COMMENT ON COLUMN lake.v.label IS 'second label';
"""

_TABLES = ("t", "p", "dv")


def _make_lake(catalog: str, data: str) -> str:
    """The history above, as the 1.1 reference writes it (small inserts inlined; p and dv always in files), in one
    run of the binary; returns `catalog`."""
    first, rest = _HISTORY.split("CREATE TABLE lake.p", 1)
    second, third = rest.split("CREATE TABLE lake.dv", 1)
    run(attach_sql(catalog, data, data_inlining_row_limit=10) + first + "DETACH lake;"
        + attach_sql(catalog, data, data_inlining_row_limit=0) + "CREATE TABLE lake.p" + second + "DETACH lake;"
        + attach_sql(catalog, data, data_inlining_row_limit=0, write_deletion_vectors=True) + "CREATE TABLE lake.dv"
        + third)
    return catalog


def _norm(value):
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, float):
        return "nan" if math.isnan(value) else round(value, 9)
    return value


def _theirs_value(value, kind: str):
    """The binary's JSON text of a value in the form `_norm` gives ours."""
    if value is None:
        return None
    if kind == "tz":  # printed in the binary's time zone, UTC here: '1969-12-31 22:00:00+00'
        return dt.datetime.fromisoformat(value).astimezone(dt.timezone.utc).replace(tzinfo=None).isoformat(sep=" ")
    return value


def _ours(table: pa.Table) -> list[tuple]:
    return sorted((tuple(_norm(v) for v in row.values()) for row in table.to_pylist()), key=repr)


def _theirs(rows: list[dict], names: list[str], kinds: dict[str, str]) -> list[tuple]:
    return sorted((tuple(_theirs_value(r[n], kinds.get(n, "")) for n in names) for r in rows), key=repr)


def _binary_history(catalog: str, table: str, versions: list[int]) -> dict[int, list[dict]]:
    """Snapshot -> the binary's rows (`SELECT *, rowid`), all snapshots in one run (one row per snapshot: a
    JSON list, so empty tables still print)."""
    parts = [f"SELECT {v} AS v, list(x) AS rows FROM (SELECT *, rowid FROM lake.{table} "
             f"AT (VERSION => {v})) x;" for v in versions]
    results = run(attach_sql(catalog) + "\n".join(parts))

    return {r[0]["v"]: (r[0]["rows"] or []) for r in results}


def _check_every_snapshot(lake: DuckLake, catalog: str, table: str) -> int:
    """Compare `read_arrow` and the row ids of every snapshot the table exists in; returns how many."""
    last = lake.current_snapshot()
    versions = [v for v in range(last + 1) if table in {t.name for t in lake.tables("main", version=v)}]
    theirs = _binary_history(catalog, table, versions)
    for v in versions:
        plan = lake.plan_scan(table, version=v)
        names = [c.name for c in plan.table.columns]
        kinds = {c.name: "tz" for c in plan.table.columns if c.type == "timestamptz"}
        ours = read_plan(plan, row_ids=True)
        assert _ours(ours) == _theirs(theirs[v], [*names, "rowid"], kinds), f"{table} at snapshot {v}"
        assert _ours(lake.read_arrow(table, version=v)) == _theirs(theirs[v], names, kinds), f"{table} at {v}"
    return len(versions)


def _check_changes(lake: DuckLake, catalog: str, table: str) -> None:
    """Our change feed over the whole history and over each single snapshot. The -O1 binary takes a while per
    query, so it is asked once per run of snapshots with the same columns (a feed is printed in the columns of its
    last snapshot); each change row carries its snapshot, which gives every single snapshot's feed."""
    first = lake.table_info(table).begin_snapshot
    last = lake.current_snapshot()
    singles = {v: lake.table_changes_arrow(table, v, v) for v in range(first, last + 1)}
    runs: list[list[int]] = []
    for v, feed in singles.items():
        if runs and singles[runs[-1][0]].column_names == feed.column_names:
            runs[-1].append(v)
        else:
            runs.append([v])
    ranges = [(first, last)] + [(r[0], r[-1]) for r in runs]
    parts = [f"SELECT list(x) AS rows FROM (SELECT * FROM lake.table_changes('{table}', {a}, {b})) x;"
             for a, b in ranges]
    results = [(r[0]["rows"] or []) for r in run(attach_sql(catalog) + "\n".join(parts))]
    theirs = dict(zip(ranges, results, strict=True))
    kinds = {c.name: "tz" for c in lake.table_info(table).columns if c.type == "timestamptz"}
    whole = lake.table_changes_arrow(table, first, last)
    assert _ours(whole) == _theirs(theirs[(first, last)], whole.column_names, kinds), f"table_changes({table})"
    for (a, b), snapshots in zip(ranges[1:], runs, strict=True):
        for v in snapshots:
            rows = [row for row in theirs[(a, b)] if row["snapshot_id"] == v]
            assert _ours(singles[v]) == _theirs(rows, singles[v].column_names, kinds), f"table_changes({table}, {v})"


def _sqlite(tmp_path) -> str:
    return f"sqlite:{tmp_path / 'meta.sqlite'}"


@pytest.fixture(scope="module")
def sqlite_lake(tmp_path_factory) -> str:
    """The binary's catalog string of one SQLite lake with the history above, shared by the tests that only read."""
    require_ref11()
    folder = tmp_path_factory.mktemp("v11_sqlite")
    return _make_lake(_sqlite(folder), str(folder / "data") + "/")


@pytest.fixture(params=["sqlite", "duckdb", "postgres"])
def v11_lake(request, tmp_path):
    """The history above on SQLite, a DuckDB file or PostgreSQL: the catalog string for the binary."""
    require_ref11()
    if request.param == "sqlite":
        return request.getfixturevalue("sqlite_lake")
    catalog = f"{tmp_path / 'meta.ducklake'}" if request.param == "duckdb" else request.getfixturevalue("pg_catalog")
    return _make_lake(catalog, str(tmp_path / "data") + "/")


def _ours_to_attach(catalog: str, tmp_path) -> str:
    """The catalog string we attach: the same catalog, except that the binary's DuckDB files (a development storage
    format DuckDB 1.5.5 cannot open) are read from a faithful copy in a storage version it opens."""
    if catalog.endswith(".ducklake"):
        return "duckdb:" + readable_copy(catalog, str(tmp_path / "copy.duckdb"))
    return catalog


def test_reads_every_snapshot_of_a_11_lake(v11_lake, tmp_path):
    lake = DuckLake.attach(_ours_to_attach(v11_lake, tmp_path))
    try:
        assert lake.option("version") == "1.1-dev1"
        for table in _TABLES:
            assert _check_every_snapshot(lake, v11_lake, table) > 3
            _check_changes(lake, v11_lake, table)
    finally:
        lake.close()


def test_11_layout_really_used(sqlite_lake):
    """The lake holds what makes it 1.1: prefixed inlined columns, epoch transforms, a multi-snapshot Puffin file."""
    con = sqlite3.connect(sqlite_lake.removeprefix("sqlite:"))
    try:
        inlined = [n for (n,) in con.execute("SELECT table_name FROM ducklake_inlined_data_tables")]
        assert inlined
        columns = [r[1] for r in con.execute(f"PRAGMA table_info({inlined[-1]})")]
        assert columns[:5] == ["_ducklake_row_id", "_ducklake_begin_snapshot", "_ducklake_end_snapshot", "id",
                               "label"] or columns[:4] == ["_ducklake_row_id", "_ducklake_begin_snapshot",
                                                           "_ducklake_end_snapshot", "id"]
        transforms = {t for (t,) in con.execute("SELECT transform FROM ducklake_partition_column")}
        assert {"epoch_day", "epoch_year", "epoch_month", "epoch_hour", "year"} <= transforms
        puffins = con.execute("SELECT begin_snapshot, partial_max, delete_count FROM ducklake_delete_file "
                              "WHERE format = 'puffin' AND partial_max IS NOT NULL").fetchall()
        assert puffins and all(last > begin for begin, last, _ in puffins)
        assert con.execute("SELECT count(*) FROM ducklake_data_file WHERE row_group_count IS NOT NULL").fetchone()[0]
    finally:
        con.close()


def test_epoch_partitions_prune_and_read(sqlite_lake):
    catalog = sqlite_lake
    lake = DuckLake.attach(catalog)
    try:
        every = len(lake.plan_scan("p").files)
        for where, duck_where in (("ts < '1969-12-31 00:00:00'", "ts < TIMESTAMP '1969-12-31 00:00:00'"),
                                  ("ts >= '1970-01-01 12:00:00'", "ts >= TIMESTAMP '1970-01-01 12:00:00'"),
                                  ("d < '1968-01-01'", "d < DATE '1968-01-01'"),
                                  ("tz >= '1970-01-01 05:00:00'", "tz >= TIMESTAMPTZ '1970-01-01 05:00:00+00'")):
            kinds = {"tz": "tz"}
            theirs = query(attach_sql(catalog), f"SELECT * FROM lake.p WHERE {duck_where}")
            ours = lake.read_arrow("p", where=where)
            assert _ours(ours) == _theirs(theirs, ours.column_names, kinds), where
            assert len(lake.plan_scan("p", where=where).files) < every, where
    finally:
        lake.close()


def test_view_column_comments_of_a_11_lake(sqlite_lake):
    catalog = sqlite_lake
    lake = DuckLake.attach(catalog)
    try:
        assert lake.tags("v", column="id") == {"comment": "the id"}
        assert lake.tags("v", column="label") == {"comment": "second label"}
        before = lake.current_snapshot() - 1
        assert lake.tags("v", column="label", version=before) == {"comment": "first label"}
    finally:
        lake.close()


def test_spark_reads_a_11_lake(sqlite_lake, spark):
    catalog = sqlite_lake
    lake = DuckLake.attach(catalog, spark=spark)
    try:
        for table in _TABLES:
            last = lake.current_snapshot()
            first = lake.table_info(table).begin_snapshot
            theirs = _binary_history(catalog, table, list(range(first, last + 1)))
            for v in (first + 1, (first + last) // 2, last):
                plan = lake.plan_scan(table, version=v)
                names = [c.name for c in plan.table.columns]
                kinds = {c.name: "tz" for c in plan.table.columns if c.type == "timestamptz"}
                frame = plan.to_dataframe(spark, row_ids=True).toArrow()
                assert _ours(frame) == _theirs(theirs[v], [*names, "rowid"], kinds), f"{table} at {v}"
            now = lake.sql(f"SELECT * FROM lake.main.{table}").toArrow()
            assert _ours(now) == _theirs(theirs[last], names, kinds)
    finally:
        lake.close()


_ENCRYPTED_HISTORY = """
CREATE TABLE lake.e(id INTEGER, v VARIANT, s VARCHAR);
INSERT INTO lake.e VALUES (1, 42::VARIANT, 'a'), (2, 'x'::VARIANT, 'b'), (3, {'k': [1, 2]}::VARIANT, 'c');
INSERT INTO lake.e VALUES (4, [1.5, NULL]::VARIANT, 'd');
DELETE FROM lake.e WHERE id = 2;
UPDATE lake.e SET s = 'cc' WHERE id = 3;
CALL ducklake_expire_snapshots('lake', versions => [3]);
CALL ducklake_cleanup_old_files('lake', cleanup_all => true);
"""


def test_spark_reads_an_encrypted_variant_lake_after_expire(tmp_path, spark):
    """An ENCRYPTED 1.1 lake with a VARIANT column, deletes, an update, an expired snapshot and cleaned-up files,
    as the binary writes it: Spark reads every snapshot that is left as the binary does."""
    catalog = _sqlite(tmp_path)
    require_ref11()
    run("SET force_mbedtls_unsafe = 'true';"  # the binary has no httpfs: its own crypto module is write-protected
        + attach_sql(catalog, str(tmp_path / "data") + "/", encrypted=True, data_inlining_row_limit=0)
        + _ENCRYPTED_HISTORY)
    lake = DuckLake.attach(catalog, spark=spark)
    try:
        assert 3 not in compare_variant_snapshots(lake, catalog, "e")
    finally:
        lake.close()
