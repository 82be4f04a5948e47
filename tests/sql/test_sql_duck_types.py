"""DuckDB column types Spark lacks (sql/duck_types.py), DuckDB's refusals of columns DuckLake cannot have, and
VALUES for VARIANT columns (sql/literals.py). No Spark."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from spark_ducklake.errors import UnsupportedSqlError
from spark_ducklake.sql.duck_types import cast_default, check_column, ducklake_type, with_stand_ins
from spark_ducklake.sql.literals import as_variant


def _kind(type_sql: str) -> exp.DataType:
    return sqlglot.parse_one(f"CREATE TABLE t (c {type_sql})", read="duckdb").this.expressions[0].args["kind"]


@pytest.mark.parametrize(("duckdb", "ducklake", "stand_in"), [
    ("UTINYINT", "uint8", "SMALLINT"), ("USMALLINT", "uint16", "INT"), ("UINTEGER", "uint32", "BIGINT"),
    ("UBIGINT", "uint64", "DECIMAL(20, 0)"), ("HUGEINT", "int128", "DECIMAL(38, 0)"),
    ("UHUGEINT", "uint128", "DECIMAL(38, 0)"), ("TIME", "time", "STRING"), ("TIMETZ", "timetz", "STRING"),
    ("TIMESTAMP_S", "timestamp_s", "TIMESTAMP_NTZ"), ("TIMESTAMP_NS", "timestamp_ns", "TIMESTAMP_NTZ"),
    ("INTERVAL", "interval", "STRING"), ("UUID", "uuid", "STRING"),
])
def test_duckdb_only_types_map_to_ducklake_types_and_spark_stand_ins(duckdb, ducklake, stand_in):
    assert ducklake_type(_kind(duckdb)) == ducklake
    assert with_stand_ins(_kind(duckdb)).sql(dialect="spark") == stand_in


def test_spark_types_and_nested_stand_ins():
    assert ducklake_type(_kind("INTEGER")) is None
    assert with_stand_ins(_kind("UUID[]")).sql(dialect="spark") == "ARRAY<STRING>"
    assert with_stand_ins(_kind("STRUCT(t TIME, i INTEGER)")).sql(dialect="spark") == "STRUCT<t: STRING, i: INT>"


def test_defaults_cast_as_duckdb_casts_them():
    assert cast_default(1, _kind("BOOLEAN")) is True
    assert cast_default(0, _kind("BOOLEAN")) is False
    assert cast_default("abc", _kind("BLOB")) == b"abc"
    assert cast_default(7, _kind("INTEGER")) == 7
    assert cast_default(None, _kind("BOOLEAN")) is None


@pytest.mark.parametrize(("column", "message"), [
    ("ts INT[3]", "unsupported type INT\\[3\\]"),
    ("ts STRUCT(x INT[3])", "unsupported type INT\\[3\\]"),
    ("s VARCHAR COLLATE NOACCENT", "Collations are not supported"),
])
def test_columns_duckdb_refuses_are_refused_with_its_words(column, message):
    col = sqlglot.parse_one(f"CREATE TABLE t ({column})", read="duckdb").this.expressions[0]
    with pytest.raises(UnsupportedSqlError, match=message):
        check_column(col)


def test_lists_and_plain_columns_pass_the_check():
    for column in ("l INT[]", "s VARCHAR NOT NULL", "m MAP(VARCHAR, INT)"):
        check_column(sqlglot.parse_one(f"CREATE TABLE t ({column})", read="duckdb").this.expressions[0])


@pytest.mark.parametrize(("value", "spark"), [
    ("42", "CAST(42 AS VARIANT)"),
    ("'hello'", "CAST('hello' AS VARIANT)"),
    ("[1, 2, NULL]", "CAST(ARRAY(1, 2, NULL) AS VARIANT)"),
    ("NULL", "PARSE_JSON('null')"),
    ("{'a': 42, 'b': NULL}", "TO_VARIANT_OBJECT(STRUCT(42 AS a, CAST(NULL AS VARIANT) AS b))"),
])
def test_values_for_a_variant_column_become_variants(value, spark):
    node = sqlglot.parse_one(f"SELECT {value}", read="duckdb").expressions[0]
    assert as_variant(node.copy()).sql(dialect="spark") == spark
