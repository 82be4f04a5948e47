"""Lake views: DuckDB's views queried through lake.sql, ours stored so DuckDB queries them, time travel, DDL."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from spark_ducklake import DuckLake
from spark_ducklake.catalog.database.spec_tables import T
from spark_ducklake.errors import AlreadyExistsError, DuckLakeError, NotFoundError
from tests.support.reference import attach


@pytest.fixture
def where(catalog, tmp_path):
    """(catalog, data path) of a fresh lake on each catalog backend the reference shares with us."""
    return catalog, str(tmp_path / "data") + "/"


def _duckdb_table_and_view(reference, catalog, data):
    """DuckDB writes table `t` (3 rows) and view `dv` over it, then detaches."""
    attach(reference, catalog, data)
    reference.execute("CREATE TABLE lake.t (a INT, b VARCHAR)")
    reference.execute("INSERT INTO lake.t VALUES (1, 'x'), (2, 'y'), (3, 'z')")
    reference.execute("CREATE VIEW lake.dv AS SELECT a, b || '!' AS c FROM lake.t WHERE a > 1")
    reference.execute("DETACH lake")


def _rows(frame):
    return sorted(tuple(r) for r in frame.collect())


def test_duckdb_views_are_queryable_and_ours_readable_by_duckdb(where, spark, reference):
    catalog, data = where
    _duckdb_table_and_view(reference, catalog, data)
    lake = DuckLake.attach(catalog, data, spark=spark)
    try:
        assert [v.name for v in lake.views()] == ["dv"]
        assert _rows(lake.sql("SELECT * FROM dv")) == [(2, "y!"), (3, "z!")]
        lake.sql("CREATE VIEW sv (x, y) AS SELECT a, upper(b) AS ub FROM lake.main.t WHERE a <> 2")
        lake.create_view("joined", "SELECT d.a, d.c, s.y FROM dv d JOIN sv s ON d.a = s.x")
        assert _rows(lake.sql("SELECT * FROM joined")) == [(3, "z!", "Z")]
        sv = {v.name: v for v in lake.views()}["sv"]
        assert (sv.dialect, sv.column_aliases) == ("duckdb", ["x", "y"])
        assert "{DUCKLAKE_CATALOG}.main.t" in sv.sql
        changes = [s.changes for s in lake.snapshots()[-2:]]
        assert changes == [{"views_created": ["main.sv"]}, {"views_created": ["main.joined"]}]
    finally:
        lake.close()
    attach(reference, catalog, data)
    assert sorted(reference.execute("SELECT * FROM lake.sv").fetchall()) == [(1, "X"), (3, "Z")]
    assert reference.execute("SELECT * FROM lake.joined").fetchall() == [(3, "z!", "Z")]
    changes = reference.execute("SELECT changes_made FROM __ducklake_metadata_lake.ducklake_snapshot_changes "
                                "ORDER BY snapshot_id DESC LIMIT 2").fetchall()
    assert changes == [('created_view:"main"."joined"',), ('created_view:"main"."sv"',)]


def test_view_time_travel_drop_and_names(catalog, lake, lake_catalog, tmp_path, spark, reference):
    catalog, data = lake_catalog, str(tmp_path / "data") + "/"
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1), (2)")
    lake.sql("CREATE VIEW v AS SELECT id FROM t WHERE id > 1")
    first = lake.current_snapshot()
    lake.sql("INSERT INTO t VALUES (3); CREATE OR REPLACE VIEW v AS SELECT id * 10 AS id FROM t")
    assert _rows(lake.sql("SELECT * FROM v")) == [(10,), (20,), (30,)]
    # the view of snapshot `first`, over the table as of `first`
    assert _rows(lake.sql(f"SELECT * FROM v VERSION AS OF {first}")) == [(2,)]
    assert _rows(lake.sql(f"SELECT * FROM v AT (VERSION => {first})", dialect="duckdb")) == [(2,)]
    with pytest.raises(AlreadyExistsError):
        lake.sql("CREATE VIEW V AS SELECT 1 AS one")
    # a table's own time travel inside a view is kept (stored as DuckDB's AT (VERSION => n)) and wins over the view's
    lake.create_view("old", f"SELECT * FROM t VERSION AS OF {first}")
    assert "AT (VERSION =>" in next(v.sql for v in lake.views() if v.name == "old")
    assert _rows(lake.sql("SELECT * FROM old")) == [(1,), (2,)]
    lake.sql("DROP VIEW old")
    with pytest.raises(AlreadyExistsError):
        lake.sql("CREATE VIEW t AS SELECT 1 AS one")
    with pytest.raises(AlreadyExistsError):
        lake.sql("CREATE TABLE v (x INT)")
    lake.sql("CREATE SCHEMA s; CREATE VIEW s.w AS SELECT 1 AS one")
    with pytest.raises(DuckLakeError, match="not empty"):
        lake.drop_schema("s")
    lake.drop_schema("s", cascade=True)
    assert [v.name for v in lake.views()] == ["v"]
    lake.sql("DROP VIEW v; DROP VIEW IF EXISTS v")
    with pytest.raises(NotFoundError):
        lake.drop_view("v")
    assert lake.views() == [] and [v.name for v in lake.views(version=first)] == ["v"]
    lake.sql("BEGIN; CREATE VIEW staged AS SELECT id FROM t; COMMIT")
    assert _rows(lake.sql("SELECT * FROM staged")) == [(1,), (2,), (3,)]
    lake.expire_snapshots(versions=[s.snapshot_id for s in lake.snapshots()[:-1]])
    with lake.engine.connect() as conn:  # ended view rows go with the snapshots that saw them
        names = conn.execute(sa.select(T["ducklake_view"].c.view_name)).scalars().all()
    assert names == ["staged"]
    lake.close()
    attach(reference, catalog, data)
    assert reference.execute("SELECT count(*) FROM lake.staged").fetchall() == [(3,)]
    assert reference.execute("SELECT view_name FROM duckdb_views() WHERE database_name = 'lake'").fetchall() \
        == [("staged",)]


def test_register_exposes_lake_views_to_plain_spark_sql(where, spark, reference):
    catalog, data = where
    _duckdb_table_and_view(reference, catalog, data)
    lake = DuckLake.attach(catalog, data, spark=spark)
    try:
        lake.sql("CREATE SCHEMA s; CREATE VIEW s.sv (x) AS SELECT a * 10 FROM main.t WHERE a <> 2")
        snapshot = lake.current_snapshot()
        registered = {r.view: r for r in lake.register(spark)}
        assert set(registered) == {"main_t", "main_dv", "s_sv"}
        assert registered["main_dv"].table == "main.dv" and registered["s_sv"].snapshot_id == snapshot
        assert _rows(spark.sql("SELECT * FROM main_dv")) == [(2, "y!"), (3, "z!")]
        assert _rows(spark.sql("SELECT x FROM s_sv")) == [(10,), (30,)]
        lake.sql("INSERT INTO t VALUES (4, 'w')")  # this handle's commit re-registers tables and views
        assert _rows(spark.sql("SELECT * FROM main_dv")) == [(2, "y!"), (3, "z!"), (4, "w!")]
        lake.sql("DROP VIEW s.sv")
        assert "s_sv" not in {t.name for t in spark.catalog.listTables()}
        lake.sql("CREATE VIEW fine AS SELECT * FROM t; CREATE TABLE gone (i INT); CREATE VIEW g AS SELECT * FROM gone")
        lake.sql("DROP TABLE gone")  # the view g now names a table that does not exist
        with pytest.warns(UserWarning, match="lake view main.g is not registered"):
            names = {r.view for r in lake.register()}
        assert names == {"main_t", "main_dv", "main_fine"}
    finally:
        for name in ("main_t", "main_dv", "s_sv", "main_fine"):
            spark.catalog.dropTempView(name)
        lake.close()


def test_alter_view_rename_keeps_id_and_comment_in_and_out_of_transactions(lake, lake_catalog, tmp_path, reference):
    lake.sql("CREATE TABLE t (id INT)")
    lake.sql("CREATE VIEW v AS SELECT id FROM t; COMMENT ON VIEW v IS 'kept'", dialect="duckdb")
    view_id = lake.views()[0].view_id
    lake.sql("ALTER VIEW v RENAME TO v2", dialect="duckdb")
    assert [(v.name, v.view_id, v.comment) for v in lake.views()] == [("v2", view_id, "kept")]
    assert lake.snapshots()[-1].changes == {"views_created": ["main.v2"]}
    with pytest.raises(NotFoundError):
        lake.sql("ALTER VIEW v RENAME TO v3", dialect="duckdb")
    lake.sql("ALTER VIEW IF EXISTS v RENAME TO v3", dialect="duckdb")
    with pytest.raises(AlreadyExistsError):
        lake.sql("ALTER VIEW v2 RENAME TO t", dialect="duckdb")
    # created, commented and renamed in one transaction: one view row, written with its comment
    lake.sql("BEGIN; CREATE VIEW w AS SELECT id FROM t; COMMENT ON VIEW w IS 'new'; ALTER VIEW w RENAME TO w2; "
             "ALTER VIEW w2 RENAME TO w3; COMMIT", dialect="duckdb")
    # a committed view renamed then dropped in one transaction: dropped
    lake.sql("BEGIN; ALTER VIEW v2 RENAME TO v4; DROP VIEW v4; COMMIT", dialect="duckdb")
    assert [(v.name, v.comment) for v in lake.views()] == [("w3", "new")]
    with lake.engine.connect() as conn:
        names = conn.execute(sa.select(T["ducklake_view"].c.view_name)).scalars().all()
    assert sorted(names) == ["v", "v2", "w3"]
    lake.close()
    attach(reference, lake_catalog, str(tmp_path / "data"))
    assert reference.execute("SELECT view_name, comment FROM duckdb_views() WHERE database_name = 'lake'"
                             ).fetchall() == [("w3", "new")]


def test_a_view_may_name_fewer_columns_than_its_query(lake, spark, reference, lake_catalog, tmp_path):
    """DuckDB's `CREATE VIEW v(a) AS SELECT 42 AS x, 84 AS y` names the first column only: columns a, y."""
    lake.sql("CREATE VIEW v(a) AS SELECT 42 AS x, 84 AS y", dialect="duckdb")
    lake.sql("CREATE VIEW u(p) AS SELECT 1 AS m, 2 AS n UNION ALL SELECT 3, 4", dialect="duckdb")
    assert [tuple(r) for r in lake.sql("SELECT a, y FROM v", dialect="duckdb").collect()] == [(42, 84)]
    assert _rows(lake.sql("SELECT p, n FROM u", dialect="duckdb")) == [(1, 2), (3, 4)]
    attach(reference, lake_catalog, str(tmp_path / "data"), read_only=True)
    assert reference.execute("SELECT a, y FROM lake.v").fetchall() == [(42, 84)]
