"""Estimates shared by both data file writers (Spark's in write.py, pyarrow's in write_in_place.py): a row's
width on disk and whether the files need a name mapping."""

from __future__ import annotations

from ..spec.model import Column


def _value_width(col: Column) -> int:
    """A rough on-disk width of one value, to turn target_file_size into rows per file."""
    if col.is_nested:
        return sum(_value_width(c) for c in col.children) * (3 if col.type != "struct" else 1)
    return {"boolean": 1, "int8": 1, "int16": 2, "int32": 4, "float32": 4, "date": 4}.get(col.type,
                                                                                           16 if col.type in (
                                                                                               "varchar", "blob",
                                                                                               "json") else 8)


def estimated_row_width(columns: list[Column]) -> int:
    """The estimated on-disk width of a row of these columns (at least 1)."""
    return max(1, sum(_value_width(c) for c in columns))


def needs_name_mapping(columns: list[Column]) -> bool:
    """Spark leaves list elements, map keys/values and variant columns without field ids; readers then need names."""
    return any(c.type in ("list", "map", "variant") for top in columns for c in top.walk())
