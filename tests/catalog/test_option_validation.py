"""Option values are checked as the reference checks them (types, UINT64 ranges, enums), so no stored option can
break a DuckDB writer; a refused set leaves the catalog unchanged. No Spark needed."""

from __future__ import annotations

import math

import pytest

from spark_ducklake import DuckLake
from spark_ducklake.errors import InvalidArgumentError
from tests.support.reference import attach

UINT64_MAX = 2**64 - 1

BAD = [  # (option, value, what the message says)
    ("data_inlining_row_limit", 2**70, r"0 to 18446744073709551615"),
    ("data_inlining_row_limit", str(2**70), r"0 to 18446744073709551615"),
    ("data_inlining_row_limit", UINT64_MAX + 1, r"0 to 18446744073709551615"),
    ("data_inlining_row_limit", -1, r"0 to 18446744073709551615"),
    ("data_inlining_row_limit", "-1", r"0 to 18446744073709551615"),
    ("data_inlining_row_limit", "abc", r"whole number"),
    ("data_inlining_row_limit", 1.5, r"whole number"),
    ("data_inlining_row_limit", math.inf, r"whole number"),
    ("data_inlining_row_limit", True, r"whole number"),
    ("data_inlining_row_limit", None, r"whole number"),
    ("data_inlining_row_limit", [5], r"whole number"),
    ("parquet_row_group_size", 0, r"1 to 18446744073709551615"),
    ("parquet_row_group_size", 2**64, r"1 to 18446744073709551615"),
    ("parquet_compression_level", -1, r"0 to 22"),
    ("parquet_compression_level", 23, r"0 to 22"),
    ("parquet_compression_level", "x", r"whole number"),
    ("target_file_size", "-1", r"size"),
    ("target_file_size", "abc", r"size"),
    ("target_file_size", str(2**70), r"18446744073709551615"),
    ("target_file_size", "100000000TB", r"18446744073709551615"),
    ("target_file_size", True, r"size"),
    ("target_file_size", None, r"size"),
    ("parquet_row_group_size_bytes", -5, r"size"),
    ("parquet_compression", "lzo", r"uncompressed, snappy, gzip, zstd, brotli, lz4, lz4_raw"),
    ("parquet_compression", 5, r"uncompressed, snappy"),
    ("parquet_compression", None, r"uncompressed, snappy"),
    ("parquet_version", 3, r"1 or 2"),
    ("parquet_version", "v2", r"1 or 2"),
    ("parquet_version", True, r"1 or 2"),
    ("auto_compact", "maybe", r"true or false"),
    ("auto_compact", "on", r"true or false"),
    ("auto_compact", None, r"true or false"),
    ("sort_on_insert", 2.5, r"true or false"),
    ("rewrite_delete_threshold", -0.1, r"between 0 and 1"),
    ("rewrite_delete_threshold", 1.5, r"between 0 and 1"),
    ("rewrite_delete_threshold", "abc", r"between 0 and 1"),
    ("rewrite_delete_threshold", math.nan, r"between 0 and 1"),
    ("rewrite_delete_threshold", True, r"between 0 and 1"),
    ("rewrite_delete_threshold", None, r"between 0 and 1"),
    ("expire_older_than", "soon", r"interval"),
    ("expire_older_than", None, r"interval"),
    ("delete_older_than", 3.5, r"interval"),
    ("no_such_option", 1, r"unknown DuckLake option"),
    ("version", "0.3", r"fixed when the lake is created"),
    ("data_path", "/elsewhere", r"fixed when the lake is created"),
]

GOOD = [  # (option, value, stored text)
    ("data_inlining_row_limit", UINT64_MAX, str(UINT64_MAX)),
    ("data_inlining_row_limit", " 5 ", "5"),
    ("data_inlining_row_limit", 0, "0"),
    ("data_inlining_row_limit", 3.0, "3"),
    ("parquet_row_group_size", "122880", "122880"),
    ("parquet_compression_level", 22, "22"),
    ("target_file_size", "1KB", "1000"),
    ("target_file_size", 2048, "2048"),
    ("parquet_compression", "ZSTD", "zstd"),
    ("parquet_version", 2, "2"),
    ("auto_compact", "yes", "true"),
    ("auto_compact", 0, "false"),
    ("rewrite_delete_threshold", "0.5", "0.5"),
    ("expire_older_than", "1 day", "1 day"),
]


