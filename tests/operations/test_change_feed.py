"""The change feed (table_changes / table_insertions / table_deletions) equals DuckDB's on lakes written by DuckDB
(files, partial delete files, inlined rows and deletes, updates, compaction, flushed inlined data, rewritten files,
schema changes) and by us; on our lakes also the difference between consecutive snapshots as DuckDB reads them."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.errors import NotFoundError
from tests.support.compare import duckdb_rows, spark_rows
from tests.support.reference import attach

DUCKDB_HISTORY = [
    "CREATE TABLE lake.t (id INTEGER, val VARCHAR)",
    "INSERT INTO lake.t SELECT i, 'a' || i FROM range(0, 40) r(i)",
    "INSERT INTO lake.t SELECT i, 'b' || i FROM range(100, 140) r(i)",
    "INSERT INTO lake.t VALUES (1000, 'x'), (1001, 'y')",                    # inlined
    "ALTER TABLE lake.t ADD COLUMN extra INTEGER DEFAULT 7",
    "DELETE FROM lake.t WHERE id < 15",                                      # delete file
    "DELETE FROM lake.t WHERE id BETWEEN 15 AND 30",                         # partial delete file (merged)
    "DELETE FROM lake.t WHERE id IN (31, 32)",                               # inlined delete of file rows
    "UPDATE lake.t SET val = 'u' WHERE id >= 120 AND id < 1000",             # new file with row ids
    "DELETE FROM lake.t WHERE id >= 100 AND id < 120",                       # ends a data file
    "DELETE FROM lake.t WHERE id = 1000",                                    # inlined row deleted
    "UPDATE lake.t SET extra = 1 WHERE id = 1001",                           # inlined update
    "INSERT INTO lake.t SELECT i, 'c' || i, i FROM range(200, 220) r(i)",
    "INSERT INTO lake.t SELECT i, 'd' || i, i FROM range(300, 320) r(i)",
    "CALL lake.merge_adjacent_files()",                                      # partial data file
    "INSERT INTO lake.t VALUES (2000, 'z', 2)",
    "CALL ducklake_flush_inlined_data('lake')",                              # inlined history to files
    "CALL ducklake_rewrite_data_files('lake', 't', delete_threshold => 0.0)",  # rewrite: update pairs
    "DELETE FROM lake.t WHERE id IN (205, 2000)",
    "ALTER TABLE lake.t RENAME COLUMN val TO label",
    "UPDATE lake.t SET label = 'v' WHERE id BETWEEN 300 AND 305",
]


def _duck_feed(con, fn: str, start, end) -> list[tuple]:
    cols = ", ".join(f'"{r[0]}"' for r in con.execute(f"DESCRIBE SELECT * FROM ducklake_{fn}('lake', 'main', 't', "
                                                         f"{start}, {end})").fetchall())
    head = "snapshot_id, rowid, " if fn != "table_changes" else ""  # virtual columns of insertions/deletions
    return duckdb_rows(con, f"SELECT {head}{cols} FROM ducklake_{fn}('lake', 'main', 't', {start}, {end})")


def _in_range(rows: list[tuple], start: int, end: int) -> list[tuple]:
    return [r for r in rows if start <= r[0] <= end]


def test_change_feed_equals_duckdb_on_a_duckdb_lake(tmp_path, spark, reference):
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    attach(reference, catalog, str(tmp_path / "data"))
    for sql in DUCKDB_HISTORY:
        reference.execute(sql)
    last = reference.execute("FROM lake.current_snapshot()").fetchone()[0]
    added = 5  # the ADD COLUMN snapshot: feeds ending earlier have one column less
    times = dict(reference.execute("SELECT snapshot_id, snapshot_time FROM lake.snapshots()").fetchall())
    lake = DuckLake.attach(catalog, spark=spark)

    ours = lake.table_changes("t", 0, last)
    assert ours.columns[:3] == ["snapshot_id", "rowid", "change_type"]
    assert ours.columns[3:] == ["id", "label", "extra"]
    full = spark_rows(ours)
    assert {r[2] for r in full} == {"insert", "delete", "update_preimage", "update_postimage"}
    # Every range DuckDB can answer is the full feed's rows of that range.
    for start in range(0, last + 1):
        for end in range(max(start, added), last + 1):
            assert _duck_feed(reference, "table_changes", start, end) == _in_range(full, start, end), (start, end)
    assert spark_rows(lake.table_changes("t", 2, 4)) == _duck_feed(reference, "table_changes", 2, 4)
    assert spark_rows(lake.table_changes("t", 9, 16)) == _duck_feed(reference, "table_changes", 9, 16)
    assert spark_rows(lake.table_insertions("t", 0, last)) == _duck_feed(reference, "table_insertions", 0, last)
    assert spark_rows(lake.table_deletions("t", 6, last)) == _duck_feed(reference, "table_deletions", 6, last)
    # Times: the start is the first snapshot at or after it, the end the last one at or before it.
    start_t, end_t = times[8] - dt.timedelta(microseconds=1), times[12] + dt.timedelta(microseconds=1)
    assert spark_rows(lake.table_changes("t", start_t, end_t)) == _in_range(full, 8, 12)
    # Files DuckDB rewrote or flushed keep the columns their rows had: they read the added column's default.
    assert spark_rows(lake.read("t")) == duckdb_rows(reference, "SELECT * FROM lake.t")
    lake.close()


def _snapshot_diffs(con, first: int, last: int) -> list[tuple]:
    """The change feed implied by DuckDB's time travel: what differs between each snapshot and the one before."""
    out = []
    before: dict = {}
    for snap in range(first, last + 1):
        rows = duckdb_rows(con, f"SELECT rowid, * FROM lake.t AT (VERSION => {snap})")
        now = defaultdict(list)
        for r in rows:
            now[r[0]].append(r[1:])
        for rowid in sorted(set(before) | set(now)):
            old, new = before.get(rowid, []), now.get(rowid, [])
            if old == new:
                continue
            kinds = ("update_preimage", "update_postimage") if old and new else ("delete", "insert")
            out += [(snap, rowid, kinds[0], *v) for v in old] + [(snap, rowid, kinds[1], *v) for v in new]
        before = now
    return sorted(out, key=repr)


