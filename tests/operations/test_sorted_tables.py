"""SET / RESET SORTED BY: the reference's catalog rows, and writes sorted by the keys on both sides."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.errors import NotFoundError
from tests.support.reference import attach


def _file_rows(lake: DuckLake, table: str, column: str) -> list[list]:
    return [pq.read_table(f.path, columns=[column]).column(column).to_pylist()
            for f in lake.plan_scan(table).files]


def test_sorted_writes_and_duckdb_agrees_on_the_order(lake, lake_catalog, spark, reference):
    catalog = lake_catalog
    df = spark.sql("SELECT id, CAST((id * 7919) % 1000 AS INT) AS k, CASE WHEN id % 9 = 0 THEN NULL "
                   "ELSE concat('v', id % 13) END AS s FROM range(3000)").repartition(2)
    lake.create_table("t", df.schema)
    with pytest.raises(NotFoundError, match="Unmatched columns were: nope, Nah"):
        lake.set_sorted_by("t", ["nope DESC", "concat(Nah, k)"])
    lake.set_sorted_by("t", ["k DESC", "s ASC NULLS FIRST"])
    lake.write(df, "t")
    for rows in _file_rows(lake, "t", "k"):
        assert rows == sorted(rows, reverse=True)
    lake.set_option("sort_on_insert", False, table_name="t")
    lake.write(df.orderBy("id"), "t")
    assert any(rows != sorted(rows, reverse=True) for rows in _file_rows(lake, "t", "k"))
    lake.close()
    attach(reference, catalog)
    assert reference.execute("""SELECT sort_key_index, expression, sort_direction, null_order
        FROM __ducklake_metadata_lake.ducklake_sort_expression ORDER BY ALL""").fetchall() == [
        (0, "k", "DESC", "NULLS_LAST"), (1, "s", "ASC", "NULLS_FIRST")]
    # DuckDB changes the keys; our next write follows them.
    reference.execute("ALTER TABLE lake.t SET SORTED BY (id % 100 ASC)")
    reference.execute("DETACH lake")
    lake = DuckLake.attach(catalog)
    lake.set_option("sort_on_insert", True, table_name="t")
    lake.write(spark.range(5000, 7000).selectExpr("id", "CAST(id % 1000 AS INT) AS k", "'x' AS s").coalesce(1),
               "t")
    newest = max(lake.plan_scan("t").files, key=lambda f: f.data_file_id)
    ids = pq.read_table(newest.path, columns=["id"]).column("id").to_pylist()
    assert ids == sorted(ids, key=lambda i: i % 100)
    lake.reset_sorted_by("t")
    assert "tables_altered" in lake.snapshots()[-1].changes


def test_sort_key_text_and_unknown_columns_as_the_reference(lake):
    """Sort expressions are stored with lower-case function names (DuckDB's expression text); every unknown column
    of every key is named, in the reference's words."""
    from spark_ducklake.catalog.changes.sorting import parse_sort_keys

    lake.create_table("t", "a BIGINT, b VARCHAR")
    info = lake.table_info("t")
    assert [k.expression for k in parse_sort_keys(info, ["CONCAT(a, '_', b) ASC", "Upper(b) DESC"])] == \
        ["concat(a, '_', b)", "upper(b)"]
    with pytest.raises(NotFoundError, match="not found in the DuckLake table. Unmatched columns were: WOOT, BLAH, C "):
        parse_sort_keys(info, ["WOOT ASC", "BLAH || a || C ASC"])


def test_sorting_by_a_list_column_falls_back_to_spark(lake, spark):
    """pyarrow cannot sort list values: a list sort key is sorted on Spark (lexicographically, as DuckDB)."""
    import pyarrow as pa

    lake.create_table("t", "i INT, l ARRAY<INT>")
    lake.set_sorted_by("t", ["l DESC"])
    lake.write(pa.table({"i": pa.array([1, 3, 2], pa.int32()),
                         "l": pa.array([[10, 20], [30], [40, 50, 60]], pa.list_(pa.int32()))}), "t")
    assert [r[0] for r in lake.sql("FROM t", dialect="duckdb").collect()] == [2, 3, 1]


def test_setting_the_same_sort_keys_again_changes_nothing(lake):
    """As the reference: SET SORTED BY with the keys the table has adds no sort_info row (no new snapshot)."""
    lake.create_table("t", "a BIGINT, b VARCHAR")
    first = lake.set_sorted_by("t", ["a ASC NULLS LAST", "b ASC"])
    assert lake.set_sorted_by("t", ["a ASC NULLS LAST", "b ASC"]) is None
    assert lake.current_snapshot() == first
    assert lake.set_sorted_by("t", ["b ASC", "a ASC"]) > first
