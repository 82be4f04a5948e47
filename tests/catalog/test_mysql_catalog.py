"""MySQL/MariaDB catalogs: the reference's connection strings and DDL, inlined values both ways, atomic commits with
DDL inside, the commit lock, and concurrent writers.

The reference extension (DuckDB 1.5.5 + mysql) can do little in a MySQL catalog: no nested columns with inlining on,
no second INSERT into a table, no NaN. What it can write, we read; what we write, it reads.
"""

from __future__ import annotations

import datetime as dt
import multiprocessing as mp
import ssl
from decimal import Decimal

import pyarrow as pa
import pytest
import sqlalchemy as sa

from spark_ducklake import DuckLake
from spark_ducklake.catalog.changes.ddl import CreateTable
from spark_ducklake.catalog.commit import commit
from spark_ducklake.catalog.database.connection import create_engine, parse_catalog
from spark_ducklake.catalog.database.mysql_dsn import connect_args, parse_dsn
from spark_ducklake.catalog.inlined import codec as inlined
from spark_ducklake.catalog.inlined import tables as inlined_tables
from spark_ducklake.catalog.reads import reader
from spark_ducklake.dataplane.spark.conform import plan_columns
from spark_ducklake.errors import CatalogError
from spark_ducklake.spec.internal_columns import INLINED_ROW_ID
from tests.support.compare import duckdb_rows, duckdb_select, normalize
from tests.support.reference import attach

# Every scalar type the reference can inline in MySQL.
SCALARS = (
    "id INTEGER, b BOOLEAN, i8 TINYINT, i16 SMALLINT, i64 BIGINT, u8 UTINYINT, u16 USMALLINT, u32 UINTEGER, "
    "u64 UBIGINT, i128 HUGEINT, u128 UHUGEINT, f32 FLOAT, f64 DOUBLE, d41 DECIMAL(4,1), d3810 DECIMAL(38,10), "
    "s VARCHAR, j JSON, bl BLOB, dt DATE, t TIME, ttz TIMETZ, ts TIMESTAMP, tstz TIMESTAMPTZ, tss TIMESTAMP_S, "
    "tsms TIMESTAMP_MS, tsns TIMESTAMP_NS, iv INTERVAL, u UUID"
)
ROWS = """
(1, true, -128, -32768, -9223372036854775808, 255, 65535, 4294967295, 18446744073709551615, -9007199254740992,
 99999999999999999999999999999999999999, 1.5, -2.25e300, -999.9, -1234567890123456789012345678.0123456789,
 'a''b"c\\d ü€😀
 x', '{"k": [1, "x"]}', '\\x00\\xFF''\\x5C abc'::BLOB, '0001-01-01', '23:59:59.999999', '12:34:56+05:30',
 '2024-01-02 03:04:05', '2024-01-02 03:04:05+02', '2024-01-02 03:04:05', '2024-01-02 03:04:05',
 '2024-01-02 03:04:05', INTERVAL '1 year 2 months 3 days 04:05:06.789', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'),
(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
(3, false, 0, 0, 0, 0, 0, 0, 0, 0, 0, -0.0, 0.1, 0.5, 0.0000000001, '', 'null', ''::BLOB, '9999-12-31', '00:00:00',
 '00:00:00-12', '1970-01-01', '1970-01-01 00:00:00+00', '1970-01-01', '1970-01-01', '1970-01-01',
 INTERVAL '-1 day -00:00:01', '00000000-0000-0000-0000-000000000000')
"""


def _plain(value):
    """`normalize`, with whole Decimals (our uint64/int128/uint128) as ints, as DuckDB returns them."""
    return normalize(int(value) if isinstance(value, Decimal) and value == value.to_integral_value() else value)


def _show_create(engine: sa.Engine, name: str) -> str:
    with engine.connect() as conn:
        return conn.exec_driver_sql(f"SHOW CREATE TABLE `{name}`").one()[1].replace(f"`{name}`", "`T`")


