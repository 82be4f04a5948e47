"""Describing an existing Parquet file for `add_data_files` from its footer alone: its columns matched to the
table's by name (the reference's rules: case-insensitive, struct fields by name, list and map children by
position), type checks per the reference's table of accepted Parquet types, hive-path values, statistics.

Runs on the driver for a few files and inside Spark tasks for many: everything here is plain pyarrow and
picklable data, and a description is a JSON-able dict.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.parquet as pq

from ...catalog.stats import file_column_stats
from ...errors import NotFoundError, SchemaMismatchError
from ...spec import types
from ...spec.model import Column, ColumnStats
from .storage import filesystem

_HIVE_NULLS = ("NULL", "__HIVE_DEFAULT_PARTITION__")
_SIGNED = ["TINYINT", "SMALLINT", "INTEGER", "BIGINT"]
_UNSIGNED = ["UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT"]
_TIMESTAMPS = ["TIMESTAMP", "TIMESTAMP_MS", "TIMESTAMP_S"]

# A name-mapping entry, JSON-able: [name in the file, column id, whether a hive path gives it, child entries].
MappingEntry = list[Any]
HiveColumn = tuple[Column, Any]  # a column a hive path gives, and its value (`types.parse_literal`)


def _accepted(type_str: str) -> list[str] | None:
    """Parquet types (DuckDB names) a column of this DuckLake type takes; None for decimals and nested types."""
    if type_str.startswith("int") and type_str[3:].isdigit():
        width = [8, 16, 32, 64].index(int(type_str[3:]))
        return _SIGNED[width::-1] + _UNSIGNED[:width][::-1]
    if type_str.startswith("uint") and type_str[4:].isdigit():
        return _UNSIGNED[[8, 16, 32, 64].index(int(type_str[4:]))::-1]
    return {
        "boolean": ["BOOLEAN"], "float32": ["FLOAT"], "float64": ["DOUBLE", "FLOAT"], "varchar": ["VARCHAR"],
        "json": ["VARCHAR"], "blob": ["BLOB"], "date": ["DATE"], "time": ["TIME"], "timetz": ["TIME"],
        "timestamp": ["TIMESTAMP_NS"] + _TIMESTAMPS, "timestamp_ns": ["TIMESTAMP_NS"] + _TIMESTAMPS,
        "timestamp_s": _TIMESTAMPS, "timestamp_ms": _TIMESTAMPS, "timestamptz": ["TIMESTAMP WITH TIME ZONE"],
        "uuid": ["UUID"], "interval": ["INTERVAL"], "int128": ["HUGEINT"], "uint128": ["UHUGEINT"],
    }.get(type_str)


def duckdb_type_name(t: pa.DataType) -> str:
    """How DuckDB names the type of a Parquet column pyarrow reads as `t`."""
    if pa.types.is_dictionary(t):
        return duckdb_type_name(t.value_type)
    names = {pa.int8(): "TINYINT", pa.int16(): "SMALLINT", pa.int32(): "INTEGER", pa.int64(): "BIGINT",
             pa.uint8(): "UTINYINT", pa.uint16(): "USMALLINT", pa.uint32(): "UINTEGER", pa.uint64(): "UBIGINT",
             pa.float32(): "FLOAT", pa.float64(): "DOUBLE", pa.bool_(): "BOOLEAN", pa.date32(): "DATE",
             pa.float16(): "FLOAT16"}
    if t in names:
        return names[t]
    if pa.types.is_string(t) or pa.types.is_large_string(t) or getattr(pa.types, "is_string_view", bool)(t):
        return "VARCHAR"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "BLOB"
    if pa.types.is_fixed_size_binary(t):
        return "UUID" if t.byte_width == 16 else "INTERVAL" if t.byte_width == 12 else f"FIXED_BLOB({t.byte_width})"
    if isinstance(t, pa.BaseExtensionType):  # pyarrow >= 18 reads Parquet UUID as its built-in arrow.uuid
        return "UUID" if "uuid" in t.extension_name else duckdb_type_name(t.storage_type)
    if pa.types.is_decimal(t):
        return f"DECIMAL({t.precision},{t.scale})"
    if pa.types.is_time(t):
        return "TIME"
    if pa.types.is_timestamp(t):
        if t.tz is not None:
            return "TIMESTAMP WITH TIME ZONE"
        return {"s": "TIMESTAMP_S", "ms": "TIMESTAMP_MS", "us": "TIMESTAMP", "ns": "TIMESTAMP_NS"}[t.unit]
    if pa.types.is_interval(t):
        return "INTERVAL"
    if pa.types.is_map(t):
        return "MAP"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return "LIST"
    if pa.types.is_struct(t):
        return "STRUCT"
    return str(t).upper()


@dataclass
class AddPlan:
    """What describing a file needs to know about the table (shipped to Spark tasks)."""

    table_name: str
    columns: list[Column]
    allow_missing: bool = False
    ignore_extra_columns: bool = False
    hive_partitioning: bool | None = None  # None: use key=value directories when there are any
    # (key index, column id, transform, directory name) of the table's current partition keys
    partition_keys: list[tuple[int, int, str, str]] = field(default_factory=list)

    @property
    def live_ids(self) -> set[int]:
        """Every field id of the table (nested ones too)."""
        return {c.column_id for top in self.columns for c in top.walk()}


def describe(path: str, plan: AddPlan) -> dict[str, Any]:
    """Record count, sizes, name mapping, statistics and partition values of one file (JSON-able)."""
    fs, inner = filesystem(path)
    try:
        with fs.open_input_file(inner) as fh:
            size = fh.size()
            meta = pq.ParquetFile(fh).metadata
    except FileNotFoundError as exc:
        raise NotFoundError(f"add_data_files: no file {path}") from exc
    except (OSError, pa.ArrowInvalid) as exc:
        text = str(exc).lower()
        if isinstance(exc, pa.ArrowInvalid) or "magic bytes" in text:  # "...magic bytes not found": it exists
            raise SchemaMismatchError(f"add_data_files: {path} is not a Parquet file (no valid Parquet footer: "
                                      "another format, or a truncated or corrupt file)") from exc
        if "not found" in text or "no such file" in text:
            raise NotFoundError(f"add_data_files: no file {path}") from exc
        raise SchemaMismatchError(f"add_data_files: {path} is not a readable Parquet file: {exc}") from exc
    schema = meta.schema.to_arrow_schema()
    hive = _hive_values(path) if plan.hive_partitioning is not False else {}
    mapper = _Mapper(plan, path)
    mapper.geometry_paths = {meta.schema.column(i).path for i in range(meta.num_columns)
                             if meta.schema.column(i).logical_type.type == "GEOMETRY"}
    _check_field_ids(schema, plan, path)
    entries, hive_columns = mapper.map_top(schema, hive)
    stats = file_column_stats(meta, plan.columns, leaves=mapper.leaves)
    for col, value in hive_columns:
        literal = None if value is None else types.format_literal(col.type, value)
        stats[col.column_id] = ColumnStats(column_id=col.column_id, value_count=meta.num_rows,
                                           null_count=meta.num_rows if literal is None else 0, min_value=literal,
                                           max_value=literal, column_size_bytes=0,
                                           # a folder's value is the whole value of every row
                                           min_is_exact=literal is not None, max_is_exact=literal is not None)
    return {
        "path": path, "record_count": meta.num_rows, "file_size_bytes": size, "footer_size": meta.serialized_size,
        "row_group_count": meta.num_row_groups, "mapping": entries,
        "stats": {str(cid): [s.value_count, s.null_count, s.min_value, s.max_value, s.contains_nan,
                             s.column_size_bytes, s.extra_stats, s.min_is_exact, s.max_is_exact]
                  for cid, s in stats.items()},
        "partition_values": _partition_values(plan, path, hive, hive_columns),
    }


def describe_batches(batches: Iterable[pa.RecordBatch], plan: AddPlan, threads: int) -> Iterator[pa.RecordBatch]:
    """mapInArrow body (runs on executors, which lack sqlalchemy: keep this module light): `describe_json` of
    every path in `batches`, `threads` footers read at a time, as one `description` string column."""
    from concurrent.futures import ThreadPoolExecutor

    paths_here = [p for batch in batches for p in batch.column(0).to_pylist()]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        out = list(pool.map(lambda p: describe_json(p, plan), paths_here))
    if out:
        yield pa.RecordBatch.from_arrays([pa.array(out, pa.string())], names=["description"])


def describe_json(path: str, plan: AddPlan) -> str:
    """`describe` as JSON text, or a JSON error record (so one bad file fails the call with its own message)."""
    try:
        return json.dumps(describe(path, plan))
    except (SchemaMismatchError, NotFoundError) as exc:
        return json.dumps({"path": path, "error": str(exc), "kind": type(exc).__name__})


def stats_of(description: dict[str, Any]) -> dict[int, ColumnStats]:
    """The ColumnStats of a description."""
    return {int(cid): ColumnStats(column_id=int(cid), value_count=v[0], null_count=v[1], min_value=v[2],
                                  max_value=v[3], contains_nan=v[4], column_size_bytes=v[5],
                                  extra_stats=v[6] if len(v) > 6 else None,
                                  min_is_exact=v[7] if len(v) > 7 else None,
                                  max_is_exact=v[8] if len(v) > 8 else None)
            for cid, v in description["stats"].items()}


def _hive_values(path: str) -> dict[str, str | None]:
    """key -> value of the `key=value` directories of a path, lower-cased keys (the reference's hive rules)."""
    out: dict[str, str | None] = {}
    for segment in re.split(r"[/\\]", path)[:-1]:
        key, eq, raw = segment.partition("=")
        if eq and key:
            text = unquote(raw)
            out[key.lower()] = None if text in _HIVE_NULLS else text
    return out


def _check_field_ids(schema: pa.Schema, plan: AddPlan, path: str) -> None:
    """Field ids a file carries must be live field ids of the table (else they would map to the wrong column)."""
    live = plan.live_ids

    def walk(f: pa.Field, prefix: str) -> None:
        name = f"{prefix}{f.name}"
        raw = (f.metadata or {}).get(b"PARQUET:field_id")
        if raw is not None and not f.name.startswith("_ducklake_internal_") and int(raw) not in live:
            raise SchemaMismatchError(f'Parquet field ID mismatch for column "{name}" in file "{path}": field ID '
                                      f'{int(raw)} is not a live field in table "{plan.table_name}"')
        for child in _children(f.type):
            walk(child, f"{name}.")

    for f in schema:
        walk(f, "")


def _children(t: pa.DataType) -> list[pa.Field]:
    if pa.types.is_struct(t):
        return list(t)
    if pa.types.is_map(t):
        return [t.key_field, t.item_field]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [t.value_field]
    return []


def _leaf_count(t: pa.DataType) -> int:
    kids = _children(t)
    return sum(_leaf_count(k.type) for k in kids) if kids else 1


class _Mapper:
    """Matches a file's fields to the table's columns by name, checking types; collects the leaf columns."""

    def __init__(self, plan: AddPlan, path: str):
        self.plan, self.path = plan, path
        self.leaves: list[Column | None] = []
        self.geometry_paths: set[str] = set()  # leaves of Parquet's GEOMETRY logical type (binary to Arrow)

    def map_top(self, schema: pa.Schema, hive: dict[str, str | None]
                ) -> tuple[list[MappingEntry], list[HiveColumn]]:
        by_name = {c.name.lower(): c for c in self.plan.columns}
        entries: list[MappingEntry] = []
        hive_columns: list[HiveColumn] = []
        seen: set[int] = set()
        for f in schema:
            col = by_name.get(f.name.lower())
            if col is None:
                self._extra(f, "")
                continue
            seen.add(col.column_id)
            if col.name.lower() in hive:
                entries.append(self._hive_entry(col, hive[col.name.lower()], hive_columns))
                self.leaves.extend([None] * _leaf_count(f.type))
                continue
            entries.append(self._map(f, col, ""))
        for col in self.plan.columns:
            if col.column_id in seen:
                continue
            if col.name.lower() in hive:
                entries.append(self._hive_entry(col, hive[col.name.lower()], hive_columns))
            elif not self.plan.allow_missing:
                raise SchemaMismatchError(
                    f'Column "{col.name}" exists in table "{self.plan.table_name}" but was not found in file '
                    f'"{self.path}"\n* Set allow_missing=True to allow missing fields and columns')
        return entries, hive_columns

    def _extra(self, f: pa.Field, prefix: str) -> None:
        if not self.plan.ignore_extra_columns:
            raise SchemaMismatchError(
                f'Column "{prefix}{f.name}" exists in file "{self.path}" but was not found in table '
                f'"{self.plan.table_name}"\n* Set ignore_extra_columns=True to add the file anyway')
        self.leaves.extend([None] * _leaf_count(f.type))

    def _hive_entry(self, col: Column, text: str | None, hive_columns: list[HiveColumn]) -> MappingEntry:
        if col.is_nested:
            raise SchemaMismatchError(f'Type "{col.type}" is not supported for hive partitioning')
        try:
            value = types.parse_literal(col.type, text)
        except (ValueError, ArithmeticError) as exc:
            raise SchemaMismatchError(
                f'Column "{col.name}" exists as a hive partition with value "{text}", but this value cannot be '
                f'cast to the column type "{col.type}"') from exc
        hive_columns.append((col, value))
        return [col.name, col.column_id, True, []]

    def _fail(self, col_path: str, expected: str, found: str) -> None:
        raise SchemaMismatchError(
            f'Failed to map column "{col_path}" from file "{self.path}" to the column in table '
            f'"{self.plan.table_name}"\n* Expected {expected}, found type {found}')

    def _map(self, f: pa.Field, col: Column, prefix: str) -> MappingEntry:
        t = f.type.value_type if pa.types.is_dictionary(f.type) else f.type
        found = duckdb_type_name(t)
        name = f"{prefix}{f.name}"
        entry: MappingEntry = [f.name, col.column_id, False, []]
        if col.type == "struct":
            if not pa.types.is_struct(t):
                self._fail(name, '"STRUCT"', found)
            by_name = {c.name.lower(): c for c in col.children}
            seen = set()
            for child in t:
                sub = by_name.get(child.name.lower())
                if sub is None:
                    self._extra(child, f"{name}.")
                    continue
                seen.add(sub.column_id)
                entry[3].append(self._map(child, sub, f"{name}."))
            missing = [c.name for c in col.children if c.column_id not in seen]
            if missing and not self.plan.allow_missing:
                raise SchemaMismatchError(
                    f'Column "{name}.{missing[0]}" exists in table "{self.plan.table_name}" but was not found in '
                    f'file "{self.path}"\n* Set allow_missing=True to allow missing fields and columns')
        elif col.type == "list":
            if not (pa.types.is_list(t) or pa.types.is_large_list(t)):
                self._fail(name, '"LIST"', found)
            child = self._map(t.value_field, col.children[0], f"{name}.")
            child[0] = "list"  # the reference names a list's element entry "list"
            entry[3].append(child)
        elif col.type == "map":
            if not pa.types.is_map(t):
                self._fail(name, '"MAP"', found)
            entry[3].append(self._map(t.key_field, col.children[0], f"{name}."))
            entry[3].append(self._map(t.item_field, col.children[1], f"{name}."))
        else:
            self._check_leaf(name, col, t, found)
            self.leaves.append(col)
        return entry

    def _check_leaf(self, name: str, col: Column, t: pa.DataType, found: str) -> None:
        decimal = re.fullmatch(r"decimal\((\d+),\s*(\d+)\)", col.type)
        if decimal:
            precision, scale = int(decimal.group(1)), int(decimal.group(2))
            if not pa.types.is_decimal(t):
                self._fail(name, '"DECIMAL"', found)
            if t.precision > precision or t.scale > scale:
                raise SchemaMismatchError(
                    f'Failed to map column "{name}" from file "{self.path}" to the column in table '
                    f'"{self.plan.table_name}"\n* Incompatible decimal precision/scale - found precision '
                    f'{t.precision}, scale {t.scale} - but table is defined with precision {precision}, scale {scale}')
            return
        if col.type == "geometry":
            if name not in self.geometry_paths:  # the reference's words: GeoParquet's WKB is a plain BLOB
                self._fail(name, '"GEOMETRY"', f'"{found}". Is this a GeoParquet v1.*.* file? DuckLake only supports '
                           "GEOMETRY types stored in native Parquet(V3) format, not GeoParquet(v1.*.*)")
            return
        accepted = _accepted(col.type)
        if accepted is None:
            raise SchemaMismatchError(f'add_data_files: column "{name}" of type {col.type} is not supported')
        if found not in accepted:
            expected = accepted[0] if len(accepted) == 1 else "one of " + ", ".join(accepted)
            self._fail(name, expected, found)


def _partition_values(plan: AddPlan, path: str, hive: dict[str, str | None],
                      hive_columns: list[HiveColumn]) -> dict[str, str | None]:
    """Partition key index -> value for a partitioned table, from the file's hive path (all keys required)."""
    if not plan.partition_keys:
        return {}
    identity = {col.column_id: value for col, value in hive_columns}
    by_id = {c.column_id: c for c in plan.columns}
    out: dict[str, str | None] = {}
    for index, column_id, transform, directory in plan.partition_keys:
        if transform == "identity":
            if column_id not in identity:
                break
            value = identity[column_id]
            out[str(index)] = None if value is None else types.format_literal(by_id[column_id].type, value)
            continue
        text = hive.get(directory.lower(), "<missing>")
        if text == "<missing>" or (text is not None and not re.fullmatch(r"-?\d+", text)):
            break
        out[str(index)] = text
    else:
        return out
    raise SchemaMismatchError(f'File "{path}" contains an invalid partition value for the table configuration.')
