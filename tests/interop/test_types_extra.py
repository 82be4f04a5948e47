"""variant and geometry columns, both directions with DuckDB's ducklake extension, statistics included."""

from __future__ import annotations

import json

import pytest

from spark_ducklake import DuckLake
from tests.support.reference import attach

pytestmark = pytest.mark.not_on_mysql("the reference keeps no variant or geometry in a MySQL catalog's tables")

POINT_1_2 = bytes.fromhex("0101000000000000000000F03F0000000000000040")  # WKB of POINT (1 2)


def _duck_stats(reference, sql: str) -> list[tuple]:
    return reference.execute(sql.replace("{m}", "__ducklake_metadata_lake")).fetchall()


def test_we_read_variant_and_geometry_duckdb_writes(catalog, tmp_path, spark, reference):
    data = f"{tmp_path}/data/"
    attach(reference, catalog, data, data_inlining_row_limit=0)
    reference.execute("CREATE TABLE lake.t (id INT, v VARIANT, g GEOMETRY)")
    reference.execute("""INSERT INTO lake.t VALUES (1, 42::VARIANT, 'POINT (1 2)'::GEOMETRY),
        (2, {'a': 1, 'b': [1, 2]}::VARIANT, NULL), (3, 'x'::VARIANT, 'LINESTRING Z (5 5 5, 10 10 10)'::GEOMETRY)""")
    wkb = dict(reference.execute("SELECT id, st_asWKB(g) FROM lake.t").fetchall())
    reference.execute("DETACH lake")

    lake = DuckLake.attach(catalog, data, spark=spark)
    frame = lake.read("t")
    assert frame.schema.simpleString() == "struct<id:int,v:variant,g:binary>"
    rows = {r.id: (r.v.toJson() if r.v is not None else None, r.g) for r in frame.collect()}
    assert rows[1] == ("42", POINT_1_2)
    assert rows[2] == ('{"a":1,"b":[1,2]}', None)
    assert rows[3][0] == '"x"' and rows[3][1] == bytes(wkb[3])
    filtered = lake.read("t", where="id = 3").selectExpr("variant_get(v, '$', 'string') AS s").collect()
    assert [r.s for r in filtered] == ["x"]
    lake.close()


def test_duckdb_reads_variant_and_geometry_we_write_with_stats(catalog, tmp_path, spark, reference):
    data = f"{tmp_path}/data/"
    lake = DuckLake.attach(catalog, data, spark=spark)
    lake.create_table("t", "id INT, v VARIANT, g GEOMETRY")
    points = [(i, POINT_1_2[:5] + _le(i) + _le(2 * i)) for i in range(3)]  # WKB of POINT (i 2i)
    first = spark.createDataFrame(points, "id int, g binary").selectExpr(
        "id", "parse_json(to_json(named_struct('k', id, 'name', concat('n', id)))) AS v", "g")
    lake.write(first.coalesce(1), "t")  # one file, so its stats cover all three points
    lake.write(spark.createDataFrame([(10, None)], "id int, g binary").selectExpr("id", "parse_json('7') v", "g"),
               "t")
    lake.close()

    attach(reference, catalog, data)
    stats = _duck_stats(reference, "SELECT column_id, value_count, null_count, extra_stats FROM "
                                   "{m}.ducklake_file_column_stats WHERE column_id > 1 "
                                   "ORDER BY data_file_id, column_id")
    table_stats = dict(_duck_stats(reference, "SELECT column_id, extra_stats FROM {m}.ducklake_table_column_stats"))
    variant_rows = _duck_stats(reference, "SELECT variant_path, shredded_type, value_count, null_count, min_value, "
                                          "max_value FROM {m}.ducklake_file_variant_stats ORDER BY data_file_id")
    geo = json.loads(stats[1][3])
    assert geo == {"bbox": {"xmin": 0.0, "xmax": 2.0, "ymin": 0.0, "ymax": 4.0, "zmin": None, "zmax": None,
                            "mmin": None, "mmax": None}, "types": ["point"]}
    assert stats[1][1:3] == (3, 0) and stats[3][1:3] == (0, 1)  # second file: one NULL geometry
    assert stats[3][3] is None  # nothing but NULLs: no bounding box
    assert ('"k"', "int64", 3, 0, "0", "2") in variant_rows and ('"name"', "varchar", 3, 0, "n0", "n2") in variant_rows
    assert ("root", "int64", 1, 0, "7", "7") in variant_rows
    assert table_stats[2] is None  # shredded differently per file: no table-wide variant stats, as the spec says
    assert json.loads(table_stats[3])["bbox"]["xmax"] == 2.0

    got = reference.execute("SELECT id, v::VARCHAR, st_astext(g) FROM lake.t ORDER BY id").fetchall()
    assert got == [(0, "{'k': 0, 'name': n0}", "POINT (0 0)"), (1, "{'k': 1, 'name': n1}", "POINT (1 2)"),
                   (2, "{'k': 2, 'name': n2}", "POINT (2 4)"), (10, "7", None)]
    # DuckDB's own statistics of the same values agree with ours.
    reference.execute("CREATE TABLE lake.u AS SELECT * FROM lake.t WHERE id < 10")
    duck = _duck_stats(reference, "SELECT extra_stats FROM {m}.ducklake_file_column_stats s JOIN {m}.ducklake_table "
                                  "t USING (table_id) WHERE t.table_name = 'u' AND s.column_id = 3")
    assert json.loads(duck[0][0]) == geo


