"""`extra_stats` of geometry and variant columns (spec: "Extra Statistics"), from Parquet footers, as DuckDB writes
them: a geometry's bounding box and primitive types from Parquet's geospatial statistics; a variant's fully
shredded sub-fields (one `ducklake_file_variant_stats` row each) from its `typed_value` leaves. Plain pyarrow
(footers are also described inside Spark tasks).
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow.parquet as pq

from ..spec.types import format_literal, parse_literal

_GEOMETRY_KINDS = {1: "point", 2: "linestring", 3: "polygon", 4: "multipoint", 5: "multilinestring",
                   6: "multipolygon", 7: "geometrycollection"}
_DIMENSIONS = {0: "", 1: "_z", 2: "_m", 3: "_zm"}
_BOX = ("xmin", "xmax", "ymin", "ymax", "zmin", "zmax", "mmin", "mmax")


# ----------------------------------------------------------------------------------------------- geometry
def geometry_extra_stats(metadata: pq.FileMetaData, index: int) -> str | None:
    """The JSON bounding box and types of Parquet leaf `index` over all row groups; None without geo stats."""
    box: dict[str, float | None] | None = None
    kinds: set[str] = set()
    for rg in range(metadata.num_row_groups):
        chunk = metadata.row_group(rg).column(index)
        geo = chunk.geo_statistics if chunk.is_geo_stats_set else None
        if geo is None:
            if chunk.num_values and (chunk.statistics is None or chunk.statistics.null_count != chunk.num_values):
                return None  # geometries without statistics: nothing can be said
            continue
        part = {k: getattr(geo, k) for k in _BOX}
        box = part if box is None else _union_box(box, part)
        kinds.update(_kind_name(code) for code in geo.geospatial_types or [])
    if box is None:
        return None
    return render_geometry(box, sorted(kinds))


def _kind_name(code: int) -> str:
    dims, kind = divmod(int(code), 1000)
    return _GEOMETRY_KINDS.get(kind, "unknown") + _DIMENSIONS.get(dims, "")


def _union_box(a: dict[Any, Any], b: dict[Any, Any]) -> dict[Any, Any]:
    out = {}
    for key in _BOX:
        x, y = a.get(key), b.get(key)
        pick = min if key.endswith("min") else max
        out[key] = x if y is None else y if x is None else pick(x, y)
    return out


def render_geometry(box: dict[Any, Any], kinds: list[str]) -> str:
    """DuckDB's text: six-decimal numbers, `null` for missing dimensions, types sorted."""
    parts = ", ".join(f'"{k}": ' + ("null" if box.get(k) is None else f"{box[k]:f}") for k in _BOX)
    return '{"bbox": {' + parts + '}, "types": ' + json.dumps(sorted(kinds)) + "}"


def merge_geometry(old: str | None, new: str | None) -> str | None:
    """Table-level geometry stats widened by a file's: none yet (only NULLs so far) takes the file's; a file
    with geometries but no geospatial statistics makes them unknown."""
    if old is None or new is None:
        return new if old is None else None
    a, b = json.loads(old), json.loads(new)
    return render_geometry(_union_box(a["bbox"], b["bbox"]), sorted(set(a["types"]) | set(b["types"])))


# ----------------------------------------------------------------------------------------------- variant
def variant_column_stats(metadata: pq.FileMetaData, indices: list[int]) -> tuple[int, int, int, str | None]:
    """(value count, null count, size in bytes, extra_stats JSON or None) of a variant column from its leaves."""
    prefix = None
    values = nulls = size = 0
    typed: dict[str, dict[Any, Any]] = {}
    untyped_empty: set[str] = set()
    for index in indices:
        parts = metadata.schema.column(index).path.split(".")
        if prefix is None:  # the first leaf is the variant group's `metadata`
            prefix = len(parts) - 1
        rel = parts[prefix:]
        field = _field_name(rel[:-1])
        chunk_values = chunk_nulls = chunk_size = 0
        stats_list = []
        for rg in range(metadata.num_row_groups):
            chunk = metadata.row_group(rg).column(index)
            chunk_size += chunk.total_compressed_size
            st = chunk.statistics
            stats_list.append(st)
            n_null = st.null_count if st is not None and st.has_null_count else 0
            chunk_nulls += n_null
            chunk_values += (st.num_values if st is not None and st.num_values is not None
                             else chunk.num_values - n_null)
        size += chunk_size
        if rel == ["metadata"]:
            values, nulls = chunk_values, chunk_nulls
        elif rel[-1] == "value" and field is not None:
            if chunk_values == 0:
                untyped_empty.add(field)
        elif rel[-1] == "typed_value" and field is not None:
            shredded = _shredded_type(metadata.schema.column(index))
            if shredded is not None:
                typed[field] = _field_entry(field, shredded, stats_list, chunk_values, chunk_nulls, chunk_size)
    fields = [entry for name, entry in typed.items() if name in untyped_empty]
    return values, nulls, size, (json.dumps(fields, separators=(",", ":")) if fields else None)


