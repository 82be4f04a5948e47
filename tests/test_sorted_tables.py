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
    with pytest.raises(NotFoundError, match="no column 'nope'"):
        lake.set_sorted_by("t", ["nope DESC"])
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
