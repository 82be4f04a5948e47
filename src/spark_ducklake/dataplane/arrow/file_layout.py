"""Estimates shared by both data file writers (Spark's in write.py, pyarrow's in write_in_place.py): a row's
width on disk, whether a written file lacks field ids (and so needs a name mapping), and which writer gives
them all their field ids."""

from __future__ import annotations

import pyarrow as pa

from ...spec.model import Column
from .storage import writes_in_place


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


def lacks_field_ids(schema: pa.Schema, columns: list[Column]) -> bool:
    """Whether a written file's schema misses a field id some column of the table needs: the file then needs a
    name mapping. Spark's own writer gives top-level columns (variant ones too) and struct fields their ids, but not
    list elements or map keys/values.

    A file with a mapping is read by name by DuckDB, which then cannot find `_ducklake_internal_row_id` by its
    field id ("schema mismatch in glob"): only files that really lack ids may carry one."""
    by_name = {f.name: f for f in schema}
    return any(_lacks(by_name.get(col.name), col) for col in columns)


def _lacks(field: pa.Field | None, col: Column) -> bool:
    if field is None:  # not in the file at all: read as NULL by id and by name alike
        return False
    if (field.metadata or {}).get(b"PARQUET:field_id") is None:
        return True
    if col.type == "variant" or not col.children:  # a variant's parts carry no ids in DuckDB's files either
        return False
    t = field.type
    if pa.types.is_struct(t):
        children = {t.field(i).name: t.field(i) for i in range(t.num_fields)}
        return any(_lacks(children.get(c.name), c) for c in col.children)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _lacks(t.value_field, col.children[0])
    if pa.types.is_map(t):
        return _lacks(t.key_field, col.children[0]) or _lacks(t.item_field, col.children[1])
    return False


def uses_pyarrow_writer(table_path: str, columns: list[Column], *, encrypted: bool) -> bool:
    """Whether data files of a table go through the executors' pyarrow writer (write_in_place.py) instead of
    Spark's: encrypted files (their tasks encrypt them), tables with list or map columns (element ids only pyarrow
    writes; variant columns then go unshredded, annotated by variant_footer.py), and object stores, where Spark's
    staging rename is a copy. Other tables with a variant column stay with Spark's writer on object stores: it
    shreds variants, which gives their files DuckDB's variant statistics."""
    walked = {c.type for top in columns for c in top.walk()}
    if encrypted or walked & {"list", "map"}:
        return True
    return "variant" not in walked and writes_in_place(table_path)
