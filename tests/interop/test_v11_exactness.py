"""DuckLake 1.1's `min_is_exact` / `max_is_exact` on file and table column stats: written on every path that writes
stats (in-process and Spark writes, inlined inserts and their flush, add_data_files, compaction), as the reference
writes them: NULL beside a NULL bound, true for numbers, times and booleans, and for strings only when the writer
keeps them whole; table-level flags follow the bound that wins the merge (equal bounds: both exact). '1.1-dev1'
and 1.0 catalogs have no such columns and get none."""

from __future__ import annotations

import sqlite3

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.catalog.stats import TableColumnStats, merge_table_column_stats
from spark_ducklake.spec.model import ColumnStats

LONG = "z" * 300  # longer than any default truncation (parquet-mr's column index keeps 64 bytes)


def _attach(tmp_path, version="1.1", **options) -> DuckLake:
    return DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"),
                           ducklake_version=version, **options)


def _file_flags(tmp_path, column: str) -> list[tuple]:
    """(min_value, max_value, min_is_exact, max_is_exact) of the live files' stats of `column`, by file id."""
    with sqlite3.connect(tmp_path / "meta.sqlite") as conn:
        return [tuple(r) for r in conn.execute(
            "SELECT s.min_value, s.max_value, s.min_is_exact, s.max_is_exact FROM ducklake_file_column_stats s "
            "JOIN ducklake_data_file f USING (data_file_id) JOIN ducklake_column c "
            "ON c.table_id = s.table_id AND c.column_id = s.column_id AND c.end_snapshot IS NULL "
            "WHERE f.end_snapshot IS NULL AND c.column_name = ? ORDER BY s.data_file_id", (column,))]


def _table_flags(tmp_path, column: str) -> tuple:
    with sqlite3.connect(tmp_path / "meta.sqlite") as conn:
        return tuple(conn.execute(
            "SELECT s.min_value, s.max_value, s.min_is_exact, s.max_is_exact FROM ducklake_table_column_stats s "
            "JOIN ducklake_column c ON c.table_id = s.table_id AND c.column_id = s.column_id "
            "AND c.end_snapshot IS NULL WHERE c.column_name = ?", (column,)).fetchone())


def _rows(ids, names) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "s": pa.array(names, pa.string())})


def test_in_process_write_marks_every_bound_exact(tmp_path):
    lake = _attach(tmp_path, data_inlining_row_limit=0)
    lake.create_table("t", "id BIGINT, s VARCHAR, f DOUBLE")
    lake.write(pa.table({"id": pa.array([1, 2], pa.int64()), "s": ["a", LONG],
                         "f": pa.array([None, None], pa.float64())}), "t")
    assert _file_flags(tmp_path, "id") == [("1", "2", 1, 1)]
    assert _file_flags(tmp_path, "s") == [("a", LONG, 1, 1)]  # pyarrow keeps the 300 characters whole
    assert _file_flags(tmp_path, "f") == [(None, None, None, None)]  # no bound: no flag, as the reference
    assert _table_flags(tmp_path, "s") == ("a", LONG, 1, 1)
    lake.close()


@pytest.mark.spark  # flush_inlined_data writes its files on Spark
def test_inlined_rows_and_their_flush(tmp_path, spark):
    lake = _attach(tmp_path, spark=spark)
    lake.create_table("t", "id BIGINT, s VARCHAR")
    lake.write(_rows([5, 6], ["m", "n"]), "t")  # inlined: only table-level stats
    assert _file_flags(tmp_path, "s") == []
    assert _table_flags(tmp_path, "s") == ("m", "n", 1, 1)
    lake.flush_inlined_data()
    assert _file_flags(tmp_path, "s") == [("m", "n", 1, 1)]
    assert _file_flags(tmp_path, "id") == [("5", "6", 1, 1)]
    lake.close()


def test_added_files_trust_only_writers_that_keep_strings_whole(tmp_path):
    """A file pyarrow wrote has whole strings; a DuckDB-written file's footer flags are not readable here, so its
    string bounds count as truncated (as the reference counts files without the flags), numbers stay exact."""
    lake = _attach(tmp_path)
    lake.create_table("t", "id BIGINT, s VARCHAR")
    arrow_file, duck_file = tmp_path / "arrow.parquet", tmp_path / "duck.parquet"
    pq.write_table(_rows([1, 2], ["b", "c"]), arrow_file)
    duckdb.sql(f"COPY (SELECT 3::BIGINT AS id, 'a' AS s UNION ALL SELECT 4, 'c') TO '{duck_file}' (FORMAT parquet)")
    lake.add_data_files("t", [str(arrow_file)])
    assert _table_flags(tmp_path, "s") == ("b", "c", 1, 1)
    lake.add_data_files("t", [str(duck_file)])
    assert _file_flags(tmp_path, "s") == [("b", "c", 1, 1), ("a", "c", 0, 0)]
    assert _file_flags(tmp_path, "id") == [("1", "2", 1, 1), ("3", "4", 1, 1)]
    # The table's min is now the DuckDB file's (inexact); its max is equal in both files: exact only if both are.
    assert _table_flags(tmp_path, "s") == ("a", "c", 0, 0)
    assert _table_flags(tmp_path, "id") == ("1", "4", 1, 1)
    lake.close()


