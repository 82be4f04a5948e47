"""Column DEFAULT values, lake settings, the metadata catalog's tables, set_commit_message and DUCKLAKE_VERSION
through `lake.sql(dialect="duckdb")` on a SQLite catalog, as the reference's tests use them (docs/sql.md)."""

from __future__ import annotations

import pytest

from spark_ducklake import DuckLake
from spark_ducklake.errors import CatalogError, UnsupportedSqlError
from tests.support.reference import attach


@pytest.fixture
def meta(tmp_path, spark):
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"), spark=spark,
                           metadata_catalog="xx")
    yield lake
    lake.close()


def _sql(lake):
    return lambda text: lake.sql(text, dialect="duckdb", catalog_name="dl")


def _rows(frame):
    return [tuple(r) for r in frame.collect()]


def test_create_table_defaults_are_stored_as_the_reference_stores_them(meta, tmp_path, reference):
    sql = _sql(meta)
    sql("CREATE TABLE dl.t(i INTEGER DEFAULT 42, j INTEGER, s1 VARCHAR DEFAULT '', s2 VARCHAR DEFAULT 'NULL')")
    sql("INSERT INTO dl.t (j) VALUES (100)")
    sql("INSERT INTO dl.t DEFAULT VALUES")
    sql("INSERT INTO dl.t VALUES (DEFAULT, 7, 'x', DEFAULT), (1, 2, DEFAULT, 'y')")
    assert _rows(sql("SELECT * FROM dl.t ORDER BY i, j")) == [(1, 2, "", "y"), (42, 7, "x", None), (42, 100, "", None),
                                                            (42, None, "", None)]  # 'NULL' reads as NULL
    columns = sql("SELECT column_name, initial_default, default_value, default_value_type, default_value_dialect "
                  "FROM xx.ducklake_column ORDER BY column_id")
    assert [tuple(r) for r in columns.collect()] == [
        ("i", "42", "42", "literal", "duckdb"), ("j", None, "NULL", "literal", "duckdb"),
        ("s1", "", "", "literal", "duckdb"), ("s2", "NULL", "NULL", "literal", "duckdb")]
    attach(reference, f"sqlite:{tmp_path / 'meta.sqlite'}")  # DuckDB inserts with the stored defaults too
    reference.execute("INSERT INTO lake.t (j) VALUES (5)")
    assert reference.execute("SELECT i, s1, s2 FROM lake.t WHERE j = 5").fetchall() == [(42, "", None)]


def test_alter_defaults_apply_to_later_inserts_and_old_rows_keep_theirs(meta):
    sql = _sql(meta)
    sql("CREATE TABLE dl.t(i INTEGER)")
    sql("INSERT INTO dl.t VALUES (1)")
    sql("ALTER TABLE dl.t ADD COLUMN j INTEGER DEFAULT 42")
    sql("ALTER TABLE dl.t ALTER i SET DEFAULT 1000")
    sql("ALTER TABLE dl.t ALTER j DROP DEFAULT")
    sql("INSERT INTO dl.t DEFAULT VALUES")
    assert _rows(sql("FROM dl.t ORDER BY i")) == [(1, 42), (1000, None)]
    with pytest.raises(UnsupportedSqlError, match="non-literal default value"):
        sql("ALTER TABLE dl.t ADD COLUMN k INTEGER DEFAULT random()")
    with pytest.raises(UnsupportedSqlError, match="is an expression"):
        sql("CREATE TABLE dl.u(ts TIMESTAMP DEFAULT now())")
    with pytest.raises(UnsupportedSqlError, match="'i': DEFAULT ROUND"):
        sql("ALTER TABLE dl.t ALTER i SET DEFAULT round(pi())")


def test_metadata_catalog_tables_read_including_inlined_data_tables(meta, tmp_path, spark):
    sql = _sql(meta)
    sql("CREATE TABLE dl.t(i INTEGER, s VARCHAR)")
    sql("INSERT INTO dl.t VALUES (1, 'a'), (2, 'b')")  # small: inlined into the catalog
    assert _rows(sql("SELECT count(*) > 0 FROM xx.ducklake_snapshot")) == [(True,)]
    names = _rows(sql("SELECT table_name FROM xx.ducklake_inlined_data_tables"))
    assert len(names) == 1
    assert _rows(sql(f"SELECT i, s FROM xx.{names[0][0]} ORDER BY i")) == [(1, "a"), (2, "b")]
    with pytest.raises(Exception, match="does not exist"):
        sql("SELECT * FROM xx.ducklake_inlined_data_99_1")
    files = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", spark=spark, data_inlining_row_limit=0,
                            metadata_catalog="xx")
    _sql(files)("INSERT INTO dl.t VALUES (3, 'c'), (4, 'd'), (5, 'e')")  # a VALUES list: one file, as DuckDB
    assert _rows(_sql(files)("SELECT count(*) FROM xx.ducklake_data_file")) == [(1,)]
    files.close()


def test_settings_read_back_and_commit_messages(meta):
    sql = _sql(meta)
    assert sql("SELECT current_setting('ducklake_max_retry_count')").collect()[0][0] == 10
    sql("SET ducklake_max_retry_count = 3")
    assert sql("SELECT current_setting('ducklake_max_retry_count')").collect()[0][0] == 3
    sql("RESET ducklake_max_retry_count")
    assert sql("SELECT current_setting('ducklake_max_retry_count')").collect()[0][0] == 10
    sql("CREATE TABLE dl.t(i INTEGER)")
    sql("BEGIN")
    sql("INSERT INTO dl.t VALUES (1)")
    sql("CALL dl.set_commit_message('Pedro', 'bla')")
    sql("CALL ducklake_set_commit_message('dl', 'Mark', 'Inserting', extra_info => '{\"k\": 1}')")  # last wins
    snapshot = sql("COMMIT")[0].snapshot_id
    sql("BEGIN")
    sql("INSERT INTO dl.t VALUES (2)")
    sql("CALL dl.set_commit_message(NULL, 'only a message')")
    sql("ROLLBACK")
    sql("INSERT INTO dl.t VALUES (3)")
    rows = sql(f"SELECT snapshot_id, author, commit_message, commit_extra_info FROM dl.snapshots() "
               f"WHERE snapshot_id >= {snapshot}").collect()
    assert [tuple(r) for r in rows] == [(snapshot, "Mark", "Inserting", '{"k": 1}'), (snapshot + 1, None, None, None)]


def test_ducklake_version_option(tmp_path):
    catalog, data = f"sqlite:{tmp_path / 'v.sqlite'}", str(tmp_path / "data")
    with pytest.raises(CatalogError, match="Unsupported ducklake_version '2.0'"):
        DuckLake.attach(catalog, data, ducklake_version="2.0")
    with pytest.raises(CatalogError, match="ducklake_version must be >= '1.0'"):
        DuckLake.attach(catalog, data, ducklake_version="0.4")
    assert not (tmp_path / "v.sqlite").exists()  # refused before anything was created
    DuckLake.attach(catalog, data, ducklake_version="1.0").close()
