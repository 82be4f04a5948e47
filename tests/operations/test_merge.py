"""MERGE with delta-spark's builder, checked against DuckDB's MERGE INTO on the same data."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql import functions as F

from spark_ducklake import DuckLake
from tests.support.compare import duckdb_rows, spark_rows
from tests.support.reference import attach

TARGET = "SELECT i AS id, 'v' || i AS v, i * 10 AS n FROM range(60) r(i)"
SOURCE = "SELECT i AS id, 'new' || i AS v, i AS n FROM range(40, 100, 2) r(i)"


@pytest.mark.parametrize("inline_limit", [0, 1000])
def test_merge_matches_duckdb_merge_into(tmp_path, spark, reference, inline_limit):
    ours_cat = f"sqlite:{tmp_path / 'ours.sqlite'}"
    # DuckLake's MERGE in DuckDB takes one UPDATE/DELETE action only: the expected result comes from DuckDB's
    # own MERGE on an in-memory table with the same rows.
    reference.execute(f"CREATE TABLE memory.main.t AS {TARGET}")
    reference.execute(f"""
        MERGE INTO memory.main.t AS target USING ({SOURCE}) AS source ON target.id = source.id
        WHEN MATCHED AND source.id % 4 = 0 THEN DELETE
        WHEN MATCHED THEN UPDATE SET v = source.v, n = target.n + source.n
        WHEN NOT MATCHED THEN INSERT (id, v, n) VALUES (source.id, source.v, -1)
        WHEN NOT MATCHED BY SOURCE AND target.id < 5 THEN DELETE
        WHEN NOT MATCHED BY SOURCE AND target.id >= 30 THEN UPDATE SET v = 'untouched'""")
    expected = duckdb_rows(reference, "SELECT id, v, n FROM memory.main.t")

    lake = DuckLake.attach(ours_cat, str(tmp_path / "ours"), data_inlining_row_limit=inline_limit)
    lake.write(spark.sql(TARGET.replace("range(60) r(i)", "(SELECT id AS i FROM range(60))")), "t", mode="error")
    source = spark.sql(SOURCE.replace("range(40, 100, 2) r(i)", "(SELECT id AS i FROM range(40, 100, 2))"))
    result = (
        lake.table("t").merge(source, "target.id = source.id")
        .when_matched_delete("source.id % 4 = 0")
        .when_matched_update({"v": "source.v", "n": F.col("target.n") + F.col("source.n")})
        .when_not_matched_insert({"id": "source.id", "v": "source.v", "n": "-1"})
        .when_not_matched_by_source_delete("target.id < 5")
        .when_not_matched_by_source_update({"v": "'untouched'"}, "target.id >= 30")
        .execute()
    )
    assert spark_rows(lake.read("t")) == expected
    assert (result.deleted, result.updated, result.inserted) == (5 + 5, 5 + 20, 20)
    assert len(lake.snapshots()) == 3  # the whole merge is one snapshot
    lake.close()
    attach(reference, ours_cat, alias="ours")
    assert duckdb_rows(reference, "SELECT id, v, n FROM ours.t") == expected


def test_merge_all_columns_and_duplicate_matches(lake, spark):
    lake.write(spark.range(20).selectExpr("id", "id * 2 AS x"), "t", mode="error")
    upsert = spark.range(15, 25).selectExpr("id", "id * 100 AS x")
    result = (lake.table("t").merge(upsert, "target.id = source.id")
              .when_matched_update_all().when_not_matched_insert_all().execute())
    assert (result.updated, result.inserted, result.deleted) == (5, 5, 0)
    assert spark_rows(lake.read("t")) == sorted(
        [(i, i * 2) for i in range(15)] + [(i, i * 100) for i in range(15, 25)], key=repr)
    # as in DuckDB, several source rows matching one target row change it once: the first of them (source order)
    thrice = spark.range(3).selectExpr("1 AS id", "id + 7 AS x")
    result = lake.table("t").merge(thrice, "target.id = source.id").when_matched_update_all().execute()
    assert (result.updated, result.inserted, result.deleted) == (3, 0, 0)  # DuckDB counts the matched pairs
    assert sorted(r for r in spark_rows(lake.read("t")) if r[0] == 1) == [(1, 7)]
    assert lake.read("t").count() == 25


@pytest.mark.parametrize("small", [False, True])
def test_merge_one_source_row_many_targets_and_many_sources_one_target(lake, spark, small):
    """DuckDB allows both: each matched target row changes once; pyarrow (small) and Spark paths agree."""
    lake.write(spark.range(9).selectExpr("id", "id % 3 AS g", "'v' AS s"), "t", mode="error")
    source = pa.table({"g": [0, 1, 1, 2], "s": ["a", "b1", "b2", "c"], "kill": [False, False, False, True]})
    if not small:
        source = spark.createDataFrame(source.to_pandas())
    before = len(lake.snapshots())
    result = (lake.table("t").merge(source, "target.g = source.g")
              .when_matched_delete("source.kill").when_matched_update({"s": "source.s"}).execute())
    assert (result.updated, result.deleted, result.inserted) == (3 + 6, 3, 0)  # pairs, as DuckDB counts them
    assert len(lake.snapshots()) == before + 1
    assert spark_rows(lake.read("t")) == sorted(
        [(i, 0, "a") for i in (0, 3, 6)] + [(i, 1, "b1") for i in (1, 4, 7)], key=repr)
    ids = lake.read("t", virtual_columns=["rowid"]).select("id", "rowid").collect()
    assert sorted((r.id, r.rowid) for r in ids) == [(i, i) for i in (0, 1, 3, 4, 6, 7)]  # row ids kept


def test_sql_merge_using_columns_bare_insert_and_values_in_column_order(lake, lake_catalog, spark, reference):
    """DuckDB's MERGE spellings: USING (cols) for the condition, bare UPDATE / INSERT, INSERT VALUES in the
    table's column order; DuckDB reads the same rows."""
    lake.sql("CREATE TABLE t (k INT, v VARCHAR); INSERT INTO t VALUES (1, 'a'), (2, 'b');"
             "CREATE TABLE s (k INT, v VARCHAR); INSERT INTO s VALUES (2, 'B'), (3, 'C')", dialect="duckdb")
    lake.sql("MERGE INTO t USING s USING (k) WHEN MATCHED THEN UPDATE WHEN NOT MATCHED THEN INSERT",
             dialect="duckdb")
    lake.sql("MERGE INTO t USING (SELECT 4 AS k, 'D' AS v) AS s ON t.k = s.k "
             "WHEN NOT MATCHED THEN INSERT VALUES (s.k, s.v || '!')", dialect="duckdb")
    expected = [(1, "a"), (2, "B"), (3, "C"), (4, "D!")]
    assert spark_rows(lake.read("t")) == expected
    lake.close()
    attach(reference, lake_catalog)
    assert duckdb_rows(reference, "SELECT * FROM lake.t ORDER BY k") == expected


