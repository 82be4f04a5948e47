"""DELETE on DuckLake's merge-on-read design, checked against DuckDB both ways on every catalog."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa
from pyspark.sql import functions as F

from spark_ducklake import DuckLake
from spark_ducklake.errors import NotFoundError
from tests.support.compare import duckdb_rows, spark_rows
from tests.support.reference import attach


@pytest.mark.every_backend
def test_delete_matches_duckdb_at_every_snapshot(catalog, lake, spark, reference):
    lake.write(spark.range(0, 200).selectExpr("id", "concat('v', id) AS v").repartition(2), "t", mode="error")
    lake.write(pa.table({"id": pa.array([1000, 1001, 1002], pa.int64()), "v": ["a", "b", "c"]}), "t")  # inlined
    table = lake.table("t")
    assert table.delete("id < 3") == 3                      # few rows: inlined deletes
    assert table.delete(F.col("id").between(50, 99)) == 50  # many rows: delete files
    assert table.delete("id BETWEEN 60 AND 120") == 21      # merged with the earlier delete file
    assert table.delete("id = 1001") == 1                   # an inlined row: its end_snapshot is set
    assert table.delete("id > 5000") == 0                   # no match: no snapshot
    changes = [s.changes for s in lake.snapshots()[-4:]]
    assert changes == [{"inlined_delete": ["1"]}, {"tables_deleted_from": ["1"]}, {"tables_deleted_from": ["1"]},
                       {"inlined_delete": ["1"]}]
    snaps = [s.snapshot_id for s in lake.snapshots()[1:]]
    ours = {s: spark_rows(lake.read("t", version=s)) for s in snaps}
    assert len(ours[snaps[-1]]) == 203 - 3 - 50 - 21 - 1
    lake.close()

    attach(reference, catalog)
    for snap, rows in ours.items():
        assert duckdb_rows(reference, f"SELECT id, v FROM lake.t AT (VERSION => {snap})") == rows, snap
    reference.execute("DELETE FROM lake.t WHERE id % 10 = 5")   # DuckDB deletes on top of our delete files
    expected = duckdb_rows(reference, "SELECT id, v FROM lake.t")
    reference.execute("DETACH lake")
    lake = DuckLake.attach(catalog)
    assert spark_rows(lake.read("t")) == expected
    lake.table("t").delete("id >= 150")                      # and we delete on top of DuckDB's
    final = spark_rows(lake.read("t"))
    lake.close()
    attach(reference, catalog)
    assert duckdb_rows(reference, "SELECT id, v FROM lake.t") == final


@pytest.mark.lake(data_inlining_row_limit=0)
def test_deleting_every_row_of_a_file_ends_it(lake, spark):
    lake.write(spark.range(100).coalesce(1), "t", mode="error")
    assert lake.delete("t") == 100
    assert lake.read("t").count() == 0
    assert lake.plan_scan("t").files == []
    assert lake.snapshots()[-1].changes == {"tables_deleted_from": ["1"]}
    assert lake.read("t", version=lake.current_snapshot() - 1).count() == 100


def test_delete_from_duckdb_written_lake(tmp_path, spark, reference):
    catalog = f"duckdb:{tmp_path / 'meta.ducklake'}"
    attach(reference, catalog, str(tmp_path / "data"))
    reference.execute("CREATE TABLE lake.t AS SELECT i AS id, i % 7 AS k FROM range(500) r(i)")
    reference.execute("DELETE FROM lake.t WHERE id < 20")
    reference.execute("DETACH lake")
    lake = DuckLake.attach(catalog)
    assert lake.delete("t", "k = 3") == 68
    rows = spark_rows(lake.read("t"))
    lake.close()
    attach(reference, catalog)
    assert duckdb_rows(reference, "SELECT id, k FROM lake.t") == rows
    assert len(rows) == 480 - 68


def test_delete_errors(lake):
    with pytest.raises(NotFoundError, match="main.nope"):
        lake.table("nope")


def test_update_matches_duckdb_and_keeps_row_ids(catalog, lake, spark, reference):
    lake.write(spark.range(0, 300).selectExpr("id", "concat('v', id) AS v", "id * 1.5 AS x"), "t", mode="error")
    lake.write(pa.table({"id": pa.array([900, 901], pa.int64()), "v": ["p", "q"], "x": [1.0, 2.0]}), "t")
    table = lake.table("t")
    before = spark_rows(lake.plan_scan("t").to_dataframe(spark, row_ids=True).select("id", "rowid"))
    assert table.update("id < 5", {"v": "upper(v)"}) == 5                        # few rows: inlined versions
    assert table.update(F.col("id") >= 200, {"x": F.col("x") * 2, "v": "'big'"}) == 102  # files + inlined rows
    assert table.update("id = 12345", {"v": "'none'"}) == 0
    assert lake.snapshots()[-1].changes == {"tables_deleted_from": ["1"], "inlined_delete": ["1"],
                                            "tables_inserted_into": ["1"]}
    after = spark_rows(lake.plan_scan("t").to_dataframe(spark, row_ids=True).select("id", "rowid"))
    assert after == before  # row lineage: every row keeps its id
    ours = spark_rows(lake.read("t"))
    with pytest.raises(Exception, match="nope"):
        table.update("id = 1", {"nope": "1"})
    lake.close()
    attach(reference, catalog)
    assert duckdb_rows(reference, "SELECT id, v, x FROM lake.t") == ours
    assert duckdb_rows(reference, "SELECT id, rowid FROM lake.t") == after
    assert ("V3",) in duckdb_rows(reference, "SELECT v FROM lake.t WHERE id = 3")


def test_overwrite_where_replaces_only_matching_rows(lake, lake_catalog, spark, reference):
    lake.write(spark.range(100).selectExpr("id", "id % 4 AS day", "'old' AS src"), "t", mode="error")
    fresh = spark.range(1000, 1030).selectExpr("id", "2 AS day", "'new' AS src")
    with pytest.raises(ValueError, match="where="):
        lake.write(fresh, "t", where="day = 2")
    lake.write(fresh, "t", mode="overwrite", where="day = 2")
    rows = spark_rows(lake.read("t").groupBy("day", "src").count())
    assert rows == [(0, "old", 25), (1, "old", 25), (2, "new", 30), (3, "old", 25)]
    assert len(lake.snapshots()) == 3  # one snapshot for delete + insert
    lake.close()
    attach(reference, lake_catalog)
    assert duckdb_rows(reference, "SELECT day, src, count(*) FROM lake.t GROUP BY ALL") == rows


UPDATES = [({"v": "upper(v)"}, "id < 5"), ({"x": "x * 2", "v": "'big'"}, "id >= 200"),
           ({"v": "concat(v, '!')"}, "id % 3 = 0")]
DELETES = ["id % 7 = 3", "id BETWEEN 100 AND 104"]


def _ours(lake: DuckLake, table: str, step: int) -> None:
    """Our API running UPDATES/DELETES[step] (the same text DuckDB runs in _theirs)."""
    if step < len(UPDATES):
        assignments, condition = UPDATES[step]
        lake.table(table).update(condition, assignments)
    else:
        lake.table(table).delete(DELETES[step - len(UPDATES)])


def _theirs(con, table: str, step: int) -> None:
    if step < len(UPDATES):
        assignments, condition = UPDATES[step]
        con.execute(f"UPDATE {table} SET {', '.join(f'{k} = {v}' for k, v in assignments.items())} WHERE {condition}")
    else:
        con.execute(f"DELETE FROM {table} WHERE {DELETES[step - len(UPDATES)]}")


@pytest.mark.not_on_mysql("the reference fails UPDATE in a MySQL catalog (its connector rejects a join)")
def test_same_statements_same_results_and_each_side_changes_the_others_lake(catalog, tmp_path, spark, reference):
    """Our lake (A) and DuckDB's (B) start with the same rows; the same UPDATE/DELETE statements run on each by
    its own engine, then by the other engine on the other lake. Both lakes hold the same rows at every step, and
    row ids never change."""
    ours = DuckLake.attach(catalog, str(tmp_path / "a"))
    ours.write(spark.range(0, 300).selectExpr("id", "concat('v', id) AS v", "id * 1.5 AS x").repartition(2), "t",
               mode="error")
    ours.write(pa.table({"id": pa.array([900, 901], pa.int64()), "v": ["p", "q"], "x": [1.0, 2.0]}), "t")
    ids_a = spark_rows(ours.plan_scan("t").to_dataframe(spark, row_ids=True).select("id", "rowid"))
    ours.close()
    theirs = f"sqlite:{tmp_path / 'b.sqlite'}"
    attach(reference, theirs, str(tmp_path / "b"), alias="b")
    reference.execute("CREATE TABLE b.t AS SELECT i AS id, concat('v', i) AS v, i * 1.5 AS x FROM range(300) r(i)")
    reference.execute("INSERT INTO b.t VALUES (900, 'p', 1.0), (901, 'q', 2.0)")
    ids_b = duckdb_rows(reference, "SELECT id, rowid FROM b.t")
    reference.execute("DETACH b")

    steps = len(UPDATES) + len(DELETES)
    for step in range(steps):
        # first each engine on its own lake, then each on the other's
        lake_a, lake_b = DuckLake.attach(catalog), DuckLake.attach(theirs)
        engine_a_is_ours = step % 2 == 0
        if engine_a_is_ours:
            _ours(lake_a, "t", step)
        else:
            _ours(lake_b, "t", step)
        rows_a, rows_b = spark_rows(lake_a.read("t")), spark_rows(lake_b.read("t"))
        lake_a.close()
        lake_b.close()
        attach(reference, catalog, alias="a")
        attach(reference, theirs, alias="b")
        _theirs(reference, "b.t" if engine_a_is_ours else "a.t", step)
        # both engines read both lakes alike, and the two lakes hold the same rows
        assert duckdb_rows(reference, "SELECT id, v, x FROM a.t") == duckdb_rows(reference, "SELECT id, v, x FROM b.t")
        if engine_a_is_ours:
            assert duckdb_rows(reference, "SELECT id, v, x FROM a.t") == rows_a, step
        else:
            assert duckdb_rows(reference, "SELECT id, v, x FROM b.t") == rows_b, step
        live_a = {i for i, in duckdb_rows(reference, "SELECT id FROM a.t")}
        assert duckdb_rows(reference, "SELECT id, rowid FROM a.t") == [r for r in ids_a if r[0] in live_a], step
        assert duckdb_rows(reference, "SELECT id, rowid FROM b.t") == [r for r in ids_b if r[0] in live_a], step
        reference.execute("DETACH a")
        reference.execute("DETACH b")
    lake_a = DuckLake.attach(catalog)
    final = spark_rows(lake_a.read("t"))
    assert [(v, x) for i, v, x in final if i in (0, 250)] == [("V0!", 0.0), ("big", 750.0)]
    assert len(final) == 302 - 43 - 4  # 43 of 0..299 are 3 mod 7; then 100 and 102..104 (101 was one of them)
    lake_a.close()


@pytest.mark.lake(data_inlining_row_limit=0)
def test_a_second_delete_of_a_file_writes_a_partial_delete_file_stamped_with_its_snapshot(lake, lake_catalog, spark,
                                                                                          reference):
    """The new positions carry the snapshot the commit expects; when another commit takes that id first, the file
    is restamped, so time travel to the other commit's snapshot still sees the rows."""
    catalog = lake_catalog
    lake.write(spark.range(0, 100).coalesce(1), "t", mode="error")
    lake.delete("t", "id < 10")                                         # a plain delete file
    first = lake.plan_scan("t").files[0].delete_file
    assert first.partial_max is None
    with lake.transaction() as tx:
        tx.delete("t", "id BETWEEN 50 AND 59")                          # staged: expects snapshot N + 1
        other = DuckLake.attach(catalog)
        taken = other.write(pa.table({"x": pa.array([1], pa.int64())}), "u", mode="error")   # takes N + 1
        other.close()
    deleted_at = lake.current_snapshot()
    assert deleted_at == taken + 1
    delete_file = lake.plan_scan("t").files[0].delete_file
    assert (delete_file.begin_snapshot, delete_file.partial_max, delete_file.delete_count) == \
        (first.begin_snapshot, deleted_at, 20)
    stamps = pq.read_table(delete_file.path).to_pydict()
    assert dict(zip(stamps["pos"], stamps["_ducklake_internal_snapshot_id"], strict=True)) == {
        **{p: first.begin_snapshot for p in range(10)}, **{p: deleted_at for p in range(50, 60)}}
    assert lake.read("t", version=taken).count() == 90 and lake.read("t").count() == 80
    with lake.engine.connect() as conn:  # the replaced delete file is scheduled for deletion
        scheduled = [r[0] for r in conn.execute(sa.text("SELECT path FROM ducklake_files_scheduled_for_deletion"))]
    assert [os.path.basename(p) for p in scheduled] == [os.path.basename(first.path)]
    lake.close()
    attach(reference, catalog)
    assert duckdb_rows(reference, f"SELECT count(*) FROM lake.t AT (VERSION => {taken})") == [(90,)]
    assert duckdb_rows(reference, "SELECT count(*) FROM lake.t") == [(80,)]
    assert duckdb_rows(reference, f"SELECT snapshot_id, count(*) FROM ducklake_table_deletions('lake', 'main', 't', "
                                  f"0, {deleted_at}) GROUP BY ALL") == [(first.begin_snapshot, 10), (deleted_at, 10)]