def _scalar_lake(catalog: str, tmp_path, reference) -> None:
    """The reference makes table t (every scalar type, ROWS inlined in one insert) and an empty table `mine`."""
    attach(reference, catalog, str(tmp_path / "data"))
    reference.execute("SET TimeZone = 'UTC'")
    reference.execute(f"CREATE TABLE lake.t ({SCALARS})")
    reference.execute(f"INSERT INTO lake.t VALUES {ROWS}")
    reference.execute(f"CREATE TABLE lake.mine ({SCALARS})")


# --------------------------------------------------------------------------------------------- catalog strings
def test_catalog_strings_read_like_the_mysql_extension(monkeypatch):
    for name in ("MYSQL_HOST", "MYSQL_PWD", "MYSQL_USER", "MYSQL_DATABASE", "MYSQL_UNIX_PORT", "MYSQL_TCP_PORT"):
        monkeypatch.delenv(name, raising=False)
    assert parse_dsn("db=test host=127.0.0.1 user=root port=3306") == {
        "database": "test", "host": "127.0.0.1", "user": "root", "port": "3306"}
    assert parse_dsn('  passwd="a b\\"c\\\\" DATABASE=x unix_socket=/s  ') == {
        "password": 'a b"c\\', "database": "x", "socket": "/s"}
    for bad in ("db=a database=b", "db=x colour=blue", 'db="x', "db", "db=x = y", 'password="a\\b" db=x'):
        with pytest.raises(CatalogError):
            parse_dsn(bad)
    args = connect_args("db=lake port=0")
    assert args["host"] == "localhost" and args["password"] == "" and "port" not in args  # port 0: the default
    monkeypatch.setenv("MYSQL_HOST", "db.example")
    monkeypatch.setenv("MYSQL_PWD", "s3cret")
    monkeypatch.setenv("MYSQL_TCP_PORT", "3307")
    args = connect_args("db=lake user=me")
    assert (args["host"], args["password"], args["port"], args["user"]) == ("db.example", "s3cret", 3307, "me")
    assert connect_args("db=lake host=h password=")["host"] == "h" and connect_args("db=x password=")["password"] == ""
    assert connect_args("db=x ssl_mode=disabled")["ssl_disabled"] is True
    required = connect_args("db=x ssl_mode=REQUIRED")["ssl"]
    assert isinstance(required, ssl.SSLContext) and required.verify_mode == ssl.CERT_NONE
    for bad in ("ssl_mode=sometimes db=x", "db=x compress=true", "host=h", "db=x port=abc"):
        with pytest.raises(CatalogError):
            connect_args(bad)
    location = parse_catalog('ducklake:mysql:db=x password="p w" user=u')
    assert (location.kind, location.default_data_path) == ("mysql", None)
    assert "p w" not in location.describe() and "password=***" in location.describe()


# --------------------------------------------------------------------------------------------- the reference's DDL
def test_catalog_tables_equal_the_reference(new_mysql_catalog, tmp_path, reference):
    theirs, ours = new_mysql_catalog(), new_mysql_catalog()
    attach(reference, theirs, str(tmp_path / "theirs"))
    reference.execute(f"CREATE TABLE lake.t ({SCALARS})")
    reference.execute("CREATE TABLE lake.p AS SELECT range AS a FROM range(200)")
    reference.execute("DELETE FROM lake.p WHERE a < 2")  # an inlined delete of Parquet rows
    reference.execute("DETACH lake")
    DuckLake.attach(ours, str(tmp_path / "ours")).close()

    their_engine, our_engine = (create_engine(parse_catalog(c)) for c in (theirs, ours))
    with our_engine.connect() as conn:
        spec_tables = sorted(sa.inspect(conn).get_table_names())
    assert len(spec_tables) == 28
    for name in spec_tables:
        assert _show_create(our_engine, name) == _show_create(their_engine, name), name

    with their_engine.connect() as conn:
        columns = reader.load_columns(conn, [1], 1 << 40)[1]
    md = sa.MetaData()
    data = inlined.inlined_data_table(md, "mysql", 1, 99, columns)
    deletes = inlined.inlined_delete_table(md, "mysql", 99)
    with their_engine.begin() as conn:
        md.create_all(conn)
    assert _show_create(their_engine, data.name) == _show_create(their_engine, "ducklake_inlined_data_1_1")
    assert _show_create(their_engine, deletes.name) == _show_create(their_engine, "ducklake_inlined_delete_2")
    their_engine.dispose()
    our_engine.dispose()