def test_variant_and_geometry_round_trip_spark_duckdb_spark(catalog, tmp_path, spark, reference):
    data = f"{tmp_path}/data/"
    attach(reference, catalog, data, data_inlining_row_limit=0)
    reference.execute("CREATE TABLE lake.t (id INT, v VARIANT, g GEOMETRY)")
    reference.execute("INSERT INTO lake.t VALUES (1, [1, 2, 3]::VARIANT, 'POLYGON ((0 0, 1 0, 1 1, 0 0))')")
    reference.execute("DETACH lake")
    lake = DuckLake.attach(catalog, data, spark=spark)
    lake.write(lake.read("t").selectExpr("id + 1 AS id", "v", "g"), "t")  # DuckDB's values written back by Spark
    lake.write(lake.read("t").where("id = 1"), "t")
    ours = sorted((r.id, r.v.toJson(), bytes(r.g)) for r in lake.read("t").collect())
    lake.close()
    attach(reference, catalog, data)
    theirs = sorted((i, json.dumps(json.loads(v), separators=(",", ":")), bytes(g)) for i, v, g in reference.execute(
        "SELECT id, v::JSON::VARCHAR, st_asWKB(g) FROM lake.t").fetchall())
    assert ours == theirs and [r[0] for r in ours] == [1, 1, 2]


def test_geometry_from_spark_geometry_type_and_clear_errors(tmp_path, spark):
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'm.sqlite'}", f"{tmp_path}/data/", spark=spark)
    frame = spark.createDataFrame([(POINT_1_2,)], "g binary").selectExpr("st_geomfromwkb(g) AS g")
    lake.write(frame, "t", mode="error")  # a Spark GEOMETRY makes a geometry column
    assert [c.type for c in lake.table_info("t").columns] == ["geometry"]
    assert [bytes(r.g) for r in lake.read("t").collect()] == [POINT_1_2]
    with pytest.raises(Exception, match="g"):
        lake.write(spark.createDataFrame([(1,)], "g int"), "t")
    lake.close()


def _le(value: float) -> bytes:
    import struct

    return struct.pack("<d", float(value))


@pytest.mark.parametrize("catalog", ["duckdb"], indirect=True)
@pytest.mark.every_backend
def test_we_read_variants_duckdb_inlines_in_a_duckdb_catalog(catalog, tmp_path, spark, reference):
    data = f"{tmp_path}/data/"
    attach(reference, catalog, data)  # inlining on: a DuckDB catalog keeps small variant inserts in a VARIANT column
    reference.execute("CREATE TABLE lake.t (id INT, v VARIANT)")
    reference.execute("""INSERT INTO lake.t VALUES (1, 42::VARIANT), (2, {'a': 'x', 'b': [1, NULL]}::VARIANT),
        (3, NULL), (4, 2.5::DOUBLE::VARIANT)""")
    inlined = reference.execute("SELECT count(*) FROM __ducklake_metadata_lake.ducklake_inlined_data_tables").fetchone()
    reference.execute("DETACH lake")
    assert inlined == (1,)
    lake = DuckLake.attach(catalog, data, spark=spark)
    rows = {r.id: (r.v.toJson() if r.v is not None else None) for r in lake.read("t").collect()}
    lake.close()
    # DuckDB stores a NULL inserted into a VARIANT as the variant null, in files and inlined rows alike
    assert rows == {1: "42", 2: '{"a":"x","b":[1,null]}', 3: "null", 4: "2.5"}


