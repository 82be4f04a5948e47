"""flush_inlined_data: inlined rows and deletes become files, and every snapshot reads as before, for us and for
DuckDB (row ids included); we read what DuckDB's flush writes; conflicts with concurrent inlined deletes."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa

from spark_ducklake import DuckLake
from spark_ducklake.errors import ConflictError, SchemaMismatchError
from spark_ducklake.operations.maintenance import flush as flush_module
from tests.support.compare import duckdb_rows
from tests.support.races import commit_meanwhile
from tests.support.reference import attach
from tests.support.snapshots import duckdb_history, first_snapshot_of, our_history


def _rows(a: list[int], b: list[str], **more) -> pa.Table:
    cols = {"a": pa.array(a, pa.int32()), "b": pa.array(b)}
    cols.update({k: pa.array(v, pa.int32()) for k, v in more.items()})
    return pa.table(cols)


def _history(lake: DuckLake) -> None:
    """Inlined inserts under two schema versions, an inlined update, inlined deletes of inlined and of file rows
    (one file with a delete file already), a sorted table."""
    lake.create_table("t", "a INT, b STRING")
    lake.write(_rows([1, 2, 3, 4], ["x", "y", "z", "w"]), "t")                         # inlined
    lake.write(_rows([5, 6], ["x", "y"]), "t")                                         # inlined
    lake.delete("t", "a = 2")                                                          # inlined row ended
    lake.update("t", "a = 3", {"b": "'upd'"})                    # two inlined versions of one row id
    lake.write(lake.spark.range(100, 130).selectExpr("CAST(id AS INT) AS a", "'big' AS b").coalesce(1), "t")
    lake.delete("t", "a >= 118")                                                       # delete file (12 rows)
    lake.delete("t", "a IN (101, 102)")                                                # inlined delete of a file
    lake.add_column("t", "c", "INT", default=7)
    lake.write(_rows([9, 8], ["n", "m"], c=[1, 2]), "t")                              # inlined, version 2
    lake.delete("t", "a IN (5, 9, 103)")                                               # both versions and a file
    lake.set_sorted_by("t", ["a DESC"])


@pytest.mark.every_backend
def test_flush_keeps_every_snapshot_for_us_and_duckdb(catalog, lake, spark):
    _history(lake)
    first, last = first_snapshot_of(lake, "t"), lake.current_snapshot()
    ours_before = our_history(lake, "t", first, last)
    lake.close()
    duck_before = duckdb_history(catalog, "t", first, last)
    assert duck_before == ours_before

    lake = DuckLake.attach(catalog, spark=spark)
    assert lake.flush_inlined_data() == [("main", "t", 9)]   # every inlined row version, deleted ones too
    flushed = lake.current_snapshot()
    assert flushed == last + 1
    assert lake.snapshots()[-1].changes == {"tables_deleted_from": ["1"], "flushed_inlined": ["1"]}
    assert our_history(lake, "t", first, last) == ours_before
    assert our_history(lake, "t", flushed, flushed)[flushed] == ours_before[last]
    assert lake.flush_inlined_data() == []                    # nothing left
    with lake.engine.connect() as conn:                       # rows left the catalog; the old version's table too
        names = set(sa.inspect(conn).get_table_names())
        assert "ducklake_inlined_data_1_1" not in names
        assert conn.execute(sa.text("SELECT count(*) FROM ducklake_inlined_data_1_2")).scalar() == 0
        assert conn.execute(sa.text("SELECT count(*) FROM ducklake_inlined_delete_1")).scalar() == 0
    files = {f.path: f for f in lake.plan_scan("t").files}
    partial = [f for f in files.values() if f.partial_max is not None]
    assert len(partial) == 2                                   # one file per schema version
    for f in partial:                                          # sorted by the current keys
        assert pq.read_table(f.path).column("a").to_pylist() == sorted(pq.read_table(f.path).column("a")
                                                                       .to_pylist(), reverse=True)
    lake.close()
    assert duckdb_history(catalog, "t", first, flushed) == {**duck_before, flushed: duck_before[last]}


def test_we_read_duckdb_flushes_at_every_snapshot(tmp_path, spark, reference):
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    attach(reference, catalog, str(tmp_path / "data"))
    for sql in ["CREATE TABLE lake.t (a INTEGER, b VARCHAR)",
                "INSERT INTO lake.t VALUES (1, 'x'), (2, 'y'), (3, 'z'), (4, 'w')",
                "INSERT INTO lake.t SELECT i, 'big' FROM range(100, 130) r(i)",
                "DELETE FROM lake.t WHERE a >= 120", "DELETE FROM lake.t WHERE a IN (101, 102, 2)",
                "ALTER TABLE lake.t ADD COLUMN c INTEGER DEFAULT 7", "INSERT INTO lake.t VALUES (9, 'n', 1)",
                "DELETE FROM lake.t WHERE a IN (3, 9, 103)", "ALTER TABLE lake.t SET SORTED BY (a DESC)",
                "CALL ducklake_flush_inlined_data('lake')"]:
        reference.execute(sql)
    last = reference.execute("SELECT max(snapshot_id) FROM lake.snapshots()").fetchone()[0]
    theirs = {v: duckdb_rows(reference, f"SELECT *, rowid FROM lake.t AT (VERSION => {v})") for v in range(1, last + 1)}
    reference.execute("DETACH lake")
    lake = DuckLake.attach(catalog, spark=spark)
    assert our_history(lake, "t", 1, last) == theirs
    assert "flushed_inlined" in lake.snapshots()[-1].changes


def test_flush_scope_auto_compact_and_conflicts(lake, lake_catalog, tmp_path, spark, monkeypatch):
    lake.create_schema("s")
    for name in ("t", "s.u", "s.v"):
        lake.create_table(name, "a INT, b STRING")
        lake.write(_rows([1, 2], ["x", "y"]), name)
    lake.set_option("auto_compact", False, table_name="v", schema="s")
    assert lake.flush_inlined_data(schema_name="s") == [("s", "u", 2)]          # v opted out
    assert lake.flush_inlined_data("s", "v") == [("s", "v", 2)]                 # unless named
    # A concurrent inlined delete of rows being flushed: the flush fails and leaves no trace.
    other = DuckLake.attach(lake_catalog, spark=spark)
    original = commit_meanwhile(monkeypatch, flush_module, "_write_batches", lambda: other.delete("t", "a = 1"))
    with pytest.raises(ConflictError, match="flush"):
        lake.flush_inlined_data(table_name="t")
    monkeypatch.setattr(flush_module, "_write_batches", original)
    assert not [p for p in (tmp_path / "data" / "main" / "t").glob("*.parquet")]   # staged files removed
    assert sorted(r.a for r in lake.read("t").collect()) == [2]
    assert lake.flush_inlined_data(table_name="t") == [("main", "t", 2)]        # 1 flushed as deleted
    assert sorted(r.a for r in lake.read("t").collect()) == [2]


def test_tables_spark_cannot_rewrite_are_named_or_skipped(tmp_path, reference):
    """A uuid column has no Spark type to write it back as: maintenance of that table says so; sweeps skip it."""
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    attach(reference, catalog, str(tmp_path / "data"))
    reference.execute("CREATE TABLE lake.t (id INTEGER, u UUID)")
    reference.execute("INSERT INTO lake.t VALUES (1, uuid()), (2, NULL)")
    reference.execute("DETACH lake")
    lake = DuckLake.attach(catalog)
    before = lake.snapshots()
    for call in (lambda: lake.flush_inlined_data(table_name="t"), lambda: lake.merge_adjacent_files("t"),
                 lambda: lake.rewrite_data_files("t")):
        with pytest.raises(SchemaMismatchError, match=r"main\.t.*u \(uuid\)"):
            call()
    assert lake.flush_inlined_data() == [] and lake.merge_adjacent_files() == []
    assert lake.snapshots() == before
    lake.close()