@pytest.mark.parametrize("catalog", ["duckdb"], indirect=True)
@pytest.mark.every_backend
def test_change_feed_on_our_lake_equals_duckdb_and_time_travel(catalog, lake, spark, reference):
    created = lake.create_table("t", "id BIGINT, s STRING, d DOUBLE")
    frame = spark.range(0, 60, numPartitions=2).selectExpr("id", "concat('r', id) s", "id / 2 d")
    lake.write(frame, "t")                                                   # two files
    lake.write(pa.table({"id": pa.array([100, 101, 102], pa.int64()), "s": ["x", "y", "z"],
                         "d": pa.array([1.0, 2.0, 3.0])}), "t")             # inlined
    lake.delete("t", "id < 20")                                              # delete file
    lake.delete("t", "id IN (35, 36)")                                       # inlined deletes
    lake.update("t", "id >= 50 AND id < 60", {"s": "'u'"})                   # inlined new versions, same row ids
    lake.update("t", "id = 101", {"d": "0"})                                 # inlined row updated
    lake.delete("t", "id = 100")                                             # inlined row deleted
    with lake.transaction() as tx:
        tx.write(spark.range(200, 240, numPartitions=1).selectExpr("id", "'t' s", "cast(0.5 AS DOUBLE) d"), "t")
        tx.delete("t", "id = 21")
    lake.update("t", "id >= 37 AND id < 50", {"s": "'big'"})                 # new file with row ids
    phase_a = lake.current_snapshot()
    # A second delete of one data file: a partial delete file replacing the first, as the reference writes it.
    lake.delete("t", "id >= 200 AND id < 212")
    lake.delete("t", "id >= 212 AND id < 225")
    lake.delete("t", "id < 30")                                              # ends a data file
    last = lake.current_snapshot()

    full = spark_rows(lake.table_changes("t", 0, last))
    ranges = [spark_rows(lake.table_changes("t", phase_a, last)),
              spark_rows(lake.table_insertions("t", created, phase_a)),
              spark_rows(lake.table_deletions("t", 4, phase_a))]
    with pytest.raises(NotFoundError, match="snapshot 999 does not exist"):
        lake.table_changes("t", 0, 999)
    with pytest.raises(NotFoundError, match="table main.t does not exist"):
        lake.table_changes("t", 0, created - 1)
    assert lake.table_deletions("t", last, created).count() == 0             # an empty range, not an error
    lake.close()

    attach(reference, catalog)
    assert _snapshot_diffs(reference, created, last) == full
    for start in range(0, last + 1):
        for end in range(max(start, created), last + 1):
            assert _duck_feed(reference, "table_changes", start, end) == _in_range(full, start, end), (start, end)
    assert ranges[0] == _in_range(full, phase_a, last)
    assert ranges[1] == _duck_feed(reference, "table_insertions", created, phase_a)
    assert ranges[2] == _duck_feed(reference, "table_deletions", 4, phase_a)
    kinds = defaultdict(set)
    for r in full:
        kinds[r[0]].add(r[2])
    assert {"update_preimage", "update_postimage"} <= kinds[created + 5]  # updates keep their row ids


