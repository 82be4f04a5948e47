"""`lake.sql(dialect="duckdb")` forms of the reference's SQL tests: CREATE/DROP MACRO (scalar and table macros,
in and out of transactions), CREATE OR REPLACE TABLE, MAP literals, VALUES typed as the target columns, inlined
inserts in the table's sort order and DuckDB's error for an unknown function. SQLite catalog."""

from __future__ import annotations

import pytest

from spark_ducklake.catalog.reads.macros import MacroParameter
from spark_ducklake.errors import AlreadyExistsError, DuckLakeError, NotFoundError, UnsupportedSqlError
from tests.support.compare import duckdb_rows
from tests.support.reference import attach


def _sql(lake, text: str):
    return lake.sql(text, dialect="duckdb")


def _rows(lake, text: str) -> list[tuple]:
    return [tuple(r) for r in _sql(lake, text).collect()]


def test_macros_are_stored_as_the_reference_stores_them_and_expand(lake, lake_catalog, spark, reference):
    _sql(lake, "CREATE MACRO add_default(a, b := 5) AS a + b")
    _sql(lake, "CREATE MACRO typed(x INTEGER, s VARCHAR := 'n') AS concat(s, x)")
    _sql(lake, "CREATE MACRO multi(a) AS a, (a, b) AS a * b")
    rows = {(m.macro_name, m.impl_id): m for m in lake.macros()}
    assert rows[("add_default", 0)].sql == "(a + b)"
    assert rows[("add_default", 0)].parameters == (MacroParameter("a", None, None, None),
                                                   MacroParameter("b", None, "5", "int32"))
    assert rows[("typed", 0)].parameters == (MacroParameter("x", "int32", None, None),
                                             MacroParameter("s", "varchar", "n", "varchar"))
    assert [rows[("multi", i)].sql for i in (0, 1)] == ["a", "(a * b)"]
    assert _rows(lake, "SELECT add_default(1), add_default(1, 2), add_default(1, b := 10), typed(7), "
                       "multi(3), multi(3, 4)") == [(6, 3, 11, "n7", 3, 12)]
    assert lake.snapshots()[1].changes == {"scalar_macros_created": ["main.add_default"]}
    attach(reference, lake_catalog)  # the reference calls the macros we wrote
    assert duckdb_rows(reference, "SELECT lake.main.add_default(1), lake.main.typed(7), lake.main.multi(3, 4)") \
        == [(6, "n7", 12)]


def test_table_macros_and_scalar_macros_of_the_same_name(lake, spark):
    _sql(lake, "CREATE TABLE people (id INT, name VARCHAR)")
    _sql(lake, "INSERT INTO people VALUES (1, 'tom'), (2, 'dick'), (5, 'mungo')")
    _sql(lake, "CREATE MACRO xt(a, _name) AS TABLE SELECT * FROM people WHERE (id >= a OR name = _name)")
    _sql(lake, "CREATE MACRO xt(a) AS 1")  # another namespace
    assert sorted(_rows(lake, "FROM xt(5, 'tom')")) == [(1, "tom"), (5, "mungo")]
    assert _rows(lake, "SELECT count(*) FROM lake.main.xt(2, 'nobody') AS q") == [(2,)]
    assert _rows(lake, "SELECT xt(9)") == [(1,)]
    with pytest.raises(AlreadyExistsError, match='Table Macro Function with name "xt" already exists'):
        _sql(lake, "CREATE MACRO xt(a) AS TABLE SELECT 1")
    with pytest.raises(AlreadyExistsError, match='Macro Function with name "xt" already exists'):
        _sql(lake, "CREATE MACRO xt(b) AS 2")
    _sql(lake, "CREATE MACRO IF NOT EXISTS xt(b) AS 2")
    _sql(lake, "DROP MACRO TABLE xt")
    assert [m.macro_type for m in lake.macros()] == ["scalar"]
    assert lake.snapshots()[-1].changes == {"table_macros_dropped": [str(lake.macros()[0].macro_id - 1)]}