def _field_name(path: list[str]) -> str | None:
    """`root`, `"a"`, `element."a"`... for the path of a `value`/`typed_value` leaf's parent (None: not a field)."""
    names, i = [], 0
    while i < len(path):
        if path[i] != "typed_value":
            return None
        if i + 1 >= len(path):
            return None
        if path[i + 1] == "list" and i + 2 < len(path) and path[i + 2] == "element":
            names.append("element")
            i += 3
        else:
            names.append('"' + path[i + 1].replace('"', '""') + '"')
            i += 2
    return ".".join(names) if names else "root"


def _shredded_type(column: Any) -> str | None:
    """The DuckLake type of a shredded Parquet leaf; None for types left out of stats."""
    logical = json.loads(column.logical_type.to_json())
    kind = logical.get("Type")
    physical = column.physical_type
    if kind == "Int":
        width = logical["bitWidth"]
        return f"{'' if logical['isSigned'] else 'u'}int{width}"
    if kind == "String":
        return "varchar"
    if kind == "Decimal":
        return f"decimal({logical['precision']},{logical['scale']})"
    if kind == "Date":
        return "date"
    if kind == "Timestamp":
        return "timestamptz" if logical.get("isAdjustedToUTC") else "timestamp"
    if kind in (None, "None"):
        return {"BOOLEAN": "boolean", "FLOAT": "float32", "DOUBLE": "float64", "INT32": "int32",
                "INT64": "int64", "BYTE_ARRAY": "blob"}.get(physical)
    return None


def _field_entry(field: str, shredded: str, stats_list: Any, values: int, nulls: int, size: int) -> dict[Any, Any]:
    low = high = None
    known = True
    for st in stats_list:
        if st is None or not st.has_min_max:
            known = known and (st is not None and not st.num_values)
            continue
        lo, hi = _text(shredded, st.min), _text(shredded, st.max)
        if lo is None or hi is None:
            known = False
            continue
        low = lo if low is None or _key(shredded, lo) < _key(shredded, low) else low
        high = hi if high is None or _key(shredded, hi) > _key(shredded, high) else high
    entry = {"field_name": field, "shredded_type": shredded, "null_count": nulls}
    if known and low is not None:
        entry["min"], entry["max"] = low, high
    entry.update({"num_values": values, "column_size_bytes": size, "any_valid": values > 0})
    return entry


def _text(type_str: str, value: Any) -> str | None:
    if isinstance(value, bytes) and type_str == "varchar":
        value = value.decode("utf-8", "replace")
    try:
        return format_literal(type_str, value)
    except (TypeError, ValueError):
        return None


def _key(type_str: str, text: str) -> Any:
    return parse_literal(type_str, text)


def merge_variant(old: str | None, new: str | None) -> str | None:
    """Table-level variant stats: the sub-fields shredded alike in every file, counts summed, bounds widened."""
    if old is None or new is None:
        return None
    by_name = {e["field_name"]: e for e in json.loads(new)}
    out = []
    for entry in json.loads(old):
        other = by_name.get(entry["field_name"])
        if other is None or other["shredded_type"] != entry["shredded_type"]:
            continue
        merged = dict(entry)
        for key in ("null_count", "num_values", "column_size_bytes"):
            merged[key] = entry.get(key, 0) + other.get(key, 0)
        merged["any_valid"] = bool(entry.get("any_valid")) or bool(other.get("any_valid"))
        kind = entry["shredded_type"]
        if "min" in entry and "min" in other:
            merged["min"] = min(entry["min"], other["min"], key=lambda t: _key(kind, t))
            merged["max"] = max(entry["max"], other["max"], key=lambda t: _key(kind, t))
        else:
            merged.pop("min", None)
            merged.pop("max", None)
        out.append(merged)
    return json.dumps(out, separators=(",", ":")) if out else None


def variant_stat_rows(data_file_id: int, table_id: int, column_id: int, extra: str | None) -> list[dict[Any, Any]]:
    """The `ducklake_file_variant_stats` rows of one variant column's file stats."""
    entries = json.loads(extra) if extra else None
    if not isinstance(entries, list):  # none, or a geometry's bounding box
        return []
    return [{"data_file_id": data_file_id, "table_id": table_id, "column_id": column_id,
             "variant_path": e["field_name"], "shredded_type": e["shredded_type"],
             "column_size_bytes": e.get("column_size_bytes"), "value_count": e.get("num_values"),
             "null_count": e.get("null_count"), "min_value": e.get("min"), "max_value": e.get("max"),
             "contains_nan": None, "extra_stats": None} for e in entries]