def test_change_feed_after_our_maintenance_equals_duckdb(lake, lake_catalog, spark, reference):
    """Our flush, merge and rewrite keep the feed: every range of it equals DuckDB's on the maintained lake, and
    a second delete on a data file is a partial delete file, which DuckDB's feed reads right."""
    catalog = lake_catalog
    files = DuckLake.attach(catalog, spark=spark, data_inlining_row_limit=0)  # writes Parquet, however small
    created = lake.create_table("t", "id BIGINT, s STRING")
    lake.write(spark.range(0, 40, numPartitions=2).selectExpr("id", "concat('r', id) s"), "t")
    lake.write(pa.table({"id": pa.array([100, 101, 102], pa.int64()), "s": ["x", "y", "z"]}), "t")   # inlined
    lake.delete("t", "id IN (1, 2)")                                         # inlined deletes of file rows
    lake.update("t", "id = 101", {"s": "'u'"})                               # an inlined update
    lake.delete("t", "id = 102")                                             # an inlined row deleted
    for i in range(3):
        files.write(spark.range(50 + i, 51 + i).selectExpr("id", "'f' s"), "t")   # small files to merge
    assert [r.rows_flushed for r in lake.flush_inlined_data()] == [4]
    assert lake.merge_adjacent_files()
    files.delete("t", "id BETWEEN 5 AND 8")                  # partial delete file over the flushed deletes
    files.delete("t", "id BETWEEN 9 AND 15")                 # and again: one partial file, old one replaced
    assert lake.rewrite_data_files(delete_threshold=0.5)
    lake.write(pa.table({"id": pa.array([300], pa.int64()), "s": ["n"]}), "t")
    last = lake.current_snapshot()
    full = spark_rows(lake.table_changes("t", 0, last))
    assert {r[2] for r in full} == {"insert", "delete", "update_preimage", "update_postimage"}
    insertions = spark_rows(lake.table_insertions("t", created, last))
    files.close()
    lake.close()

    attach(reference, catalog)
    for start in range(0, last + 1):
        for end in range(max(start, created), last + 1):
            assert _duck_feed(reference, "table_changes", start, end) == _in_range(full, start, end), (start, end)
    assert insertions == _duck_feed(reference, "table_insertions", created, last)
    reference.execute("DETACH lake")

    # A plain delete file on a merged file: DuckDB 1.5.5's feed reports such deletes at the rows' insert snapshot
    # (on its own lakes too), ours at the deleting one, as time travel shows.
    lake = DuckLake.attach(catalog, spark=spark)
    lake.delete("t", "id BETWEEN 20 AND 31")
    last = lake.current_snapshot()
    feed = spark_rows(lake.table_changes("t", last, last))
    lake.close()
    attach(reference, catalog)
    assert feed == [r for r in _snapshot_diffs(reference, last - 1, last) if r[0] == last] and len(feed) == 12
