"""GEOMETRY in `lake.sql`: WKT literals in, geometry columns out.

A lake geometry column is WKB in a Spark BINARY (docs/types.md), so a DuckDB geometry literal
(`'POINT (1 2)'::GEOMETRY`, `ST_GeomFromText('POINT (1 2)')`) becomes its WKB as a binary literal, converted here
in Python (spec/wkt.py: Spark has no WKT parser). It then goes into geometry columns by INSERT, UPDATE and MERGE
like any WKB. On the way out, a DuckDB-dialect query shows the lake's geometry columns as Spark GEOMETRY values
(DuckDB's GEOMETRY type), whose text is the WKT DuckDB prints: reads mark their geometry columns (field metadata,
which Spark keeps through projections, joins and sorts) and the query's result turns marked BINARY columns into
GEOMETRY after it has run its ORDER BY on the WKB bytes (Spark cannot sort GEOMETRY; DuckDB orders by those bytes).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from sqlglot import exp

from ..errors import InvalidExpressionError
from ..spec.wkt import WktError, wkt_to_wkb

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

GEOMETRY_KEY = "ducklake.geometry"  # field metadata marking a lake geometry column read as WKB
_FROM_TEXT = {"st_geomfromtext", "st_geometryfromtext", "st_wkttosql"}


def geometry_literals(tree: exp.Expression) -> exp.Expression:
    """Replace `'<wkt>'::GEOMETRY` and `ST_GeomFromText('<wkt>')` in `tree` by their WKB (X'..'); returned."""
    for node in list(tree.find_all(exp.Cast, exp.Anonymous)):
        if isinstance(node, exp.Cast):
            text = node.this if node.to.this == exp.DataType.Type.GEOMETRY else None
        else:
            text = node.expressions[0] if (str(node.this).lower() in _FROM_TEXT
                                           and len(node.expressions) == 1) else None
        if isinstance(text, exp.Null):
            node.replace(exp.Cast(this=exp.Null(), to=exp.DataType.build("BINARY", dialect="spark")))
        elif isinstance(text, exp.Literal) and text.is_string:
            node.replace(exp.HexString(this=wkb_literal(text.this).hex().upper()))
    return tree


def wkb_literal(text: str) -> bytes:
    """The WKB of a WKT literal, or InvalidExpressionError naming the text (as DuckDB refuses it)."""
    try:
        return wkt_to_wkb(text)
    except WktError as exc:
        raise InvalidExpressionError(f"Invalid Input Error: cannot parse geometry {text!r}: {exc}") from None


def mark_geometry(frame: DataFrame, paths: dict[str, list[list[str]]]) -> DataFrame:
    """`frame` with its geometry columns marked in their field metadata: `paths` (by lower-case column name) says
    where the geometries are inside each (`[]`: the column itself; `["element"]`: a list's elements; ...)."""
    for field in frame.schema.fields:
        if field.name.lower() in paths:
            marks = [json.dumps(path) for path in paths[field.name.lower()]]  # Spark metadata: no nested arrays
            frame = frame.withMetadata(field.name, {**field.metadata, GEOMETRY_KEY: marks})
    return frame


def geometry_columns(lake, key: tuple[str, str], version, timestamp) -> dict[str, list[list[str]]]:
    """The paths to the geometries inside each column that holds any (lower-case names), as of the version read."""
    if timestamp is not None:
        info = lake.plan_scan(key, timestamp=timestamp).table
    else:
        info = lake.table_info(key, version=version)
    return geometry_paths(info.columns)


def geometry_paths(columns) -> dict[str, list[list[str]]]:
    """geometry_columns of a table's columns as read already (no catalog read)."""
    out = {}
    for col in columns:
        found = _paths(col)
        if found:
            out[col.name.lower()] = found
    return out


def _paths(col) -> list[list[str]]:
    if col.type == "geometry":
        return [[]]
    steps = {"list": lambda c: "element", "map": lambda c: c.name, "struct": lambda c: c.name}.get(col.type)
    if steps is None:
        return []
    return [[steps(child), *rest] for child in col.children for rest in _paths(child)]


def geometry_output(frame: DataFrame) -> DataFrame:
    """A query result with its marked WKB values as Spark GEOMETRY (DuckDB's type; its text is WKT)."""
    fields = frame.schema.fields
    if not any(f.metadata.get(GEOMETRY_KEY) for f in fields):
        return frame
    from pyspark.sql import functions as F

    names = frame.columns  # by position: a join's result may hold two columns of one name
    plain = frame.toDF(*[f"_c{i}" for i in range(len(names))])
    return plain.select(*[
        _as_geometry(F.col(f"_c{i}"), f.dataType, [json.loads(m) for m in f.metadata.get(GEOMETRY_KEY) or []])
        .alias(name) for i, (f, name) in enumerate(zip(fields, names, strict=True))])


def _as_geometry(expr, dtype, paths: list):
    """`expr` with the WKB at `paths` inside it (of Spark type `dtype`) as GEOMETRY."""
    from pyspark.sql import functions as F

    kind = dtype.typeName()
    if [] in paths:
        return F.call_function("st_geomfromwkb", expr) if kind == "binary" else expr

    def inner(step: str) -> list:
        return [p[1:] for p in paths if p and p[0] == step]

    if kind == "array" and inner("element"):
        return F.transform(expr, lambda x: _as_geometry(x, dtype.elementType, inner("element")))
    if kind == "map" and inner("value"):
        return F.transform_values(expr, lambda _k, v: _as_geometry(v, dtype.valueType, inner("value")))
    if kind == "struct" and any(inner(f.name) for f in dtype.fields):
        rebuilt = F.struct(*[_as_geometry(expr[f.name], f.dataType, inner(f.name)).alias(f.name)
                             for f in dtype.fields])
        return F.when(expr.isNull(), F.lit(None)).otherwise(rebuilt)
    return expr
