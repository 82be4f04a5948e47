"""Plain data objects read from and written to the catalog; no SQL here."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

NESTED_TYPES = ("list", "struct", "map")


@dataclass(frozen=True)
class Snapshot:
    """One row of ducklake_snapshot, joined with its ducklake_snapshot_changes row."""

    snapshot_id: int
    snapshot_time: datetime
    schema_version: int
    next_catalog_id: int
    next_file_id: int
    changes: str | None = None
    author: str | None = None
    commit_message: str | None = None
    commit_extra_info: str | None = None


@dataclass
class Column:
    """A (possibly nested) column at one snapshot; `type` is the DuckLake type string."""

    column_id: int
    name: str
    type: str
    nullable: bool = True
    children: list[Column] = field(default_factory=list)
    initial_default: str | None = None
    default_value: str | None = None
    # First snapshot in which this column_id existed (older files lack it).
    added_snapshot: int | None = None

    @property
    def is_nested(self) -> bool:
        """True for list, struct and map columns."""
        return self.type in NESTED_TYPES

    def walk(self) -> Iterator[Column]:
        """Yield this column and all nested children, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass
class SchemaInfo:
    """A schema visible at a snapshot."""

    schema_id: int
    name: str
    path: str  # absolute, ends with '/'
    begin_snapshot: int
    parent_id: int | None = None  # the parent schema's id: a nested schema (DuckLake 1.1)


@dataclass(frozen=True)
class PartitionKey:
    """One partition key: a top-level column and its transform (`identity`, `year`, ..., `bucket(N)`)."""

    column_id: int
    transform: str

    @property
    def buckets(self) -> int | None:
        """N of `bucket(N)`, else None."""
        m = re.fullmatch(r"bucket\((\d+)\)", self.transform)
        return int(m.group(1)) if m else None

    def directory_name(self, column: Column) -> str:
        """The hive directory key alone (`year`, `bucket`, or the column's name); `directory_names` settles clashes."""
        if self.transform == "identity":
            return column.name
        return "bucket" if self.buckets else self.transform


def directory_names(keys: list[PartitionKey], columns: list[Column]) -> list[str]:
    """Each key's hive directory key, as the reference names them: a name already taken (case-insensitively) by an
    earlier key gets `_<column>` appended until it is free, so `year(a), year(b)` is `year=…/year_b=…`."""
    by_id = {c.column_id: c for c in columns}
    taken: set[str] = set()
    names = []
    for key in keys:
        column = by_id[key.column_id]
        name = key.directory_name(column)
        while name.lower() in taken:
            name = f"{name}_{column.name}"
        taken.add(name.lower())
        names.append(name)
    return names


@dataclass
class PartitionSpec:
    """The partition keys in force for a table (possibly none)."""

    partition_id: int | None = None
    keys: list[PartitionKey] = field(default_factory=list)


@dataclass
class TableInfo:
    """A table visible at a snapshot, with its top-level columns in order."""

    table_id: int
    table_uuid: str
    schema_id: int
    schema_name: str
    name: str
    path: str  # absolute data directory of the table, ends with '/'
    columns: list[Column]
    begin_snapshot: int
    partition: PartitionSpec | None = None  # loaded by writers; None = not looked up
    sort_keys: list[Any] | None = None  # catalog.changes.sorting.SortKey list, loaded by writers

    @property
    def qualified_name(self) -> str:
        """schema.table"""
        return f"{self.schema_name}.{self.name}"


@dataclass
class DeleteFile:
    """A positional delete file attached to one data file."""

    delete_file_id: int
    data_file_id: int
    path: str  # absolute
    delete_count: int
    begin_snapshot: int
    partial_max: int | None = None
    file_size_bytes: int | None = None
    footer_size: int | None = None
    format: str = "parquet"  # or "puffin": an Iceberg deletion vector (dataplane/arrow/deletion_vectors.py)
    # ENCRYPTED lakes: the file's base64 AES key (kept out of reprs, so logs and errors never show it).
    encryption_key: str | None = field(default=None, repr=False)

    @property
    def encrypted(self) -> bool:
        """Whether the file's bytes are encrypted: the reference records a key for its deletion vectors (puffin)
        too, yet writes them in plaintext."""
        return bool(self.encryption_key) and self.format != "puffin"


@dataclass
class DataFile:
    """A Parquet data file visible at a snapshot, with its delete file if any."""

    data_file_id: int
    table_id: int
    path: str  # absolute
    record_count: int
    file_size_bytes: int
    footer_size: int | None
    row_id_start: int | None
    begin_snapshot: int
    partial_max: int | None = None
    partition_id: int | None = None
    mapping_id: int | None = None
    delete_file: DeleteFile | None = None
    # Top-level column ids the file lacks though its rows are read under them (None: not looked up).
    absent_columns: frozenset[int] | None = None
    # Files with a mapping_id: the catalog.name_maps.NameMap to read them by, and hive-path column values.
    name_map: tuple[Any, ...] | None = None
    hive_values: dict[int, object] | None = None
    encryption_key: str | None = field(default=None, repr=False)  # as DeleteFile's


@dataclass
class ColumnStats:
    """Per-file statistics of one column, values in the spec's string encodings."""

    column_id: int
    value_count: int | None = None
    null_count: int | None = None
    min_value: str | None = None
    max_value: str | None = None
    contains_nan: bool | None = None
    column_size_bytes: int | None = None
    extra_stats: str | None = None  # geometry and variant: JSON (spec "Extra Statistics")
    # DuckLake 1.1: whether min_value / max_value are whole values (not a truncated prefix); None: unknown
    min_is_exact: bool | None = None
    max_is_exact: bool | None = None


@dataclass
class NewDataFile:
    """A data file written (staged) by a writer and not yet committed."""

    path: str  # absolute final path
    record_count: int
    file_size_bytes: int
    footer_size: int
    column_stats: dict[int, ColumnStats] = field(default_factory=dict)
    partition_values: dict[int, str | None] = field(default_factory=dict)  # a NULL key is None, as in the catalog
    # Spark writes no field ids for list elements and map keys/values: such files get a name mapping.
    needs_name_mapping: bool = False
    encryption_key: str | None = field(default=None, repr=False)  # ENCRYPTED lakes: the file's base64 key
    row_group_count: int | None = None  # Parquet row groups (recorded on DuckLake 1.1 catalogs)


@dataclass
class NewDeleteFile:
    """A positional delete file written for one data file and not yet committed."""

    data_file_id: int
    path: str  # absolute
    delete_count: int
    file_size_bytes: int
    footer_size: int
    replaces: DeleteFile | None = None  # partial files: the data file's delete file this one replaces
    first_snapshot: int | None = None  # partial files: the oldest deletion they hold
    predicted_snapshot: int | None = None  # partial files: the snapshot id their new positions carry
    encryption_key: str | None = field(default=None, repr=False)  # ENCRYPTED lakes: the file's base64 key
    row_group_count: int | None = None  # Parquet delete files' row groups (1.1 catalogs); None for Puffin files
