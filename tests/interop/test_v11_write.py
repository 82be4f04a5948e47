"""Writing DuckLake 1.1 catalogs: lakes we create at 1.1 (and 1.1 lakes the reference created) stay in the 1.1
layout under our writes, and the 1.1 reference (a DuckDB binary, version '1.1-dev1') reads them as we do at every
snapshot, with its rowid and table_changes."""

from __future__ import annotations

import datetime as dt
import shutil
import sqlite3

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa

from spark_ducklake import DuckLake
from spark_ducklake.dataplane.arrow.local_scan import read_plan
from spark_ducklake.errors import CatalogError, DuckLakeError
from tests.support.ref11 import attach_sql, compare_variant_snapshots, query, require_ref11, run
from tests.support.reference import attach as attach_15
from tests.support.reference import connect as connect_15

pytestmark = pytest.mark.latest_default  # new catalogs 1.1; the binary's attach as they are


def _norm(value):
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _ours(table: pa.Table) -> list[tuple]:
    return sorted((tuple(_norm(v) for v in row.values()) for row in table.to_pylist()), key=repr)


def _theirs(rows: list[dict], names: list[str]) -> list[tuple]:
    return sorted((tuple(r[n] for n in names) for r in rows), key=repr)


_TYPES = {"id": pa.int64(), "s": pa.string(), "label": pa.string(), "ts": pa.timestamp("us"),
          "row_id": pa.int64(), "z": pa.int32()}


def _rows(columns: dict) -> pa.Table:
    return pa.table({name: pa.array(values, _TYPES[name]) for name, values in columns.items()})


def _history(lake: DuckLake) -> None:
    """Inlined and file inserts, deletes, updates, schema evolution and compaction, all in-process."""
    lake.create_table("t", "id BIGINT, s VARCHAR, ts TIMESTAMP_NTZ, row_id BIGINT")
    lake.write(_rows({"id": [1, 2, 3], "s": ["a", "b", "c"],
                         "ts": [dt.datetime(2020, 1, 1), dt.datetime(1969, 12, 31, 23), None],
                         "row_id": [10, 20, 30]}), "t")
    lake.delete("t", "id = 1")
    lake.update("t", "id = 2", {"s": "'bb'"})
    many = 40
    lake.write(_rows({"id": list(range(100, 100 + many)), "s": [f"x{i}" for i in range(many)],
                         "ts": [dt.datetime(2000, 1, 1, i % 24) for i in range(many)],
                         "row_id": list(range(many))}), "t")
    lake.delete("t", "id % 7 = 0")
    lake.update("t", "id BETWEEN 110 AND 113", {"s": "'u'"})
    lake.add_column("t", "z", "INT")
    lake.write(_rows({"id": [4], "s": ["d"], "ts": [None], "row_id": [4], "z": [44]}), "t")
    lake.rename_column("t", "s", "label")
    lake.write(_rows({"id": list(range(200, 230)), "label": ["y"] * 30, "ts": [None] * 30,
                         "row_id": list(range(30)), "z": list(range(30))}), "t")
    lake.merge_adjacent_files()
    lake.delete("t", "id = 4")
    lake.create_view("v", "SELECT id, label FROM t", dialect="duckdb")
    lake.set_comment("v", "the id", column="id")
    lake.set_comment("v", "first", column="label")
    lake.set_comment("v", "second", column="label")


def _binary_history(catalog: str, table: str, versions: list[int]) -> dict[int, list[dict]]:
    parts = [f"SELECT {v} AS v, list(x) AS rows FROM (SELECT *, rowid FROM lake.{table} AT (VERSION => {v})) x;"
             for v in versions]
    return {r[0]["v"]: r[0]["rows"] or [] for r in run(attach_sql(catalog) + "\n".join(parts))}


