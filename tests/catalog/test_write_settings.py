"""The reference's write settings, per handle: `SET ducklake_target_file_size` (above every target_file_size
option, for writes and compaction), `SET ducklake_default_data_inlining_row_limit` (below every inlining option) and
`SET ducklake_write_deletion_vectors`, with RESET and `current_setting`; small data, so no Spark starts."""

from __future__ import annotations

import pyarrow as pa
import pytest

from spark_ducklake.errors import InvalidArgumentError, UnsupportedSqlError


def rows(start: int, count: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + count), pa.int32()),
                     "s": [f"thisisalongstring{i}" for i in range(count)]})


def live_files(lake, table: str) -> int:
    return len(lake.list_files(table))


@pytest.mark.lake(data_inlining_row_limit=0)
def test_target_file_size_setting_overrides_every_scope_for_writes(lake):
    lake.sql("CREATE TABLE t (id INTEGER, s VARCHAR)", dialect="duckdb")
    for scope in ({}, {"schema": "main"}, {"table_name": "t"}):
        lake.set_option("target_file_size", "512MB", **scope)
    with pytest.raises(InvalidArgumentError, match="ducklake_target_file_size must be a size"):
        lake.sql("SET ducklake_target_file_size = 'not-a-size'", dialect="duckdb")
    with pytest.raises(InvalidArgumentError, match="above 0"):
        lake.sql("SET ducklake_target_file_size = '0'", dialect="duckdb")

    lake.sql("SET ducklake_target_file_size = '10KB'", dialect="duckdb")
    assert lake.current_setting("ducklake_target_file_size") == 10_000
    lake.write(rows(0, 5000), "t")
    assert live_files(lake, "t") > 1  # the session's 10KB, not the table's 512MB

    lake.sql("RESET ducklake_target_file_size", dialect="duckdb")
    assert lake.current_setting("ducklake_target_file_size") is None
    lake.sql("CREATE TABLE t2 (id INTEGER, s VARCHAR)", dialect="duckdb")
    lake.write(rows(0, 5000), "t2")
    assert live_files(lake, "t2") == 1
    assert lake.read_arrow("t").num_rows == lake.read_arrow("t2").num_rows == 5000


@pytest.mark.lake(data_inlining_row_limit=0)
def test_target_file_size_setting_governs_compaction(lake):
    lake.sql("CREATE TABLE t (id INTEGER, s VARCHAR)", dialect="duckdb")
    for i in range(4):
        lake.write(rows(i * 500, 500), "t")
    lake.set_option("target_file_size", "1B", table_name="t")
    assert lake.merge_adjacent_files("t") == []  # every file is above the table's 1B target

    lake.set_setting("ducklake_target_file_size", "512MB")
    [row] = lake.merge_adjacent_files("t")
    assert (row.files_processed, row.files_created) == (4, 1)
    assert live_files(lake, "t") == 1
    assert sorted(lake.read_arrow("t")["id"].to_pylist()) == list(range(2000))


def test_default_inlining_limit_setting_applies_below_options(lake):
    lake.sql("CREATE TABLE t (pk INTEGER, val VARCHAR)", dialect="duckdb")
    lake.sql("SET ducklake_default_data_inlining_row_limit = 0", dialect="duckdb")
    lake.write(pa.table({"pk": pa.array([1, 2, 3], pa.int32()), "val": ["a", "b", "c"]}), "t")
    assert live_files(lake, "t") == 1  # written to Parquet: the setting's 0 disables inlining

    lake.set_option("data_inlining_row_limit", 10, table_name="t")  # an option wins over the setting
    lake.write(pa.table({"pk": pa.array([4], pa.int32()), "val": ["d"]}), "t")
    assert live_files(lake, "t") == 1
    assert lake.read_arrow("t").num_rows == 4

    lake.sql("RESET ducklake_default_data_inlining_row_limit", dialect="duckdb")
    assert lake.current_setting("ducklake_default_data_inlining_row_limit") == 10


def test_settings_are_checked_and_named(lake):
    assert lake.current_setting("ducklake_write_deletion_vectors") is False
    lake.sql("SET ducklake_write_deletion_vectors = true", dialect="duckdb")
    assert lake.current_setting("ducklake_write_deletion_vectors") is True
    with pytest.raises(InvalidArgumentError, match="ducklake_write_deletion_vectors takes true or false: Could not "
                                                   "convert string 'maybe' to BOOL"):
        lake.set_setting("ducklake_write_deletion_vectors", "maybe")
    lake.set_setting("ducklake_write_deletion_vectors", "yes")  # DuckDB's BOOL cast, as the options take it
    assert lake.current_setting("ducklake_write_deletion_vectors") is True
    lake.set_setting("ducklake_write_deletion_vectors", "F")
    assert lake.current_setting("ducklake_write_deletion_vectors") is False
    with pytest.raises(InvalidArgumentError, match="whole number"):
        lake.set_setting("ducklake_default_data_inlining_row_limit", "-1")
    with pytest.raises(UnsupportedSqlError, match="ducklake_target_file_size"):
        lake.sql("SET ducklake_no_such_setting = 1", dialect="duckdb")  # the message lists the known ones
