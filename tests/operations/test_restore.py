"""restore(): one new snapshot in which DuckDB reads the table (row ids included) exactly as it was then."""

from __future__ import annotations

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.errors import NotFoundError, ReadOnlyError
from tests.support.compare import duckdb_rows, spark_rows
from tests.support.reference import attach


def _state(con, snapshot: int | None = None) -> list[tuple]:
    at = f" AT (VERSION => {snapshot})" if snapshot is not None else ""
    return duckdb_rows(con, f"SELECT rowid, * FROM lake.t{at}")


def test_restore_brings_back_rows_and_row_ids(lake, lake_catalog, spark, reference):
    catalog = lake_catalog
    lake.create_table("t", "id BIGINT, s STRING")
    first = lake.write(spark.range(0, 50, numPartitions=1).selectExpr("id", "concat('r', id) s"), "t")
    target = lake.write(pa.table({"id": pa.array([100, 101, 102], pa.int64()), "s": ["x", "y", "z"]}), "t")
    lake.delete("t", "id < 12")                                     # delete file
    lake.update("t", "id BETWEEN 20 AND 24", {"s": "'u'"})           # inlined new versions
    lake.delete("t", "id = 100")                                     # inlined row deleted
    lake.write(spark.range(200, 230, numPartitions=1).selectExpr("id", "'new' s"), "t")
    lake.update("t", "id >= 30 AND id < 45", {"s": "'big'"})         # a file of new versions
    before = lake.current_snapshot()
    restored = lake.restore("t", version=target, commit_message="undo")
    assert restored == before + 1 and lake.snapshots()[-1].commit_message == "undo"
    assert lake.restore("t", version=restored) == restored            # nothing differs: no snapshot
    ours = spark_rows(lake.plan_scan("t").to_dataframe(spark, row_ids=True).select("rowid", "id", "s"))
    feed = spark_rows(lake.table_changes("t", restored, restored))
    lake.close()

    attach(reference, catalog)
    assert _state(reference) == _state(reference, target) == ours
    assert len(_state(reference, before)) == 50 - 12 + 2 + 30           # history is kept
    assert feed == duckdb_rows(reference, f"FROM lake.table_changes('t', {restored}, {restored})")
    kinds = {}
    for _snap, rowid, kind, *_values in feed:
        kinds.setdefault(kind, set()).add(rowid)
    assert len(kinds["insert"]) == 13                                 # rows deleted since: their old row ids
    assert len(kinds["delete"]) == 30                                 # rows inserted since
    assert len(kinds["update_preimage"]) == len(kinds["update_postimage"]) == 20  # rows updated since
    reference.execute("DETACH lake")

    lake = DuckLake.attach(catalog, spark=spark)
    first_time = lake.snapshots()[first].snapshot_time
    again = lake.restore("t", timestamp=first_time)
    lake.close()
    attach(reference, catalog)
    assert _state(reference) == _state(reference, first)
    assert len(_state(reference, again)) == 50


def test_restore_keeps_the_current_schema_and_checks_its_input(lake, lake_catalog, spark, reference):
    catalog = lake_catalog
    lake.create_table("t", "a INT, b STRING")
    lake.write(spark.range(0, 20, numPartitions=1).selectExpr("cast(id AS INT) a", "concat('b', id) b"), "t")
    target = lake.write(pa.table({"a": pa.array([100], pa.int32()), "b": ["x"]}), "t")
    lake.add_column("t", "c", "INT", default=5)
    lake.rename_column("t", "b", "bb")
    lake.update("t", "a < 15", {"c": "a"})
    lake.delete("t", "a >= 15")
    with pytest.raises(NotFoundError, match="did not exist at snapshot 0"):
        lake.restore("t", version=0)
    with pytest.raises(NotFoundError, match="snapshot 99 does not exist"):
        lake.restore("t", version=99)
    with pytest.raises(ValueError, match="exactly one"):
        lake.restore("t")
    with pytest.raises(ReadOnlyError):
        DuckLake.attach(catalog, snapshot_version=target).restore("t", version=target)
    lake.restore("t", version=target)
    lake.close()

    attach(reference, catalog)
    then = duckdb_rows(reference, f"SELECT rowid, a, b FROM lake.t AT (VERSION => {target})")
    assert duckdb_rows(reference, "SELECT rowid, a, bb, c FROM lake.t") == [(*r, 5) for r in then]


def test_restore_a_lake_duckdb_compacted(tmp_path, spark, reference):
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    attach(reference, catalog, str(tmp_path / "data"))
    for sql in [
        "CREATE TABLE lake.t (id INTEGER, val VARCHAR)",
        "INSERT INTO lake.t SELECT i, 'a' || i FROM range(0, 40) r(i)",
        "INSERT INTO lake.t SELECT i, 'b' || i FROM range(100, 120) r(i)",
        "INSERT INTO lake.t VALUES (1000, 'x'), (1001, 'y')",
        "CALL lake.merge_adjacent_files()",
        "DELETE FROM lake.t WHERE id < 15",
        "DELETE FROM lake.t WHERE id BETWEEN 15 AND 30",       # partial delete file
        "UPDATE lake.t SET val = 'u' WHERE id >= 105",
        "CALL ducklake_flush_inlined_data('lake')",
        "DELETE FROM lake.t WHERE id BETWEEN 31 AND 33",
    ]:
        reference.execute(sql)
    target = 6  # after the first DELETE
    expected = _state(reference, target)
    reference.execute("DETACH lake")
    lake = DuckLake.attach(catalog, spark=spark)
    lake.restore("t", version=target)
    lake.close()
    attach(reference, catalog)
    assert _state(reference) == expected