def _compare_with_binary(lake: DuckLake, catalog: str, table: str) -> None:
    last = lake.current_snapshot()
    versions = [v for v in range(last + 1) if table in {t.name for t in lake.tables("main", version=v)}]
    theirs = _binary_history(catalog, table, versions)
    for v in versions:
        plan = lake.plan_scan(table, version=v)
        names = [c.name for c in plan.table.columns]
        assert _ours(read_plan(plan, row_ids=True)) == _theirs(theirs[v], [*names, "rowid"]), f"{table} at {v}"
    first = versions[0]
    ranges = [(first, last)] + [(v, v) for v in versions]
    parts = [f"SELECT list(x) AS rows FROM (SELECT * FROM lake.table_changes('{table}', {a}, {b})) x;"
             for a, b in ranges]
    results = [r[0]["rows"] or [] for r in run(attach_sql(catalog) + "\n".join(parts))]
    for (a, b), rows in zip(ranges, results, strict=True):
        ours = lake.table_changes_arrow(table, a, b)
        assert _ours(ours) == _theirs(rows, ours.column_names), f"table_changes({table}, {a}, {b})"


def _metadata_functions_match(lake: DuckLake, catalog: str) -> None:
    """The binary's table_info, list_files and snapshots() on our lake are ours, field for field."""
    info, files, snapshots = run(attach_sql(catalog) + "FROM ducklake_table_info('lake'); FROM ducklake_list_files("
                                 "'lake', 't'); SELECT snapshot_id, schema_version, changes FROM lake.snapshots();")

    def text(rows) -> list[tuple]:  # JSON prints UBIGINTs as strings: compare every field as text
        return sorted((tuple(str(v) for v in row) for row in rows), key=repr)

    assert text(lake.table_info()) == text(r.values() for r in info)
    assert text(lake.list_files("t")) == text(r.values() for r in files)
    assert [(s.snapshot_id, s.schema_version, s.changes) for s in lake.snapshots()] == [
        (r["snapshot_id"], r["schema_version"], r["changes"]) for r in snapshots]


def _layout_checks(lake: DuckLake) -> None:
    """Our catalog rows are 1.1's: prefixed inlined columns, row_group_count from each file's footer."""
    with lake.engine.connect() as conn:
        names = list(conn.execute(sa.text("SELECT table_name FROM ducklake_inlined_data_tables")).scalars())
        assert names
        for name in names:
            cols = list(conn.execute(sa.text(f'SELECT * FROM "{name}" WHERE 1 = 0')).keys())
            assert cols[:3] == ["_ducklake_row_id", "_ducklake_begin_snapshot", "_ducklake_end_snapshot"], name
        rows = conn.execute(sa.text("SELECT path, row_group_count FROM ducklake_data_file")).all()
        assert rows
        for path, count in rows:
            assert count == pq.ParquetFile(lake.data_path + "main/t/" + path).metadata.num_row_groups
        deletes = conn.execute(sa.text("SELECT format, row_group_count FROM ducklake_delete_file")).all()
        assert all(count == 1 for fmt, count in deletes if fmt == "parquet")
        tags = conn.execute(sa.text("SELECT column_name, value, end_snapshot IS NULL FROM ducklake_view_column_tag "
                                    "ORDER BY begin_snapshot")).all()
        assert [tuple(r) for r in tags] == [("id", "the id", True), ("label", "first", False),
                                            ("label", "second", True)]


@pytest.fixture(params=["sqlite", "duckdb", "postgres"])
def new_catalog(request, tmp_path):
    require_ref11()
    if request.param == "sqlite":
        return f"sqlite:{tmp_path / 'meta.sqlite'}"
    if request.param == "duckdb":
        return f"duckdb:{tmp_path / 'meta.ducklake'}"
    return request.getfixturevalue("pg_catalog")


def test_we_write_a_11_lake_the_binary_reads(new_catalog, tmp_path):
    lake = DuckLake.attach(new_catalog, str(tmp_path / "data"), ducklake_version="1.1-dev1",
                           data_inlining_row_limit=10)
    try:
        _history(lake)
        assert lake.option("version") == "1.1-dev1"
        _layout_checks(lake)
        if new_catalog.endswith(".ducklake"):
            lake.close()  # one writer of a DuckDB file at a time; the binary only reads it
        _compare_with_binary(lake, new_catalog, "t")
        _metadata_functions_match(lake, new_catalog)
        comments = query(attach_sql(new_catalog), "SELECT column_name, comment FROM duckdb_columns() "
                         "WHERE database_name = 'lake' AND table_name = 'v' ORDER BY column_name")
        assert comments == [{"column_name": "id", "comment": "the id"}, {"column_name": "label", "comment": "second"}]
    finally:
        lake.close()


