"""Struct values are matched to a struct column by field name (case-insensitive, at any depth), as DuckDB casts
them: a field the column lacks is refused (SchemaMismatchError naming the column and the field), one the value
lacks is NULL. Every write path: Arrow/pandas writes (inlined or Parquet), Spark writes, lake.sql INSERT, UPDATE
and MERGE values."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

from spark_ducklake.errors import SchemaMismatchError
from tests.support.reference import attach

SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.struct([("a", pa.int64()), ("c", pa.string())])),
                    ("l", pa.list_(pa.struct([("a", pa.int64())]))),
                    ("n", pa.struct([("i", pa.struct([("a", pa.int64())]))]))])


def _create(lake) -> None:
    lake.write(SCHEMA.empty_table(), "t", mode="error")


def _row(id_: int, types: dict | None = None, **given) -> pa.Table:
    """One row (columns s, l, n from `given`, else NULL); `types` overrides a column's Arrow type."""
    types = types or {}
    values = {"id": id_, "s": None, "l": None, "n": None} | given
    return pa.table({k: pa.array([v], types.get(k, SCHEMA.field(k).type)) for k, v in values.items()})


EXTRA = [  # (incoming column types and values, the column named, the extra field named)
    ({"s": pa.struct([("b", pa.string())])}, {"s": {"b": "x"}}, "s", "b"),  # no field in common
    ({"s": pa.struct([("a", pa.int64()), ("b", pa.string())])}, {"s": {"a": 1, "b": "x"}}, "s", "b"),
    ({"l": pa.list_(pa.struct([("b", pa.int64())]))}, {"l": [{"b": 1}]}, "l.element", "b"),  # struct in a list
    ({"n": pa.struct([("i", pa.struct([("a", pa.int64()), ("z", pa.int64())]))])},
     {"n": {"i": {"a": 1, "z": 2}}}, "n.i", "z"),  # struct in a struct
]


@pytest.mark.parametrize("inline_limit", [0, 100])
@pytest.mark.parametrize(("types", "values", "column", "field"), EXTRA, ids=["none_common", "one_common", "list",
                                                                               "nested"])
def test_arrow_and_pandas_writes_refuse_fields_the_column_lacks(lake, types, values, column, field, inline_limit):
    _create(lake)
    lake.set_option("data_inlining_row_limit", inline_limit)
    before = lake.current_snapshot()
    data = _row(1, types=types, **values)
    for given in (data, data.to_pandas()):
        with pytest.raises(SchemaMismatchError, match=rf"fields not in column {column}: {field}\b"):
            lake.write(given, "t")
    assert lake.current_snapshot() == before
    assert lake.read_arrow("t").num_rows == 0


@pytest.mark.parametrize("inline_limit", [0, 100])
def test_fields_match_by_name_and_missing_ones_are_null_as_in_duckdb(lake, lake_catalog, reference, inline_limit):
    _create(lake)
    lake.set_option("data_inlining_row_limit", inline_limit)
    lake.write(_row(1, s={"a": 5}, types={"s": pa.struct([("a", pa.int64())])}), "t")  # c missing: NULL
    lake.write(_row(2, s={"c": "z", "a": 6}, types={"s": pa.struct([("c", pa.string()), ("a", pa.int64())])}), "t")
    lake.write(_row(3, s={"A": 7}, l=[{"A": 8}], n={"I": {"A": 9}},  # names differ in case only
                    types={"s": pa.struct([("A", pa.int64())]), "l": pa.list_(pa.struct([("A", pa.int64())])),
                           "n": pa.struct([("I", pa.struct([("A", pa.int64())]))])}), "t")
    lake.write(pd.DataFrame({"id": [4], "s": [{"a": 10, "c": "p"}]}), "t")
    expected = [(1, {"a": 5, "c": None}, None, None), (2, {"a": 6, "c": "z"}, None, None),
                (3, {"a": 7, "c": None}, [{"a": 8}], {"i": {"a": 9}}), (4, {"a": 10, "c": "p"}, None, None)]
    ours = sorted((r["id"], r["s"], r["l"], r["n"]) for r in lake.read_arrow("t").to_pylist())
    assert ours == expected
    data_path = lake.data_path
    lake.close()
    attach(reference, lake_catalog, data_path)
    # DuckDB: the same rule for the missing field and the case, and it refuses a struct with no field in common
    reference.execute("INSERT INTO lake.t (id, s) VALUES (5, {'A': 11})")
    with pytest.raises(Exception, match="at least one matching member"):
        reference.execute("INSERT INTO lake.t (id, s) VALUES (6, {'b': 'x'})")
    theirs = sorted(reference.execute("SELECT id, s, l, n FROM lake.t").fetchall())
    assert theirs == expected + [(5, {"a": 11, "c": None}, None, None)]


@pytest.mark.lake(small_data_threshold="64MB")
def test_in_process_merge_refuses_fields_the_column_lacks(lake):
    _create(lake)
    lake.write(_row(1, s={"a": 1, "c": "x"}), "t")
    before = lake.current_snapshot()
    source = _row(2, s={"a": 2, "b": "y"}, types={"s": pa.struct([("a", pa.int64()), ("b", pa.string())])})
    for id_, merge in ((2, lambda m: m.when_not_matched_insert_all()), (1, lambda m: m.when_matched_update_all())):
        builder = lake.table("t").merge(source.set_column(0, "id", pa.array([id_], pa.int64())),
                                        "t.id = s.id", target_alias="t", source_alias="s")
        with pytest.raises(SchemaMismatchError, match=r"fields not in column s: b\b"):
            merge(builder).execute()
    reordered = _row(3, s={"c": "z", "a": 3}, types={"s": pa.struct([("c", pa.string()), ("a", pa.int64())])})
    lake.table("t").merge(reordered, "t.id = s.id", target_alias="t", source_alias="s") \
        .when_not_matched_insert_all().execute()
    assert lake.current_snapshot() == before + 1
    assert sorted((r["id"], r["s"]) for r in lake.read_arrow("t").to_pylist()) == [
        (1, {"a": 1, "c": "x"}), (3, {"a": 3, "c": "z"})]


