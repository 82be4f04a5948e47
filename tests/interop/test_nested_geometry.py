"""Geometry inside lists, structs and maps, both ways with DuckDB 1.5.5: every file we write (in-process with
pyarrow, on Spark with its own writer or the executors' pyarrow writer, updates and compactions) types nested
geometries as Parquet GEOMETRY with geospatial statistics, as DuckDB writes them, so DuckDB reads them as
GEOMETRY and our `extra_stats` equal DuckDB's."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.spec.wkt import wkt_to_wkb
from tests.support.reference import attach

pytestmark = pytest.mark.not_on_mysql("the reference keeps no geometry in a MySQL catalog's tables")

BIG = 1 << 40  # the in-process path
DDL = "id INT, l ARRAY<GEOMETRY>, s STRUCT<g: GEOMETRY, i: INT>, m MAP<STRING, GEOMETRY>"
DUCK_DDL = "id INT, l GEOMETRY[], s STRUCT(g GEOMETRY, i INT), m MAP(VARCHAR, GEOMETRY)"
STRUCT_DDL = "id INT, s STRUCT<g: GEOMETRY, i: INT>"  # no list or map: Spark's own writer on the Spark path
LEAVES = {"l": "l.list.element", "s": "s.g", "m": "m.key_value.value"}
# (id, list, struct (geometry, int), map) in WKT; NULLs at every level
ROWS = [(1, ["POINT (1 2)", "LINESTRING Z (0 0 1, 3 4 5)"], ("POINT (5 6)", 1), {"a": "POINT (7 8)"}),
        (2, None, (None, 2), {"b": None, "c": "POLYGON ((0 0, 1 0, 1 1, 0 0))"}),
        (3, [None], None, None)]


def _wkb(text: str | None) -> bytes | None:
    return None if text is None else wkt_to_wkb(text)


def _wkb_rows(rows=ROWS) -> list[tuple]:
    """The rows with WKB geometries, as we read and write them."""
    return [(i, None if lst is None else [_wkb(g) for g in lst], None if s is None else (_wkb(s[0]), s[1]),
             None if m is None else {k: _wkb(v) for k, v in m.items()}) for i, lst, s, m in rows]


def _arrow(rows: list[tuple], columns=("id", "l", "s", "m")) -> pa.Table:
    types = {"id": pa.int32(), "l": pa.list_(pa.binary()), "s": pa.struct([("g", pa.binary()), ("i", pa.int32())]),
             "m": pa.map_(pa.string(), pa.binary())}
    values = {"id": [r[0] for r in rows], "l": [r[1] for r in rows],
              "s": [None if r[2] is None else {"g": r[2][0], "i": r[2][1]} for r in rows],
              "m": [None if r[3] is None else list(r[3].items()) for r in rows]}
    return pa.table({c: pa.array(values[c], types[c]) for c in columns})


def _spark_frame(spark, rows: list[tuple], columns=("id", "l", "s", "m")):
    types = {"id": "int", "l": "array<binary>", "s": "struct<g:binary,i:int>", "m": "map<string,binary>"}
    index = {"id": 0, "l": 1, "s": 2, "m": 3}
    picked = [tuple(r[index[c]] for c in columns) for r in rows]
    return spark.createDataFrame(picked, ", ".join(f"{c} {types[c]}" for c in columns)).coalesce(1)


def _duck_rows(reference, table: str) -> list[tuple]:
    """What DuckDB reads: the geometries as its text (so it must see them as GEOMETRY, not BLOB)."""
    return reference.execute(
        f"SELECT id, list_transform(l, x -> st_astext(x)), st_astext(s.g), s.i, map_keys(m), "
        f"list_transform(map_values(m), x -> st_astext(x)) FROM lake.{table} ORDER BY id").fetchall()


def _expected(rows=ROWS) -> list[tuple]:
    return [(i, lst, None if s is None else s[0], None if s is None else s[1],
             None if m is None else list(m), None if m is None else list(m.values())) for i, lst, s, m in rows]


def _geometry_types(lake: DuckLake, table: str, columns=("l", "s", "m")) -> set[str]:
    """The Parquet logical types of the nested geometry leaves in the table's current files."""
    found = set()
    for f in lake.plan_scan(table).files:
        schema = pq.ParquetFile(f.path).metadata.schema
        paths = {schema.column(i).path: schema.column(i) for i in range(len(schema))}
        found |= {str(paths[LEAVES[c]].logical_type).split("(")[0] for c in columns}
    return found


