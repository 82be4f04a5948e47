"""Lake options: the most specific scope wins for every option a writer honours, values are checked as the
reference checks them, options DuckDB sets are honoured, and require_commit_message refuses anonymous commits."""

from __future__ import annotations

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.errors import DuckLakeError
from spark_ducklake.operations.write import _write_options
from tests.support.reference import attach, connect

WRITER_OPTIONS = {  # option: (global, schema, table) values and the WriteOptions field they set
    "target_file_size": (("1GB", "10MB", "1MB"), "target_file_size", (10**9, 10**7, 10**6)),
    "parquet_compression": (("snappy", "zstd", "gzip"), "compression", ("snappy", "zstd", "gzip")),
    "parquet_compression_level": ((1, 5, 9), "compression_level", (1, 5, 9)),
    "parquet_row_group_size": ((1000, 2000, 3000), "row_group_size", (1000, 2000, 3000)),
    "parquet_row_group_size_bytes": (("1MB", "2MB", "3MB"), "row_group_size_bytes", (10**6, 2 * 10**6, 3 * 10**6)),
    "parquet_version": ((1, 2, 1), "parquet_version", (1, 2, 1)),
    "hive_file_pattern": ((True, False, True), "hive_file_pattern", (True, False, True)),
    "sort_on_insert": ((False, True, False), "sort_on_insert", (False, True, False)),
}


def test_the_most_specific_scope_wins_for_every_writer_option(lake):
    lake.create_schema("s")
    for name in ("s.t", "s.other", "main.plain"):
        lake.create_table(name, "a INT")
    for option, (values, _field, _expected) in WRITER_OPTIONS.items():
        lake.set_option(option, values[0])
        lake.set_option(option, values[1], schema="s")
        lake.set_option(option, values[2], table_name="t", schema="s")
    lake.set_option("data_inlining_row_limit", 3)
    lake.set_option("data_inlining_row_limit", 4, schema="s")
    lake.set_option("data_inlining_row_limit", 5, table_name="t", schema="s")
    for table, scope in (("main.plain", 0), ("s.other", 1), ("s.t", 2)):
        info = lake.table_info(table)
        resolved = _write_options(lake.context, info)
        for option, (_values, field, expected) in WRITER_OPTIONS.items():
            assert getattr(resolved, field) == expected[scope], (table, option)
        assert lake.inlining_limit(info) == 3 + scope
    assert lake.snapshots()[-1].snapshot_id == 4  # options are not snapshots


def test_values_are_checked_like_the_reference(lake):
    lake.create_table("t", "a INT")
    bad = [("auto_compact", "maybe", "takes true or false: Could not convert string 'maybe' to BOOL"),
           ("parquet_version", 3, "must be 1 or 2"),
           ("parquet_compression", "foo", "unsupported parquet_compression"),
           ("rewrite_delete_threshold", 2, "between 0 and 1"), ("delete_older_than", "P1D", "not an interval"),
           ("expire_older_than", "soon", "not an interval"), ("target_file_size", "big", "not a size"),
           ("version", "2.0", "fixed when the lake is created")]
    for option, value, message in bad:
        with pytest.raises(DuckLakeError, match=message):
            lake.set_option(option, value)
    for option in ("require_commit_message", "delete_older_than", "expire_older_than", "per_thread_output"):
        with pytest.raises(DuckLakeError, match="only be set globally"):
            lake.set_option(option, "1 day" if option.endswith("than") else True, table_name="t")
    lake.set_option("auto_compact", "f", table_name="t")
    lake.set_option("delete_older_than", "1h30m")
    assert {(r.option_name, r.value, r.scope) for r in lake.options()} >= {
        ("auto_compact", "false", "TABLE"), ("delete_older_than", "1h30m", "GLOBAL")}


def test_require_commit_message(catalog, lake):
    lake.create_table("t", "a BIGINT")
    lake.set_option("require_commit_message", True)
    before = lake.snapshots()
    with pytest.raises(DuckLakeError, match="requires a commit message"):
        lake.create_table("u", "a BIGINT")
    with pytest.raises(DuckLakeError, match="requires a commit message"):
        lake.write(pa.table({"a": [1]}), "t")
    assert lake.snapshots() == before
    lake.write(pa.table({"a": [1]}), "t", commit_message="loaded one row")
    assert lake.snapshots()[-1].commit_message == "loaded one row"
    assert lake.expire_snapshots(versions=[1]) != []  # maintenance outside snapshots needs no message
    lake.set_option("require_commit_message", False)
    lake.create_table("u", "a BIGINT")


@pytest.mark.not_on_mysql("the reference fails writes into a MySQL catalog (UPDATE with a join)")
def test_options_duckdb_sets_are_honoured(catalog, tmp_path):
    con = connect()
    attach(con, catalog, str(tmp_path / "data"))
    con.execute("CREATE SCHEMA lake.s")
    con.execute("CREATE TABLE lake.s.t (a INT)")
    con.execute("CALL lake.set_option('data_inlining_row_limit', 2, schema => 's')")
    con.execute("CALL lake.set_option('parquet_compression', 'zstd', schema => 's', table_name => 't')")
    con.execute("CALL lake.set_option('hive_file_pattern', false)")
    con.execute("CALL lake.set_option('require_commit_message', true)")
    con.close()
    lake = DuckLake.attach(catalog)
    info = lake.table_info("s.t")
    assert lake.inlining_limit(info) == 2
    resolved = _write_options(lake.context, info)
    assert (resolved.compression, resolved.hive_file_pattern) == ("zstd", False)
    with pytest.raises(DuckLakeError, match="requires a commit message"):
        lake.write(pa.table({"a": pa.array([1], pa.int32())}), "s.t")
