"""Fixes found by running the reference's sqllogictest files on DuckLake 1.1 catalogs (tests/conformance,
`--ducklake-version 1.1-dev1`): each test is the behaviour a reference test file expects, on a lake of ours."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from spark_ducklake import DuckLake
from spark_ducklake.errors import DuckLakeError

pytestmark = pytest.mark.latest_default  # as the runner: an existing catalog keeps its version


def _delete_formats(lake: DuckLake) -> list[str]:
    with lake.context.connect() as conn:
        return [r[0] for r in conn.execute(sa.text("SELECT format FROM ducklake_delete_file ORDER BY delete_file_id"))]


def test_write_deletion_vectors_attach_option(tmp_path, spark):
    """delete/deletion_vector*.test attach with WRITE_DELETION_VECTORS true: that handle's deletes write Puffin
    vectors; a stored write_deletion_vectors option (table, schema or lake) still wins over it."""
    catalog, data = f"sqlite:{tmp_path / 'c.sqlite'}", f"{tmp_path}/data/"
    lake = DuckLake.attach(catalog, data, spark=spark, data_inlining_row_limit=0, ducklake_version="1.1-dev1",
                           write_deletion_vectors=True)
    lake.sql("CREATE TABLE t AS SELECT i AS id FROM range(10) t(i)", dialect="duckdb")
    lake.sql("DELETE FROM t WHERE id = 0", dialect="duckdb")
    assert _delete_formats(lake) == ["puffin"]
    lake.set_option("write_deletion_vectors", False, table_name="t")  # the table's option over the attach value
    lake.sql("DELETE FROM t WHERE id = 1", dialect="duckdb")
    assert _delete_formats(lake)[-1] == "parquet"
    assert sorted(r.id for r in lake.read("t").collect()) == list(range(2, 10))
    lake.close()
    lake = DuckLake.attach(catalog, spark=spark, data_inlining_row_limit=0)  # no attach option: Parquet
    lake.sql("CREATE TABLE u AS SELECT 1 AS id UNION ALL SELECT 2", dialect="duckdb")
    lake.sql("DELETE FROM u WHERE id = 1", dialect="duckdb")
    assert _delete_formats(lake)[-1] == "parquet"
    lake.close()
    with pytest.raises(DuckLakeError, match="write_deletion_vectors"):
        DuckLake.attach(catalog, spark=spark, write_deletion_vectors="maybe")


def test_ducklake_prefixed_column_names_are_reserved_on_11_catalogs(tmp_path, spark):
    """alter/issue_944.test: on a 1.1 catalog a new column named `_ducklake_*` (CREATE, ADD, RENAME) is refused in
    the reference's words; row_id / begin_snapshot are ordinary names; a 1.0 catalog keeps allowing the prefix."""
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'c.sqlite'}", f"{tmp_path}/data/", spark=spark,
                           ducklake_version="1.1-dev1")
    reserved = 'Column name "_ducklake_col" is reserved by DuckLake for internal use'
    with pytest.raises(DuckLakeError, match='"_ducklake_row_id" is reserved'):
        lake.sql("CREATE TABLE t(_ducklake_row_id INTEGER)", dialect="duckdb")
    lake.sql("CREATE TABLE t(a INTEGER)", dialect="duckdb")
    with pytest.raises(DuckLakeError, match=reserved):
        lake.sql("ALTER TABLE t ADD COLUMN _ducklake_col INTEGER", dialect="duckdb")
    with pytest.raises(DuckLakeError, match=reserved):
        lake.sql("ALTER TABLE t RENAME COLUMN a TO _ducklake_col", dialect="duckdb")
    lake.sql("CREATE TABLE t2(row_id INTEGER)", dialect="duckdb")
    lake.sql("ALTER TABLE t2 ADD COLUMN begin_snapshot INTEGER", dialect="duckdb")
    lake.sql("ALTER TABLE t2 RENAME COLUMN begin_snapshot TO end_snapshot", dialect="duckdb")
    assert [c.name for c in lake.table_info("t").columns] == ["a"]  # the refused changes changed nothing
    lake.close()
    old = DuckLake.attach(f"sqlite:{tmp_path / 'o.sqlite'}", f"{tmp_path}/old/", spark=spark, ducklake_version="1.0")
    old.sql("CREATE TABLE t(_ducklake_x INTEGER)", dialect="duckdb")
    old.close()


def test_aliased_view_takes_comments_on_its_aliases_only(tmp_path):
    """comments/comment_on_view_column.test: `CREATE VIEW pv(a1) AS SELECT 1 AS x, 2 AS y` takes a comment on a1
    (keyed by the query's name x), and refuses x and y in the reference's words; a view without aliases takes its
    query's names."""
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'c.sqlite'}", f"{tmp_path}/data/", ducklake_version="1.1-dev1")
    lake.create_view("pv", "SELECT 1 AS x, 2 AS y", dialect="duckdb", column_aliases=["a1"])
    lake.create_view("v", "SELECT 1 AS col_a", dialect="duckdb")
    lake.sql("COMMENT ON COLUMN pv.a1 IS 'real'")
    for column in ("x", "y"):
        with pytest.raises(DuckLakeError, match=f'View "pv" does not have a column with name "{column}"'):
            lake.sql(f"COMMENT ON COLUMN pv.{column} IS 'note'")
    lake.sql("COMMENT ON COLUMN v.COL_A IS 'upper'")
    with lake.context.connect() as conn:
        rows = conn.execute(sa.text("SELECT column_name, value FROM ducklake_view_column_tag "
                                    "WHERE end_snapshot IS NULL ORDER BY view_id")).all()
    assert [tuple(r) for r in rows] == [("x", "real"), ("col_a", "upper")]
    lake.close()