def test_add_data_files_takes_native_geometry_and_refuses_geoparquet(catalog, tmp_path, reference):
    native, geoparquet = tmp_path / "points.parquet", tmp_path / "points_geo.parquet"
    reference.execute(f"COPY (SELECT 'POINT(5 5)'::GEOMETRY AS g) TO '{native}' (FORMAT PARQUET, "
                      "GEOPARQUET_VERSION NONE)")
    reference.execute(f"COPY (SELECT 'POINT(5 5)'::GEOMETRY AS g) TO '{geoparquet}' (FORMAT PARQUET)")
    data = f"{tmp_path}/data/"
    lake = DuckLake.attach(catalog, data)
    lake.create_table("t", "g GEOMETRY")
    assert lake.add_data_files("t", str(native)) == [str(native)]
    with pytest.raises(Exception, match="GeoParquet"):
        lake.add_data_files("t", str(geoparquet))
    lake.close()
    attach(reference, catalog, data)
    assert reference.execute("SELECT st_astext(g) FROM lake.t").fetchall() == [("POINT (5 5)",)]
    (extra,) = reference.execute("SELECT extra_stats FROM __ducklake_metadata_lake.ducklake_file_column_stats"
                                 ).fetchone()
    assert extra == ('{"bbox": {"xmin": 5.000000, "xmax": 5.000000, "ymin": 5.000000, "ymax": 5.000000, '
                     '"zmin": null, "zmax": null, "mmin": null, "mmax": null}, "types": ["point"]}')


def test_object_store_writer_writes_geometry_and_variant(tmp_path, spark, reference, monkeypatch):
    # The writer object stores use (pyarrow in Spark tasks, final names at once), here on a local folder; variant
    # tables stay with Spark's writer there (pyarrow has no VARIANT type), with every field id and no name mapping.
    monkeypatch.setattr("spark_ducklake.dataplane.arrow.file_layout.writes_in_place", lambda _path: True)
    catalog, data = f"sqlite:{tmp_path / 'm.sqlite'}", f"{tmp_path}/data/"
    lake = DuckLake.attach(catalog, data, spark=spark, data_inlining_row_limit=0)
    lake.create_table("g", "id INT, g GEOMETRY")
    lake.write(spark.createDataFrame([(1, POINT_1_2), (2, None)], "id int, g binary").coalesce(1), "g")
    lake.create_table("v", "v VARIANT")
    lake.write(spark.range(3).coalesce(1).selectExpr("parse_json(concat('{\"a\": ', id, '}')) AS v"), "v")
    lake.update("v", "variant_get(v, '$.a', 'int') = 1", {"v": "parse_json('{\"a\": 9}')"})
    assert all(f.mapping_id is None for f in lake.plan_scan("v").files)
    lake.close()
    attach(reference, catalog, data)
    assert reference.execute("SELECT id, st_astext(g) FROM lake.g ORDER BY id").fetchall() == [
        (1, "POINT (1 2)"), (2, None)]
    extra = reference.execute("SELECT extra_stats FROM __ducklake_metadata_lake.ducklake_file_column_stats "
                              "WHERE column_id = 2").fetchone()[0]
    assert json.loads(extra)["types"] == ["point"]
    # rowid and table_changes failed ("schema mismatch in glob") while our variant files carried a name mapping
    assert reference.execute("SELECT rowid, variant_extract(v, 'a')::INT FROM lake.v ORDER BY rowid").fetchall() == [
        (0, 0), (1, 9), (2, 2)]
    (last,) = reference.execute("SELECT max(snapshot_id) FROM lake.snapshots()").fetchone()
    # 3 inserts, the update's pre- and post-image
    assert reference.execute(f"SELECT count(*) FROM lake.table_changes('v', 0, {last})").fetchone()[0] == 5


