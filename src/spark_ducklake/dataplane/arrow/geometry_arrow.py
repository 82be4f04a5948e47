"""Geometries in the pyarrow writers (write_in_place.py, the in-process path): Spark's GEOMETRY values (Arrow
struct<srid, wkb>) reduced to the WKB that pyarrow writes as Parquet GEOMETRY, at any depth of lists, structs and
maps, and the count of non-NULL geometries per leaf, which pyarrow's GEOMETRY columns have no statistics for.
Plain pyarrow: runs in Spark tasks.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def geometry_as_wkb(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """A pyarrow table from Spark's Arrow batches with its GEOMETRYs (struct<srid, wkb>, at any depth) reduced to
    the WKB that `schema` (with `spec.types.GEOMETRY_WKB` fields) expects: for pyarrow writers."""
    for i, field in enumerate(schema):
        column = table.column(i)
        if not _has_geometry(field.type) or not column.num_chunks:
            continue
        wkb = pa.chunked_array([_wkb(chunk, field.type) for chunk in column.chunks])
        table = table.set_column(i, table.schema.field(i).name, wkb)
    return table


def geometry_counts(table: pa.Table, counts: dict[int, int]) -> dict[int, int]:
    """`counts` (field id -> non-NULL geometries) plus those of `table` (in the Parquet schema, GeoArrow WKB at any
    depth): pyarrow writes no statistics for GEOMETRY (no sort order), so its value and NULL counts come from here."""
    for i, field in enumerate(table.schema):
        if _has_geometry(field.type):
            for chunk in table.column(i).chunks:
                _count(field, chunk, counts)
    return counts


def _count(field: pa.Field, array: pa.Array, counts: dict[int, int]) -> None:
    t = field.type
    if getattr(t, "extension_name", None) == "geoarrow.wkb":
        field_id = (field.metadata or {}).get(b"PARQUET:field_id")
        if field_id is not None:
            counts[int(field_id)] = counts.get(int(field_id), 0) + len(array) - array.null_count
        return
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
        if pa.types.is_map(t):  # pyarrow flattens no map: the entries of its non-NULL maps, by their offsets
            offsets = array.offsets.to_numpy()
            entries = array.values.slice(offsets[0], offsets[-1] - offsets[0])
            if array.null_count:
                valid = array.is_valid().to_numpy(zero_copy_only=False)
                entries = entries.filter(pa.array(np.repeat(valid, np.diff(offsets))))
            keys, items = entries.flatten()
            _count(t.key_field, keys, counts)
            _count(t.item_field, items, counts)
        else:  # the values of non-NULL lists, slicing respected
            _count(t.value_field, array.flatten(), counts)
    elif pa.types.is_struct(t):
        for j, child in enumerate(array.flatten()):  # a NULL struct's fields count as NULL
            if _has_geometry(t.field(j).type):
                _count(t.field(j), child, counts)


def _has_geometry(arrow_type: pa.DataType) -> bool:
    if getattr(arrow_type, "extension_name", None) == "geoarrow.wkb":
        return True
    if pa.types.is_map(arrow_type):
        return _has_geometry(arrow_type.key_type) or _has_geometry(arrow_type.item_type)
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return _has_geometry(arrow_type.value_type)
    if pa.types.is_struct(arrow_type):
        return any(_has_geometry(arrow_type.field(i).type) for i in range(arrow_type.num_fields))
    return False


def _wkb(array: pa.Array, target: pa.DataType) -> pa.Array:
    """`array` with Spark's geometry structs where `target` has GeoArrow WKB replaced by their WKB."""
    if not _has_geometry(target):
        return array
    got = array.type
    mask = array.is_null() if array.null_count else None
    if getattr(target, "extension_name", None) == "geoarrow.wkb":
        return array.flatten()[got.get_field_index("wkb")] if pa.types.is_struct(got) else array
    if pa.types.is_struct(target):
        children = [_wkb(array.field(i), target.field(i).type) for i in range(got.num_fields)]
        return pa.StructArray.from_arrays(children, names=[got.field(i).name for i in range(got.num_fields)],
                                          mask=mask)
    # A slice of a list or map points into its whole values: offsets from 0 over just its own (pyarrow takes no
    # null mask with sliced offsets)
    offsets = array.offsets
    start, end = offsets[0].as_py(), offsets[-1].as_py()
    offsets = pc.subtract(offsets, pa.scalar(start, offsets.type))
    if pa.types.is_map(target):
        keys, items = array.keys.slice(start, end - start), array.items.slice(start, end - start)
        return pa.MapArray.from_arrays(offsets, _wkb(keys, target.key_type), _wkb(items, target.item_type),
                                       mask=mask)
    kind = pa.LargeListArray if pa.types.is_large_list(got) else pa.ListArray
    return kind.from_arrays(offsets, _wkb(array.values.slice(start, end - start), target.value_type), mask=mask)