def test_we_write_to_a_lake_the_binary_created(tmp_path):
    """A 1.1 lake the reference made keeps its version and layout under our writes, and both read the same."""
    require_ref11()
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    run(attach_sql(catalog, str(tmp_path / "data") + "/", data_inlining_row_limit=10)
        + "CREATE TABLE lake.t(id BIGINT, s VARCHAR, ts TIMESTAMP, row_id BIGINT);"
          "INSERT INTO lake.t VALUES (7, 'seven', NULL, 70);")
    lake = DuckLake.attach(catalog, data_inlining_row_limit=10)
    try:
        _history_on_existing(lake)
        assert lake.option("version") == "1.1-dev1"
        _compare_with_binary(lake, catalog, "t")
        # and the binary writes on after us, reading our inlined rows and files
        run(attach_sql(catalog) + "INSERT INTO lake.t VALUES (8, 'eight', NULL, 80, 8);"
                                  "DELETE FROM lake.t WHERE id = 2;")
        _compare_with_binary(lake, catalog, "t")
    finally:
        lake.close()
    con = sqlite3.connect(tmp_path / "meta.sqlite")
    try:
        assert con.execute("SELECT value FROM ducklake_metadata WHERE key = 'version'").fetchone() == ("1.1-dev1",)
    finally:
        con.close()


def _history_on_existing(lake: DuckLake) -> None:
    lake.write(_rows({"id": [1, 2, 3], "s": ["a", "b", "c"], "ts": [None] * 3, "row_id": [1, 2, 3]}), "t")
    lake.delete("t", "id = 7")
    lake.update("t", "id = 2", {"s": "'B'"})
    lake.write(_rows({"id": list(range(100, 140)), "s": ["x"] * 40, "ts": [dt.datetime(2001, 1, 1)] * 40,
                         "row_id": list(range(40))}), "t")
    lake.delete("t", "id % 5 = 0")
    lake.add_column("t", "z", "INT")
    lake.write(_rows({"id": [9], "s": ["nine"], "ts": [None], "row_id": [9], "z": [99]}), "t")


def test_new_catalog_versions(tmp_path):
    """ducklake_version picks a new catalog's version and layout; an existing catalog keeps its own."""
    made = {}
    for version in ("1.0", "1.1", "1.1-dev1"):
        path = tmp_path / f"{version}.sqlite"
        DuckLake.attach(f"sqlite:{path}", str(tmp_path / version), ducklake_version=version).close()
        con = sqlite3.connect(path)
        made[version] = (
            con.execute("SELECT value FROM ducklake_metadata WHERE key = 'version'").fetchone()[0],
            {r[1] for r in con.execute("PRAGMA table_info(ducklake_data_file)")} >= {"row_group_count"},
            {r[1] for r in con.execute("PRAGMA table_info(ducklake_file_column_stats)")} >= {"min_is_exact"},
            {r[1] for r in con.execute("PRAGMA table_info(ducklake_schema)")} >= {"parent_schema_id"},
            bool(con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'ducklake_view_column_tag'")
                 .fetchone()[0]))
        con.close()
    assert made == {"1.0": ("1.0", False, False, False, False),
                    "1.1": ("1.1", True, True, True, True),
                    "1.1-dev1": ("1.1-dev1", True, False, False, True)}
    default = tmp_path / "default.sqlite"
    DuckLake.attach(f"sqlite:{default}", str(tmp_path / "d")).close()
    con = sqlite3.connect(default)
    assert con.execute("SELECT value FROM ducklake_metadata WHERE key = 'version'").fetchone() == ("1.1",)
    con.close()
    with pytest.raises(CatalogError, match="Cannot downgrade a DuckLake catalog from version 1.1 to 1.0"):
        DuckLake.attach(f"sqlite:{tmp_path / '1.1.sqlite'}", ducklake_version="1.0")
    with pytest.raises(CatalogError, match="version mismatch"):
        DuckLake.attach(f"sqlite:{tmp_path / '1.0.sqlite'}", ducklake_version="1.1")
    DuckLake.attach(f"sqlite:{tmp_path / '1.1.sqlite'}", ducklake_version="1.1-dev1").close()


