"""Nested field ids: every data file we write gives list elements and map keys/values the field ids DuckDB's
ducklake extension matches files by (their column ids in ducklake_column), and carries no name mapping.

Before, Spark's writer left those ids out and such files got a name mapping; DuckDB reads a mapped file by name and
then cannot find `_ducklake_internal_row_id` by its field id, so `SELECT rowid, *` and `table_changes` failed
("schema mismatch in glob") once a table held files of both writers.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spark_ducklake import DuckLake
from tests.support.compare import duckdb_rows, spark_rows
from tests.support.reference import attach

DUCK_SCHEMA = "id INTEGER, l INTEGER[], st STRUCT(a INTEGER, b VARCHAR[]), m MAP(VARCHAR, INTEGER)"
COLUMNS = "id, l, st, m"
NOT_ON_MYSQL = pytest.mark.not_on_mysql("the reference cannot create nested columns in a MySQL catalog")


def duck_rows(start: int, end: int) -> str:
    """A SELECT of DuckDB rows for the nested table, ids start..end-1."""
    return f"SELECT i, [i, i + 1], {{'a': i, 'b': ['s' || i]}}, MAP {{'k' || i: i}} FROM range({start}, {end}) r(i)"


def _spark_rows(spark, start: int, n: int):
    return spark.range(start, start + n).selectExpr(
        "CAST(id AS INT) AS id", "array(CAST(id AS INT), CAST(id AS INT) * 2) AS l",
        "named_struct('a', CAST(id AS INT), 'b', array(concat('x', id))) AS st",
        "map(concat('k', id), CAST(id AS INT)) AS m")


def _arrow_rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({
        "id": pa.array(ids, pa.int32()),
        "l": pa.array([[i, i * 2] for i in ids], pa.list_(pa.int32())),
        "st": pa.array([{"a": i, "b": [f"x{i}"]} for i in ids],
                       pa.struct([("a", pa.int32()), ("b", pa.list_(pa.string()))])),
        "m": pa.array([[(f"k{i}", i)] for i in ids], pa.map_(pa.string(), pa.int32())),
    })


def _duck_creates(reference, catalog: str, data: str) -> None:
    attach(reference, catalog, data)
    reference.execute(f"CREATE TABLE lake.t ({DUCK_SCHEMA})")
    reference.execute("INSERT INTO lake.t " + duck_rows(0, 50))  # 50 rows: a Parquet file
    reference.execute("DETACH lake")


def _duckdb_reads_everything(reference, catalog: str) -> list[tuple]:
    """`SELECT rowid, *` at every snapshot and `table_changes` over all of them, as DuckDB reads them (it raised
    "schema mismatch in glob" on mixed files); the current rows with their row ids."""
    attach(reference, catalog)
    snapshots = [r[0] for r in reference.execute("SELECT snapshot_id FROM lake.snapshots() ORDER BY 1").fetchall()]
    for snap in snapshots:
        try:
            rows = reference.execute(f"SELECT rowid, {COLUMNS} FROM lake.t AT (VERSION => {snap})").fetchall()
        except Exception as exc:  # the table does not exist yet at the first snapshots
            assert "does not exist" in str(exc), f"snapshot {snap}: {exc}"
            continue
        count = reference.execute(f"SELECT count(*) FROM lake.t AT (VERSION => {snap})").fetchone()[0]
        assert len(rows) == count, f"snapshot {snap}"
    changes = reference.execute(f"SELECT change_type, rowid, {COLUMNS} FROM lake.table_changes('t', 0, "
                                f"{snapshots[-1]})").fetchall()
    assert "insert" in {row[0] for row in changes}
    current = duckdb_rows(reference, f"SELECT rowid, {COLUMNS} FROM lake.t")
    reference.execute("DETACH lake")
    return current


def _ids(schema: pa.Schema) -> dict[str, int | None]:
    """Dotted path -> Parquet field id of every field (list elements and map keys/values under their Arrow names:
    element, key, value)."""
    out: dict[str, int | None] = {}

    def walk(field: pa.Field, prefix: str) -> None:
        raw = (field.metadata or {}).get(b"PARQUET:field_id")
        out[prefix + field.name] = int(raw) if raw is not None else None
        kind, inner = field.type, f"{prefix}{field.name}."
        children = (list(kind) if pa.types.is_struct(kind) else [kind.key_field, kind.item_field]
                    if pa.types.is_map(kind) else [kind.value_field] if pa.types.is_list(kind) else [])
        for child in children:
            walk(child, inner)

    for field in schema:
        walk(field, "")
    return out


def field_ids(path: str) -> dict[str, int | None]:
    """`_ids` of a Parquet file's footer."""
    return _ids(pq.read_schema(path))