# --------------------------------------------------------------------------------------------- inlined values
def test_inlined_values_both_ways(mysql_catalog, tmp_path, reference):
    _scalar_lake(mysql_catalog, tmp_path, reference)
    theirs = duckdb_rows(reference, duckdb_select(reference, "lake.t"))
    duck_times = [r[1] for r in reference.execute("SELECT * FROM lake.snapshots() ORDER BY 1").fetchall()]
    reference.execute("DETACH lake")

    lake = DuckLake.attach(mysql_catalog)
    info = lake.table_info("t")
    with lake.engine.connect() as conn:
        rows = inlined_tables.read_rows(conn, info.table_id, info.columns, lake.current_snapshot())
    ours = sorted((tuple(_plain(v) for v in r.values())[:-1] for r in rows.to_pylist()), key=repr)  # no row_id
    assert ours == theirs
    times = [s.snapshot_time for s in lake.snapshots()]
    assert times == duck_times and all(t.tzinfo is not None and t.microsecond == 0 for t in times)

    lake.write(rows.drop_columns([INLINED_ROW_ID]), "mine")  # 3 rows: inlined, no Spark
    lake.write(rows.drop_columns([INLINED_ROW_ID]).slice(0, 1), "mine")  # a second insert (the reference cannot)
    assert lake.plan_scan("mine").files == []
    lake.close()
    attach(reference, mysql_catalog)
    reference.execute("SET TimeZone = 'UTC'")
    assert duckdb_rows(reference, duckdb_select(reference, "lake.mine")) == sorted(theirs + theirs[:1], key=repr)


def test_values_mysql_cannot_hold_go_to_parquet(mysql_catalog, lake, spark, reference):
    lake.create_table("exact", "id INT, ts TIMESTAMP_NTZ, tz TIMESTAMP, f DOUBLE, s STRING")
    lake.create_table("nested", "id INT, l ARRAY<INT>, st STRUCT<a: INT, b: STRING>")
    whole = dt.datetime(2024, 1, 1, 10)
    fits = (1, whole, whole.replace(tzinfo=dt.timezone.utc), 1.5, "fits")
    misfits = [
        (2, whole.replace(microsecond=5), None, None, None),
        (3, None, whole.replace(microsecond=123456, tzinfo=dt.timezone.utc), None, None),
        (4, None, None, float("nan"), None),
        (5, None, None, float("-inf"), "x" * 70_000),
        (6, None, None, None, "é" * 40_000),  # 80,000 bytes of UTF-8
    ]
    schema = pa.schema([("id", pa.int32()), ("ts", pa.timestamp("us")), ("tz", pa.timestamp("us", tz="UTC")),
                        ("f", pa.float64()), ("s", pa.string())])

    def rows(*values) -> pa.Table:
        return pa.Table.from_pylist([dict(zip(schema.names, row, strict=True)) for row in values], schema)

    columns = lake.table_info("exact").columns
    assert inlined.inlinable(columns, "mysql", rows(fits))
    assert not any(inlined.inlinable(columns, "mysql", rows(fits, row)) for row in misfits)
    lake.write(rows(fits), "exact")  # inlined
    lake.write(rows(*misfits), "exact")  # 5 rows, within the inlining limit: Parquet
    lake.write(pa.table({"id": pa.array([1, 2], pa.int32()), "l": [[1, None], None],
                         "st": [{"a": 1, "b": "x"}, None]}), "nested")
    exact, nested = lake.plan_scan("exact"), lake.plan_scan("nested")
    assert exact.inlined.column("id").to_pylist() == [1] and sum(f.record_count for f in exact.files) == 5
    assert nested.inlined is None and sum(f.record_count for f in nested.files) == 2
    with lake.engine.connect() as conn:
        registered = inlined_tables.inlined_versions(conn, lake.table_info("nested").table_id)
        tables = sa.inspect(conn).get_table_names()
    assert registered == [] and not [t for t in tables if t.startswith("ducklake_inlined_data_2_")]
    lake.close()

    attach(reference, mysql_catalog)
    expected = sorted((tuple(normalize(v) for v in row) for row in [fits, *misfits]), key=repr)
    assert duckdb_rows(reference, "SELECT id, ts, tz, f, s FROM lake.exact") == expected
    assert duckdb_rows(reference, "SELECT id, l, st FROM lake.nested") == [
        (1, (1, None), (("a", 1), ("b", "x"))), (2, None, None)]