def test_macro_ddl_inside_a_transaction(lake, spark):
    _sql(lake, "CREATE MACRO simple(a) AS a")
    before = lake.current_snapshot()
    _sql(lake, "BEGIN")
    _sql(lake, "DROP MACRO simple")
    with pytest.raises(NotFoundError, match="Scalar Function with name simple does not exist"):
        _sql(lake, "SELECT simple(1)")
    _sql(lake, "CREATE MACRO simple(a) AS a + 100")
    assert _rows(lake, "SELECT simple(1)") == [(101,)]
    _sql(lake, "CREATE OR REPLACE MACRO simple(a) AS a + 200")  # replaces the staged one
    assert lake.current_snapshot() == before  # nothing committed yet
    _sql(lake, "COMMIT")
    assert _rows(lake, "SELECT simple(1)") == [(201,)]
    assert lake.snapshots()[-1].changes == {"scalar_macros_dropped": ["1"],
                                                "scalar_macros_created": ['main."simple"']}  # a keyword: quoted


def test_macro_errors_name_the_problem(lake):
    with pytest.raises(NotFoundError, match="Macro Function with name nope does not exist"):
        _sql(lake, "DROP MACRO nope")
    _sql(lake, "DROP MACRO IF EXISTS nope")
    with pytest.raises(UnsupportedSqlError, match="TEMPORARY"):
        _sql(lake, "CREATE TEMP MACRO t(a) AS a")
    with pytest.raises(UnsupportedSqlError, match="constant"):
        _sql(lake, "CREATE MACRO d(a := now()) AS a")
    with pytest.raises(UnsupportedSqlError, match="not a DuckLake type"):
        _sql(lake, "CREATE MACRO d(a BIT) AS a")
    assert lake.macros() == []


def test_drop_schema_refuses_macros_and_cascade_ends_them(lake):
    _sql(lake, "CREATE SCHEMA s")
    _sql(lake, "CREATE MACRO s.simple(a) AS a")
    with pytest.raises(DuckLakeError, match="CASCADE"):
        _sql(lake, "DROP SCHEMA s")
    _sql(lake, "DROP SCHEMA s CASCADE")
    assert lake.macros() == []
    assert [m.macro_name for m in lake.macros(version=lake.current_snapshot() - 1)] == ["simple"]
    _sql(lake, "CREATE SCHEMA t")
    _sql(lake, "CREATE MACRO t.simple(a) AS a")
    _sql(lake, "BEGIN")
    with pytest.raises(DuckLakeError, match="CASCADE"):  # refused at once, the transaction goes on
        _sql(lake, "DROP SCHEMA t")
    _sql(lake, "DROP MACRO t.simple")
    _sql(lake, "DROP SCHEMA t")
    _sql(lake, "COMMIT")
    assert "t" not in lake.schemas() and lake.macros() == []


def test_create_or_replace_table_drops_and_creates_in_one_snapshot(lake, spark):
    _sql(lake, "CREATE TABLE t (i INT)")
    _sql(lake, "INSERT INTO t VALUES (1)")
    old = lake.table_info("t").table_id
    _sql(lake, "CREATE OR REPLACE TABLE t (j VARCHAR)")
    assert lake.snapshots()[-1].changes == {"tables_dropped": [str(old)], "tables_created": ["main.t"]}
    assert [c.name for c in lake.table_info("t").columns] == ["j"] and _rows(lake, "FROM t") == []
    _sql(lake, "CREATE OR REPLACE TABLE t AS SELECT 42 AS k")
    assert _rows(lake, "FROM t") == [(42,)]
    _sql(lake, "BEGIN")
    _sql(lake, "CREATE OR REPLACE TABLE t (m DOUBLE)")
    _sql(lake, "INSERT INTO t VALUES (1.5)")
    _sql(lake, "COMMIT")
    assert _rows(lake, "FROM t") == [(1.5,)]
    _sql(lake, "CREATE OR REPLACE TABLE fresh (x INT)")  # nothing to replace: a plain CREATE
    assert lake.snapshots()[-1].changes == {"tables_created": ["main.fresh"]}