def test_delete_keeps_and_compaction_rewrites_the_flags(tmp_path):
    """A delete leaves table stats as they are (the reference's too: the flag says the bound is a whole value, not
    that a live row still holds it); merged files get flags of their own."""
    lake = _attach(tmp_path, data_inlining_row_limit=0)
    lake.create_table("t", "id BIGINT, s VARCHAR")
    lake.write(_rows([1, 2], ["a", "b"]), "t")
    lake.write(_rows([3, 4], ["c", LONG]), "t")
    before = _table_flags(tmp_path, "s")
    assert lake.merge_adjacent_files("t")
    assert _file_flags(tmp_path, "s") == [("a", LONG, 1, 1)]
    assert _table_flags(tmp_path, "s") == before == ("a", LONG, 1, 1)
    lake.delete("t", "id = 4")
    assert _table_flags(tmp_path, "s") == before
    lake.close()


@pytest.mark.parametrize("version", ["1.0", "1.1-dev1"])
def test_layouts_without_the_flags_get_none(tmp_path, version):
    lake = _attach(tmp_path, version, data_inlining_row_limit=0)
    lake.create_table("t", "id BIGINT, s VARCHAR")
    lake.write(_rows([1], ["a"]), "t")
    with sqlite3.connect(tmp_path / "meta.sqlite") as conn:
        for table in ("ducklake_file_column_stats", "ducklake_table_column_stats"):
            names = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            assert "min_is_exact" not in names and "max_is_exact" not in names
    assert lake.read_arrow("t").num_rows == 1
    lake.close()


def test_migrated_rows_stay_unknown_until_a_bound_moves(tmp_path):
    lake = _attach(tmp_path, "1.0", data_inlining_row_limit=0)
    lake.create_table("t", "id BIGINT, s VARCHAR")
    lake.write(_rows([1, 5], ["b", "d"]), "t")
    lake.close()
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"), ducklake_version="1.1",
                           automatic_migration=True, data_inlining_row_limit=0)
    assert _table_flags(tmp_path, "s") == ("b", "d", None, None)
    lake.write(_rows([0, 5], ["a", "d"]), "t")  # a new min; the max is equal to the unknown one
    assert _table_flags(tmp_path, "s") == ("a", "d", 1, None)
    assert _table_flags(tmp_path, "id") == ("0", "5", 1, None)
    assert _file_flags(tmp_path, "s") == [("b", "d", None, None), ("a", "d", 1, 1)]
    lake.close()


def test_merge_rules():
    types = {1: "varchar"}
    current = {1: TableColumnStats(contains_null=False, min_value="b", max_value="x", min_is_exact=True,
                                   max_is_exact=True)}
    inexact = ColumnStats(1, 2, 0, "a", "x", min_is_exact=False, max_is_exact=False)
    merged = merge_table_column_stats(current, [{1: inexact}], types)[1]
    assert (merged.min_value, merged.min_is_exact, merged.max_value, merged.max_is_exact) == ("a", False, "x", False)
    inside = ColumnStats(1, 2, 0, "c", "d", min_is_exact=False, max_is_exact=False)
    merged = merge_table_column_stats(current, [{1: inside}], types)[1]
    assert (merged.min_is_exact, merged.max_is_exact) == (True, True)  # the table's bounds did not move


@pytest.mark.spark
def test_spark_write_keeps_strings_whole(tmp_path, spark):
    lake = _attach(tmp_path, spark=spark, data_inlining_row_limit=0, small_data_threshold=0)
    lake.create_table("t", "id BIGINT, s VARCHAR")
    lake.write(spark.createDataFrame([(1, "a"), (2, LONG)], "id long, s string").coalesce(1), "t")
    assert _file_flags(tmp_path, "s") == [("a", LONG, 1, 1)]
    assert _file_flags(tmp_path, "id") == [("1", "2", 1, 1)]
    assert _table_flags(tmp_path, "s") == ("a", LONG, 1, 1)
    lake.close()
