"""Column statistics: per-file stats from Parquet footers, and their merge into table-level stats."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..spec.model import Column, ColumnStats
from ..spec.types import EXTRA_STATS_TYPES, format_literal, parse_literal
from . import extra_stats

# No min/max for these (the reference writes none either).
_NO_MINMAX = {"int128", "uint128", "interval", "timetz", "json"} | EXTRA_STATS_TYPES
_FLOATS = {"float32", "float64"}
# Types whose bounds the reference compares as strings: only their bounds can be a truncated prefix, so only their
# exactness depends on the writer (the reference's RequiresValueComparison: numbers, times and booleans are exact).
_STRING_BOUNDS = {"varchar", "blob", "uuid"}


@dataclass
class TableColumnStats:
    """One row of ducklake_table_column_stats."""

    contains_null: bool | None = None
    contains_nan: bool | None = None
    min_value: str | None = None
    max_value: str | None = None
    extra_stats: str | None = None
    min_is_exact: bool | None = None  # DuckLake 1.1 (None: unknown, e.g. rows from before the migration)
    max_is_exact: bool | None = None


def _leaf_columns(schema: pa.Schema, columns: list[Column]) -> list[Column | None]:
    """The table column of every Parquet leaf, in leaf order; by field id, else by position under a known parent."""
    by_id = {c.column_id: c for top in columns for c in top.walk()}

    def field_id(field: pa.Field) -> int | None:
        meta = field.metadata or {}
        raw = meta.get(b"PARQUET:field_id")
        return int(raw) if raw is not None else None

    leaves: list[Column | None] = []

    def walk(field: pa.Field, guess: Column | None) -> None:
        fid = field_id(field)
        col = by_id.get(fid) if fid is not None else guess
        t = field.type
        if col is not None and col.type == "variant":  # every leaf of the variant group is the variant's
            leaves.extend([col] * _count_leaves(t))
        elif pa.types.is_map(t):
            kids = col.children if col is not None and col.type == "map" else [None, None]
            walk(t.key_field, kids[0])
            walk(t.item_field, kids[1])
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            kids = col.children if col is not None and col.type == "list" else [None]
            walk(t.value_field, kids[0])
        elif pa.types.is_struct(t):
            for child in t:
                walk(child, None)
        else:
            leaves.append(col)

    # Spark writes no field id on a variant column's group: such a top-level group is matched by name.
    variants = {c.name: c for c in columns if c.type == "variant"}
    for field in schema:
        walk(field, variants.get(field.name))
    return leaves


def _count_leaves(t: pa.DataType) -> int:
    if pa.types.is_map(t):
        return _count_leaves(t.key_type) + _count_leaves(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _count_leaves(t.value_type)
    if pa.types.is_struct(t):
        return sum(_count_leaves(f.type) for f in t)
    return 1


def writer_keeps_whole_bounds(created_by: str | None) -> bool:
    """Whether a Parquet writer's string statistics are whole values, never a truncated prefix. Arrow C++ drops
    statistics it finds too long rather than truncating them; other writers may truncate (parquet-mr when
    `parquet.statistics.truncate.length` is set, others by default), and pyarrow does not expose the footer's
    `is_min_value_exact` / `is_max_value_exact`, so their files count as truncated, as the reference counts files
    without those flags."""
    return (created_by or "").startswith("parquet-cpp-arrow")


def file_column_stats(metadata: pq.FileMetaData, columns: list[Column],
                      leaves: list[Column | None] | None = None,
                      non_null: dict[int, int] | None = None,
                      whole_bounds: bool | None = None) -> dict[int, ColumnStats]:
    """Stats of every leaf column present in a Parquet file, in the spec's string encodings. `leaves` gives the
    table column of each Parquet leaf when field ids cannot (files matched by name). `non_null` (column id -> its
    non-NULL values) counts leaves whose chunks have no statistics: pyarrow writes none for GEOMETRY.
    `whole_bounds` says the writer never truncates string bounds (our Spark writes); None: judged by the writer
    that made the file (`writer_keeps_whole_bounds`)."""
    if whole_bounds is None:
        whole_bounds = writer_keeps_whole_bounds(metadata.created_by)
    if leaves is None:
        leaves = _leaf_columns(metadata.schema.to_arrow_schema(), columns)
    # parquet-mr (Spark) orders NaN above every number in its statistics: a NaN max is how it says "has NaN", and
    # no NaN max means none. Other writers (Arrow, DuckDB) leave NaN out, so their files say nothing about NaN.
    nan_in_stats = (metadata.created_by or "").startswith("parquet-mr")
    out: dict[int, ColumnStats] = {}
    variants: dict[int, list[int]] = {}
    for index, col in enumerate(leaves):
        if col is not None and col.type == "variant":
            variants.setdefault(col.column_id, []).append(index)
    for cid, indices in variants.items():
        values, nulls, size, extra = extra_stats.variant_column_stats(metadata, indices)
        out[cid] = ColumnStats(column_id=cid, value_count=values, null_count=nulls, column_size_bytes=size,
                               extra_stats=extra)
    for index, col in enumerate(leaves):
        if col is None or col.type == "variant":
            continue
        values = nulls = size = 0
        low = high = None
        minmax_ok = col.type not in _NO_MINMAX
        floats = col.type in _FLOATS
        has_nan = False
        high_is_bound = False  # the max is +inf standing for "unknown beside a NaN": a bound, not a value
        for rg in range(metadata.num_row_groups):
            chunk = metadata.row_group(rg).column(index)
            size += chunk.total_compressed_size
            st = chunk.statistics
            if st is None:
                minmax_ok = False
                values += chunk.num_values
                continue
            chunk_nulls = st.null_count if st.has_null_count else 0
            nulls += chunk_nulls
            values += st.num_values if st.num_values is not None else chunk.num_values - chunk_nulls
            if st.has_min_max:
                try:
                    lo, hi = _decode(col.type, st.min), _decode(col.type, st.max)
                except (ValueError, TypeError):
                    minmax_ok = False
                    continue
                if floats and (lo != lo or hi != hi):  # the spec keeps NaN out of min/max
                    has_nan = True
                    if lo != lo:
                        continue  # NaN is the smallest too: nothing but NaN in this chunk
                    hi = math.inf  # the largest number beside the NaN is unknown
                    high_is_bound = True
                low = lo if low is None or lo < low else low
                high = hi if high is None or hi > high else high
            elif st.num_values:
                minmax_ok = False
        stats = ColumnStats(column_id=col.column_id, value_count=values, null_count=nulls,
                            column_size_bytes=size)
        if floats:
            stats.contains_nan = True if has_nan else (False if nan_in_stats and minmax_ok else None)
        if minmax_ok and low is not None:
            stats.min_value, stats.max_value = format_literal(col.type, low), format_literal(col.type, high)
            exact = whole_bounds or col.type not in _STRING_BOUNDS
            stats.min_is_exact, stats.max_is_exact = exact, exact and not high_is_bound
        if col.type == "geometry":
            stats.extra_stats = extra_stats.geometry_extra_stats(metadata, index)
        if non_null and col.column_id in non_null and nulls == 0 and values:
            # Leaf levels without a value (NULL or empty list at any depth) are NULLs, as DuckDB counts them
            stats.value_count, stats.null_count = non_null[col.column_id], values - non_null[col.column_id]
        out[col.column_id] = stats
    return out


def _decode(type_str: str, value: Any) -> Any:
    """A Parquet statistics value (as pyarrow gives it) as a comparable Python value of the DuckLake type."""
    if type_str == "uuid":
        return str(uuid.UUID(bytes=bytes(value))) if isinstance(value, bytes | bytearray) else str(value)
    if type_str in ("timestamptz",) and isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.replace(tzinfo=dt.timezone.utc)
    if type_str in ("varchar", "json") and isinstance(value, bytes):
        return value.decode("utf-8")
    if type_str == "time" and isinstance(value, dt.time):
        return value
    return value


def merge_table_column_stats(
    current: dict[int, TableColumnStats] | None,
    new_files: list[dict[int, ColumnStats]],
    types: dict[int, str],
    unknown_bounds_stay: bool = False,
) -> dict[int, TableColumnStats]:
    """Table-level stats after adding files: bounds widened, comparing values by type (not as strings).

    `unknown_bounds_stay` (DuckLake 1.1 catalogs) follows the 1.1 reference: a stored row without bounds on a
    table with rows means the bounds are unknown (e.g. cleared by the 1.1 migration), and they stay unknown rather
    than being seeded from the new files alone."""
    merged = {cid: TableColumnStats(**vars(s)) for cid, s in (current or {}).items()}
    first_write = current is None
    unknown = {cid for cid, s in (current or {}).items() if s.min_value is None and s.max_value is None} \
        if unknown_bounds_stay else set()
    for file_stats in new_files:
        for cid, fs in file_stats.items():
            type_str = types.get(cid)
            if type_str is None:
                continue
            entry = merged.get(cid)
            if entry is None:
                if not first_write:
                    # A column added to a table with rows: those rows hold its default (or NULL), which no bound
                    # seen here covers. Like the reference, keep no stats row for it, now or later.
                    continue
                entry = TableColumnStats(contains_null=False, contains_nan=False if type_str in _FLOATS else None)
                merged[cid] = entry
                fresh = True
            else:
                fresh = False
            if fs.null_count:
                entry.contains_null = True
            elif entry.contains_null is None and first_write:
                entry.contains_null = False
            if type_str in _FLOATS:
                if fs.contains_nan is None:
                    entry.contains_nan = None if entry.contains_nan is not True else True
                elif fs.contains_nan:
                    entry.contains_nan = True
            if cid not in unknown:
                entry.min_value, entry.min_is_exact = _bound(type_str, (entry.min_value, entry.min_is_exact),
                                                             (fs.min_value, fs.min_is_exact), min)
                entry.max_value, entry.max_is_exact = _bound(type_str, (entry.max_value, entry.max_is_exact),
                                                             (fs.max_value, fs.max_is_exact), max)
            if type_str in EXTRA_STATS_TYPES and (fs.value_count or fs.extra_stats is not None):
                # (a file of NULLs alone says nothing of bounding boxes or shredding: it leaves them as they are)
                merge = extra_stats.merge_geometry if type_str == "geometry" else extra_stats.merge_variant
                entry.extra_stats = fs.extra_stats if fresh else merge(entry.extra_stats, fs.extra_stats)
    return merged


def _bound(type_str: str, old: tuple[str | None, bool | None], new: tuple[str | None, bool | None],
           pick: Any) -> tuple[str | None, bool | None]:
    """The wider of two (bound, is exact) pairs. As the reference merges them: the winning bound keeps its own
    exactness, and equal bounds are exact only if both are (None, unknown, unless one is known inexact)."""
    if new[0] is None:
        return old
    if old[0] is None:
        return new
    try:
        key = parse_literal(type_str, old[0]), parse_literal(type_str, new[0])
    except (ValueError, TypeError):
        return old
    if key[0] == key[1]:
        flags = (old[1], new[1])
        return old[0], False if False in flags else (None if None in flags else True)
    return new if pick(key) == key[1] else old  # (pick is min or max)
