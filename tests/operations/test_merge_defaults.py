"""A MERGE insert that leaves a column out stores the column's default, as a plain write and DuckDB's MERGE do."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests.support.compare import duckdb_rows
from tests.support.reference import attach


def _table_with_default(lake) -> None:
    """t(id, v, extra DEFAULT 7) holding id 1, written before `extra` was added."""
    lake.write(pa.table({"id": pa.array([1], pa.int64()), "v": ["a"]}), "t", mode="error")
    lake.add_column("t", "extra", "BIGINT", default=7)


def _source(ids: list[int]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"v{i}" for i in ids]})


def _duckdb_agrees(lake, lake_catalog, reference, ours: list[tuple]) -> None:
    """DuckDB reads our rows alike, and its own MERGE on the same lake (id 99) stores the default too."""
    data_path = lake.data_path
    lake.close()
    attach(reference, lake_catalog, data_path)
    reference.execute("MERGE INTO lake.t USING (SELECT 99 AS id, 'd' AS v) s ON t.id = s.id "
                      "WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)")
    assert duckdb_rows(reference, "SELECT id, v, extra FROM lake.t") == sorted(ours + [(99, "d", 7)], key=repr)


@pytest.mark.lake(small_data_threshold="64MB")
def test_in_process_merge_insert_fills_defaults(lake, lake_catalog, reference):
    """The pyarrow MERGE (dataplane/arrow/merge_rows.py): named values, insert_all from a source without the column,
    and a source that gives the column (its value wins, NULL included)."""
    _table_with_default(lake)
    lake.table("t").merge(_source([2]), "t.id = s.id", target_alias="t", source_alias="s") \
        .when_not_matched_insert({"id": "s.id", "v": "s.v"}).execute()
    lake.table("t").merge(_source([3]), "t.id = s.id", target_alias="t", source_alias="s") \
        .when_not_matched_insert_all().execute()
    given = _source([4]).append_column("extra", pa.array([None], pa.int64()))
    lake.table("t").merge(given, "t.id = s.id", target_alias="t", source_alias="s") \
        .when_not_matched_insert_all().execute()
    # an update that leaves `extra` out keeps the row's value (the default is for new rows only)
    lake.table("t").merge(_source([1, 5]), "t.id = s.id", target_alias="t", source_alias="s") \
        .when_matched_update({"v": "'upd'"}).when_not_matched_insert({"id": "s.id"}).execute()
    ours = [(1, "upd", 7), (2, "v2", 7), (3, "v3", 7), (4, "v4", None), (5, None, 7)]
    assert sorted(lake.read_arrow("t").select(["id", "v", "extra"]).to_pylist(), key=lambda r: r["id"]) == [
        dict(zip(("id", "v", "extra"), row, strict=True)) for row in ours]
    _duckdb_agrees(lake, lake_catalog, reference, ours)


@pytest.mark.parametrize("inline_limit", [0, 100])
def test_spark_merge_insert_fills_defaults(tmp_path, spark, reference, inline_limit):
    """The Spark MERGE (dataplane/spark/merge_join.py), the Python builder and lake.sql's MERGE in both dialects."""
    from spark_ducklake import DuckLake

    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    lake = DuckLake.attach(catalog, str(tmp_path / "data"), spark=spark, data_inlining_row_limit=inline_limit,
                           small_data_threshold=0)
    _table_with_default(lake)
    frame = spark.createDataFrame([(2, "v2")], "id BIGINT, v STRING")
    lake.table("t").merge(frame, "t.id = s.id", target_alias="t", source_alias="s") \
        .when_not_matched_insert({"id": "s.id", "v": "s.v"}).execute()
    frame = spark.createDataFrame([(3, "v3")], "id BIGINT, v STRING")
    lake.table("t").merge(frame, "t.id = s.id", target_alias="t", source_alias="s") \
        .when_not_matched_insert_all().execute()
    lake.table("t").merge(_source([4]), "t.id = s.id", target_alias="t", source_alias="s") \
        .when_not_matched_insert({"id": "s.id", "v": "s.v"}).execute()  # pyarrow source, merged on Spark
    lake.sql("MERGE INTO t USING (SELECT 5 AS id, 'v5' AS v) s ON t.id = s.id "
             "WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)", dialect="duckdb")
    lake.sql("MERGE INTO t USING (SELECT 6 AS id, 'v6' AS v) s ON t.id = s.id "
             "WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)")
    lake.sql("MERGE INTO t USING (SELECT 7 AS id, 'v7' AS v) s ON t.id = s.id "
             "WHEN NOT MATCHED THEN INSERT BY NAME", dialect="duckdb")
    lake.sql("MERGE INTO t USING (SELECT 8 AS id, 'v8' AS v) s ON t.id = s.id "
             "WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v, DEFAULT)", dialect="duckdb")
    lake.sql("MERGE INTO t USING (SELECT 9 AS id, 'v9' AS v) s ON t.id = s.id "
             "WHEN NOT MATCHED THEN INSERT (id, extra) VALUES (s.id, DEFAULT)", dialect="duckdb")
    lake.sql("INSERT INTO t (id, v) VALUES (10, 'v10')", dialect="duckdb")
    lake.sql("INSERT INTO t (id, v) VALUES (11, 'v11')")
    ours = [(1, "a", 7)] + [(i, f"v{i}", 7) for i in range(2, 12) if i != 9] + [(9, None, 7)]
    assert sorted(tuple(r) for r in lake.read("t").select("id", "v", "extra").collect()) == sorted(ours)
    _duckdb_agrees(lake, catalog, reference, ours)