def _table_extra_stats(reference, table: str) -> list[str]:
    """The table's geometry `extra_stats`, by column order."""
    return [row[0] for row in reference.execute(
        "SELECT s.extra_stats FROM __ducklake_metadata_lake.ducklake_table_column_stats s "
        "JOIN __ducklake_metadata_lake.ducklake_table t USING (table_id) "
        f"WHERE t.table_name = '{table}' AND t.end_snapshot IS NULL AND s.extra_stats IS NOT NULL "
        "ORDER BY s.column_id").fetchall()]


def _file_stats(reference, table: str) -> list[tuple]:
    """(value count, null count, min, max, extra_stats) of every column of the table's current files, by column
    order (DuckDB's statistics of nested geometries: counts and `extra_stats` of each geometry leaf)."""
    return reference.execute(
        "SELECT s.value_count, s.null_count, s.min_value, s.max_value, s.extra_stats "
        "FROM __ducklake_metadata_lake.ducklake_file_column_stats s "
        "JOIN __ducklake_metadata_lake.ducklake_data_file f USING (data_file_id) "
        "JOIN __ducklake_metadata_lake.ducklake_table t ON t.table_id = s.table_id "
        f"WHERE t.table_name = '{table}' AND t.end_snapshot IS NULL AND f.end_snapshot IS NULL "
        "ORDER BY f.data_file_id, s.column_id").fetchall()


def _open(catalog: str, data: str, path: str, spark, monkeypatch) -> DuckLake:
    if path == "in_process":  # nothing may start Spark
        def refuse():
            raise AssertionError("the in-process path started Spark")

        monkeypatch.setattr("spark_ducklake.dataplane.spark.session.get_or_create_spark", refuse)
        return DuckLake.attach(catalog, data, data_inlining_row_limit=0, small_data_threshold=BIG)
    return DuckLake.attach(catalog, data, spark=spark, data_inlining_row_limit=0, small_data_threshold=0)


@pytest.mark.parametrize("catalog", ["sqlite", "postgres"], indirect=True)
@pytest.mark.parametrize("path", ["in_process", "spark"])
def test_duckdb_reads_nested_geometry_we_write(catalog, tmp_path, spark, reference, monkeypatch, path):
    data = f"{tmp_path}/data/"
    lake = _open(catalog, data, path, spark, monkeypatch)
    lake.create_table("t", DDL)
    lake.create_table("u", STRUCT_DDL)
    rows = _wkb_rows()
    for table, columns in (("t", ("id", "l", "s", "m")), ("u", ("id", "s"))):
        for part in (rows[:2], rows[2:]):  # two files, merged below
            lake.write(_arrow(part, columns) if path == "in_process" else _spark_frame(spark, part, columns), table)
    assert lake.update("t", "id = 3", {"id": "id + 10"}) == 1  # a rewritten file, row ids kept
    assert lake.merge_adjacent_files("t") and lake.merge_adjacent_files("u")
    assert _geometry_types(lake, "t") == {"Geometry"}
    assert _geometry_types(lake, "u", ("s",)) == {"Geometry"}
    got = sorted(lake.read_arrow("t").to_pylist() if path == "in_process" else
                 [r.asDict(recursive=True) for r in lake.read("t").collect()], key=lambda r: r["id"])
    if path == "spark":
        lake.close()
    else:
        assert not lake.context.spark_started
        lake.close()
    assert [r["id"] for r in got] == [1, 2, 13]
    assert got[0]["l"] == rows[0][1] and got[1]["s"] == {"g": None, "i": 2}
    assert dict(got[1]["m"]) == rows[1][3]

    attach(reference, catalog, data)
    expected = _expected()
    assert _duck_rows(reference, "t") == expected[:2] + [(13, *expected[2][1:])]
    assert reference.execute("SELECT id, st_astext(s.g), s.i FROM lake.u ORDER BY id").fetchall() == [
        (1, "POINT (5 6)", 1), (2, None, 2), (3, None, None)]
    # Our statistics of nested geometries are DuckDB's own for the same values.
    reference.execute("CREATE TABLE lake.t2 AS SELECT * FROM lake.t")
    ours, theirs = _table_extra_stats(reference, "t"), _table_extra_stats(reference, "t2")
    assert len(ours) == 3 and ours == theirs
    assert _file_stats(reference, "t") == _file_stats(reference, "t2")  # t: one file since the merge, as t2
    reference.execute("CREATE TABLE lake.u2 AS SELECT * FROM lake.u")
    assert _file_stats(reference, "u") == _file_stats(reference, "u2")
    assert '"types": ["linestring_z", "point"]' in ours[0] and '"types": ["point", "polygon"]' in ours[2]


