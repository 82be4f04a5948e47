"""The pure-Python catalog layer on every backend: creating, DDL, snapshots, versions, bad input."""

from __future__ import annotations

import sqlite3

import pyarrow as pa
import pytest
import sqlalchemy as sa
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from spark_ducklake import DuckLake
from spark_ducklake.catalog.changes.ddl import CreateSchema
from spark_ducklake.catalog.commit import commit
from spark_ducklake.catalog.database.connection import parse_catalog
from spark_ducklake.errors import (
    AlreadyExistsError,
    CatalogError,
    ConflictError,
    NotFoundError,
    UnsupportedVersionError,
)
from tests.support.reference import attach, connect


def _catalog_rows(lake: DuckLake, table: str) -> list[tuple]:
    with lake.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(sa.text(f"SELECT * FROM {table}"))]


def test_new_lake_has_spec_metadata_and_snapshot_zero(catalog, lake, tmp_path):
    meta = {row[0]: row[1] for row in _catalog_rows(lake, "ducklake_metadata")}
    assert meta["version"] == "1.0"
    assert meta["data_path"] == str(tmp_path / "data") + "/"
    assert meta["encrypted"] == "false"
    assert meta["created_by"].startswith("spark-ducklake")
    snaps = lake.snapshots()
    assert [s.snapshot_id for s in snaps] == [0]
    assert snaps[0].changes == {"schemas_created": ["main"]}
    assert lake.schemas() == ["main"]


def test_ddl_round_trip_and_duckdb_sees_it(catalog, lake, reference):
    lake.create_schema("sales")
    lake.create_table("sales.orders", "id BIGINT NOT NULL, customer STRING, tags ARRAY<STRING>, "
                                      "address STRUCT<city: STRING, zip: INT>, attrs MAP<STRING, DOUBLE>")
    lake.create_table("main.t", StructType([StructField("a", IntegerType()), StructField("b", StringType())]))
    lake.rename_table("main.t", "t2")
    lake.drop_table("t2")
    changes = [s.changes for s in lake.snapshots()]
    assert changes[1:] == [
        {"schemas_created": ["sales"]},
        {"tables_created": ["sales.orders"]},
        {"tables_created": ["main.t"]},
        {"tables_created": ["main.t2"]},
        {"tables_dropped": ["3"]},
    ]
    assert [t.qualified_name for t in lake.tables()] == ["sales.orders"]
    orders = lake.table_info("sales.orders")
    assert [c.name for c in orders.columns] == ["id", "customer", "tags", "address", "attrs"]
    assert orders.columns[0].nullable is False
    lake.close()

    attach(reference, catalog)
    described = reference.execute("DESCRIBE lake.sales.orders").fetchall()
    assert [(r[0], r[1]) for r in described] == [
        ("id", "BIGINT"), ("customer", "VARCHAR"), ("tags", "VARCHAR[]"),
        ("address", "STRUCT(city VARCHAR, zip INTEGER)"), ("attrs", "MAP(VARCHAR, DOUBLE)"),
    ]
    assert reference.execute("SELECT count(*) FROM lake.sales.orders").fetchone()[0] == 0
    assert reference.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_catalog = 'lake' AND table_name = 't2'"
    ).fetchone()[0] == 0


def test_we_read_a_catalog_duckdb_created(catalog, tmp_path, reference):
    # Without inlining: the reference cannot create an inlined data table for nested columns in MySQL.
    no_inlining = {"data_inlining_row_limit": 0} if catalog.startswith("mysql:") else {}
    attach(reference, catalog, str(tmp_path / "data"), **no_inlining)
    reference.execute("CREATE SCHEMA lake.s")
    reference.execute("CREATE TABLE lake.s.t (id INTEGER, name VARCHAR, vals INTEGER[], st STRUCT(a INT, b DATE))")
    reference.execute("DETACH lake")
    lake = DuckLake.attach(catalog)
    assert lake.data_path == str(tmp_path / "data") + "/"
    info = lake.table_info("s.t")
    assert [(c.name, c.type) for c in info.columns] == [
        ("id", "int32"), ("name", "varchar"), ("vals", "list"), ("st", "struct")]
    assert [(c.name, c.type) for c in info.columns[3].children] == [("a", "int32"), ("b", "date")]
    assert info.path == str(tmp_path / "data") + "/s/t/"
    lake.close()


def test_unsupported_version_is_refused_and_untouched(tmp_path):
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    DuckLake.attach(catalog, str(tmp_path / "data")).close()
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'meta.sqlite'}")
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE ducklake_metadata SET value = '0.3' WHERE key = 'version'"))
    before = (tmp_path / "meta.sqlite").read_bytes()
    with pytest.raises(UnsupportedVersionError, match="spec 0.3"):
        DuckLake.attach(catalog)
    assert (tmp_path / "meta.sqlite").read_bytes() == before