def expected_ids(lake, table: str) -> dict[str, int]:
    """Dotted path -> column id, as ducklake_column assigns them (list children and map children renamed to the
    Arrow names the files use)."""
    out: dict[str, int] = {}

    def walk(col, prefix: str, name: str) -> None:
        out[prefix + name] = col.column_id
        names = {"list": ["element"], "map": ["key", "value"]}.get(col.type)
        for i, child in enumerate(col.children):
            walk(child, f"{prefix}{name}.", names[i] if names else child.name)

    for col in lake.table_info(table).columns:
        walk(col, "", col.name)
    return out


def footer_problems(lake, table: str) -> list[str]:
    """What is wrong with the current files of `table`: a field id missing or not its column id in a footer, or a
    name mapping on a file that needs none (checked after DuckDB reads, so a failing read shows first)."""
    want = expected_ids(lake, table)
    files = lake.plan_scan(table).files
    problems = [] if files else ["no data files"]
    for f in files:
        got = field_ids(f.path)
        problems += [f"{f.path}: {key} has id {got.get(key)}, not {value}" for key, value in want.items()
                     if got.get(key) != value]
        if f.mapping_id is not None:
            problems.append(f"{f.path}: a file with every field id needs no name mapping")
    return problems


@NOT_ON_MYSQL
@pytest.mark.lake(small_data_threshold=0)  # every operation on Spark executors
def test_duckdb_reads_rowid_and_changes_after_our_spark_writes(catalog, lake, tmp_path, spark, reference):
    lake.close()
    _duck_creates(reference, catalog, str(tmp_path / "data"))
    lake = DuckLake.attach(catalog, spark=spark, small_data_threshold=0)
    lake.write(_spark_rows(spark, 100, 40), "t")
    lake.update("t", "id < 10", {"id": "id + 1000", "l": "array(id)"})
    lake.delete("t", "id = 20")
    (lake.table("t").merge(_spark_rows(spark, 30, 80), "target.id = source.id")
     .when_matched_update_all().when_not_matched_insert_all().execute())
    lake.write(_spark_rows(spark, 500, 3), "t")  # inlined, then flushed
    lake.flush_inlined_data()
    lake.merge_adjacent_files("t")
    problems = footer_problems(lake, "t")
    ours = spark_rows(lake.read("t", virtual_columns=["rowid"]).select("rowid", *COLUMNS.split(", ")))
    lake.close()
    assert _duckdb_reads_everything(reference, catalog) == ours
    assert problems == []
    assert len(ours) == 50 + 40 - 1 + 50 + 3  # the merge inserts 50..99


@NOT_ON_MYSQL
def test_duckdb_reads_rowid_and_changes_after_our_in_process_writes(catalog, tmp_path, reference):
    _duck_creates(reference, catalog, str(tmp_path / "data"))
    lake = DuckLake.attach(catalog, data_inlining_row_limit=0)  # small: pyarrow on the driver, no Spark
    lake.write(_arrow_rows(100, 40), "t")
    lake.update("t", "id < 10", {"id": "id + 1000"})
    lake.delete("t", "id = 20")
    (lake.table("t").merge(_arrow_rows(30, 80), "target.id = source.id")
     .when_matched_update_all().when_not_matched_insert_all().execute())
    problems = footer_problems(lake, "t")
    lake.close()
    current = _duckdb_reads_everything(reference, catalog)
    assert problems == []
    assert len(current) == 50 + 40 - 1 + 50  # the merge inserts 50..99