@pytest.mark.parametrize("catalog", ["sqlite", "postgres"], indirect=True)
def test_variant_beside_a_list_gets_every_field_id_and_round_trips_with_duckdb(catalog, tmp_path, spark, reference):
    # A list column sends the table to the pyarrow writer (element ids); its variant goes unshredded with Parquet's
    # VARIANT type put in the footer (dataplane/arrow/variant_footer.py). Before, Spark wrote it with a name mapping and
    # DuckDB failed on rowid and table_changes ("schema mismatch in glob").
    import glob

    import pyarrow.parquet as pq

    data = f"{tmp_path}/data/"
    lake = DuckLake.attach(catalog, data, spark=spark, data_inlining_row_limit=0)
    lake.create_table("t", "id INT, v VARIANT, l ARRAY<INT>")
    rows = spark.range(3).selectExpr("CAST(id AS INT) AS id",
                                     "parse_json(concat('{\"a\": ', id, ', \"b\": [1]}')) AS v",
                                     "array(CAST(id AS INT)) AS l")
    lake.write(rows.coalesce(1), "t")
    lake.update("t", "id = 1", {"v": "parse_json('\"x\"')"})
    assert all(f.mapping_id is None for f in lake.plan_scan("t").files)
    lake.close()
    (path,) = [p for p in glob.glob(f"{data}**/*.parquet", recursive=True) if "delete" not in p][:1]
    assert "Variant" in str(pq.ParquetFile(path).schema)  # the group carries the logical type and its field id

    attach(reference, catalog, data)
    assert reference.execute("SELECT rowid, id, v, l FROM lake.t ORDER BY rowid").fetchall() == [
        (0, 0, {"a": 0, "b": [1]}, [0]), (1, 1, "x", [1]), (2, 2, {"a": 2, "b": [1]}, [2])]
    assert reference.execute("SELECT variant_extract(v, 'a')::INT FROM lake.t WHERE id = 2").fetchone() == (2,)
    (last,) = reference.execute("SELECT max(snapshot_id) FROM lake.snapshots()").fetchone()
    assert reference.execute(f"SELECT count(*) FROM lake.table_changes('t', 0, {last})").fetchone()[0] == 5
    reference.execute("INSERT INTO lake.t VALUES (3, {'k': [1, 2]}::VARIANT, [3])")
    reference.execute("UPDATE lake.t SET v = 5::VARIANT WHERE id = 0")
    reference.execute("DETACH lake")

    lake = DuckLake.attach(catalog, data, spark=spark)
    got = {r.id: (r.v.toJson(), r.l) for r in lake.read("t").collect()}
    assert got == {0: ("5", [0]), 1: ('"x"', [1]), 2: ('{"a":2,"b":[1]}', [2]), 3: ('{"k":[1,2]}', [3])}
    lake.close()


def test_we_read_duckdb_shredded_variants_beside_a_uuid_column(tmp_path, spark, reference):
    # A uuid column sends the table to the pyarrow reader, which rebuilds DuckDB's shredded variants
    # (spec/variant_unshred.py) as Spark's own reader would.
    catalog, data = f"sqlite:{tmp_path / 'm.sqlite'}", f"{tmp_path}/data/"
    attach(reference, catalog, data, data_inlining_row_limit=0)
    reference.execute("CREATE TABLE lake.t (id INT, u UUID, v VARIANT)")
    reference.execute("""INSERT INTO lake.t SELECT i, uuid(), {'a': i, 'b': 'x' || i, 'c': [i, 1.5]}::VARIANT
        FROM range(3) t(i)""")
    reference.execute("""INSERT INTO lake.t VALUES (10, NULL, 42::VARIANT), (11, NULL, DATE '2020-01-02'::VARIANT),
        (12, NULL, NULL), (13, NULL, 2.5::DECIMAL(4, 1)::VARIANT)""")
    reference.execute("DETACH lake")
    lake = DuckLake.attach(catalog, data, spark=spark)
    got = {r.id: r.v.toJson() for r in lake.read("t").collect()}
    lake.close()
    # [i, 1.5] is a DECIMAL(11, 1) list in DuckDB: its elements stay decimals
    assert got == {0: '{"a":0,"b":"x0","c":[0.0,1.5]}', 1: '{"a":1,"b":"x1","c":[1.0,1.5]}',
                   2: '{"a":2,"b":"x2","c":[2.0,1.5]}', 10: "42", 11: '"2020-01-02"', 12: "null", 13: "2.5"}