@pytest.mark.parametrize("bad", ["", "mysql:", "mysql:host=127.0.0.1", "mysql:db=x colour=blue",
                                 'mysql:db="x', "ducklake:postgres:"])
def test_bad_catalog_strings(bad):
    with pytest.raises(CatalogError):
        DuckLake.attach(bad)


def test_missing_catalog_without_create(tmp_path):
    with pytest.raises(CatalogError, match="create_if_missing"):
        DuckLake.attach(str(tmp_path / "nope.sqlite"), create_if_missing=False)
    assert not (tmp_path / "nope.sqlite").exists()


def test_unknown_names_are_clear(lake):
    with pytest.raises(NotFoundError, match="schema 'nope'"):
        lake.table_info("nope.t")
    with pytest.raises(NotFoundError, match="main.missing"):
        lake.table_info("missing")
    lake.create_schema("s")
    with pytest.raises(AlreadyExistsError):
        lake.create_schema("s")
    assert len(lake.snapshots()) == 2


def test_stale_writer_retries_or_conflicts(catalog, lake):
    stale = lake.current_snapshot()
    lake.create_schema("a")  # another writer got in first
    snapshot = commit(lake.engine, [CreateSchema("b")], read_snapshot=stale, data_path=lake.data_path)
    assert snapshot == 2
    before = lake.snapshots()
    with pytest.raises(ConflictError, match="schema"):
        commit(lake.engine, [CreateSchema("a")], read_snapshot=stale, data_path=lake.data_path)
    assert lake.snapshots() == before
    assert sorted(lake.schemas()) == ["a", "b", "main"]


@pytest.mark.lake(author="alice")
def test_commit_metadata_is_stored(lake):
    lake.create_schema("s", commit_message="made s", extra_info='{"ticket": 7}')
    last = lake.snapshots()[-1]
    assert (last.author, last.commit_message, last.commit_extra_info) == ("alice", "made s", '{"ticket": 7}')


def test_options_scopes_match_the_reference(catalog, lake, reference):
    lake.create_schema("s")
    lake.create_table("s.t", "a INT")
    lake.set_option("data_inlining_row_limit", 50, table_name="t", schema="s")
    lake.set_option("parquet_compression", "zstd", schema="s")
    lake.set_option("target_file_size", "10MB")
    lake.set_option("target_file_size", "20MB")  # replaces, does not duplicate
    assert len(lake.snapshots()) == 3  # options are not snapshots
    ours = [tuple(r) for r in lake.options()]
    assert lake.inlining_limit(lake.table_info("s.t")) == 50
    with pytest.raises(Exception, match="unknown DuckLake option"):
        lake.set_option("no_such_option", 1)
    lake.close()
    attach(reference, catalog)
    theirs = sorted(tuple(r) for r in reference.execute("FROM lake.options()").fetchall())
    assert [r for r in ours if r[0] != "created_by"] == [r for r in theirs if r[0] != "created_by"]
    assert ("target_file_size", options_desc("target_file_size"), "20000000", "GLOBAL", None) in theirs


def options_desc(name):
    from spark_ducklake.catalog.reads.options import DESCRIPTIONS

    return DESCRIPTIONS[name]


def test_bare_paths_pick_the_database_as_the_reference_does(tmp_path):
    """A new bare `*.ducklake`/`*.duckdb` path is a DuckDB file (the reference makes every bare path one, and DuckDB
    must open what we create); other new bare paths are the embedded SQLite default; an existing file keeps its
    database whatever its name."""
    assert parse_catalog(str(tmp_path / "meta.ducklake")).kind == "duckdb"
    assert parse_catalog(str(tmp_path / "meta.DuckDB")).kind == "duckdb"
    assert parse_catalog(str(tmp_path / "meta.sqlite")).kind == "sqlite"
    assert parse_catalog(str(tmp_path / "lake")).kind == "sqlite"
    sqlite_named_ducklake = tmp_path / "old.ducklake"
    sqlite3.connect(sqlite_named_ducklake).execute("CREATE TABLE t (x)")
    assert parse_catalog(str(sqlite_named_ducklake)).kind == "sqlite"


def test_a_bare_ducklake_path_we_create_is_read_by_duckdb(tmp_path):
    path = str(tmp_path / "meta.ducklake")
    lake = DuckLake.attach(path, str(tmp_path / "data"))
    lake.write(pa.table({"id": pa.array([1, 2], pa.int64())}), "t", mode="error")
    lake.close()
    con = connect()
    attach(con, path)
    assert con.execute("SELECT sum(id) FROM lake.t").fetchone()[0] == 3