def test_binary_refuses_the_released_version_string(tmp_path):
    """The development build knows '1.1-dev1' only: a catalog we write as '1.1' (the released string) is refused
    by it by name, which is why tests drive it with ducklake_version='1.1-dev1' (docs/catalogs.md, Versions)."""
    require_ref11()
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    DuckLake.attach(catalog, str(tmp_path / "data"), ducklake_version="1.1").close()
    with pytest.raises(RuntimeError, match="Unsupported ducklake_version '1.1'"):
        run(attach_sql(catalog) + "SELECT 1;")


def test_view_column_comments_need_11(tmp_path):
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"), ducklake_version="1.0")
    try:
        lake.create_table("t", "id BIGINT")
        lake.create_view("v", "SELECT id FROM t", dialect="duckdb")
        before = lake.current_snapshot()
        with pytest.raises(DuckLakeError, match="DuckLake 1.0 does not support COMMENT ON COLUMN for views"):
            lake.set_comment("v", "x", column="id")
        assert lake.current_snapshot() == before
    finally:
        lake.close()


def test_view_column_comment_keys_by_query_name(tmp_path):
    """A comment on an aliased view column is stored under the query's output name, as DuckLake 1.1 says."""
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"), ducklake_version="1.1")
    try:
        lake.create_table("t", "id BIGINT")
        lake.create_view("v", "SELECT id FROM t", dialect="duckdb", column_aliases=["x"])
        lake.set_comment("v", "aliased", column="x")
        assert lake.tags("v", column="x") == {"comment": "aliased"}
        with lake.engine.connect() as conn:
            stored = conn.execute(sa.text("SELECT column_name FROM ducklake_view_column_tag")).scalars().all()
        assert stored == ["id"]
        lake.drop_view("v")
        with lake.engine.connect() as conn:
            ended = conn.execute(sa.text("SELECT end_snapshot FROM ducklake_view_column_tag")).scalar()
        assert ended == lake.current_snapshot()
    finally:
        lake.close()


_EPOCH_ROWS = {
    "id": list(range(8)),
    "ts": [dt.datetime(1969, 12, 31, 23, 30), dt.datetime(1970, 1, 1, 0, 30), dt.datetime(2017, 11, 16, 22, 31, 8),
           dt.datetime(1968, 2, 29, 1), dt.datetime(2020, 1, 1), None, dt.datetime(1999, 12, 31, 23, 59, 59),
           dt.datetime(1970, 1, 1)],
    "d": [dt.date(1969, 12, 31), dt.date(1970, 1, 1), dt.date(2020, 1, 1), dt.date(1900, 3, 1), None,
          dt.date(2000, 2, 29), dt.date(1969, 1, 1), dt.date(1970, 12, 31)],
    "tz": [dt.datetime(1969, 12, 31, 23, 30, tzinfo=dt.timezone.utc), None,
           dt.datetime(2017, 11, 16, 22, 31, 8, tzinfo=dt.timezone.utc),
           dt.datetime(1970, 1, 1, 0, 59, tzinfo=dt.timezone.utc), dt.datetime(2021, 6, 1, tzinfo=dt.timezone.utc),
           dt.datetime(1960, 5, 5, 5, tzinfo=dt.timezone.utc), dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc),
           dt.datetime(1969, 12, 31, 23, 59, 59, tzinfo=dt.timezone.utc)],
}
_EPOCH_KEYS = [["epoch_day(ts)", "epoch_year(d)"], ["epoch_hour(tz)", "epoch_month(ts)"],
               ["epoch_month(d)", "epoch_year(tz)", "epoch_hour(ts)"]]


