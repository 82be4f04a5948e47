"""DuckDB's virtual columns (rowid, snapshot_id, filename, file_row_number, file_index) in `lake.sql` and
`lake.read(virtual_columns=...)`, compared with what the reference extension returns on the same lake."""

from __future__ import annotations

import pytest

from spark_ducklake import DuckLake
from spark_ducklake.errors import DuckLakeError
from tests.support.reference import attach

pytestmark = pytest.mark.duckdb_ref

VIRTUAL = "rowid, snapshot_id, filename, file_row_number, file_index"


@pytest.fixture
def shared(tmp_path, spark, reference):
    """(DuckDB connection, our handle) on one SQLite-catalog lake the reference wrote: Parquet rows, inlined rows
    in two schema versions, an update (row lineage), deletes, and a flushed table (per-row snapshot ids)."""
    catalog, data = f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data") + "/"
    attach(reference, catalog, data)
    for statement in [
        "CREATE TABLE lake.t(a INTEGER)",
        "INSERT INTO lake.t VALUES (1), (2)",                                   # inlined, snapshot 2
        "INSERT INTO lake.t SELECT i FROM range(100, 120) r(i)",                # a Parquet file, snapshot 3
        "UPDATE lake.t SET a = a + 1000 WHERE a IN (105, 2)",                   # keeps row ids 1 and 7
        "DELETE FROM lake.t WHERE a = 110",
        "ALTER TABLE lake.t ADD COLUMN b INTEGER",
        "INSERT INTO lake.t VALUES (5, 5)",                                     # inlined, second schema version
        "CREATE TABLE lake.f(x INTEGER)",
        "INSERT INTO lake.f VALUES (10)",
        "INSERT INTO lake.f VALUES (20), (30)",
        "CALL ducklake_flush_inlined_data('lake', table_name => 'f')",          # one file, per-row snapshots
    ]:
        reference.execute(statement)
    lake = DuckLake.attach(catalog, data, spark=spark)
    yield reference, lake
    lake.close()


def _ours(lake, query: str) -> list[tuple]:
    return sorted(tuple(r) for r in lake.sql(query, dialect="duckdb").collect())


def _duck(con, query: str) -> list[tuple]:
    return sorted(con.execute(query.replace(" FROM t", " FROM lake.t").replace(" FROM f", " FROM lake.f")).fetchall())


def test_virtual_columns_match_duckdb_on_files_and_inlined_rows(shared):
    con, lake = shared
    for query in [f"SELECT a, {VIRTUAL} FROM t", f"SELECT x, {VIRTUAL} FROM f",
                  f"SELECT a, {VIRTUAL} FROM t AT (VERSION => 4)"]:
        assert _ours(lake, query) == _duck(con, query), query
    flushed = _ours(lake, "SELECT x, snapshot_id FROM f")
    assert [s for _x, s in flushed] == [s for _x, s in _duck(con, "SELECT x, snapshot_id FROM f")]
    assert len({s for _x, s in flushed}) == 2  # the file keeps each row's own inserting snapshot


def test_virtual_columns_in_where_and_order_by(shared):
    con, lake = shared
    query = "SELECT a, rowid FROM t WHERE rowid < 3 OR snapshot_id = 7 ORDER BY rowid"
    assert [tuple(r) for r in lake.sql(query, dialect="duckdb").collect()] == con.execute(
        query.replace("FROM t", "FROM lake.t")).fetchall()
    query = "SELECT COUNT(*) FROM t WHERE filename LIKE '%.parquet' AND file_row_number >= 0"
    assert _ours(lake, query) == _duck(con, query) == [(18,)]
    query = "SELECT a, filename FROM t WHERE filename LIKE 'ducklake_inlined_data%'"
    assert _ours(lake, query) == _duck(con, query) == [
        (1, "ducklake_inlined_data_1_1"), (5, "ducklake_inlined_data_1_2"), (1002, "ducklake_inlined_data_1_1"),
        (1105, "ducklake_inlined_data_1_1")]


def test_virtual_columns_stay_out_of_stars(shared):
    _con, lake = shared
    assert lake.sql("SELECT * FROM t WHERE rowid = 0", dialect="duckdb").columns == ["a", "b"]
    assert lake.sql("SELECT rowid, * FROM t", dialect="duckdb").columns == ["rowid", "a", "b"]
    joined = lake.sql("SELECT x.*, y.filename FROM t x JOIN t y ON x.rowid = y.rowid", dialect="duckdb")
    assert joined.columns == ["a", "b", "filename"]
    assert joined.count() == 22
    both = lake.sql("SELECT * FROM t JOIN f ON t.rowid = f.rowid", dialect="duckdb")
    assert both.columns == ["a", "b", "x"]
    excluded = lake.sql("SELECT * EXCLUDE (b), file_index FROM t WHERE a = 5", dialect="duckdb")
    assert excluded.columns == ["a", "file_index"]
    assert [r[0] for r in excluded.collect()] == [5]  # (file_index: after our pruning, docs/sql.md)


def test_a_real_column_shadows_the_virtual_one(tmp_path, spark):
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"), spark=spark)
    lake.sql("CREATE TABLE t(filename VARCHAR, v INTEGER)")
    lake.sql("INSERT INTO t VALUES ('mine', 1)")
    assert [tuple(r) for r in lake.sql("SELECT filename, rowid FROM t", dialect="duckdb").collect()] == [("mine", 0)]
    with pytest.raises(DuckLakeError, match="shadowed"):
        lake.read("t", virtual_columns=["filename"])
    lake.sql("CREATE TABLE u(v INTEGER); INSERT INTO u VALUES (7)")
    query = "SELECT filename, v FROM u JOIN (SELECT 'sub' AS filename) s ON true"  # the subquery's column wins
    assert [tuple(r) for r in lake.sql(query, dialect="duckdb").collect()] == [("sub", 7)]
    lake.close()


def test_update_and_delete_by_rowid(tmp_path, spark):
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"), spark=spark)
    lake.sql("CREATE TABLE t(i INTEGER)")
    lake.sql("INSERT INTO t SELECT id FROM range(20)")
    before = dict(tuple(r) for r in lake.sql("SELECT rowid, i FROM t", dialect="duckdb").collect())
    assert sorted(before) == list(range(20))
    assert lake.sql("UPDATE t SET i = rowid * 10 WHERE rowid = 5", dialect="duckdb")[0].rows == 1
    lake.sql("DELETE FROM t WHERE rowid >= 15", dialect="duckdb")
    rows = [tuple(r) for r in lake.sql("SELECT rowid, i FROM t WHERE rowid >= 4 ORDER BY rowid",
                                       dialect="duckdb").collect()]
    assert rows == [(n, 50 if n == 5 else before[n]) for n in range(4, 15)]  # the updated row keeps its id
    lake.close()


def test_lake_read_virtual_columns_option(shared):
    con, lake = shared
    frame = lake.read("t", virtual_columns=["file_row_number", "rowid"])
    assert frame.columns == ["a", "b", "file_row_number", "rowid"]
    ours = sorted(tuple(r) for r in frame.select("a", "rowid", "file_row_number").collect())
    assert ours == sorted(con.execute("SELECT a, rowid, file_row_number FROM lake.t").fetchall())
    assert lake.read("t").columns == ["a", "b"]
    with pytest.raises(DuckLakeError, match="does not exist"):
        lake.read("t", virtual_columns=["row_number"])
