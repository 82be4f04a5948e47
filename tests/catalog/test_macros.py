"""Macros the reference creates (`ducklake_macro*`): listed with their parameters, kept intact by every operation
of ours, visible by snapshot, and scalar ones callable from lake.sql (their DuckDB body translated to Spark)."""

from __future__ import annotations

import pytest

from spark_ducklake import DuckLake
from spark_ducklake.errors import UnsupportedSqlError
from tests.support.compare import duckdb_rows, spark_rows
from tests.support.migration import describe_differences, dump_catalog
from tests.support.reference import attach, connect

MACROS = [
    "CREATE MACRO lake.add_values(a, b := 10) AS a + b",
    "CREATE MACRO lake.typed_mul(a INTEGER, b INTEGER) AS a * b",
    "CREATE MACRO lake.s.greet(name, greeting := 'hello') AS greeting || ', ' || name",
    "CREATE MACRO lake.plus_one_twice(x) AS lake.add_values(x, 1) + lake.add_values(x, 1)",
    "CREATE MACRO lake.big(threshold) AS TABLE SELECT * FROM lake.t WHERE a > threshold",
]


def _catalog(kind: str, tmp_path, request) -> str:
    if kind == "postgres":
        return request.getfixturevalue("pg_catalog")
    return f"sqlite:{tmp_path / 'meta.sqlite'}" if kind == "sqlite" else f"duckdb:{tmp_path / 'meta.ducklake'}"


def _reference(catalog: str, data_path: str | None = None):
    con = connect()
    attach(con, catalog[len("duckdb:"):] if catalog.startswith("duckdb:") else catalog, data_path)
    return con


def _reference_lake(catalog: str, data_path: str) -> None:
    con = _reference(catalog, data_path)
    con.execute("CREATE SCHEMA lake.s")
    con.execute("CREATE TABLE lake.t AS SELECT range::INTEGER AS a, 'n' || range AS name FROM range(25)")
    for statement in MACROS:
        con.execute(statement)
    con.close()


@pytest.mark.parametrize("kind", ["sqlite", "duckdb", "postgres"])
def test_macros_listed_and_kept_intact(kind, tmp_path, request):
    catalog = _catalog(kind, tmp_path, request)
    _reference_lake(catalog, str(tmp_path / "data"))
    lake = DuckLake.attach(catalog)
    rows = {(m.schema_name, m.macro_name): m for m in lake.macros()}
    assert sorted(rows) == [("main", "add_values"), ("main", "big"), ("main", "plus_one_twice"),
                            ("main", "typed_mul"), ("s", "greet")]
    add = rows[("main", "add_values")]
    assert (add.macro_type, add.dialect, add.sql) == ("scalar", "duckdb", "(a + b)")
    assert [(p.name, p.type, p.default) for p in add.parameters] == [("a", None, None), ("b", None, "10")]
    assert [(p.name, p.type) for p in rows[("main", "typed_mul")].parameters] == [("a", "int32"), ("b", "int32")]
    greeting = rows[("s", "greet")].parameters[1]
    assert (greeting.default, greeting.default_type) == ("hello", "varchar")
    assert rows[("main", "big")].macro_type == "table"
    assert [m.macro_name for m in lake.macros("S")] == ["greet"]
    macro_tables = {"ducklake_macro", "ducklake_macro_impl", "ducklake_macro_parameters"}
    before = {k: v for k, v in dump_catalog(catalog).items() if k in macro_tables}
    created_at = lake.current_snapshot()

    # Our operations around them: DDL, schema changes, options, tags, maintenance.
    lake.create_table("s.other", "x INT")
    lake.add_column("t", "extra", "BIGINT")
    lake.rename_table("s.other", "renamed")
    lake.set_option("parquet_compression", "zstd")
    lake.set_comment("t", "a table next to macros")
    lake.drop_table("s.renamed")
    lake.expire_snapshots(versions=[1])
    lake.cleanup_old_files(cleanup_all=True)
    lake.close()
    after = {k: v for k, v in dump_catalog(catalog).items() if k in macro_tables}
    assert describe_differences(before, after) == []

    con = _reference(catalog)
    assert con.execute("SELECT lake.add_values(1), lake.typed_mul(3, 4), lake.s.greet('x')").fetchone() == (
        11, 12, "hello, x")
    assert con.execute("SELECT count(*) FROM lake.big(20)").fetchone() == (4,)
    con.execute("DROP MACRO lake.add_values")
    con.close()
    lake = DuckLake.attach(catalog)
    assert "add_values" not in {m.macro_name for m in lake.macros()}
    assert "add_values" in {m.macro_name for m in lake.macros(version=created_at)}, "macros time-travel"
    lake.close()


@pytest.mark.parametrize("kind", ["sqlite", "duckdb", "postgres"])
def test_scalar_macros_in_lake_sql(kind, spark, tmp_path, request):
    catalog = _catalog(kind, tmp_path, request)
    _reference_lake(catalog, str(tmp_path / "data"))
    query = ("SELECT a, add_values(a) AS d, add_values(a, b := 2) AS n, lake.typed_mul(a, 3) AS m, "
             "s.greet(name) AS g, lake.s.greet(name, greeting := 'hi') AS h, plus_one_twice(a) AS p "
             "FROM lake.t WHERE add_values(a, 0) > 15")
    con = _reference(catalog)
    con.execute("USE lake")  # unqualified macro names resolve in the lake, as in lake.sql
    expected = duckdb_rows(con, query)
    con.close()
    assert len(expected) == 9
    lake = DuckLake.attach(catalog, spark=spark)
    assert spark_rows(lake.sql(query, dialect="duckdb")) == expected
    assert spark_rows(lake.sql("SELECT add_values(40, 2) AS x")) == [(42,)]
    with pytest.raises(UnsupportedSqlError, match=r"does not match add_values\(a, b\)"):
        lake.sql("SELECT add_values(1, 2, 3)")
    lake.close()