def test_shredded_variants_nested_in_structs_lists_and_maps_are_rebuilt(tmp_path):
    # DuckDB 1.5.5 shreds only top-level variants in Parquet (a nested one is "not supported currently"), so the
    # nested case is built here from DuckDB's own shredded column, wrapped in a struct, a list and a map.
    import duckdb
    import pyarrow as pa
    import pyarrow.parquet as pq

    from spark_ducklake.spec import variant_unshred
    from spark_ducklake.spec.model import Column

    path = tmp_path / "v.parquet"
    duckdb.execute(f"""COPY (SELECT {{'a': i, 'b': 'x' || i, 'c': [i, 7]}}::VARIANT AS v FROM range(3) t(i)
        UNION ALL SELECT 42::VARIANT UNION ALL SELECT NULL) TO '{path}'""")
    column = pq.read_table(path).column("v").combine_chunks()
    assert column.type.get_field_index("typed_value") >= 0  # really shredded
    variant = Column(2, "v", "variant")
    flat = [variant_unshred.unshred_values(variant, column.type, v) for v in column.to_pylist()]
    assert flat[4]["value"] == b"\x00"  # DuckDB stores a NULL cast to VARIANT as the variant null
    assert column.to_pylist()[0]["value"] is None and flat[0]["value"]  # fully shredded: rebuilt from typed_value

    struct = pa.StructArray.from_arrays([column, pa.array(range(5))], ["v", "n"])
    offsets = pa.array([0, 2, 5], pa.int32())
    listed = pa.ListArray.from_arrays(offsets, column)
    mapped = pa.MapArray.from_arrays(offsets, pa.array(["k1", "k2", "k3", "k4", "k5"]), column)
    struct_col = Column(1, "s", "struct", children=[variant, Column(3, "n", "int64")])
    list_col = Column(4, "l", "list", children=[Column(5, "element", "variant")])
    map_col = Column(6, "m", "map", children=[Column(7, "key", "varchar"), Column(8, "value", "variant")])
    assert [variant_unshred.unshred_values(struct_col, struct.type, v)["v"] for v in struct.to_pylist()] == flat
    lists = [variant_unshred.unshred_values(list_col, listed.type, v) for v in listed.to_pylist()]
    assert lists == [flat[:2], flat[2:]]
    maps = [variant_unshred.unshred_values(map_col, mapped.type, v) for v in mapped.to_pylist()]
    assert [v for pairs in maps for _, v in pairs] == flat


def test_variants_nested_beside_a_uuid_column_read_on_the_pyarrow_reader(tmp_path, spark, reference):
    # A uuid column sends reads to the pyarrow reader; variants inside a struct or list were refused there.
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'm.sqlite'}", f"{tmp_path}/data/", spark=spark,
                           data_inlining_row_limit=0)
    lake.sql("CREATE TABLE t (id INT, u UUID, s STRUCT(v VARIANT, n INT), l VARIANT[])")
    rows = spark.range(2).selectExpr(
        "CAST(id AS INT) AS id", "CAST(NULL AS STRING) AS u",
        "named_struct('v', parse_json(concat('{\"a\": ', id, '}')), 'n', CAST(id AS INT)) AS s",
        "array(parse_json('\"x\"'), parse_json(CAST(id AS STRING))) AS l")
    lake.write(rows, "t")
    got = {r.id: (r.s.v.toJson(), r.s.n, [v.toJson() for v in r.l]) for r in lake.read("t").collect()}
    lake.close()
    assert got == {0: ('{"a":0}', 0, ['"x"', "0"]), 1: ('{"a":1}', 1, ['"x"', "1"])}
    attach(reference, f"sqlite:{tmp_path / 'm.sqlite'}", f"{tmp_path}/data/")
    assert reference.execute("SELECT id, s.v, s.n, l FROM lake.t ORDER BY id").fetchall() == [
        (0, {"a": 0}, 0, ["x", 0]), (1, {"a": 1}, 1, ["x", 1])]