def test_spark_paths_refuse_fields_the_column_lacks(tmp_path, spark):
    """Spark writes (a DataFrame; an Arrow table above the small-data threshold), lake.sql INSERT in both
    dialects, UPDATE and MERGE values: extra fields refused, fields matched by name (Spark's own struct cast is
    positional: {'b': 2} became {a: 2}, {'c': 'z', 'a': 6} failed)."""
    from spark_ducklake import DuckLake

    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"), spark=spark,
                           small_data_threshold=0)
    _create(lake)
    lake.write(_row(1, s={"a": 1, "c": "x"}), "t")
    before = lake.current_snapshot()
    extra = r"fields not in column {}: {}\b"
    refused = [
        (lambda: lake.write(spark.createDataFrame([(2, (2, "y"))], "id BIGINT, s STRUCT<a: BIGINT, b: STRING>"),
                            "t"), "s", "b"),
        (lambda: lake.write(spark.createDataFrame([(2, [(1,)])], "id BIGINT, l ARRAY<STRUCT<b: BIGINT>>"), "t"),
         "l.element", "b"),
        (lambda: lake.write(_row(2, s={"b": "x"}, types={"s": pa.struct([("b", pa.string())])}), "t"), "s", "b"),
        (lambda: lake.sql("INSERT INTO t (id, s) VALUES (2, {'b': 2})", dialect="duckdb"), "s", "b"),
        (lambda: lake.sql("INSERT INTO t (id, s) VALUES (2, {'a': 1, 'b': 'x'})", dialect="duckdb"), "s", "b"),
        (lambda: lake.sql("INSERT INTO t VALUES (2, {'b': 'x'}, NULL, NULL)", dialect="duckdb"), "s", "b"),
        (lambda: lake.sql("INSERT INTO t (id, n) VALUES (2, named_struct('i', named_struct('b', 1)))"), "n.i", "b"),
        (lambda: lake.sql("UPDATE t SET s = {'b': 1} WHERE id = 1", dialect="duckdb"), "s", "b"),
        (lambda: lake.update("t", set={"s": "named_struct('a', 1, 'b', 'x')"}), "s", "b"),
        (lambda: lake.table("t").merge(spark.createDataFrame([(1,)], "id BIGINT"), "t.id = s.id",
                                       target_alias="t", source_alias="s")
         .when_matched_update({"s": "named_struct('b', 'x')"}).execute(), "s", "b"),
        (lambda: lake.sql("MERGE INTO t USING (SELECT 2 AS id) s ON t.id = s.id WHEN NOT MATCHED THEN "
                          "INSERT (id, s) VALUES (s.id, {'a': 1, 'b': 'x'})", dialect="duckdb"), "s", "b"),
    ]
    for action, column, field in refused:
        with pytest.raises(SchemaMismatchError, match=extra.format(column, field)):
            action()
    with pytest.raises(SchemaMismatchError, match=extra.format("s", "b")):  # an update of rows staged before it
        with lake.transaction() as tx:
            tx.write(_row(5, s={"a": 5, "c": "q"}), "t")
            tx.update("t", "id = 5", {"s": "named_struct('b', 1)"})
    assert lake.current_snapshot() == before
    lake.sql("INSERT INTO t (id, s) VALUES (2, {'c': 'z', 'a': 6})", dialect="duckdb")
    lake.sql("INSERT INTO t (id, s) VALUES (3, named_struct('a', 7))")
    lake.sql("UPDATE t SET s = {'c': 'u', 'a': 0} WHERE id = 1", dialect="duckdb")
    source = spark.createDataFrame([(4, ("w", 8))], "id BIGINT, s STRUCT<c: STRING, a: BIGINT>")
    lake.table("t").merge(source, "t.id = s.id", target_alias="t", source_alias="s") \
        .when_not_matched_insert_all().execute()
    assert sorted((r["id"], r["s"]) for r in lake.read_arrow("t").to_pylist()) == [
        (1, {"a": 0, "c": "u"}), (2, {"a": 6, "c": "z"}), (3, {"a": 7, "c": None}), (4, {"a": 8, "c": "w"})]


def test_format_ducklake_writes_match_fields_by_name(lake, spark):
    """`df.write.format("ducklake")`'s tasks conform their batches with the same rule."""
    _create(lake)
    lake.register(spark)
    rest = "l ARRAY<STRUCT<a: BIGINT>>, n STRUCT<i: STRUCT<a: BIGINT>>"  # the writer takes every column
    wider = spark.createDataFrame([(1, (1, "x"), None, None)], f"id BIGINT, s STRUCT<a: BIGINT, b: STRING>, {rest}")
    with pytest.raises(Exception, match=r"fields not in column s: b\b"):
        wider.write.format("ducklake").mode("append").option("table", "t").save()
    assert lake.read_arrow("t").num_rows == 0
    cased = spark.createDataFrame([(2, ("z", 6), None, None)], f"id BIGINT, s STRUCT<C: STRING, A: BIGINT>, {rest}")
    cased.write.format("ducklake").mode("append").option("table", "t").save()
    assert [(r["id"], r["s"]) for r in lake.read_arrow("t").to_pylist()] == [(2, {"a": 6, "c": "z"})]
