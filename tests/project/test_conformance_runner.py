"""The sqllogictest conformance runner (tests/conformance): parsing, scope rules, rendering and comparison on texts
written here, and one file end to end through lake.sql on a fresh lake."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from tests.conformance.attach import AttachError, parse_attach, parse_use
from tests.conformance.parser import Directive, parse_text
from tests.conformance.render import compare, render_value, result_hash
from tests.conformance.scope import ScopeState, file_reason, record_reason, statement_reason

TEXT = """# name: test/sql/made/up.test
# description: written for this test
require ducklake

test-env DATA_PATH {TEST_DIR}

statement ok
CREATE TABLE lk.t(i INTEGER)

statement error
SELECT * FROM lk.missing
----
does not exist

query IT rowsort mylabel
SELECT 1, 'a'
UNION ALL SELECT 0, 'b'
----
0	b
1	a

loop i 0 2

statement ok con1
INSERT INTO lk.t VALUES ({i})

endloop

foreach kind x y

query I valuesort
SELECT '${kind}'
----
${kind}

endloop

mode skip

statement ok
SELECT 'skipped'

mode unskip

skipif i=1
halt
"""


def test_parse_records_and_directives():
    test = parse_text(TEXT, "x.test")
    assert test.name == "test/sql/made/up.test"
    records = test.records
    assert [r.kind for r in records] == ["statement", "statement", "query", "statement", "statement", "query",
                                         "query", "statement"]
    error = records[1]
    assert (error.expect, error.error, error.sql) == ("error", "does not exist", "SELECT * FROM lk.missing")
    query = records[2]
    assert (query.types, query.sort, query.label) == ("IT", "rowsort", "mylabel")
    assert query.sql == "SELECT 1, 'a'\nUNION ALL SELECT 0, 'b'" and query.expected == ["0\tb", "1\ta"]
    assert [r.sql for r in records[3:5]] == ["INSERT INTO lk.t VALUES (0)", "INSERT INTO lk.t VALUES (1)"]
    assert records[3].connection == "con1"
    assert [(r.sql, r.expected, r.sort) for r in records[5:7]] == [("SELECT 'x'", ["x"], "valuesort"),
                                                                   ("SELECT 'y'", ["y"], "valuesort")]
    kinds = [(i.kind, i.args) for i in test.items if isinstance(i, Directive)]
    assert ("require", ["ducklake"]) in kinds and ("test-env", ["DATA_PATH", "{TEST_DIR}"]) in kinds
    assert ("mode", ["skip"]) in kinds and ("mode", ["unskip"]) in kinds
    assert kinds[-1] == ("halt", []) and test.items[-1].kind == "halt"


def test_conditions_apply_to_the_next_record():
    test = parse_text("foreach i 0 1\n\nskipif i=1\nstatement ok\nSELECT {i}\n\nonlyif i=1\nstatement ok\n"
                      "SELECT 2\n\nendloop\n")
    reasons = [record_reason(r) for r in test.records]
    assert reasons[0] is None and reasons[1] == "onlyif 0=1 (the test's own condition)"
    assert reasons[2] == "skipif 1=1 (the test's own condition)" and reasons[3] is None


@pytest.mark.parametrize(("value", "type_name", "text"), [
    (None, "int", "NULL"), (True, "boolean", "true"), (False, "boolean", "false"), (42, "bigint", "42"),
    (1.5, "double", "1.5"), (2.0, "double", "2.0"), (float("inf"), "double", "inf"),
    (decimal.Decimal("1.500"), "decimal(4,3)", "1.500"), (dt.date(1992, 1, 1), "date", "1992-01-01"),
    (dt.datetime(2020, 1, 1, 10, 0, 0), "timestamp_ntz", "2020-01-01 10:00:00"),
    (dt.datetime(2020, 1, 1, 10, 0, 0, 500000), "timestamp_ntz", "2020-01-01 10:00:00.5"),
    (dt.datetime(2020, 1, 1, 10, 0, 0), "timestamp", "2020-01-01 10:00:00+00"),
    ([1, 2], "array<int>", "[1, 2]"), (["a", None], "array<string>", "[a, NULL]"), ([], "array<int>", "[]"),
    ({"k": 1}, "map<string,int>", "{k=1}"), ("", "string", "(empty)"), ("hello world", "string", "hello world"),
    # nested strings quoted as DuckDB 1.5.5 prints them: only when they hold a delimiter, are empty or NULL
    ({"k": ['main."simple"', "a b"]}, "map", "{k=['main.\"simple\"', a b]}"),
    (["a,b", "it's", "", "null", " x"], "array<string>", "['a,b', 'it\\'s', '', 'null', ' x']"),
    ("a,b", "string", "a,b"),
])
def test_values_render_as_duckdbs_runner_prints_them(value, type_name, text):
    assert render_value(value, type_name) == text


def test_struct_rows_render_with_quoted_keys():
    from pyspark.sql import Row

    assert render_value(Row(a=1, b="hello", c=None), "struct") == "{'a': 1, 'b': hello, 'c': NULL}"
    assert render_value([Row(x=[1])], "array") == "[{'x': [1]}]"


def test_sort_modes_and_comparison():
    got = ["2", "b", "1", "a"]  # two rows of two columns
    kinds = ["numeric", "other"]
    assert compare(got, 2, kinds, ["2\tb", "1\ta"], "nosort") is None
    assert compare(got, 2, kinds, ["1\ta", "2\tb"], "nosort").startswith("row 1 column 1")
    assert compare(got, 2, kinds, ["1\ta", "2\tb"], "rowsort") is None
    assert compare(got, 2, kinds, ["1", "2", "a", "b"], "valuesort") is None
    assert compare(got, 2, kinds, ["1", "a", "2", "b"], "rowsort") is None  # one value per line
    assert compare(["1.0000001"], 1, ["numeric"], ["1"], "nosort") is None  # numbers compare by value
    assert compare(["1.1"], 1, ["numeric"], ["1"], "nosort") is not None
    assert compare(["true"], 1, ["boolean"], ["1"], "nosort") is None
    assert compare(["true"], 1, ["other"], ["1"], "nosort") is not None
    assert compare(["1"], 1, ["numeric"], ["1", "2"], "nosort").startswith("1 row(s)")
    assert compare(got, 2, kinds, [result_hash(["1", "a", "2", "b"])], "rowsort") is None
    labels: dict[str, str] = {}
    assert compare(["1"], 1, ["numeric"], [], "nosort", labels, "same") is None
    assert compare(["2"], 1, ["numeric"], [], "nosort", labels, "same") == "result differs from label same's"


def test_file_scope_rules_name_their_reason():
    assert file_reason(parse_text("require spatial\n")) == "requires DuckDB extension spatial"
    assert file_reason(parse_text("require notwindows\nrequire parquet\n")) is None
    assert file_reason(parse_text("require-env S3_TEST_SERVER_AVAILABLE 1\n")) == \
        "requires a test environment (require-env)"
    assert file_reason(parse_text("statement ok con2\nSELECT 1\n")) == "several connections (conN)"
    assert file_reason(parse_text("concurrentloop i 0 2\n\nstatement ok\nSELECT 1\n\nendloop\n")) == \
        "concurrent connections (concurrentloop)"
    assert file_reason(parse_text("query I\nFROM m.ducklake_view_column_tag\n----\n1\n")).startswith("view column")
    assert file_reason(parse_text("statement ok\nCREATE TABLE m.ducklake_view_column_tag(k INT)\n")) is None
    assert file_reason(parse_text("statement ok\nSELECT 1\n"), slow=False) is None
    assert file_reason(parse_text("statement ok\nALTER TABLE t SET PARTITIONED BY (epoch_day(d))\n")).startswith(
        "partitions by an epoch transform")
    assert file_reason(parse_text("statement error\nALTER TABLE t SET PARTITIONED BY (epoch_day(d))\n----\n"
                                  "DuckLake 1.0 does not support\n")) is None  # the 1.0 refusal is in scope
    assert file_reason(parse_text("statement ok\nSELECT 1\n", "a.test_slow")).startswith("slow test file")
    fixture = ("statement ok\nATTACH 'ducklake:{TEST_DIR}/a.db' AS dl\n\nstatement ok\nDETACH dl\n\n"
               "statement ok\nATTACH '{TEST_DIR}/a.db' AS meta\n\n")
    assert file_reason(parse_text(fixture + "statement ok\nDROP TABLE meta.ducklake_inlined_data_1_1\n")) == \
        "edits a lake's catalog database through a plain ATTACH (a DuckDB-built fixture)"
    assert file_reason(parse_text(fixture + "query I\nSELECT count(*) FROM meta.ducklake_table\n----\n1\n")) is None
    for text in ("query I\nFROM m.ducklake_view_column_tag\n----\n1\n",  # 1.1 features: in scope on 1.1 runs
                 "statement ok\nALTER TABLE t SET PARTITIONED BY (epoch_day(d))\n"):
        assert file_reason(parse_text(text), ducklake_version="1.0") is not None
        assert file_reason(parse_text(text), ducklake_version="1.1-dev1") is None
        assert file_reason(parse_text(text), ducklake_version="1.1") is None


def test_statement_scope_rules_name_their_reason():
    state = ScopeState(lakes={"lk"}, spark_functions=frozenset({"sum", "length"}))
    cases = {
        "PRAGMA enable_verification": "PRAGMA (a DuckDB setting or function)",
        "SET threads=1": "SET/RESET of a DuckDB setting",
        "COPY lk.t TO 'x.csv'": "COPY (DuckDB file import/export)",
        "CREATE TABLE t(i INT)": "non-lake table (DuckDB's in-memory database)",
        "INSERT INTO lk.t SELECT * FROM memory.src": "non-lake table (DuckDB's in-memory database)",
        "SELECT * FROM duckdb_tables()": "DuckDB table function duckdb_tables()",
        "SELECT * FROM glob('x/*')": "DuckDB table function glob()",
        "SELECT my_duck_fn(i) FROM lk.t": "DuckDB function my_duck_fn()",
        "CREATE SEQUENCE seq": "CREATE SEQUENCE (a DuckDB object, not in DuckLake)",
        "CREATE TABLE lk.e(c ENUM('a', 'b'))": "DuckDB-only type (not a DuckLake type)",
        "SELECT * FROM information_schema.tables": "DuckDB system catalog (information_schema, pg_catalog, ...)",
        "CALL dbgen(sf=1)": "DuckDB function CALL dbgen()",
        "SELECT row_group_count FROM lk.ducklake_data_file":
            "a catalog table or column newer than the DuckLake 1.0 spec (row_group_count)",
    }
    for sql, reason in cases.items():
        assert statement_reason(sql, state) == reason, sql
    assert statement_reason("CALL ducklake_expire_snapshots('lk', versions => [getvariable('v')])", state) == \
        "DuckDB function getvariable()"  # a DuckDB function among a lake CALL's arguments
    for sql in ("SELECT sum(i) FROM lk.t", "CREATE TABLE lk.s.t(i INT)", "CALL ducklake_expire_snapshots('lk')",
                "ALTER TABLE lk.t RENAME TO t2", "CALL ducklake_rewrite_data_files('lk', 't', delete_threshold => 0)",
                "FROM lk.snapshots()", "WITH c AS (SELECT 1 AS x) SELECT * FROM c", "SELECT * FROM range(3)"):
        assert statement_reason(sql, state) is None, sql
    assert statement_reason("SELECT row_group_count FROM lk.ducklake_data_file",
                            ScopeState(lakes={"lk"}, ducklake_version="1.1-dev1")) is None  # a 1.1 column
    state.default = "lk"  # after USE lk, unqualified names are lake tables
    assert statement_reason("CREATE TABLE t(i INT)", state) is None
    assert statement_reason("CALL merge_adjacent_files()", state) is None
    assert statement_reason("ALTER TABLE t SET PARTITIONED BY (epoch_year(ts))", state) is None  # a transform
    state.note("CREATE OR REPLACE MACRO lk.s.add_one(x) AS x + 1")  # a lake macro is not a DuckDB function
    assert statement_reason("SELECT add_one(i) FROM t", state) is None
    assert statement_reason("SELECT add_two(i) FROM t", state) == "DuckDB function add_two()"


def test_lake_settings_and_metadata_reads_are_in_scope_writes_are_not():
    state = ScopeState(lakes={"lk"}, spark_functions=frozenset({"count"}), metadata={"meta": "lk"})
    for sql in ("SET ducklake_max_retry_count = 3", "SET GLOBAL ducklake_retry_backoff TO 2.0",
                "RESET ducklake_max_retry_count", "SELECT current_setting('ducklake_retry_wait_ms')",
                "SET preserve_insertion_order=false", "RESET preserve_insertion_order",
                "SELECT count(*) FROM meta.ducklake_snapshot", "SELECT * FROM meta.main.ducklake_data_file",
                "SELECT t.table_name FROM meta.ducklake_table t JOIN lk.s.x ON true"):
        assert statement_reason(sql, state) is None, sql
    cases = {
        "SET threads = 1": "SET/RESET of a DuckDB setting",
        "SET VARIABLE v = (SELECT 1 FROM meta.ducklake_snapshot)": "SET/RESET of a DuckDB setting",
        "SELECT current_setting('threads')": "DuckDB function current_setting()",
        "UPDATE meta.ducklake_column SET column_type = 'x'": "writes the metadata database directly",
        "INSERT INTO __ducklake_metadata_lk.ducklake_tag VALUES (1, 2, NULL, 'a', 'b')":
            "writes the metadata database directly",
        "DROP TABLE meta.ducklake_inlined_data_1_1": "writes the metadata database directly",
        "SELECT count(*) FROM (SHOW ALL TABLES)": "DESCRIBE/SHOW/SUMMARIZE (DuckDB catalog introspection)",
        "FROM '/tmp/lake/main/t/part_key=0/*.parquet'": "DuckDB file read (FROM 'a/file/path.parquet')",
    }
    for sql, reason in cases.items():
        assert statement_reason(sql, state) == reason, sql


def test_attach_options_map_to_attach_keywords():
    spec = parse_attach("ATTACH 'ducklake:/tmp/x.db' AS lk (DATA_PATH '/tmp/d', DATA_INLINING_ROW_LIMIT 10, "
                        "READ_ONLY)")
    assert (spec.location, spec.name, spec.is_ducklake) == ("/tmp/x.db", "lk", True)
    assert spec.keywords == {"data_path": "/tmp/d", "data_inlining_row_limit": 10, "read_only": True}
    assert parse_attach("ATTACH IF NOT EXISTS ':memory:' AS mem").is_ducklake is False
    assert parse_attach("ATTACH 'ducklake:sqlite:/tmp/a.sqlite'").name == "a"
    with pytest.raises(AttachError, match="NO_SUCH_OPTION"):
        parse_attach("ATTACH 'ducklake:x.db' AS lk (NO_SUCH_OPTION)")
    spec = parse_attach("ATTACH 'ducklake:x.db' AS lk (DUCKLAKE_VERSION '1.0', METADATA_CATALOG 'meta')")
    assert spec.keywords == {"ducklake_version": "1.0", "metadata_catalog": "meta"}
    assert spec.metadata_catalog == "meta"
    assert parse_attach("ATTACH 'ducklake:x.db' AS lk").metadata_catalog == "__ducklake_metadata_lk"
    assert parse_use("USE lk") == ("lk", None) and parse_use("USE lk.s1") == ("lk", "s1")


END_TO_END = """# name: test/sql/made/end_to_end.test
require ducklake