def _metadata(lake: DuckLake) -> list[tuple]:
    return sorted((o.option_name, o.value, o.scope, o.scope_entry) for o in lake.options())


@pytest.fixture
def optioned(lake):
    """A lake with a table and one option set in each scope, so a refused set has rows it could disturb."""
    import pyarrow as pa

    lake.write(pa.table({"i": [1]}), "t", mode="error")
    lake.set_option("data_inlining_row_limit", 20)
    lake.set_option("data_inlining_row_limit", 30, schema="main")
    lake.set_option("data_inlining_row_limit", 40, table_name="t")
    return lake


@pytest.mark.parametrize(("name", "value", "message"), BAD, ids=[f"{n}={v!r}" for n, v, _ in BAD])
def test_bad_values_are_refused_in_every_scope_and_change_nothing(optioned, name, value, message):
    before = _metadata(optioned)
    scopes = ({},) if name.endswith("_older_than") else ({}, {"schema": "main"}, {"table_name": "t"})  # global only
    for scope in scopes:
        with pytest.raises(InvalidArgumentError, match=message) as caught:
            optioned.set_option(name, value, **scope)
        assert name in str(caught.value)
    assert _metadata(optioned) == before


@pytest.mark.parametrize(("name", "value", "stored"), GOOD, ids=[f"{n}={v!r}" for n, v, _ in GOOD])
def test_good_values_are_stored_as_the_reference_reads_them(lake, name, value, stored):
    lake.set_option(name, value)
    assert [o.value for o in lake.options() if o.option_name == name] == [stored]


@pytest.mark.parametrize("dialect", ["spark", "duckdb"])
def test_call_set_option_in_sql_is_checked_alike(optioned, dialect):
    before = _metadata(optioned)
    for call in (f"CALL lake.set_option('data_inlining_row_limit', {2**70})",
                 "CALL lake.set_option('data_inlining_row_limit', -1)",
                 "CALL lake.set_option('parquet_compression', 'lzo')",
                 "CALL lake.set_option('parquet_compression_level', 99, table_name => 't')"):
        with pytest.raises(InvalidArgumentError):
            optioned.sql(call, dialect=dialect)
    assert _metadata(optioned) == before


@pytest.mark.parametrize(("keyword", "value"), [
    ("data_inlining_row_limit", 2**70), ("data_inlining_row_limit", -1), ("data_inlining_row_limit", "many"),
    ("data_inlining_row_limit", True), ("encrypted", "maybe"), ("encrypted", 2)])
def test_attach_options_are_checked_before_the_catalog_is_opened(tmp_path, keyword, value):
    catalog = tmp_path / "meta.sqlite"
    with pytest.raises(InvalidArgumentError, match=keyword):
        DuckLake.attach(f"sqlite:{catalog}", str(tmp_path / "data"), **{keyword: value})
    assert not catalog.exists()


def test_attach_encrypted_takes_the_options_boolean_spellings(tmp_path):
    """encrypted="false" made an encrypted lake (any non-empty string is truthy)."""
    with DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"), encrypted="false") as lake:
        assert [o.value for o in lake.options() if o.option_name == "encrypted"] == ["false"]


def test_duckdb_writes_after_the_largest_accepted_values(lake, lake_catalog, reference):
    """The extreme values we accept are ones DuckDB's writers read: an INSERT after them works."""
    import pyarrow as pa

    lake.write(pa.table({"i": pa.array([0], pa.int64())}), "t", mode="error")
    lake.set_option("data_inlining_row_limit", UINT64_MAX)
    lake.set_option("parquet_compression", "zstd")
    lake.set_option("parquet_compression_level", 22)
    lake.set_option("rewrite_delete_threshold", 1)
    data_path = lake.data_path
    lake.close()
    attach(reference, lake_catalog, data_path)
    reference.execute("INSERT INTO lake.t SELECT range FROM range(100)")
    assert reference.execute("SELECT count(*) FROM lake.t").fetchone() == (101,)