@pytest.mark.lake(small_data_threshold=0, data_inlining_row_limit=0)
def test_table_we_create_reads_in_duckdb_after_mixed_writers(lake, lake_catalog, spark, reference):
    lake.write(_spark_rows(spark, 0, 30), "t", mode="error")
    problems = footer_problems(lake, "t")
    lake.close()
    attach(reference, lake_catalog)
    reference.execute("INSERT INTO lake.t " + duck_rows(1000, 1020))
    reference.execute("DETACH lake")
    lake = DuckLake.attach(lake_catalog, spark=spark, small_data_threshold=0)
    lake.update("t", "id % 2 = 0", {"l": "array(id, id)"})
    lake.rewrite_data_files("t", delete_threshold=0.0)
    problems += footer_problems(lake, "t")
    ours = spark_rows(lake.read("t", virtual_columns=["rowid"]).select("rowid", *COLUMNS.split(", ")))
    lake.close()
    assert _duckdb_reads_everything(reference, lake_catalog) == ours
    assert len(ours) == 50 and problems == []


@pytest.mark.lake(small_data_threshold=0, data_inlining_row_limit=0)
def test_files_from_older_versions_without_element_ids_still_read(lake, lake_catalog, spark, monkeypatch, reference):
    """Lakes written before this fix hold files without element ids (Spark's writer) and a name mapping: we read
    them beside new files, and compacting rewrites them with every id, which makes DuckDB read the lake again."""
    from spark_ducklake.dataplane.spark import write as spark_write

    with monkeypatch.context() as patch:  # the writer as it was: Spark's own, element ids missing
        patch.setattr(spark_write, "uses_pyarrow_writer", lambda *_args, **_kw: False)
        lake.write(_spark_rows(spark, 0, 20), "t", mode="error")
    old = lake.list_files("t")[0].data_file
    assert field_ids(old)["l.element"] is None
    assert all(f.mapping_id is not None for f in lake.plan_scan("t").files)
    lake.write(_spark_rows(spark, 100, 20), "t")
    lake.update("t", "id = 5", {"id": "id + 1"})
    expected = sorted([(i + (i == 5), [i, 2 * i]) for i in list(range(20)) + list(range(100, 120))])
    assert sorted((r.id, r.l) for r in lake.read("t").select("id", "l").collect()) == expected
    lake.merge_adjacent_files("t")
    lake.rewrite_data_files("t", delete_threshold=0.0)
    problems = footer_problems(lake, "t")
    ours = spark_rows(lake.read("t", virtual_columns=["rowid"]).select("rowid", *COLUMNS.split(", ")))
    lake.close()
    assert _duckdb_reads_everything(reference, lake_catalog) == ours
    assert problems == []


def test_in_place_arrow_schema_gives_element_key_and_value_ids():
    import io

    from pyspark.sql import types as T

    from spark_ducklake.dataplane.spark.types import to_spark_schema
    from spark_ducklake.dataplane.spark.write_in_place import arrow_schema
    from spark_ducklake.spec.model import Column

    struct = Column(2, "element", "struct", children=[
        Column(3, "a", "int32"), Column(4, "b", "list", children=[Column(5, "element", "varchar")])])
    columns = [Column(1, "l", "list", children=[struct]),
               Column(6, "m", "map", children=[Column(7, "key", "varchar"),
                                               Column(8, "value", "list", children=[Column(9, "e", "int64")])])]
    schema = arrow_schema(T.StructType(list(to_spark_schema(columns).fields)), columns)
    sink = io.BytesIO()
    pq.write_table(schema.empty_table(), sink)  # the ids must survive into the Parquet footer
    sink.seek(0)
    assert _ids(pq.read_schema(sink)) == {"l": 1, "l.element": 2, "l.element.a": 3, "l.element.b": 4,
                                          "l.element.b.element": 5, "m": 6, "m.key": 7, "m.value": 8,
                                          "m.value.element": 9}