require parquet

test-env DUCKLAKE_CONNECTION {TEST_DIR}/{UUID}.db

statement ok
ATTACH 'ducklake:{DUCKLAKE_CONNECTION}' AS lk (DATA_PATH '{TEST_DIR}/files')

statement ok
CREATE TABLE lk.t(i INTEGER, s VARCHAR, d DOUBLE)

query I
INSERT INTO lk.t VALUES (2, 'b', 1.5), (1, '', NULL)
----
2

query ITR rowsort
SELECT * FROM lk.t
----
1	(empty)	NULL
2	b	1.5

query I
SELECT list_value(1, 2)
----
[1, 2]

statement error
SELECT * FROM lk.no_such_table
----
this text is not in the message

statement error
CREATE TABLE lk.t(i INTEGER)

statement ok
PRAGMA enable_verification

query I
SELECT count(*) FROM lk.t
----
3

statement ok
DETACH lk

statement ok
USE lk
"""


def test_one_file_end_to_end_through_lake_sql(spark):
    from tests.conformance.execute import FileRunner
    from tests.conformance.report import count

    runner = FileRunner(spark, "sqlite", spark_functions=frozenset(
        r[0].lower() for r in spark.sql("SHOW FUNCTIONS").collect()))
    result = runner.run(parse_text(END_TO_END, "test/sql/made/end_to_end.test"))
    statuses = [(o.line, o.status) for o in result.outcomes]
    assert [s for _, s in statuses] == ["pass", "pass", "pass", "pass", "pass", "message", "pass", "skip", "fail",
                                        "pass", "fail"], result.outcomes
    assert result.outcomes[7].reason == "PRAGMA (a DuckDB setting or function)"
    assert result.outcomes[8].reason.startswith("wrong result: row 1 column 1: got '2', expected '3'")
    assert result.outcomes[10].reason.startswith("AttachError")  # USE of a detached lake fails, as in DuckDB
    totals = count([result])["TOTAL"]
    assert (totals.statements, totals.in_scope, totals.passed, totals.message, totals.failed) == (11, 10, 8, 1, 2)
    assert dict(totals.skipped) == {"PRAGMA (a DuckDB setting or function)": 1}


VERSIONS = """# name: test/sql/made/versions.test
require ducklake

