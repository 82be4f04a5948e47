"""Schema evolution: every kind of ALTER, by us and by DuckDB, read identically at every snapshot."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.errors import AlreadyExistsError, NotFoundError, SchemaMismatchError
from tests.support.compare import duckdb_rows, spark_rows
from tests.support.reference import attach


def _agree_at_every_snapshot(lake: DuckLake, reference, catalog: str, table: str, first: int) -> None:
    """Our rows and column names at every snapshot equal DuckDB's (ours are read first: a DuckDB catalog file
    admits one user at a time)."""
    ours = {}
    for version in range(first, lake.current_snapshot() + 1):
        frame = lake.read(table, version=version)
        ours[version] = (frame.columns, spark_rows(frame))
    lake.close()
    if not reference.execute("SELECT 1 FROM duckdb_databases() WHERE database_name = 'lake'").fetchall():
        attach(reference, catalog)
    for version, (names, rows) in ours.items():
        query = f"SELECT * FROM lake.{table} AT (VERSION => {version})"
        assert rows == duckdb_rows(reference, query), f"snapshot {version}"
        assert names == [d[0] for d in reference.execute(query + " LIMIT 0").description], f"snapshot {version}"


@pytest.mark.lake(data_inlining_row_limit=0)
@pytest.mark.every_backend
def test_every_alter_agrees_with_duckdb_at_every_snapshot(catalog, lake, spark, reference):
    lake.write(spark.createDataFrame([(1, (1, "a"), [1])], "a INT, s STRUCT<x: INT, y: STRING>, l ARRAY<INT>"),
               "t", mode="error")
    first = lake.current_snapshot()
    lake.add_column("t", "b", "STRING", default="hi")
    lake.rename_column("t", "a", "a2")
    lake.alter_column_type("t", "a2", "BIGINT")
    lake.add_column("t", "s.z", "DOUBLE")
    lake.write(spark.createDataFrame([(2, (2, "b", 2.5), [2], "bee")],
                                     "a2 BIGINT, s STRUCT<x: INT, y: STRING, z: DOUBLE>, l ARRAY<INT>, b STRING"), "t")
    lake.set_nullable("t", "a2", False)
    lake.rename_column("t", "s.x", "x2")
    lake.drop_column("t", "s.y")
    lake.alter_column_type("t", "l.element", "BIGINT")
    lake.alter_column_type("t", "s.x2", "BIGINT")
    lake.set_column_default("t", "b", "later")
    with lake.update_schema("t", commit_message="two at once") as change:
        change.add_column("c", "INT", default=7).drop_column("b")
    lake.write(pa.table({"a2": pa.array([3], pa.int64())}), "t")  # c gets its default
    lake.write(pa.table({"a2": pa.array([4], pa.int64()), "c": pa.array([8], pa.int32())}), "t")  # inlined
    snaps = lake.snapshots()
    assert sum("tables_altered" in s.changes for s in snaps) == 11
    assert snaps[-3].commit_message == "two at once"
    assert [r[0] for r in lake.read("t").select("c").orderBy("a2").collect()] == [7, 7, 7, 8]
    _agree_at_every_snapshot(lake, reference, catalog, "t", first)


def test_merge_schema_adds_and_widens_in_the_write_snapshot(lake, lake_catalog, spark, reference):
    catalog = lake_catalog
    lake.write(spark.createDataFrame([(1,)], "a INT"), "t", mode="error")
    wider = spark.createDataFrame([(2**40, "x", 1.5)] * 20, "a BIGINT, b STRING, c DOUBLE")
    with pytest.raises(SchemaMismatchError, match="b"):
        lake.write(wider, "t")
    before = len(lake.snapshots())
    lake.write(wider, "t", merge_schema=True)
    lake.write(pa.table({"a": pa.array([5], pa.int64()), "d": pa.array([True])}), "t", merge_schema=True)
    assert len(lake.snapshots()) == before + 2
    assert {c.name: c.type for c in lake.table_info("t").columns} == {
        "a": "int64", "b": "varchar", "c": "float64", "d": "boolean"}
    _agree_at_every_snapshot(lake, reference, catalog, "t", 1)
    assert duckdb_rows(reference, "SELECT count(*), max(a), count(b), count(d) FROM lake.t") == [(22, 2**40, 20, 1)]


def test_bad_alters_name_the_problem_and_change_nothing(lake, spark):
    lake.write(spark.createDataFrame([(1, None, (1,), Decimal("1.50"))],
                                     "a BIGINT, n STRING, s STRUCT<x: INT>, c DECIMAL(10,2)"), "t", mode="error")
    before = lake.snapshots()
    bad = [
        (lambda: lake.alter_column_type("t", "a", "INT"), SchemaMismatchError, "int64 to int32"),
        (lambda: lake.alter_column_type("t", "n", "INT"), SchemaMismatchError, "lossless"),
        (lambda: lake.alter_column_type("t", "s.x", "DOUBLE"), SchemaMismatchError, "int32 -> int64;"),
        (lambda: lake.alter_column_type("t", "c", "DECIMAL(12,2)"), SchemaMismatchError, "decimal"),
        (lambda: lake.drop_column("t", "s.x"), SchemaMismatchError, "last column of its struct"),
        (lambda: lake.drop_column("t", "nope"), NotFoundError, "'nope'"),
        (lambda: lake.add_column("t", "a", "INT"), AlreadyExistsError, "'a' already exists"),
        (lambda: lake.add_column("t", "d", "INT", default="ten"), SchemaMismatchError, "not a literal"),
        (lambda: lake.add_column("t", "d", "INT", default=[1]), SchemaMismatchError, "literal"),
        (lambda: lake.add_column("t", "d", "INT", nullable=False), SchemaMismatchError, "needs a default"),
        (lambda: lake.add_column("t", "a.b", "INT"), SchemaMismatchError, "only be added to structs"),
        (lambda: lake.set_nullable("t", "n", False), SchemaMismatchError, "has NULLs"),
        (lambda: lake.set_nullable("t", "n", True), SchemaMismatchError, "it has no NOT NULL constraint"),
        (lambda: lake.add_column("missing", "d", "INT"), NotFoundError, "missing"),
    ]
    for call, error, text in bad:
        with pytest.raises(error, match=text):
            call()
    with pytest.raises(SchemaMismatchError, match="last column of its table"):
        with lake.update_schema("t") as change:
            change.drop_column("a").drop_column("n").drop_column("s").drop_column("c")
    assert lake.snapshots() == before


def test_we_alter_duckdb_tables_and_duckdb_alters_ours(tmp_path, spark, reference):
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    attach(reference, catalog, str(tmp_path / "data"))
    reference.execute("CREATE TABLE lake.d (id INTEGER, name VARCHAR)")
    reference.execute("INSERT INTO lake.d SELECT i, 'n' || i FROM range(20) t(i)")
    reference.execute("DETACH lake")
    lake = DuckLake.attach(catalog)
    lake.add_column("d", "score", "DOUBLE", default=0.5)
    lake.rename_column("d", "name", "label")
    lake.alter_column_type("d", "id", "BIGINT")
    lake.write(spark.createDataFrame([(100, "x", 9.0)] * 12, "id BIGINT, label STRING, score DOUBLE"), "d")
    attach(reference, catalog)
    reference.execute("ALTER TABLE lake.d ADD COLUMN flag INTEGER DEFAULT 1")
    reference.execute("ALTER TABLE lake.d RENAME COLUMN score TO points")
    reference.execute("INSERT INTO lake.d VALUES (200, 'y', 1.0, 0)")
    reference.execute("ALTER TABLE lake.d ADD COLUMN st STRUCT(a INTEGER, b VARCHAR)")
    reference.execute("INSERT INTO lake.d VALUES (300, 'z', 2.0, 1, {'a': 1, 'b': 'q'})")
    reference.execute("ALTER TABLE lake.d ADD COLUMN st.c DOUBLE")
    reference.execute("ALTER TABLE lake.d RENAME COLUMN st.a TO a2")
    reference.execute("ALTER TABLE lake.d DROP COLUMN st.b")
    reference.execute("INSERT INTO lake.d VALUES (400, 'w', 3.0, 1, {'a2': 5, 'c': 0.5})")
    reference.execute("DETACH lake")
    assert lake.read("d").columns == ["id", "label", "points", "flag", "st"]
    _agree_at_every_snapshot(lake, reference, catalog, "d", 1)
    assert duckdb_rows(reference, "SELECT points, flag, count(*) FROM lake.d GROUP BY ALL") == [
        (0.5, 1, 20), (1.0, 0, 1), (2.0, 1, 1), (3.0, 1, 1), (9.0, 1, 12)]


@pytest.mark.lake(data_inlining_row_limit=0)
def test_struct_fields_are_matched_by_name_and_merged(lake, lake_catalog, spark, reference):
    catalog = lake_catalog
    lake.write(spark.createDataFrame([(1, (1, "a"), [(1, "p")])],
                                     "id INT, s STRUCT<x: INT, y: STRING>, l ARRAY<STRUCT<k: INT, v: STRING>>"),
               "t", mode="error")
    reordered = spark.createDataFrame([(2, ("b", 2), [("q", 2)])],
                                      "id INT, s STRUCT<y: STRING, x: INT>, l ARRAY<STRUCT<v: STRING, k: INT>>")
    lake.write(reordered, "t")  # Spark's own struct cast would swap x and y
    wider = spark.createDataFrame([(3, (3, 3.5, "c"), None)],
                                  "id INT, s STRUCT<x: INT, z: DOUBLE, y: STRING>, l ARRAY<STRUCT<k: INT, v: STRING>>")
    with pytest.raises(SchemaMismatchError, match="fields not in column s: z"):
        lake.write(wider, "t")
    lake.write(wider, "t", merge_schema=True)
    assert [c.name for c in lake.table_info("t").columns[1].children] == ["x", "y", "z"]
    _agree_at_every_snapshot(lake, reference, catalog, "t", 1)
    assert duckdb_rows(reference, "SELECT id, s.x, s.y, s.z, l[1].k FROM lake.t") == [
        (1, 1, "a", None, 1), (2, 2, "b", None, 2), (3, 3, "c", 3.5, None)]


ALTERS = [  # (ours, DuckDB's SQL): the same change, each one snapshot
    (lambda lake: lake.write(pa.table({"a": pa.array([1], pa.int32())}), "t"), "INSERT INTO lake.t (a) VALUES (1)"),
    (lambda lake: lake.add_column("t", "b", "STRING", default="hi"),
     "ALTER TABLE lake.t ADD COLUMN b VARCHAR DEFAULT 'hi'"),
    (lambda lake: lake.rename_column("t", "a", "a2"), "ALTER TABLE lake.t RENAME COLUMN a TO a2"),
    (lambda lake: lake.alter_column_type("t", "a2", "BIGINT"), "ALTER TABLE lake.t ALTER a2 SET TYPE BIGINT"),
    (lambda lake: lake.add_column("t", "s.n.r", "DOUBLE"), "ALTER TABLE lake.t ADD COLUMN s.n.r DOUBLE"),
    (lambda lake: lake.set_nullable("t", "a2", False), "ALTER TABLE lake.t ALTER a2 SET NOT NULL"),
    (lambda lake: lake.write(pa.table({"a2": pa.array([2], pa.int64())}), "t"), "INSERT INTO lake.t (a2) VALUES (2)"),
    (lambda lake: lake.set_nullable("t", "a2", True), "ALTER TABLE lake.t ALTER a2 DROP NOT NULL"),
    (lambda lake: lake.rename_column("t", "s.n.p", "p2"), "ALTER TABLE lake.t RENAME COLUMN s.n.p TO p2"),
    (lambda lake: lake.drop_column("t", "s.n.q"), "ALTER TABLE lake.t DROP COLUMN s.n.q"),
    (lambda lake: lake.set_column_default("t", "b", "later"), "ALTER TABLE lake.t ALTER b SET DEFAULT 'later'"),
    (lambda lake: lake.write(pa.table({"a2": pa.array([3], pa.int64())}), "t"), "INSERT INTO lake.t (a2) VALUES (3)"),
    (lambda lake: lake.rename_table("t", "t2"), "ALTER TABLE lake.t RENAME TO t2"),
]
CATALOG_ROWS = {
    "ducklake_column": "SELECT * EXCLUDE (nulls_allowed, default_value_type) FROM {m}.ducklake_column",
    "nullability": "SELECT column_id, begin_snapshot, nulls_allowed FROM {m}.ducklake_column "
                   "WHERE parent_column IS NULL",
    "ducklake_schema_versions": "SELECT * FROM {m}.ducklake_schema_versions",
    "ducklake_snapshot": "SELECT snapshot_id, schema_version, next_catalog_id, next_file_id FROM {m}.ducklake_snapshot",
    "ducklake_snapshot_changes": "SELECT snapshot_id, changes_made FROM {m}.ducklake_snapshot_changes",
    "ducklake_inlined_data_tables": "SELECT * FROM {m}.ducklake_inlined_data_tables",
    "ducklake_table": "SELECT * EXCLUDE (table_uuid) FROM {m}.ducklake_table",
}


def test_alters_write_the_references_catalog_rows(tmp_path, reference):
    """The same ALTERs (nested ones two levels deep, NOT NULL set and dropped, defaults, renames) leave the
    same catalog rows as DuckDB's: column versions, schema versions, snapshots, changes, inlined data tables
    (none for NOT NULL or DEFAULT changes: inserts then go to the table of the last shape change)."""
    ours, theirs = f"sqlite:{tmp_path / 'ours.sqlite'}", f"sqlite:{tmp_path / 'theirs.sqlite'}"
    lake = DuckLake.attach(ours, str(tmp_path / "ours"))
    lake.create_table("t", "a INT, s STRUCT<x: INT, n: STRUCT<p: INT, q: STRING>>, l ARRAY<INT>")
    for change, _sql in ALTERS:
        change(lake)
    lake.close()
    attach(reference, theirs, str(tmp_path / "theirs"))
    reference.execute("CREATE TABLE lake.t (a INTEGER, s STRUCT(x INTEGER, n STRUCT(p INTEGER, q VARCHAR)), "
                      "l INTEGER[])")
    for _change, sql in ALTERS:
        reference.execute(sql)
    attach(reference, ours, alias="ours")
    for name, query in CATALOG_ROWS.items():
        expected = sorted(reference.execute(query.format(m="__ducklake_metadata_lake")).fetchall(), key=repr)
        assert sorted(reference.execute(query.format(m="__ducklake_metadata_ours")).fetchall(), key=repr) == \
            expected, name
    for (table,) in reference.execute("SELECT table_name FROM __ducklake_metadata_lake.ducklake_inlined_data_tables"
                                      ).fetchall():
        rows = f"SELECT row_id, begin_snapshot, end_snapshot FROM {{m}}.{table} ORDER BY ALL"
        assert reference.execute(rows.format(m="__ducklake_metadata_ours")).fetchall() == \
            reference.execute(rows.format(m="__ducklake_metadata_lake")).fetchall(), table
    assert duckdb_rows(reference, "SELECT * FROM ours.t2") == duckdb_rows(reference, "SELECT * FROM lake.t2")