@pytest.mark.parametrize("small", [False, True])
def test_merge_inlines_its_new_rows_only_when_all_of_them_fit_the_limit(tmp_path, spark, small):
    """`data_inlining_row_limit` bounds a MERGE's new rows, updated and inserted together, on both paths:
    5 updates + 4 inserts (9 <= 10) are inlined, 5 updates + 10 inserts (15 > 10) are written as files."""
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"), data_inlining_row_limit=10)
    lake.write(spark.range(30).selectExpr("id", "'x' AS v"), "t", mode="error")

    def merge(first: int, last: int) -> list[str]:
        source = pa.table({"id": pa.array(range(first, last), pa.int64()), "v": ["y"] * (last - first)})
        (lake.table("t").merge(source if small else spark.createDataFrame(source), "target.id = source.id")
         .when_matched_update_all().when_not_matched_insert_all().execute())
        return sorted(lake.snapshots()[-1].changes)

    assert "inlined_insert" in merge(25, 34)  # ids 25..29 updated, 30..33 inserted
    changes = merge(29, 44)  # 29..33 updated, 34..43 inserted
    assert "inlined_insert" not in changes and "tables_inserted_into" in changes, changes
    assert spark_rows(lake.read("t")) == sorted([(i, "x") for i in range(25)] + [(i, "y") for i in range(25, 44)],
                                                key=repr)
    lake.close()