def _epoch_values(con, table_id: int) -> list[tuple]:
    """(key index, value) of every file of a table, by partition spec order."""
    return sorted(con.execute(
        "SELECT partition_key_index, partition_value FROM ducklake_file_partition_value v JOIN ducklake_data_file f "
        "USING (data_file_id) WHERE f.table_id = ? AND f.end_snapshot IS NULL", (table_id,)).fetchall(),
        key=repr)


@pytest.mark.parametrize("keys", _EPOCH_KEYS, ids=["day-year", "hour-month", "three"])
def test_epoch_partitioned_writes_match_the_binary(tmp_path, keys):
    """Our epoch partition values are the binary's for the same rows (floor before 1970, UTC for timestamptz),
    and it reads our files; a 1.0 catalog refuses the transforms in the reference's words."""
    require_ref11()
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    lake = DuckLake.attach(catalog, str(tmp_path / "data"), ducklake_version="1.1-dev1", data_inlining_row_limit=0)
    try:
        lake.create_table("ours", "id BIGINT, ts TIMESTAMP_NTZ, d DATE, tz TIMESTAMP")
        lake.set_partitioning("ours", keys)
        data = pa.table({"id": pa.array(_EPOCH_ROWS["id"], pa.int64()),
                         "ts": pa.array(_EPOCH_ROWS["ts"], pa.timestamp("us")),
                         "d": pa.array(_EPOCH_ROWS["d"], pa.date32()),
                         "tz": pa.array(_EPOCH_ROWS["tz"], pa.timestamp("us", "UTC"))})
        lake.write(data, "ours")
        ours_id = lake.table_info("ours").table_id
    finally:
        lake.close()
    values = ", ".join(
        f"({i}, {_sql_ts(ts)}, {_sql_d(d)}, {_sql_tz(tz)})"
        for i, ts, d, tz in zip(*(_EPOCH_ROWS[k] for k in ("id", "ts", "d", "tz")), strict=True))
    theirs = run(attach_sql(catalog, data_inlining_row_limit=0)
                 + "SET TimeZone = 'UTC'; CREATE TABLE lake.theirs(id BIGINT, ts TIMESTAMP, d DATE, tz TIMESTAMPTZ);"
                 f"ALTER TABLE lake.theirs SET PARTITIONED BY ({', '.join(keys)});"
                 f"INSERT INTO lake.theirs VALUES {values};"
                 "SELECT list(x) AS rows FROM (SELECT id, ts::VARCHAR AS ts, d::VARCHAR AS d, epoch_us(tz) AS tz "
                 "FROM lake.ours) x;")
    rows = theirs[0][0]["rows"]
    expected = [(i, None if ts is None else str(ts), None if d is None else d.isoformat(),
                 None if tz is None else int(tz.timestamp() * 1_000_000))
                for i, ts, d, tz in zip(*(_EPOCH_ROWS[k] for k in ("id", "ts", "d", "tz")), strict=True)]
    assert sorted((r["id"], r["ts"], r["d"], r["tz"]) for r in rows) == expected
    con = sqlite3.connect(tmp_path / "meta.sqlite")
    try:
        theirs_id = con.execute("SELECT table_id FROM ducklake_table WHERE table_name = 'theirs'").fetchone()[0]
        ours_values = _epoch_values(con, ours_id)
        assert len(ours_values) >= 8 and any(str(value).startswith("-") for _, value in ours_values)
        assert ours_values == _epoch_values(con, theirs_id)
    finally:
        con.close()
    old = DuckLake.attach(f"sqlite:{tmp_path / 'old.sqlite'}", str(tmp_path / "old"), ducklake_version="1.0")
    try:
        old.create_table("t", "ts TIMESTAMP")
        with pytest.raises(DuckLakeError, match=f"DuckLake 1.0 does not support the {keys[0].split('(')[0]} "
                                                "partition transform - attach with AUTOMATIC_MIGRATION"):
            old.set_partitioning("t", keys[:1])
    finally:
        old.close()


