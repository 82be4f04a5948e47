"""spec/wkt.py (WKT <-> ISO WKB, as DuckDB reads and prints geometries) and the SQL rewrites that use it
(sql/geometry.py). No Spark."""

from __future__ import annotations

import math
import struct

import pytest
import sqlglot

from spark_ducklake.errors import InvalidExpressionError
from spark_ducklake.spec.wkt import WktError, wkb_to_wkt, wkt_to_wkb
from spark_ducklake.sql.geometry import _paths, geometry_literals

# (input WKT, the text DuckDB 1.5.5 prints for it)
CASES = [
    ("POINT(1 2)", "POINT (1 2)"),
    ("point m(1 2 3)", "POINT M (1 2 3)"),
    ("POINTZ(1 2 3)", "POINT Z (1 2 3)"),
    ("POINT ZM (-30 -30 -30 -30)", "POINT ZM (-30 -30 -30 -30)"),
    ("POINT(1.5 -2.25e10)", "POINT (1.5 -22500000000)"),
    ("POINT(0.1 100000000000000000000)", "POINT (0.1 1e+20)"),
    ("POINT (1e-7 2)", "POINT (1e-07 2)"),
    ("LINESTRING Z (5 5 5, 10 10 10)", "LINESTRING Z (5 5 5, 10 10 10)"),
    ("LINESTRING EMPTY", "LINESTRING EMPTY"),
    ("POLYGON((0 0,1 0,1 1,0 0),(0.1 0.1, 0.2 0.1, 0.1 0.1))",
     "POLYGON ((0 0, 1 0, 1 1, 0 0), (0.1 0.1, 0.2 0.1, 0.1 0.1))"),
    ("MULTIPOINT((1 2),(3 4))", "MULTIPOINT (1 2, 3 4)"),
    ("MULTIPOINT Z (1 2 3, 4 5 6)", "MULTIPOINT Z (1 2 3, 4 5 6)"),
    ("MULTILINESTRING ZM ((0 0 -10 10, 1 1 -10 10), (2 2 2 1, 3 3 3 1))",
     "MULTILINESTRING ZM ((0 0 -10 10, 1 1 -10 10), (2 2 2 1, 3 3 3 1))"),
    ("MULTIPOLYGON(((0 0,1 0,1 1,0 0)),((5 5,6 5,6 6,5 5)))",
     "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5)))"),
    ("GEOMETRYCOLLECTION(POINT(1 2), LINESTRING(0 0, 1 1))",
     "GEOMETRYCOLLECTION (POINT (1 2), LINESTRING (0 0, 1 1))"),
    ("GEOMETRYCOLLECTION EMPTY", "GEOMETRYCOLLECTION EMPTY"),
    ("POINT EMPTY", "POINT EMPTY"),
]


@pytest.mark.parametrize(("text", "printed"), CASES)
def test_wkt_round_trips_to_the_text_duckdb_prints(text, printed):
    assert wkb_to_wkt(wkt_to_wkb(text)) == printed


def test_wkb_is_iso_little_endian():
    assert wkt_to_wkb("POINT (1 2)") == struct.pack("<BIdd", 1, 1, 1.0, 2.0)
    assert struct.unpack_from("<I", wkt_to_wkb("LINESTRING Z (5 5 5, 10 10 10)"), 1)[0] == 1002
    assert struct.unpack_from("<I", wkt_to_wkb("POINT M (1 2 3)"), 1)[0] == 2001
    empty = struct.unpack_from("<dd", wkt_to_wkb("POINT EMPTY"), 5)
    assert all(math.isnan(v) for v in empty)  # an empty point: NaN coordinates, as DuckDB writes it
    # big endian and EWKB's Z flag are read too
    assert wkb_to_wkt(struct.pack(">BIddd", 0, 0x80000001, 1.0, 2.0, 3.0)) == "POINT Z (1 2 3)"


@pytest.mark.parametrize(("text", "message"), [
    ("POINT(1 2 3)", "3 values, expected 2"),  # DuckDB refuses it too: Z must be named
    ("FOO(1 2)", "unknown geometry type"),
    ("POINT(1 2", "expected more"),
    ("POINT(1 2))", "unexpected '\\)'"),
    ("POINT(a b)", "not a number"),
])
def test_bad_wkt_is_named(text, message):
    with pytest.raises(WktError, match=message):
        wkt_to_wkb(text)


def test_bad_wkb_is_named():
    with pytest.raises(WktError, match="ends inside"):
        wkb_to_wkt(wkt_to_wkb("POINT (1 2)")[:-1])
    with pytest.raises(WktError, match="byte order"):
        wkb_to_wkt(b"\x07\x01\x00\x00\x00")


def _spark(sql: str) -> str:
    return geometry_literals(sqlglot.parse_one(sql, read="duckdb")).sql(dialect="spark")


def test_geometry_literals_become_wkb():
    wkb = wkt_to_wkb("POINT (1 2)").hex().upper()
    assert _spark("SELECT 'POINT(1 2)'::GEOMETRY") == f"SELECT X'{wkb}'"
    assert _spark("SELECT ST_GeomFromText('POINT(1 2)')") == f"SELECT X'{wkb}'"
    assert _spark("SELECT NULL::GEOMETRY") == "SELECT CAST(NULL AS BINARY)"
    assert "CAST(g AS GEOMETRY)" in _spark("SELECT g::GEOMETRY FROM t")  # a column: left to Spark
    with pytest.raises(InvalidExpressionError, match="cannot parse geometry 'POINT\\(1\\)'"):
        _spark("SELECT 'POINT(1)'::GEOMETRY")


def test_geometry_paths_inside_nested_columns():
    from spark_ducklake.spec.model import Column

    def col(name, type_, *children):
        return Column(column_id=0, name=name, type=type_, nullable=True, children=list(children))

    assert _paths(col("g", "geometry")) == [[]]
    assert _paths(col("l", "list", col("element", "geometry"))) == [["element"]]
    assert _paths(col("s", "struct", col("a", "geometry"), col("b", "blob"))) == [["a"]]
    assert _paths(col("m", "map", col("key", "int32"), col("value", "geometry"))) == [["value"]]
    assert _paths(col("b", "blob")) == []