def test_map_literals_and_values_typed_as_their_columns(lake, spark):
    _sql(lake, "CREATE TABLE m (s MAP(VARCHAR, INTEGER))")
    _sql(lake, "INSERT INTO m VALUES (MAP {'i': 1, 'j': 2}), (MAP {'j': 3}), (NULL)")
    assert sorted(_rows(lake, "FROM m"), key=repr) == [(None,), ({"i": 1, "j": 2},), ({"j": 3},)]
    assert _rows(lake, "SELECT count(*) FROM m WHERE s.i = 1") == [(1,)]
    _sql(lake, "CREATE TABLE f (x DOUBLE, d DATE)")
    _sql(lake, "INSERT INTO f VALUES ('NaN', '2020-01-01'), (1, NULL), ('inf', '2021-02-03')")
    assert _rows(lake, "SELECT count(*) FROM f WHERE x = 'NaN'") == [(1,)]
    assert _rows(lake, "SELECT count(*) FROM f WHERE x > 1") == [(2,)]  # NaN is the greatest, then inf
    assert _rows(lake, "SELECT max(d) FROM f")[0][0].isoformat() == "2021-02-03"


def test_inlined_inserts_follow_the_sort_order(lake, spark):
    _sql(lake, "CREATE TABLE s (i INTEGER, name VARCHAR)")
    _sql(lake, "ALTER TABLE s SET SORTED BY (i DESC)")
    _sql(lake, "INSERT INTO s VALUES (3, 'c'), (1, 'a'), (5, 'e'), (NULL, 'n')")
    assert [r[0] for r in _rows(lake, "FROM s")] == [5, 3, 1, None]  # inlined, in DESC NULLS LAST order
    _sql(lake, "CREATE TABLE e (name VARCHAR)")
    _sql(lake, "ALTER TABLE e SET SORTED BY (length(name) ASC)")  # an expression: evaluated on Spark
    _sql(lake, "INSERT INTO e VALUES ('ccc'), ('a'), ('bb')")
    assert [r[0] for r in _rows(lake, "FROM e")] == ["a", "bb", "ccc"]


def test_an_unknown_function_is_named_as_duckdb_names_it(lake, spark):
    with pytest.raises(NotFoundError, match="Scalar Function with name no_such_fn does not exist!"):
        _sql(lake, "SELECT No_Such_Fn(1)")


def test_sort_keys_follow_renamed_columns_as_in_the_reference(lake, lake_catalog, reference):
    _sql(lake, "CREATE TABLE r (a INT, b INT)")
    _sql(lake, "ALTER TABLE r SET SORTED BY (a ASC, b + 1 DESC)")
    _sql(lake, "ALTER TABLE r RENAME COLUMN a TO a2")
    _sql(lake, 'ALTER TABLE r RENAME COLUMN b TO "B x"')
    attach(reference, lake_catalog)
    rows = duckdb_rows(reference, "SELECT sort_key_index, expression, sort_direction FROM "
                                  "__ducklake_metadata_lake.ducklake_sort_expression e JOIN "
                                  "__ducklake_metadata_lake.ducklake_sort_info i USING (sort_id) "
                                  "WHERE i.end_snapshot IS NULL")
    assert rows == [(0, "a2", "ASC"), (1, '"B x" + 1', "DESC")]


def test_geometry_literals_in_and_wkt_out_as_the_reference_reads_them(lake, lake_catalog, spark, reference):
    _sql(lake, "CREATE TABLE geo (i INT, g GEOMETRY)")
    _sql(lake, "INSERT INTO geo VALUES (1, 'POINT(1 2)'::GEOMETRY), "
               "(2, ST_GeomFromText('LINESTRING Z (5 5 5, 1 1 1)'))")
    _sql(lake, "UPDATE geo SET g = 'POINT M (3 4 5)'::GEOMETRY WHERE i = 1")
    frame = _sql(lake, "SELECT i, g FROM geo ORDER BY g")  # sorted by the WKB bytes, as DuckDB sorts
    assert frame.schema["g"].dataType.typeName().startswith("geometry")  # DuckDB's GEOMETRY: Spark's GEOMETRY
    from spark_ducklake.spec.wkt import wkb_to_wkt

    assert [(r.i, wkb_to_wkt(bytes(r.g.getBytes()))) for r in frame.collect()] == [
        (1, "POINT M (3 4 5)"), (2, "LINESTRING Z (5 5 5, 1 1 1)")]  # type code 2001 < 1002 little endian
    assert lake.read("geo").schema["g"].dataType.typeName() == "binary"  # the Python API keeps WKB
    attach(reference, lake_catalog)
    assert duckdb_rows(reference, "SELECT i, g::VARCHAR FROM lake.geo") == [
        (1, "POINT M (3 4 5)"), (2, "LINESTRING Z (5 5 5, 1 1 1)")]