statement ok
ATTACH 'ducklake:{TEST_DIR}/new.db' AS dl (DATA_PATH '{TEST_DIR}/new')

query I
SELECT value FROM __ducklake_metadata_dl.ducklake_metadata WHERE key = 'version'
----
1.1-dev1

statement ok
ATTACH 'ducklake:{TEST_DIR}/old.db' AS old (DATA_PATH '{TEST_DIR}/old', DUCKLAKE_VERSION '1.0')

statement ok
DETACH old

statement ok
ATTACH 'ducklake:{TEST_DIR}/old.db' AS old (DATA_PATH '{TEST_DIR}/old')

query I
SELECT value FROM __ducklake_metadata_old.ducklake_metadata WHERE key = 'version'
----
1.0

statement ok
DETACH old

statement ok
ATTACH 'ducklake:{TEST_DIR}/old.db' AS old (DATA_PATH '{TEST_DIR}/old', AUTOMATIC_MIGRATION TRUE)

query I
SELECT value FROM __ducklake_metadata_old.ducklake_metadata WHERE key = 'version'
----
1.1-dev1

statement ok
SET ducklake_default_version = '2.0'

statement error
ATTACH 'ducklake:{TEST_DIR}/bad.db' AS bad (DATA_PATH '{TEST_DIR}/bad')
----
Unsupported ducklake_version

