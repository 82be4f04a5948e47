"""The released DuckLake 1.1 migration's repairs of old-catalog defects (catalog/database/repairs.py): each defect
is made by DuckDB 1.5.5 (ducklake 1.0), the way 1.0 catalogs have it, and checked after `ducklake_version="1.1"`
migrates the catalog. A migration to '1.1-dev1' (the development build) repairs nothing."""

from __future__ import annotations

import sqlite3

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake
from tests.support.reference import attach as attach_15
from tests.support.reference import connect as connect_15


def _reference(tmp_path, *statements, **options) -> None:
    con = connect_15()
    attach_15(con, f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"), **options)
    for statement in statements:
        con.execute(statement)
    con.close()


def _migrate(tmp_path, version="1.1") -> DuckLake:
    return DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"), ducklake_version=version,
                           automatic_migration=True)


def _rows(tmp_path, sql: str, *args) -> list[tuple]:
    with sqlite3.connect(tmp_path / "meta.sqlite") as conn:
        return [tuple(r) for r in conn.execute(sql, args)]


def _inlined_without_schema_version(tmp_path) -> None:
    """An insert that starts an inlined data table for a table written to Parquet before bumps the schema version
    (2) and registers the inlined table at it, but writes no ducklake_schema_versions row."""
    _reference(tmp_path, "CREATE TABLE lake.t(id INT)", "INSERT INTO lake.t VALUES (1)",
               "CALL lake.set_option('data_inlining_row_limit', 10)", "INSERT INTO lake.t VALUES (2)",
               data_inlining_row_limit=0)


def test_missing_schema_versions_rows_of_inlined_tables(tmp_path):
    _inlined_without_schema_version(tmp_path)
    assert _rows(tmp_path, "SELECT table_id, schema_version FROM ducklake_inlined_data_tables") == [(1, 2)]
    assert _rows(tmp_path, "SELECT * FROM ducklake_schema_versions WHERE schema_version = 2") == []
    begun = _rows(tmp_path, "SELECT MIN(snapshot_id) FROM ducklake_snapshot WHERE schema_version = 2")[0][0]
    lake = _migrate(tmp_path)
    assert _rows(tmp_path, "SELECT begin_snapshot, schema_version, table_id FROM ducklake_schema_versions "
                           "ORDER BY schema_version") == [(1, 1, 1), (begun, 2, 1)]
    lake.write(pa.table({"id": pa.array([3], pa.int32())}), "t")
    assert sorted(lake.read_arrow("t").column("id").to_pylist()) == [1, 2, 3]
    lake.close()


def test_renamed_struct_field_defaults(tmp_path):
    _reference(tmp_path, "CREATE TABLE lake.t(id INT, s STRUCT(a INT, b INT))",
               "INSERT INTO lake.t VALUES (1, {'a': 1, 'b': 2})",
               "ALTER TABLE lake.t ADD COLUMN s.c INT DEFAULT 7", "ALTER TABLE lake.t RENAME COLUMN s.c TO d",
               data_inlining_row_limit=0)
    query = ("SELECT column_name, initial_default, default_value, default_value_type FROM ducklake_column "
             "WHERE parent_column IS NOT NULL AND column_name IN ('c', 'd') ORDER BY begin_snapshot")
    assert _rows(tmp_path, query) == [("c", "7", "7", "literal"), ("d", None, "NULL", "")]  # the 1.5.5 defect
    lake = _migrate(tmp_path)
    assert _rows(tmp_path, query) == [("c", "7", "7", "literal"), ("d", "7", "7", "literal")]
    # The row written before the field existed reads its initial default again.
    assert lake.read_arrow("t").column("s").to_pylist() == [{"a": 1, "b": 2, "d": 7}]
    lake.close()


def test_wrongly_typed_bounds(tmp_path):
    """FLOAT bounds of a column widened to DOUBLE are widened to the FLOAT values; a bound that is not of the
    column's type and a TIMESTAMPTZ bound without offset are cleared, and the table-level bounds then stay unknown
    under later writes (the 1.1 reference's rule)."""
    _reference(tmp_path, "CREATE TABLE lake.t(id INT, f FLOAT, ts TIMESTAMPTZ)",
               "INSERT INTO lake.t VALUES (1, 0.1, '2020-01-01 10:00:00+00'), (2, 0.2, '2020-01-02 10:00:00+00')",
               "ALTER TABLE lake.t ALTER COLUMN f TYPE DOUBLE", data_inlining_row_limit=0)
    with sqlite3.connect(tmp_path / "meta.sqlite") as conn:  # what old versions left behind
        conn.execute("UPDATE ducklake_file_column_stats SET min_value = '2020-01-01 05:00:00' WHERE column_id = 3")
        conn.execute("UPDATE ducklake_table_column_stats SET max_value = 'two' WHERE column_id = 1")
    lake = _migrate(tmp_path)
    file_stats = dict((cid, (low, high)) for cid, low, high in _rows(
        tmp_path, "SELECT column_id, min_value, max_value FROM ducklake_file_column_stats"))
    assert file_stats[2] == ("0.1", "0.20000000298023224")  # max: the FLOAT 0.2, above the DOUBLE 0.2
    assert file_stats[3] == (None, None)  # no UTC offset
    assert file_stats[1] == ("1", "2")  # right already: untouched
    table_stats = dict((cid, (low, high)) for cid, low, high in _rows(
        tmp_path, "SELECT column_id, min_value, max_value FROM ducklake_table_column_stats"))
    assert table_stats[1] == (None, None) and table_stats[2] == ("0.1", "0.20000000298023224")
    assert lake.read_arrow("t", where="f > 0.15").column("id").to_pylist() == [2]
    lake.write(pa.table({"id": pa.array([5], pa.int32()), "f": [0.5],
                         "ts": pa.array([None], pa.timestamp("us", tz="UTC"))}), "t")
    assert _rows(tmp_path, "SELECT min_value, max_value FROM ducklake_table_column_stats WHERE column_id = 1") \
        == [(None, None)]  # unknown stays unknown: id 5 alone would be a wrong bound
    lake.close()


@pytest.mark.parametrize("version", ["1.1-dev1"])
def test_development_target_repairs_nothing(tmp_path, version):
    _inlined_without_schema_version(tmp_path)
    lake = _migrate(tmp_path, version)
    assert _rows(tmp_path, "SELECT * FROM ducklake_schema_versions WHERE schema_version = 2") == []
    assert sorted(lake.read_arrow("t").column("id").to_pylist()) == [1, 2]
    lake.close()
