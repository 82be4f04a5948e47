"""`lake.sql` reads lake tables and nothing else (issue 26, item 1): file-reading table functions, path-addressed
relations and DuckDB's replacement scans are refused in both dialects, wherever they sit in a statement, when a
view is created and when a stored view (written by anyone) is read; the lake's own functions keep working."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spark_ducklake.catalog.changes.macros import CreateMacro, MacroImpl
from spark_ducklake.catalog.changes.views import CreateView
from spark_ducklake.errors import ExternalReadError, UnsupportedSqlError

SECRET = "s3cr3t-file-content"


@pytest.fixture
def secret_file(tmp_path):
    """A Parquet file outside the lake, holding a value no lake.sql query may return."""
    path = tmp_path / "outside" / "secret.parquet"
    path.parent.mkdir()
    pq.write_table(pa.table({"secret": [SECRET]}), path)
    return str(path)


def _refused(lake, sql, dialect, *named):
    """lake.sql(sql) raises ExternalReadError naming each of `named` and saying lake.sql reads lake tables only;
    nothing committed."""
    before = lake.current_snapshot()
    with pytest.raises(ExternalReadError) as info:
        lake.sql(sql, dialect=dialect)
    message = str(info.value)
    for name in named:
        assert name in message
    assert "reads only lake tables" in message
    assert isinstance(info.value, UnsupportedSqlError)
    assert lake.current_snapshot() == before
    return message


FILE_FUNCTIONS = ["read_parquet", "parquet_scan", "read_csv", "read_csv_auto", "read_json", "read_json_auto",
                  "read_ndjson", "read_files", "read_text", "read_blob", "glob", "iceberg_scan", "delta_scan",
                  "read_xlsx", "sniff_csv", "parquet_metadata"]


@pytest.mark.parametrize("dialect", ["duckdb", "spark"])
@pytest.mark.parametrize("function", FILE_FUNCTIONS)
def test_file_table_functions_are_refused(lake, secret_file, function, dialect):
    if (function, dialect) == ("glob", "spark"):  # GLOB is an operator to Spark's parser: no such table function
        with pytest.raises(UnsupportedSqlError, match="cannot parse"):
            lake.sql(f"SELECT * FROM glob('{secret_file}')")
        return
    _refused(lake, f"SELECT * FROM {function}('{secret_file}')", dialect, function)


@pytest.mark.parametrize("relation", ["parquet", "csv", "json", "text", "delta", "binaryFile", "orc", "avro"])
def test_spark_path_addressed_relations_are_refused(lake, secret_file, relation):
    message = _refused(lake, f"SELECT * FROM {relation}.`{secret_file}`", "spark", secret_file)
    assert relation in message


@pytest.mark.parametrize("path", ["{file}", "{dir}/*.parquet", "s3://bucket/x.parquet", "data.csv"])
def test_duckdb_replacement_scans_are_refused(lake, secret_file, path):
    path = path.format(file=secret_file, dir=secret_file.rsplit("/", 1)[0])
    _refused(lake, f"SELECT * FROM '{path}'", "duckdb", path)
    _refused(lake, f'SELECT * FROM "{path}" AS f', "duckdb", path)


@pytest.mark.parametrize("dialect", ["duckdb", "spark"])
def test_file_reads_inside_subqueries_ctes_joins_and_commands(lake, secret_file, dialect):
    lake.sql("CREATE TABLE t (id BIGINT, v STRING)")
    reads = f"read_parquet('{secret_file}')"
    for sql in [f"SELECT * FROM (SELECT * FROM {reads}) s",
                f"WITH f AS (SELECT * FROM {reads}) SELECT * FROM f",
                f"SELECT * FROM t JOIN {reads} f ON t.v = f.secret",
                f"SELECT id FROM t UNION ALL SELECT 1 FROM {reads}",
                f"SELECT * FROM t WHERE v IN (SELECT secret FROM {reads})",
                f"SELECT (SELECT max(secret) FROM {reads}) AS s",
                f"INSERT INTO t SELECT 1, secret FROM {reads}",
                f"CREATE TABLE copied AS SELECT * FROM {reads}",
                f"DELETE FROM t WHERE v IN (SELECT secret FROM {reads})",
                f"UPDATE t SET v = 'x' WHERE v IN (SELECT secret FROM {reads})",
                f"MERGE INTO t USING (SELECT 1 AS id, secret FROM {reads}) s ON t.id = s.id "
                "WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.secret)"]:
        _refused(lake, sql, dialect, "read_parquet")
    if dialect == "spark":
        _refused(lake, f"SELECT * FROM t JOIN parquet.`{secret_file}` f ON t.v = f.secret", dialect, secret_file)
    else:
        _refused(lake, f"SELECT * FROM t, '{secret_file}' f", dialect, secret_file)
    assert [t.name for t in lake.tables()] == ["t"]


@pytest.mark.parametrize("dialect", ["duckdb", "spark"])
def test_create_view_reading_a_file_is_refused(lake, secret_file, dialect):
    lake.sql("CREATE TABLE t (id BIGINT)")
    _refused(lake, f"CREATE VIEW v AS SELECT * FROM read_parquet('{secret_file}')", dialect, "read_parquet")
    _refused(lake, f"CREATE VIEW v AS SELECT * FROM t WHERE id IN (SELECT 1 FROM read_csv('{secret_file}'))",
             dialect, "read_csv")
    path = f"parquet.`{secret_file}`" if dialect == "spark" else f"'{secret_file}'"
    _refused(lake, f"CREATE OR REPLACE VIEW v AS SELECT * FROM {path}", dialect, secret_file)
    with pytest.raises(ExternalReadError, match="read_parquet"):
        lake.create_view("v", f"SELECT * FROM read_parquet('{secret_file}')", dialect=dialect)
    assert lake.views() == []


def _store_view(lake, name, sql):
    """Write a view into the catalog as another client would (DuckDB, an older spark-ducklake): no checks."""
    lake.context.commit([CreateView("main", name, sql, "duckdb", [])])


def test_a_stored_view_reading_a_file_is_refused_when_read(lake, secret_file):
    lake.sql("CREATE TABLE t (id BIGINT)")
    _store_view(lake, "bad", f"SELECT * FROM read_parquet('{secret_file}')")
    _store_view(lake, "bad_scan", f"SELECT * FROM '{secret_file}'")
    _store_view(lake, "wrapper", "SELECT * FROM bad")  # the file read one view further down
    for dialect in ("duckdb", "spark"):
        _refused(lake, "SELECT * FROM bad", dialect, "read_parquet")
        _refused(lake, "SELECT * FROM bad_scan", dialect, secret_file)
        _refused(lake, "SELECT count(*) FROM t JOIN wrapper ON true", dialect, "read_parquet")
        _refused(lake, "INSERT INTO t SELECT 1 FROM bad", dialect, "read_parquet")


def test_macros_reading_files_are_refused_when_created_and_when_used(lake, secret_file):
    _refused(lake, f"CREATE MACRO m() AS TABLE SELECT * FROM read_parquet('{secret_file}')", "duckdb",
             "read_parquet")
    _refused(lake, f"CREATE MACRO s(x) AS (SELECT max(content) FROM read_text('{secret_file}'))", "duckdb",
             "read_text")
    assert lake.macros() == []
    lake.context.commit([CreateMacro("main", "leak", "table", (MacroImpl(
        f"SELECT * FROM read_parquet('{secret_file}')", ()),))])  # stored by another client: no checks
    lake.context.commit([CreateMacro("main", "peek", "scalar", (MacroImpl(
        f"(SELECT max(secret) FROM '{secret_file}')", ()),))])
    _refused(lake, "SELECT * FROM leak()", "duckdb", "read_parquet")
    _refused(lake, "SELECT peek() AS p", "duckdb", secret_file)


def test_other_table_functions_get_the_same_clear_error(lake):
    for sql, dialect, name in [("SELECT * FROM duckdb_tables()", "duckdb", "duckdb_tables"),
                               ("SELECT * FROM sql_keywords()", "spark", "sql_keywords"),
                               ("SELECT * FROM IDENTIFIER('parquet.`/etc`')", "spark", "identifier")]:
        _refused(lake, sql, dialect, name)


@pytest.mark.parametrize("function", ["reflect", "java_method", "try_reflect"])
def test_java_reflection_is_refused(lake, function):
    _refused(lake, f"SELECT {function}('java.lang.System', 'getProperty', 'user.home') AS p", "spark", function)


def test_a_refused_read_inside_begin_keeps_the_transaction(lake, secret_file):
    lake.sql("CREATE TABLE t (id BIGINT)")
    lake.sql("BEGIN")
    lake.sql("INSERT INTO t VALUES (1)")
    with pytest.raises(ExternalReadError):
        lake.sql(f"SELECT * FROM read_parquet('{secret_file}')", dialect="duckdb")
    lake.sql("COMMIT")  # a refusal is found before anything runs, as DuckDB's binder errors: not an abort
    assert lake.read_arrow("t").column("id").to_pylist() == [1]


def test_the_lakes_own_functions_and_tables_named_like_files_still_work(lake, spark, secret_file):
    lake.sql("CREATE TABLE t (id BIGINT); INSERT INTO t VALUES (1), (2)")
    lake.sql('CREATE TABLE "data.csv" (id BIGINT)', dialect="duckdb")
    lake.sql("INSERT INTO \"data.csv\" VALUES (7)", dialect="duckdb")
    assert lake.sql("SELECT * FROM 'data.csv'", dialect="duckdb").collect()[0].id == 7
    assert lake.sql("SELECT count(*) AS n FROM ducklake_snapshots('lake')", dialect="duckdb").collect()[0].n > 0
    assert lake.sql("SELECT count(*) AS n FROM snapshots()").collect()[0].n > 0
    changes = lake.sql("SELECT count(*) AS n FROM lake.table_changes('t', 0, ?)", dialect="duckdb",
                       params=[lake.current_snapshot()])
    assert changes.collect()[0].n == 2
    assert lake.sql("SELECT count(*) AS n FROM ducklake_list_files('lake', 't')", dialect="duckdb") \
        .collect()[0].n >= 0
    assert [r.i for r in lake.sql("SELECT i FROM range(3) r(i)", dialect="duckdb").collect()] == [0, 1, 2]
    assert lake.sql("SELECT count(*) AS n FROM generate_series(1, 4)", dialect="duckdb").collect()[0].n == 4
    assert sorted(r.col for r in lake.sql("SELECT * FROM explode(array(1, 2))").collect()) == [1, 2]
    assert lake.sql("SELECT sum(id) AS s FROM t").collect()[0].s == 3


def test_register_leaves_out_a_stored_view_reading_a_file(lake, spark, secret_file):
    lake.sql("CREATE TABLE t (id BIGINT); INSERT INTO t VALUES (1)")
    _store_view(lake, "leak", f"SELECT * FROM read_parquet('{secret_file}')")
    _store_view(lake, "fine", "SELECT id + 1 AS j FROM t")
    with pytest.warns(UserWarning, match="leak.*reads only lake tables"):
        names = {v.view for v in lake.register(spark)}
    try:
        assert {"main_t", "main_fine"} <= names and "main_leak" not in names
        assert spark.sql("SELECT j FROM main_fine").collect()[0].j == 2
        assert not spark.catalog.tableExists("main_leak")
    finally:
        for name in names:
            spark.catalog.dropTempView(name)