# --------------------------------------------------------------------------------------------- atomic commits
class _Fail:
    """An operation that fails after the ones before it wrote their rows (and CreateTable its inlined table)."""

    def intents(self):
        return []

    def apply(self, ctx):
        raise RuntimeError("injected failure")


def _lock_is_free(engine: sa.Engine) -> bool:
    with engine.connect() as conn:
        return conn.exec_driver_sql("SELECT IS_FREE_LOCK(CONCAT('ducklake_commit_', MD5(DATABASE())))").scalar() == 1


def test_failed_commit_with_ddl_leaves_the_catalog_and_the_lock_untouched(mysql_catalog, lake, reference):
    lake.create_table("a", "i INT")
    before = lake.snapshots()
    with pytest.raises(RuntimeError, match="injected"):
        commit(lake.engine, [CreateTable("main", "b", plan_columns("x STRING, y DOUBLE")), _Fail()],
               read_snapshot=before[-1].snapshot_id, data_path=lake.data_path)
    assert lake.snapshots() == before and [t.name for t in lake.tables()] == ["a"]
    assert _lock_is_free(lake.engine)
    with lake.engine.connect() as conn:
        assert [n for n, _v in inlined_tables.inlined_versions(conn, 2)] == []
        rows = conn.exec_driver_sql("SELECT count(*) FROM ducklake_table WHERE table_id = 2").scalar()
    assert rows == 0

    # The next table gets the same id and schema version, so the same inlined table name, with other columns.
    lake.create_table("c", "k BIGINT, d DATE")
    assert lake.table_info("c").table_id == 2
    lake.write(pa.table({"k": pa.array([7], pa.int64()), "d": [dt.date(2024, 5, 6)]}), "c")
    assert _lock_is_free(lake.engine)
    lake.close()
    attach(reference, mysql_catalog)
    assert reference.execute("SELECT k, d FROM lake.c").fetchall() == [(7, dt.date(2024, 5, 6))]


# --------------------------------------------------------------------------------------------- concurrent writers
WRITERS, COMMITS = 4, 10


def _append(catalog: str, writer: int, queue) -> None:
    try:
        lake = DuckLake.attach(catalog)
        for seq in range(COMMITS):
            lake.write(pa.table({"writer": pa.array([writer] * 2, pa.int64()), "seq": pa.array([seq] * 2, pa.int64()),
                                 "k": pa.array([0, 1], pa.int64())}), "events")
        lake.close()
        queue.put((writer, "ok"))
    except Exception as exc:  # noqa: BLE001 - reported to the test, which fails on it
        queue.put((writer, f"{type(exc).__name__}: {exc}"))


def test_concurrent_writers_commit_every_snapshot_once(mysql_catalog, lake, reference):
    lake.create_table("events", "writer BIGINT, seq BIGINT, k BIGINT")
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_append, args=(mysql_catalog, w, queue)) for w in range(WRITERS)]
    for p in procs:
        p.start()
    results = dict(queue.get(timeout=300) for _ in procs)
    for p in procs:
        p.join(timeout=60)
    assert results == {w: "ok" for w in range(WRITERS)}
    snaps = lake.snapshots()
    assert [s.snapshot_id for s in snaps] == list(range(2 + WRITERS * COMMITS))  # none lost, none duplicated
    assert _lock_is_free(lake.engine)
    lake.close()
    attach(reference, mysql_catalog)
    expected = sorted((w, s, k) for w in range(WRITERS) for s in range(COMMITS) for k in range(2))
    assert duckdb_rows(reference, "SELECT writer, seq, k FROM lake.events") == expected
    assert reference.execute("SELECT count(DISTINCT rowid), max(rowid) FROM lake.events").fetchone() == (
        len(expected), len(expected) - 1)