def test_duckdb_only_column_types_get_their_ducklake_types(lake, lake_catalog, spark, reference):
    _sql(lake, "CREATE TABLE u (a USMALLINT, b UBIGINT, h HUGEINT, t TIME, z TIMETZ, n TIMESTAMP_NS, "
               "v INTERVAL, id UUID)")
    _sql(lake, "INSERT INTO u VALUES (60000, 18000000000000000000, 123456789012345678901234, '01:02:03', "
               "'01:02:03+00', '2020-01-01 01:00:00.123456', '1 day', '11111111-1111-1111-1111-111111111111')")
    _sql(lake, "ALTER TABLE u ADD COLUMN x UINTEGER DEFAULT 4000000000")
    _sql(lake, "ALTER TABLE u ADD COLUMN flag BOOLEAN DEFAULT 1")
    _sql(lake, "ALTER TABLE u ADD COLUMN bytes BLOB DEFAULT 'abc'")
    types = {c.name: c.type for c in lake.table_info("u").columns}
    assert types == {"a": "uint16", "b": "uint64", "h": "int128", "t": "time", "z": "timetz", "n": "timestamp_ns",
                     "v": "interval", "id": "uuid", "x": "uint32", "flag": "boolean", "bytes": "blob"}
    assert _rows(lake, "SELECT a, x, flag, bytes FROM u") == [(60000, 4000000000, True, bytearray(b"abc"))]
    _sql(lake, "ALTER TABLE u ALTER COLUMN a SET DATA TYPE UINTEGER")  # the spec's uint16 -> uint32
    assert lake.table_info("u").columns[0].type == "uint32"
    with pytest.raises(UnsupportedSqlError, match="unsupported type INT\\[3\\]"):
        _sql(lake, "CREATE TABLE fixed (f INT[3])")
    with pytest.raises(UnsupportedSqlError, match="compression type for a column is not supported"):
        _sql(lake, "CREATE TABLE z (s VARCHAR USING COMPRESSION ZSTD)")
    attach(reference, lake_catalog)
    assert duckdb_rows(reference, "SELECT a, b, typeof(a), typeof(t), t::VARCHAR, x, flag FROM lake.u") == [
        (60000, 18000000000000000000, "UINTEGER", "TIME", "01:02:03", 4000000000, True)]


def test_variant_values_unqualified_call_and_merging_geometry_files(lake, lake_catalog, spark, reference):
    _sql(lake, "CALL set_option('data_inlining_row_limit', '0')")  # unqualified, as after USE in DuckDB
    assert lake.options()  # the lake took it (no error naming ducklake_set_option)
    _sql(lake, "CREATE TABLE v (v VARIANT)")
    _sql(lake, "INSERT INTO v VALUES (42), ('hello'), ({'a': 42, 'b': NULL}), (NULL), ([1, 2])")
    assert sorted((r.v.toPython() for r in _sql(lake, "FROM v").collect()), key=repr) == [
        "hello", 42, None, [1, 2], {"a": 42, "b": None}]  # NULL: the variant null, as the reference stores it
    assert _rows(lake, "SELECT count(*) FROM v WHERE v::VARCHAR = 'hello'") == [(1,)]
    _sql(lake, "CREATE TABLE g (g GEOMETRY)")
    _sql(lake, "INSERT INTO g VALUES ('POINT (1 2)'::GEOMETRY)")
    _sql(lake, "INSERT INTO g VALUES ('LINESTRING Z (5 5 5, 10 10 10)'::GEOMETRY)")
    assert [tuple(r) for r in lake.merge_adjacent_files("g")] == [("main", "g", 2, 1)]
    attach(reference, lake_catalog)
    assert duckdb_rows(reference, "SELECT g::VARCHAR FROM lake.g") == [
        ("LINESTRING Z (5 5 5, 10 10 10)",), ("POINT (1 2)",)]
    stats = duckdb_rows(reference, "SELECT extra_stats FROM __ducklake_metadata_lake.ducklake_file_column_stats "
                                   "s JOIN __ducklake_metadata_lake.ducklake_data_file f USING (data_file_id) "
                                   "WHERE f.end_snapshot IS NULL AND s.extra_stats IS NOT NULL")
    assert len(stats) == 1 and '"types": ["linestring_z", "point"]' in stats[0][0]  # the merged file keeps them
