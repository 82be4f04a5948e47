"""Bad input gets a one-line DuckLakeError naming the bad part, and never changes the lake (issue 13)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest
import sqlalchemy as sa

from spark_ducklake import DuckLake
from spark_ducklake.errors import (
    AlreadyExistsError,
    ConstraintError,
    DuckLakeError,
    InvalidExpressionError,
    InvalidNameError,
    NotFoundError,
    SchemaMismatchError,
)
from tests.support.reference import attach


def _state(lake: DuckLake, tmp_path: Path) -> tuple:
    """What 'changed nothing' compares: the snapshots and every file under the data path."""
    files = sorted(str(p) for p in (tmp_path / "data").rglob("*") if p.is_file())
    return len(lake.snapshots()), files


# ----------------------------------------------------------------------------------------- DDL and type strings
@pytest.mark.parametrize(("ddl", "named"), [
    ("x INT); DROP TABLE t; --", "not a column list"),
    ("x INT) AS SELECT 1 --", "not a column list"),
    ("x int) PARTITIONED BY (x", "not a column list"),
    ("x FOO", "'FOO'"),
    ("x INT, y BAR", "'BAR'"),
    ("x DECIMAL(a, b)", "DECIMAL(A, B)"),
    ("x DECIMAL(50, 2)", "DECIMAL(50, 2)"),
    ("x MAP<INT>", "MAP<INT>"),
    ("x INT DEFAULT (SELECT 1)", "DEFAULT (SELECT 1)"),
    ("x INT PRIMARY KEY", "PRIMARY KEY"),
    ("x INT, PRIMARY KEY (x)", "PRIMARY KEY (x)"),
    ("x", "'x'"),
    ("", "at least one column"),
    ("x INT, X BIGINT", "'X'"),
])
def test_malformed_column_lists_are_refused_naming_the_bad_part(lake, tmp_path, ddl, named):
    before = _state(lake, tmp_path)
    with pytest.raises(DuckLakeError, match="^[^\n]*$") as info:
        lake.create_table("t", ddl)
    assert named in str(info.value)
    assert _state(lake, tmp_path) == before and lake.tables() == []


def test_null_keyword_is_not_not_null(lake):
    lake.create_table("t", "a INT NULL, b INT NOT NULL")
    assert [c.nullable for c in lake.table_info("t").columns] == [True, False]


@pytest.mark.parametrize("type_", ["INT, evil STRING", "INT NOT NULL", "INT) AS SELECT 1 --", "FOO", ""])
def test_type_strings_hold_one_type(lake, tmp_path, type_):
    lake.create_table("t", "a INT")
    before = _state(lake, tmp_path)
    with pytest.raises(SchemaMismatchError):
        lake.add_column("t", "b", type_)
    assert _state(lake, tmp_path) == before
    assert [c.name for c in lake.table_info("t").columns] == ["a"]


# ----------------------------------------------------------------------------------------- NOT NULL
def test_not_null_refused_on_every_write_path_like_the_reference(lake, tmp_path, spark, reference):
    lake.create_table("t", "k BIGINT NOT NULL, s VARCHAR")
    attach(reference, f"sqlite:{tmp_path / 'meta.sqlite'}")
    with pytest.raises(Exception, match="NOT NULL constraint failed") as ref:
        reference.execute("INSERT INTO lake.t VALUES (NULL, 'x')")
    expected = str(ref.value).splitlines()[0].split("Constraint Error: ")[-1]
    reference.execute("DETACH lake")

    def refused(action) -> None:
        before = _state(lake, tmp_path)
        with pytest.raises(ConstraintError) as info:
            action()
        assert str(info.value) == expected
        assert _state(lake, tmp_path) == before

    keys = [None if i == 37 else i for i in range(50)]
    refused(lambda: lake.write(pa.table({"k": pa.array(keys[30:40], pa.int64()), "s": ["a"] * 10}), "t"))  # inlined
    refused(lambda: lake.write(pa.table({"k": pa.array(keys, pa.int64()), "s": ["a"] * 50}), "t"))  # Spark
    frame = spark.range(50).selectExpr("CASE WHEN id = 7 THEN NULL ELSE id END AS k", "'s' AS s")
    refused(lambda: lake.write(frame, "t"))
    with pytest.raises(ConstraintError):  # a transaction stages nothing either
        with lake.transaction() as tx:
            tx.write(frame, "t")
    lake.write(spark.range(50).selectExpr("id AS k", "'file' AS s"), "t")  # Parquet rows
    lake.write(pa.table({"k": pa.array([100, 101], pa.int64()), "s": ["inl", "inl"]}), "t")  # inlined rows
    refused(lambda: lake.update("t", "k < 20", {"k": "NULL"}))  # file rows, rewritten as files
    refused(lambda: lake.update("t", "k = 3", {"k": "NULL"}))  # file row, rewritten inlined
    refused(lambda: lake.update("t", "k >= 100", {"k": "NULL"}))  # inlined rows
    source = spark.createDataFrame([(5, "x"), (200, "y")], "k long, s string")
    refused(lambda: lake.table("t").merge(source, "target.k = source.k")
            .when_matched_update({"k": "NULL"}).execute())
    refused(lambda: lake.table("t").merge(source, "target.k = source.k")
            .when_not_matched_insert({"k": "NULL", "s": "source.s"}).execute())

    attach(reference, f"sqlite:{tmp_path / 'meta.sqlite'}")
    assert reference.execute("SELECT count(*), count(k) FROM lake.t").fetchone() == (52, 52)


# ----------------------------------------------------------------------------------------- names
def test_names_follow_the_reference_rules(lake, tmp_path, reference):
    lake.create_schema("s")
    lake.create_table("t", "a INT")
    before = _state(lake, tmp_path)
    for action, error, named in [
        (lambda: lake.create_schema("S"), AlreadyExistsError, "'S'"),
        (lambda: lake.create_table("T", "a INT"), AlreadyExistsError, "main.T"),
        (lambda: lake.create_table("t2", "a INT, A INT"), AlreadyExistsError, "'A'"),
        (lambda: lake.create_table("t2", "st STRUCT<x: INT, X: INT>"), AlreadyExistsError, "'X'"),
        (lambda: lake.create_table("t2", pa.schema([("", pa.int32())])), InvalidNameError, "column name"),
        (lambda: lake.create_table("t2", pa.schema([("a\0b", pa.int32())])), InvalidNameError, "NUL"),
        (lambda: lake.create_schema(""), InvalidNameError, "schema name"),
        (lambda: lake.create_schema("a\0b"), InvalidNameError, "NUL"),
        (lambda: lake.create_table("main.", "a INT"), InvalidNameError, "table name"),
        (lambda: lake.create_table(".t", "a INT"), InvalidNameError, "schema name"),
        (lambda: lake.create_table("a\0b", "a INT"), InvalidNameError, "NUL"),
        # three parts name a table of the nested schema a.b (DuckLake 1.1), which does not exist
        (lambda: lake.create_table("a.b.c", "a INT"), NotFoundError, "'a.b'"),
        (lambda: lake.create_table('"unterminated', "a INT"), InvalidNameError, "unterminated"),
    ]:
        with pytest.raises(error, match="^[^\n]*$") as info:
            action()
        assert named in str(info.value)
    assert _state(lake, tmp_path) == before
    assert lake.create_schema("S", if_not_exists=True) is None
    assert lake.create_table("T", "a INT", if_not_exists=True) is None
    lake.create_table("u", "a INT")
    with pytest.raises(AlreadyExistsError):
        lake.rename_table("u", "T")
    lake.rename_table("t", "T")  # its own name in another case: the reference allows it
    attach(reference, f"sqlite:{tmp_path / 'meta.sqlite'}")
    tables = reference.execute("SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'lake' "
                               "ORDER BY ALL").fetchall()
    assert tables == [("main", "T"), ("main", "u")]


@pytest.mark.parametrize(("name", "parts"), [
    ("t", ("main", "t")), ("s.t", ("s", "t")), ('"my.schema"."t.u"', ("my.schema", "t.u")),
    ('"a""b".c', ('a"b', "c")), ('s."t"', ("s", "t")), (("x.y", "t"), ("x.y", "t")),
])
def test_table_names_take_quotes_and_pairs(name, parts):
    from spark_ducklake.lake import split_name

    assert split_name(name) == parts


def test_dotted_and_backquoted_names_are_readable(lake, tmp_path, spark, reference):
    lake.create_schema("x.y")
    lake.create_table('"x.y"."t.u"', pa.schema([("a.b", pa.int64()), ("c`d", pa.int64()), ("e", pa.int64())]))
    assert lake.table_info(("x.y", "t.u")).columns[0].name == "a.b"

    def rows(n: int, start: int = 0) -> pa.Table:
        values = list(range(start, start + n))
        return pa.table({"a.b": values, "c`d": values, "e": values})

    lake.write(rows(3), ("x.y", "t.u"))  # inlined
    lake.write(rows(30, 100), '"x.y"."t.u"')  # Parquet
    assert lake.read(("x.y", "t.u"), where="`a.b` >= 100").count() == 30
    assert lake.delete('"x.y"."t.u"', "`a.b` = 1") == 1
    assert lake.delete(("x.y", "t.u"), "`c``d` = 101") == 1
    assert lake.update(("x.y", "t.u"), "e IN (2, 102)", {"c`d": "`c``d` * 2", "a.b": "`a.b` + 1000"}) == 2
    source = spark.createDataFrame([(0, 70, 7), (500, 80, 8)], "`a.b` long, `c``d` long, e long")
    lake.table(("x.y", "t.u")).merge(source, "target.`a.b` = source.`a.b`") \
        .when_matched_update({"e": "source.e"}).when_not_matched_insert_all().execute()
    ours = sorted(tuple(r) for r in lake.read(("x.y", "t.u")).collect())
    attach(reference, f"sqlite:{tmp_path / 'meta.sqlite'}")
    theirs = sorted(reference.execute('SELECT "a.b", "c`d", e FROM lake."x.y"."t.u"').fetchall())
    assert ours == theirs
    assert (0, 0, 7) in ours and (500, 80, 8) in ours and (1002, 4, 2) in ours and (1102, 204, 102) in ours
    assert len(ours) == 32  # 3 + 30 written, 2 deleted, 1 merged in


# ----------------------------------------------------------------------------------------- one cast rule
@pytest.mark.parametrize("array", [
    pa.array([dt.datetime(2024, 1, 2)] * 50, pa.timestamp("us")),
    pa.array([True] * 50),
    pa.array(["1"] * 50),
])
def test_small_and_large_writes_share_one_cast_rule(lake, tmp_path, spark, array):
    lake.create_table("t", "k BIGINT")
    before = _state(lake, tmp_path)
    for n in (1, 50):  # 1 row: inlined path; 50: Spark path
        with pytest.raises(SchemaMismatchError, match=f"k \\({array.type} into int64\\)|k \\(.* into int64\\)"):
            lake.write(pa.table({"k": array[:n]}), "t")
    assert _state(lake, tmp_path) == before
    for n in (1, 50):  # what fits losslessly is taken on both paths
        lake.write(pa.table({"k": pa.array(range(n), pa.int32())}), "t")
    assert lake.read("t").count() == 51


# ----------------------------------------------------------------------------------------- SQL strings
def test_bad_conditions_and_values_are_refused_and_change_nothing(lake, tmp_path, spark):
    lake.create_table("t", "k BIGINT, s VARCHAR")
    lake.write(spark.range(30).selectExpr("id AS k", "'f' AS s"), "t")
    lake.write(pa.table({"k": pa.array([100], pa.int64()), "s": ["i"]}), "t")
    before = _state(lake, tmp_path)
    bad = ["k = ", "k = 1; DROP TABLE t", "k = 1;", "k IN (SELECT snapshot_id FROM ducklake_snapshot)",
           "EXISTS (SELECT * FROM ducklake_table)", "nosuch = 1"]
    source = spark.range(1).selectExpr("id AS k")
    actions = [
        lambda text: lake.delete("t", text),
        lambda text: lake.update("t", text, {"s": "'x'"}),
        lambda text: lake.update("t", "k = 1", {"s": text}),
        lambda text: lake.write(pa.table({"k": pa.array([1], pa.int64())}), "t", "overwrite", where=text),
        lambda text: lake.read("t", where=text),
        lambda text: lake.table("t").merge(source, text).when_matched_delete().execute(),
        lambda text: lake.table("t").merge(source, "target.k = source.k").when_matched_delete(text).execute(),
    ]
    for text in bad:
        for action in actions:
            with pytest.raises(InvalidExpressionError, match="^[^\n]*$") as info:
                action(text)
            assert repr(text) in str(info.value)
    assert _state(lake, tmp_path) == before
    assert lake.read("t").count() == 31


# ----------------------------------------------------------------------------------------- PostgreSQL names
def test_postgres_long_column_names_write_parquet_like_the_reference(pg_catalog, lake, spark, reference):
    long_a, long_b = "c" * 70, "c" * 63 + "x" * 5  # the same first 63 bytes: PostgreSQL would merge them
    lake.create_table("t", pa.schema([(long_a, pa.int64()), (long_b, pa.int64()), ("s", pa.string())]))
    lake.write(pa.table({long_a: [1, 2], long_b: [3, 4], "s": ["a", "b"]}), "t")
    assert lake.snapshots()[-1].changes == {"tables_inserted_into": ["1"]}
    with lake.engine.connect() as conn:
        inlined = conn.execute(sa.text("SELECT count(*) FROM ducklake_inlined_data_tables")).scalar()
    assert inlined == 0
    assert sorted(tuple(r) for r in lake.read("t").collect()) == [(1, 3, "a"), (2, 4, "b")]
    lake.close()
    attach(reference, pg_catalog)
    assert sorted(reference.execute("SELECT * FROM lake.t").fetchall()) == [(1, 3, "a"), (2, 4, "b")]