@pytest.mark.parametrize("catalog", ["sqlite", "duckdb"], indirect=True)
@pytest.mark.parametrize("path", ["in_process", "spark"])
def test_we_read_nested_geometry_duckdb_writes_and_write_it_back(catalog, tmp_path, spark, reference, monkeypatch,
                                                                path):
    data = f"{tmp_path}/data/"
    attach(reference, catalog, data, data_inlining_row_limit=0)
    reference.execute(f"CREATE TABLE lake.t ({DUCK_DDL})")
    values = ", ".join(_duck_literal(r) for r in ROWS)
    reference.execute(f"INSERT INTO lake.t VALUES {values}")
    reference.execute("DETACH lake")

    lake = _open(catalog, data, path, spark, monkeypatch)
    if path == "in_process":
        read = lake.read_arrow("t")
        assert read.schema.field("l").type == pa.list_(pa.field("element", pa.binary()))
        got = sorted(read.to_pylist(), key=lambda r: r["id"])
        lake.write(read.set_column(0, "id", pa.compute.add(read.column("id"), 10)), "t")
    else:
        frame = lake.read("t")
        assert frame.schema.simpleString() == ("struct<id:int,l:array<binary>,s:struct<g:binary,i:int>,"
                                               "m:map<string,binary>>")
        got = sorted((r.asDict(recursive=True) for r in frame.collect()), key=lambda r: r["id"])
        lake.write(frame.selectExpr("id + 10 AS id", "l", "s", "m"), "t")
    rows = _wkb_rows()
    assert [(r["id"], r["l"], None if r["s"] is None else (r["s"]["g"], r["s"]["i"]),
             None if r["m"] is None else dict(r["m"])) for r in got] == rows
    assert lake.merge_adjacent_files("t")  # DuckDB's file and ours in one
    assert _geometry_types(lake, "t") == {"Geometry"}
    assert path == "spark" or not lake.context.spark_started
    lake.close()

    attach(reference, catalog, data)
    expected = _expected()
    assert _duck_rows(reference, "t") == expected + [(i + 10, *rest) for i, *rest in expected]


def _duck_literal(row: tuple) -> str:
    def geo(text):
        return "NULL" if text is None else f"'{text}'::GEOMETRY"

    i, lst, s, m = row
    parts = [str(i), "NULL" if lst is None else "[" + ", ".join(geo(g) for g in lst) + "]::GEOMETRY[]",
             "NULL" if s is None else f"{{'g': {geo(s[0])}, 'i': {s[1]}}}",
             "NULL" if m is None else "MAP {" + ", ".join(f"'{k}': {geo(v)}" for k, v in m.items()) + "}"]
    return "(" + ", ".join(parts) + ")"