def test_epoch_partitioned_spark_write(tmp_path, spark):
    """Spark's writer computes the same epoch partition values as the in-process one (and the binary's)."""
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"), ducklake_version="1.1-dev1",
                           data_inlining_row_limit=0, spark=spark, small_data_threshold=0)
    try:
        data = pa.table({"id": pa.array(_EPOCH_ROWS["id"], pa.int64()),
                         "ts": pa.array(_EPOCH_ROWS["ts"], pa.timestamp("us")),
                         "d": pa.array(_EPOCH_ROWS["d"], pa.date32()),
                         "tz": pa.array(_EPOCH_ROWS["tz"], pa.timestamp("us", "UTC"))})
        for name, keys in (("a", _EPOCH_KEYS[1]), ("b", _EPOCH_KEYS[2])):
            for how in ("spark", "local"):
                lake.create_table(f"{name}_{how}", "id BIGINT, ts TIMESTAMP_NTZ, d DATE, tz TIMESTAMP")
                lake.set_partitioning(f"{name}_{how}", keys)
            frame = spark.createDataFrame([tuple(r.values()) for r in data.to_pylist()],
                                          "id long, ts timestamp_ntz, d date, tz timestamp")
            lake.write(frame, f"{name}_spark")
            lake.small_data_threshold = "64MB"
            lake.write(data, f"{name}_local")
            lake.small_data_threshold = 0
            ids = {how: lake.table_info(f"{name}_{how}").table_id for how in ("spark", "local")}
            con = sqlite3.connect(tmp_path / "meta.sqlite")
            try:
                assert _epoch_values(con, ids["spark"]) == _epoch_values(con, ids["local"])
                assert len(_epoch_values(con, ids["spark"])) >= 8
            finally:
                con.close()
            assert _ours(lake.read(f"{name}_spark").toArrow()) == _ours(data)
    finally:
        lake.close()


def _sql_ts(value) -> str:
    return "NULL" if value is None else f"TIMESTAMP '{value}'"


def _sql_d(value) -> str:
    return "NULL" if value is None else f"DATE '{value}'"


def _sql_tz(value) -> str:
    return "NULL" if value is None else f"TIMESTAMPTZ '{value.isoformat(sep=' ')}'"


def _dump(path) -> dict:
    """Every table of a SQLite catalog: its columns with types, and its rows sorted."""
    con = sqlite3.connect(path)
    try:
        out = {}
        for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            columns = [(r[1], r[2]) for r in con.execute(f'PRAGMA table_info("{name}")')]
            rows = sorted(con.execute(f'SELECT * FROM "{name}"').fetchall(), key=repr)
            out[name] = (columns, rows)
        return out
    finally:
        con.close()