statement ok
SET ducklake_default_version = '1.0'

statement ok
ATTACH 'ducklake:{TEST_DIR}/ten.db' AS ten (DATA_PATH '{TEST_DIR}/ten')

query I
SELECT value FROM __ducklake_metadata_ten.ducklake_metadata WHERE key = 'version'
----
1.0

statement ok
RESET ducklake_default_version
"""


def test_the_runs_version_is_what_an_attach_without_one_creates_and_migrates_to(spark, monkeypatch):
    """The run's version plays the reference's DUCKLAKE_LATEST_VERSION: a new catalog's version and the target of
    AUTOMATIC_MIGRATION; an existing catalog keeps its own; SET ducklake_default_version asks for one (the
    runner applies it at ATTACH, as DuckDB does)."""
    from tests.conformance.execute import FileRunner

    monkeypatch.delenv("SPARK_DUCKLAKE_DEFAULT_VERSION", raising=False)  # as the runner's main() does
    runner = FileRunner(spark, "sqlite", spark_functions=frozenset(), ducklake_version="1.1-dev1")
    result = runner.run(parse_text(VERSIONS, "test/sql/made/versions.test"))
    assert [o.status for o in result.outcomes] == ["pass"] * 15, result.outcomes
    with pytest.raises(ValueError, match="ducklake_version must be one of"):
        FileRunner(spark, "sqlite", spark_functions=frozenset(), ducklake_version="0.9")


def test_summary_puts_the_versions_side_by_side():
    from tests.conformance.execute import FileResult, Outcome
    from tests.conformance.report import side_by_side, to_json, v11_features

    assert v11_features("test/sql/partitioning/x.test", "SET PARTITIONED BY (epoch_year(ts))") == \
        ["epoch transforms"]
    assert v11_features("test/sql/migration/v10.test", "SELECT row_group_count") == ["row group counts", "migrations"]
    pages = []
    for version, status in (("1.0", "fail"), ("1.1-dev1", "pass")):
        result = FileResult("test/sql/partitioning/epoch.test", None, [Outcome(1, "statement", "pass"),
                                                                        Outcome(2, "query", status, "wrong result")],
                            features=["epoch transforms"])
        shared = FileResult("test/sql/insert/plain.test", None, [Outcome(1, "statement", "pass"),
                                                                  Outcome(2, "query", "fail", "wrong result")])
        pages.append(to_json([result, shared], {"catalog": "sqlite", "ducklake_version": version, "commit": "c"}))
    text = side_by_side(pages[::-1])
    # both versions measured alike on the files testing no 1.1 feature
    assert "| **TOTAL without the 1.1 feature files** |  | 2 | 1 | **50.0** |  | 2 | 1 | **50.0** |" in text
    assert "## Catalog sqlite: DuckLake 1.0 vs 1.1-dev1" in text
    assert "| partitioning | 1 (0) | 2 | 1 | 50.0 | 1 (0) | 2 | 2 | 100.0 |" in text
    assert "| epoch transforms | 1 (0) | 2 | 1 | 50.0 | 1 (0) | 2 | 2 | 100.0 |" in text
    assert "- partitioning/epoch.test: 1 failed, e.g. line 2: wrong result" in text
    from tests.conformance.report import merge_runs

    again = to_json([FileResult("test/sql/partitioning/epoch.test", None, [Outcome(1, "statement", "pass")] * 2,
                                features=["epoch transforms"])], {"catalog": "sqlite", "ducklake_version": "1.0"})
    merged = merge_runs([pages[0], again, pages[1]])  # a later run of 1.0 replaces its file
    assert [(m["ducklake_version"], m["directories"]["TOTAL"]["passed"]) for m in merged] == [("1.0", 3),
                                                                                             ("1.1-dev1", 3)]


METADATA_READS = """# name: test/sql/made/metadata_reads.test
require ducklake

