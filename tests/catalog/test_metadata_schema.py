"""METADATA_SCHEMA / METADATA_CATALOG: catalog tables in a non-default schema of a DuckDB or PostgreSQL catalog,
shared with the reference extension attached with the same option; SQLite accepts only `main`, as the reference."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from spark_ducklake import DuckLake
from spark_ducklake.catalog.database.connection import create_engine, parse_catalog
from spark_ducklake.errors import CatalogError, UnsupportedSqlError
from tests.support.compare import duckdb_rows, spark_rows
from tests.support.reference import attach, connect

SCHEMA = "Meta Data"  # a name that needs quoting everywhere


def _catalog(kind: str, tmp_path, request) -> str:
    if kind == "postgres":
        return request.getfixturevalue("pg_catalog")
    return f"duckdb:{tmp_path / 'meta.ducklake'}"


def _reference_target(catalog: str) -> str:
    return catalog[len("duckdb:"):] if catalog.startswith("duckdb:") else catalog


def _tables_by_schema(catalog: str) -> dict[str, set[str]]:
    engine = create_engine(parse_catalog(catalog))
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.text(
                "SELECT table_schema, table_name FROM information_schema.tables WHERE table_name LIKE 'ducklake%'"))
            out: dict[str, set[str]] = {}
            for schema, table in rows:
                out.setdefault(schema, set()).add(table)
            return out
    finally:
        engine.dispose()


@pytest.mark.parametrize("kind", ["duckdb", "postgres"])
def test_lake_in_metadata_schema_round_trips(kind, tmp_path, request):
    catalog = _catalog(kind, tmp_path, request)
    lake = DuckLake.attach(catalog, str(tmp_path / "data"), metadata_schema=SCHEMA)
    lake.create_table("t", "a INT, s VARCHAR")
    lake.close()
    found = _tables_by_schema(catalog)
    assert set(found) == {SCHEMA}, "every catalog table lives in the metadata schema"
    assert "ducklake_snapshot" in found[SCHEMA]

    con = connect()
    attach(con, _reference_target(catalog), metadata_schema=SCHEMA)
    assert duckdb_rows(con, "SELECT * FROM lake.t") == []
    con.execute("INSERT INTO lake.t VALUES (1, 'x'), (2, 'y')")
    con.execute("CREATE TABLE lake.u AS SELECT range AS r FROM range(20)")  # Parquet (more than the inline limit)
    con.close()
    assert set(_tables_by_schema(catalog)) == {SCHEMA}, "the reference wrote into the same schema"

    lake = DuckLake.attach(catalog, metadata_schema=SCHEMA)
    assert sorted(t.name for t in lake.tables()) == ["t", "u"]
    lake.drop_table("u")
    assert list(lake.snapshots()[-1].changes) == ["tables_dropped"]
    lake.close()

    con = connect()
    attach(con, _reference_target(catalog), metadata_schema=SCHEMA)
    assert [r[0] for r in con.execute("SHOW TABLES FROM lake").fetchall()] == ["t"]
    assert duckdb_rows(con, "SELECT * FROM lake.t") == [(1, "x"), (2, "y")]
    con.close()


@pytest.mark.parametrize("kind", ["duckdb", "postgres"])
def test_reference_lake_in_metadata_schema_is_read(kind, tmp_path, request):
    catalog = _catalog(kind, tmp_path, request)
    con = connect()
    attach(con, _reference_target(catalog), str(tmp_path / "data"), metadata_schema=SCHEMA)
    con.execute("CREATE TABLE lake.v AS SELECT 7 AS k")
    con.close()
    lake = DuckLake.attach(catalog, metadata_schema=SCHEMA, create_if_missing=False)
    assert [t.name for t in lake.tables()] == ["v"]
    assert "metadata schema 'Meta Data'" in repr(lake)
    lake.close()
    # Without the option the default schema holds no lake: refused here, a new empty lake in the reference.
    with pytest.raises(CatalogError, match="holds no DuckLake catalog"):
        DuckLake.attach(catalog, create_if_missing=False)
    other = DuckLake.attach(catalog, str(tmp_path / "other"))
    assert other.tables() == []
    other.close()
    lake = DuckLake.attach(catalog, metadata_schema=SCHEMA)
    assert [t.name for t in lake.tables()] == ["v"], "the lake in the metadata schema is untouched"
    lake.close()


def test_two_lakes_in_one_postgres_database(pg_catalog, tmp_path):
    first = DuckLake.attach(pg_catalog, str(tmp_path / "a"), metadata_schema="lake_a")
    second = DuckLake.attach(pg_catalog, str(tmp_path / "b"), metadata_schema="lake_b")
    first.create_table("only_a", "x INT")
    second.create_table("only_b", "y INT")
    assert [t.name for t in first.tables()] == ["only_a"]
    assert [t.name for t in second.tables()] == ["only_b"]
    first.close()
    second.close()


def test_sqlite_metadata_schema_is_main_only(tmp_path):
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    con = connect()
    with pytest.raises(Exception, match="SQLite databases do not support creating new schemas"):
        attach(con, catalog, str(tmp_path / "data"), metadata_schema="other")
    con.close()
    with pytest.raises(CatalogError, match="SQLite catalogs have no schemas but 'main'"):
        DuckLake.attach(catalog, str(tmp_path / "data"), metadata_schema="other")

    lake = DuckLake.attach(catalog, str(tmp_path / "data"), metadata_schema="main")
    lake.create_table("t", "a INT")
    lake.close()
    con = connect()
    attach(con, catalog, metadata_schema="main")
    con.execute("INSERT INTO lake.t VALUES (5)")
    assert duckdb_rows(con, "SELECT * FROM lake.t") == [(5,)]
    con.close()


def test_mysql_metadata_schema_is_a_database(mysql_catalog, tmp_path):
    """On MySQL/MariaDB a schema is a database: the reference creates it and keeps the catalog there; so do we."""
    import pymysql

    from spark_ducklake.catalog.database.mysql_dsn import connect_args

    name = f"{mysql_catalog.split('db=')[1].split()[0]}_meta"
    args = {k: v for k, v in connect_args(mysql_catalog[len("mysql:"):]).items() if k != "database"}
    server = pymysql.connect(**args, autocommit=True)
    try:
        lake = DuckLake.attach(mysql_catalog, str(tmp_path / "data"), metadata_schema=name)
        lake.create_table("t", "a INT")
        lake.close()
        with server.cursor() as cur:
            cur.execute("SELECT table_schema, count(*) FROM information_schema.tables WHERE table_name LIKE "
                        "'ducklake%%' AND table_schema LIKE %s GROUP BY table_schema", (name.split("_meta")[0] + "%",))
            assert cur.fetchall() == ((name, 29),)
        con = connect()
        attach(con, mysql_catalog, metadata_schema=name)
        con.execute("INSERT INTO lake.t VALUES (4)")
        con.execute("CREATE TABLE lake.u AS SELECT 1 AS b")
        con.close()
        lake = DuckLake.attach(mysql_catalog, metadata_schema=name)
        assert sorted(t.name for t in lake.tables()) == ["t", "u"]
        lake.close()
    finally:
        with server.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
        server.close()


def test_bad_metadata_options_are_refused(tmp_path):
    catalog = f"duckdb:{tmp_path / 'meta.ducklake'}"
    for bad in ("", "  ", 3):
        with pytest.raises(CatalogError, match="metadata_schema must be a non-empty schema name"):
            DuckLake.attach(catalog, str(tmp_path / "data"), metadata_schema=bad)
    with pytest.raises(CatalogError, match="metadata_catalog must be a plain database name"):
        DuckLake.attach(catalog, str(tmp_path / "data"), metadata_catalog="a.b")
    assert not (tmp_path / "meta.ducklake").exists(), "a refused attach creates nothing"


@pytest.mark.parametrize("kind", ["duckdb", "postgres"])
def test_spark_moves_data_in_metadata_schema_lake(kind, spark, tmp_path, request):
    catalog = _catalog(kind, tmp_path, request)
    lake = DuckLake.attach(catalog, str(tmp_path / "data"), spark=spark, metadata_schema=SCHEMA,
                           metadata_catalog="meta_db")
    assert lake.context.metadata_catalog == "meta_db"
    lake.write(spark.createDataFrame([(i, f"r{i}") for i in range(30)], "k INT, v STRING"), "w")
    lake.close()
    con = connect()
    attach(con, _reference_target(catalog), metadata_schema=SCHEMA, metadata_catalog="meta_db")
    expected = duckdb_rows(con, "SELECT * FROM lake.w")
    assert len(expected) == 30
    # METADATA_CATALOG names the attached catalog database in DuckDB; the tables sit in the metadata schema
    assert con.execute(f"SELECT count(*) FROM meta_db.\"{SCHEMA}\".ducklake_table WHERE table_name = 'w'"
                       ).fetchone()[0] == 1
    con.execute("DELETE FROM lake.w WHERE k < 10")
    expected = duckdb_rows(con, "SELECT * FROM lake.w")
    con.execute("DETACH lake")
    attach(con, _reference_target(catalog), metadata_schema=SCHEMA)  # DuckDB's default metadata-catalog name
    query = "SELECT snapshot_id, schema_version, next_file_id FROM {}.ducklake_snapshot"
    snapshots = duckdb_rows(con, query.format(f'__ducklake_metadata_lake."{SCHEMA}"'))
    con.close()
    lake = DuckLake.attach(catalog, spark=spark, metadata_schema=SCHEMA)
    assert spark_rows(lake.read("w")) == expected
    # lake.sql reads the catalog tables under DuckDB's default metadata-catalog name, or the one attached with
    assert spark_rows(lake.sql(query.format("__ducklake_metadata_lake"))) == snapshots
    lake.close()
    lake = DuckLake.attach(catalog, spark=spark, metadata_schema=SCHEMA, metadata_catalog="meta_db")
    tables = lake.sql(f"SELECT table_name, end_snapshot FROM meta_db.`{SCHEMA}`.ducklake_table")
    assert spark_rows(tables) == [("w", None)]
    with pytest.raises(UnsupportedSqlError, match=r"holds the lake's ducklake_\* catalog tables"):
        lake.sql("SELECT * FROM meta_db.not_a_catalog_table")
    lake.close()


def test_format_ducklake_keeps_the_metadata_schema(pg_catalog, spark, tmp_path):
    # A lake in the default schema too: a reader that lost the option would silently read this one instead.
    decoy = DuckLake.attach(pg_catalog, str(tmp_path / "decoy"), spark=spark)
    decoy.write(spark.createDataFrame([(99,)], "k INT"), "t")
    decoy.close()
    lake = DuckLake.attach(pg_catalog, str(tmp_path / "data"), spark=spark, metadata_schema=SCHEMA)
    lake.write(spark.createDataFrame([(1,), (2,)], "k INT"), "t")
    lake.register(spark)
    assert sorted(r.k for r in spark.read.format("ducklake").option("table", "t").load().collect()) == [1, 2]
    spark.createDataFrame([(3,)], "k INT").write.format("ducklake").mode("append").option("table", "t").save()
    assert sorted(r.k for r in lake.read("t").collect()) == [1, 2, 3]
    lake.close()
    con = connect()
    attach(con, pg_catalog)
    assert duckdb_rows(con, "SELECT * FROM lake.t") == [(99,)], "the default-schema lake is untouched"
    con.close()