def test_migration_10_to_11_matches_the_binary(tmp_path):
    """A 1.0 lake DuckDB 1.5.5 wrote, migrated by us (automatic_migration=True, ducklake_version='1.1-dev1') and by
    the 1.1 reference (AUTOMATIC_MIGRATION TRUE): the same catalog, table for table and row for row."""
    require_ref11()
    con = connect_15()
    attach_15(con, f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data") + "/", data_inlining_row_limit=10)
    for sql in ("CREATE TABLE lake.t(id BIGINT, s VARCHAR)", "INSERT INTO lake.t VALUES (1, 'a'), (2, 'b')",
                "DELETE FROM lake.t WHERE id = 1", "ALTER TABLE lake.t ADD COLUMN z INT",
                "INSERT INTO lake.t VALUES (3, 'c', 3)", "INSERT INTO lake.t SELECT i, 'x', i FROM range(100) r(i)",
                "DELETE FROM lake.t WHERE id = 50", "CREATE VIEW lake.v AS SELECT id FROM lake.t"):
        con.execute(sql)
    con.close()
    for name in ("ours", "theirs"):
        shutil.copy(tmp_path / "meta.sqlite", tmp_path / f"{name}.sqlite")
    with pytest.raises(CatalogError, match="version mismatch"):
        DuckLake.attach(f"sqlite:{tmp_path / 'ours.sqlite'}", ducklake_version="1.1-dev1")
    assert _dump(tmp_path / "ours.sqlite") == _dump(tmp_path / "meta.sqlite")  # refused: nothing changed
    run(attach_sql(f"sqlite:{tmp_path / 'theirs.sqlite'}", automatic_migration=True) + "SELECT 1;")
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'ours.sqlite'}", automatic_migration=True,
                           ducklake_version="1.1-dev1")
    try:
        assert lake.option("version") == "1.1-dev1"
        assert _ours(lake.read_arrow("t")) == _ours(pa.table({"id": pa.array([2, 3] + [i for i in range(100)
                                                                                           if i != 50], pa.int64()),
                                                              "s": ["b", "c"] + ["x"] * 99,
                                                              "z": pa.array([None, 3] + [i for i in range(100)
                                                                                         if i != 50], pa.int32())}))
        lake.write(_rows({"id": [7], "s": ["seven"], "z": [7]}), "t")  # into the renamed inlined table
    finally:
        lake.close()
    ours, theirs = _dump(tmp_path / "ours.sqlite"), _dump(tmp_path / "theirs.sqlite")
    assert {n: c for n, (c, _) in ours.items()} == {n: c for n, (c, _) in theirs.items()}
    inlined = [n for n in ours if n.startswith("ducklake_inlined_data_") and n != "ducklake_inlined_data_tables"]
    assert inlined and all(ours[n][0][0][0] == "_ducklake_row_id" for n in inlined)
    assert "ducklake_view_column_tag" in ours and ("row_group_count", "BIGINT") in ours["ducklake_data_file"][0]
    changed = [n for n in ours if ours[n][1] != theirs[n][1]]
    # our later write adds a snapshot, its rows and the inserted row; nothing else may differ
    assert set(changed) <= {"ducklake_snapshot", "ducklake_snapshot_changes", "ducklake_table_stats",
                            "ducklake_table_column_stats", "ducklake_inlined_data_1_2"}, changed
    assert query(attach_sql(f"sqlite:{tmp_path / 'ours.sqlite'}"), "SELECT count(*) AS n FROM lake.t") == [{"n": 102}]


def test_expire_removes_view_column_tags_no_snapshot_sees(tmp_path):
    """Snapshot expiry drops the ended view-column tag versions no surviving snapshot sees, as the 1.1 reference
    does; the binary still reads the surviving comment."""
    require_ref11()
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    lake = DuckLake.attach(catalog, str(tmp_path / "data"), ducklake_version="1.1-dev1")
    try:
        lake.create_table("t", "id BIGINT")
        lake.create_view("v", "SELECT id FROM t", dialect="duckdb")
        lake.set_comment("v", "old", column="id")
        lake.set_comment("v", "new", column="id")
        lake.expire_snapshots(versions=list(range(lake.current_snapshot())))
        with lake.engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT value FROM ducklake_view_column_tag")).scalars().all()
        assert rows == ["new"]
    finally:
        lake.close()
    assert query(attach_sql(catalog), "SELECT comment FROM duckdb_columns() WHERE database_name = 'lake' AND "
                 "table_name = 'v'") == [{"comment": "new"}]


def test_comment_on_aliased_view_column_in_sql_reads_in_the_binary(tmp_path):
    """`COMMENT ON COLUMN v.x` through lake.sql (no Spark) on a view with column aliases: the binary shows the
    comment on `x`, so the tag was keyed by the query's name `id` as it expects."""
    require_ref11()
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    lake = DuckLake.attach(catalog, str(tmp_path / "data"), ducklake_version="1.1-dev1")
    try:
        lake.create_table("t", "id BIGINT, other BIGINT")
        lake.create_view("v", "SELECT id, other FROM t", dialect="duckdb", column_aliases=["x", "other"])
        lake.sql("COMMENT ON COLUMN v.x IS 'via sql'")  # an aliased view takes comments on its aliases only
        lake.sql("COMMENT ON COLUMN v.other IS 'plain'")
    finally:
        lake.close()
    assert query(attach_sql(catalog), "SELECT column_name, comment FROM duckdb_columns() WHERE database_name = "
                 "'lake' AND table_name = 'v' ORDER BY column_name") == [
        {"column_name": "other", "comment": "plain"}, {"column_name": "x", "comment": "via sql"}]