statement ok
ATTACH 'ducklake:{TEST_DIR}/a.db' AS la (DATA_PATH '{TEST_DIR}/a')

statement ok
ATTACH 'ducklake:{TEST_DIR}/b.db' AS lb (DATA_PATH '{TEST_DIR}/b', METADATA_CATALOG 'bmeta')

statement ok
CREATE TABLE lb.t(i INTEGER)

query I
SELECT count(*) FROM __ducklake_metadata_la.ducklake_table
----
0

query T
SELECT table_name FROM bmeta.ducklake_table
----
t

statement ok
UPDATE bmeta.ducklake_table SET table_name = 'x'

statement ok
DETACH bmeta
"""


def test_metadata_catalog_reads_run_on_the_lake_that_owns_them(spark):
    from tests.conformance.execute import FileRunner

    runner = FileRunner(spark, "sqlite", spark_functions=frozenset({"count"}))
    result = runner.run(parse_text(METADATA_READS, "test/sql/made/metadata_reads.test"))
    assert [o.status for o in result.outcomes] == ["pass"] * 5 + ["skip", "skip"], result.outcomes
    assert result.outcomes[5].reason == "writes the metadata database directly"
    assert result.outcomes[6].reason.startswith("DETACH / USE of the metadata database")


def test_geometries_render_as_wkt_and_variants_as_their_values():
    from pyspark.sql.types import Geometry, VariantVal

    from spark_ducklake.spec.wkt import wkt_to_wkb

    point = Geometry.fromWKB(wkt_to_wkb("POINT Z (1 2 3)"), 0)
    assert render_value(point, "geometry(0)") == "POINT Z (1 2 3)"
    assert render_value([point], "array") == "['POINT Z (1 2 3)']"  # quoted when nested, as DuckDB prints it
    number = VariantVal(b"\x0c*", b"\x01\x00\x00")  # 42, as Spark encodes it
    assert render_value(number, "variant") == "42"