def _anti_joins(frame) -> int:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        frame.explain()
    return out.getvalue().count("LeftAnti")


@pytest.mark.parametrize("files", [3, 20])
def test_only_files_with_deletes_are_joined_with_their_positions(lake, spark, files):
    """Files without deletes are a plain scan; few files with deletes get a scan and a bitmap filter each (no
    join), many share one join. Rows, row ids and earlier snapshots stay right either way."""
    lake.write(spark.range(0, files * 20).selectExpr("id", "id * 10 AS v").repartitionByRange(files, "id"), "t",
               mode="error")
    assert len(lake.plan_scan("t").files) == files
    before = lake.snapshots()[-1].snapshot_id
    row_ids = {r.id: r.rowid for r in lake.plan_scan("t").to_dataframe(spark, row_ids=True).collect()}
    if files == 3:
        assert lake.delete("t", "id BETWEEN 5 AND 14") == 10   # file 0: inlined deletes
        assert lake.delete("t", "id BETWEEN 25 AND 39") == 15  # file 1: a delete file; file 2 untouched
        gone = set(range(5, 15)) | set(range(25, 40))
    else:
        assert lake.delete("t", "id % 20 < 2") == 2 * files    # every file: one join for all of them
        gone = {i for i in range(files * 20) if i % 20 < 2}
    frame = lake.read("t")
    assert _anti_joins(frame) == (0 if files == 3 else 1)
    assert sorted(r.id for r in frame.collect()) == sorted(set(range(files * 20)) - gone)
    with_ids = lake.plan_scan("t").to_dataframe(spark, row_ids=True)
    assert {(r.id, r.rowid) for r in with_ids.collect()} == {(i, n) for i, n in row_ids.items() if i not in gone}
    assert lake.read("t", version=before).count() == files * 20