def test_add_data_files_records_row_groups_as_the_binary(tmp_path):
    """add_data_files on a 1.1 catalog fills row_group_count from the file's footer, as the binary's
    ducklake_add_data_files does for the same file."""
    require_ref11()
    outside = tmp_path / "outside.parquet"
    pq.write_table(pa.table({"id": pa.array(range(1000), pa.int64())}), outside, row_group_size=300)
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    lake = DuckLake.attach(catalog, str(tmp_path / "data"), ducklake_version="1.1-dev1")
    try:
        lake.create_table("ours", "id BIGINT")
        lake.add_data_files("ours", str(outside))
    finally:
        lake.close()
    run(attach_sql(catalog) + f"CREATE TABLE lake.theirs(id BIGINT); CALL ducklake_add_data_files('lake', 'theirs', "
                              f"'{outside}');")
    con = sqlite3.connect(tmp_path / "meta.sqlite")
    try:
        counts = dict(con.execute("SELECT t.table_name, f.row_group_count FROM ducklake_data_file f JOIN "
                                  "ducklake_table t USING (table_id)").fetchall())
    finally:
        con.close()
    assert counts == {"ours": 4, "theirs": 4}
    assert query(attach_sql(catalog), "SELECT count(*) AS n, sum(id)::BIGINT AS s FROM lake.ours") == [{"n": 1000,
                                                                                                 "s": 499500}]


def test_binary_reads_our_encrypted_variant_lake_after_expire(tmp_path, spark):
    """An ENCRYPTED 1.1 lake with a VARIANT column written by Spark, changed by a delete and an update, with a
    snapshot expired and its files cleaned up: the binary reads every snapshot that is left as we do."""
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    lake = DuckLake.attach(catalog, str(tmp_path / "data"), spark=spark, encrypted=True, ducklake_version="1.1-dev1",
                           data_inlining_row_limit=0)
    try:
        lake.create_table("e", "id INT, v VARIANT, s VARCHAR")
        rows = spark.createDataFrame([(1, "42", "a"), (2, '"x"', "b"), (3, '{"k":[1,2]}', "c")],
                                     "id int, j string, s string")
        lake.write(rows.selectExpr("id", "parse_json(j) AS v", "s").coalesce(1), "e")
        lake.write(spark.sql("SELECT 4 AS id, parse_json('[1.5,null]') AS v, 'd' AS s"), "e")
        lake.delete("e", "id = 2")
        lake.update("e", "id = 3", {"s": "'cc'"})
        expired = lake.current_snapshot() - 2  # the second insert's snapshot
        lake.expire_snapshots(versions=[expired])
        lake.cleanup_old_files(cleanup_all=True)
        assert expired not in compare_variant_snapshots(lake, catalog, "e")
    finally:
        lake.close()


def test_delete_files_after_a_migration_record_row_groups(tmp_path):
    """A 1.0 lake migrated to 1.1: files written before keep a NULL row_group_count, a new (plain) delete file
    records its Parquet row groups, as the binary does (test/sql/migration/v10_row_group_count.test)."""
    catalog, data = f"sqlite:{tmp_path / 'm.sqlite'}", f"{tmp_path}/data/"
    with DuckLake.attach(catalog, data, ducklake_version="1.0", data_inlining_row_limit=0) as lake:
        lake.create_table("t", "i BIGINT")
        lake.write(pa.table({"i": pa.array(range(1000), pa.int64())}), "t")
        lake.delete("t", "i < 100")
    with DuckLake.attach(catalog, data, automatic_migration=True, data_inlining_row_limit=0) as lake:
        lake.write(pa.table({"i": pa.array(range(1000, 2000), pa.int64())}), "t")
        lake.delete("t", "i >= 1900")
        assert lake.read_arrow("t").num_rows == 1800
        with lake.engine.connect() as conn:
            files = conn.execute(sa.text("SELECT record_count, row_group_count FROM ducklake_data_file "
                                         "ORDER BY data_file_id")).all()
            deletes = conn.execute(sa.text("SELECT delete_count, row_group_count FROM ducklake_delete_file "
                                           "ORDER BY delete_file_id")).all()
    assert [tuple(r) for r in files] == [(1000, None), (1000, 1)]
    assert [tuple(r) for r in deletes] == [(100, None), (100, 1)]
