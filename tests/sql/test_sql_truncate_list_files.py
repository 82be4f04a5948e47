"""TRUNCATE [TABLE] t in `lake.sql` (DuckDB's DELETE of every row, committed or staged in BEGIN ... COMMIT), and
list_files refusing both a version and a time, in the reference's words."""

from __future__ import annotations

import pyarrow as pa


def test_truncate_deletes_every_row(lake):
    lake.create_table("t", "i BIGINT")
    lake.write(pa.table({"i": list(range(5))}), "t")
    (result,) = lake.sql("TRUNCATE lake.t", dialect="duckdb")
    assert result.rows == 5
    assert lake.read_arrow("t").num_rows == 0
    lake.write(pa.table({"i": [1, 2]}), "t")
    lake.sql("BEGIN", dialect="duckdb")
    lake.sql("TRUNCATE TABLE t", dialect="duckdb")
    lake.sql("ROLLBACK", dialect="duckdb")
    assert lake.read_arrow("t").num_rows == 2
    lake.sql("BEGIN; TRUNCATE t; COMMIT", dialect="duckdb")
    assert lake.read_arrow("t").num_rows == 0


def test_list_files_takes_a_version_or_a_time_not_both(lake):
    import datetime as dt

    import pytest

    from spark_ducklake.errors import InvalidArgumentError

    lake.create_table("t", "i BIGINT")
    with pytest.raises(InvalidArgumentError, match="not both"):
        lake.list_files("t", snapshot_version=1, snapshot_time=dt.datetime.now(dt.timezone.utc))
