"""The DuckLake catalog tables (1.0, and 1.1's additions) as SQLAlchemy Core objects, typed per catalog database
like the reference."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.types import TypeDecorator

from .dialects import dialect_for

SPEC_VERSION: Final = "1.0"


class CatalogBool(TypeDecorator[Any]):
    """BOOLEAN, stored as each catalog database stores it (BIGINT 0/1 in SQLite, as the reference does)."""

    impl = sa.Boolean
    cache_ok = True

    def load_dialect_impl(self, dialect: sa.Dialect) -> Any:
        return dialect.type_descriptor(dialect_for(dialect).bool_type())

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        return None if value is None else dialect_for(dialect).bind_bool(value)

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> Any:
        return None if value is None else bool(value)


class CatalogUuid(TypeDecorator[Any]):
    """UUID, native where the database has one (text in SQLite and MySQL); always handed to Python as str."""

    impl = sa.String
    cache_ok = True

    def load_dialect_impl(self, dialect: sa.Dialect) -> Any:
        return dialect.type_descriptor(dialect_for(dialect).uuid_type())

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        return None if value is None else str(value)

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> Any:
        return None if value is None else str(value)


class CatalogText(TypeDecorator[Any]):
    """VARCHAR, as each catalog database spells it (TEXT in MySQL, whose VARCHAR needs a length)."""

    impl = sa.String
    cache_ok = True

    def load_dialect_impl(self, dialect: sa.Dialect) -> Any:
        return dialect.type_descriptor(dialect_for(dialect).text_type())


class CatalogTimestamp(TypeDecorator[Any]):
    """TIMESTAMPTZ; SQLite keeps the reference's text form `2026-11-22 11:42:19.375589+00`, MySQL a DATETIME in
    UTC (whole seconds, as the reference creates it)."""

    impl = sa.DateTime
    cache_ok = True

    def load_dialect_impl(self, dialect: sa.Dialect) -> Any:
        return dialect.type_descriptor(dialect_for(dialect).timestamp_type())

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None:
            return None
        return dialect_for(dialect).bind_timestamp(value.astimezone(timezone.utc))

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None:
            return None
        if isinstance(value, str):
            return parse_catalog_timestamp(value)
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def parse_catalog_timestamp(text: str) -> datetime:
    """Parse `YYYY-MM-DD HH:MM:SS[.ffffff][+HH[:MM]]` as written by DuckDB into SQLite."""
    text = text.strip().replace("T", " ")
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    elif len(text) >= 3 and text[-3] in "+-" and text[-3:].lstrip("+-").isdigit():
        text += ":00"
    value = datetime.fromisoformat(text)
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def _col(name: str, type_: Any, **kw: Any) -> sa.Column[Any]:
    return sa.Column(name, type_, **kw)


BIG = sa.BigInteger
TEXT = CatalogText


# What each 1.1 layout adds to 1.0 (appended at the end of the table). The reference's development build
# ('1.1-dev1') has row_group_count and ducklake_view_column_tag; the released 1.1 adds the stats exactness flags and
# nested schemas' parent_schema_id (docs/catalogs.md, "Versions").
LAYOUT_V10, LAYOUT_V11_DEV, LAYOUT_V11 = "1.0", "1.1-dev1", "1.1"
_ADDED_V11_DEV: dict[str, tuple[str, ...]] = {
    "ducklake_data_file": ("row_group_count",), "ducklake_delete_file": ("row_group_count",)}
_ADDED_V11: dict[str, tuple[str, ...]] = {
    **_ADDED_V11_DEV, "ducklake_file_column_stats": ("min_is_exact", "max_is_exact"),
    "ducklake_table_column_stats": ("min_is_exact", "max_is_exact"), "ducklake_schema": ("parent_schema_id",)}
TABLES_V11 = ("ducklake_view_column_tag",)


def added_columns(layout: str) -> dict[str, tuple[str, ...]]:
    """table -> the columns the layout adds to 1.0's."""
    return {LAYOUT_V10: {}, LAYOUT_V11_DEV: _ADDED_V11_DEV, LAYOUT_V11: _ADDED_V11}[layout]


def build_metadata(layout: str = LAYOUT_V11) -> sa.MetaData:
    """The catalog tables of one layout (inlined data tables are created per table elsewhere)."""
    md = sa.MetaData()
    added = added_columns(layout)
    extra = {"row_group_count": BIG, "min_is_exact": CatalogBool, "max_is_exact": CatalogBool,
             "parent_schema_id": BIG}

    def table(name: str, *cols: sa.Column[Any]) -> sa.Table:
        return sa.Table(name, md, *cols, *(_col(c, extra[c]) for c in added.get(name, ())))

    table("ducklake_metadata", _col("key", TEXT, nullable=False), _col("value", TEXT, nullable=False),
          _col("scope", TEXT), _col("scope_id", BIG))
    table("ducklake_snapshot", _col("snapshot_id", BIG, primary_key=True, autoincrement=False),
          _col("snapshot_time", CatalogTimestamp), _col("schema_version", BIG), _col("next_catalog_id", BIG),
          _col("next_file_id", BIG))
    table("ducklake_snapshot_changes", _col("snapshot_id", BIG, primary_key=True, autoincrement=False),
          _col("changes_made", TEXT), _col("author", TEXT), _col("commit_message", TEXT),
          _col("commit_extra_info", TEXT))
    table("ducklake_schema", _col("schema_id", BIG, primary_key=True, autoincrement=False),
          _col("schema_uuid", CatalogUuid), _col("begin_snapshot", BIG), _col("end_snapshot", BIG),
          _col("schema_name", TEXT), _col("path", TEXT), _col("path_is_relative", CatalogBool))
    table("ducklake_table", _col("table_id", BIG), _col("table_uuid", CatalogUuid), _col("begin_snapshot", BIG),
          _col("end_snapshot", BIG), _col("schema_id", BIG), _col("table_name", TEXT), _col("path", TEXT),
          _col("path_is_relative", CatalogBool))
    table("ducklake_view", _col("view_id", BIG), _col("view_uuid", CatalogUuid), _col("begin_snapshot", BIG),
          _col("end_snapshot", BIG), _col("schema_id", BIG), _col("view_name", TEXT), _col("dialect", TEXT),
          _col("sql", TEXT), _col("column_aliases", TEXT))
    table("ducklake_tag", _col("object_id", BIG), _col("begin_snapshot", BIG), _col("end_snapshot", BIG),
          _col("key", TEXT), _col("value", TEXT))
    table("ducklake_column_tag", _col("table_id", BIG), _col("column_id", BIG), _col("begin_snapshot", BIG),
          _col("end_snapshot", BIG), _col("key", TEXT), _col("value", TEXT))
    table("ducklake_data_file", _col("data_file_id", BIG, primary_key=True, autoincrement=False),
          _col("table_id", BIG), _col("begin_snapshot", BIG), _col("end_snapshot", BIG), _col("file_order", BIG),
          _col("path", TEXT), _col("path_is_relative", CatalogBool), _col("file_format", TEXT),
          _col("record_count", BIG), _col("file_size_bytes", BIG), _col("footer_size", BIG),
          _col("row_id_start", BIG), _col("partition_id", BIG), _col("encryption_key", TEXT),
          _col("mapping_id", BIG), _col("partial_max", BIG))
    table("ducklake_file_column_stats", _col("data_file_id", BIG), _col("table_id", BIG), _col("column_id", BIG),
          _col("column_size_bytes", BIG), _col("value_count", BIG), _col("null_count", BIG),
          _col("min_value", TEXT), _col("max_value", TEXT), _col("contains_nan", CatalogBool),
          _col("extra_stats", TEXT))
    table("ducklake_file_variant_stats", _col("data_file_id", BIG), _col("table_id", BIG),
          _col("column_id", BIG), _col("variant_path", TEXT), _col("shredded_type", TEXT),
          _col("column_size_bytes", BIG), _col("value_count", BIG), _col("null_count", BIG),
          _col("min_value", TEXT), _col("max_value", TEXT), _col("contains_nan", CatalogBool),
          _col("extra_stats", TEXT))
    table("ducklake_delete_file", _col("delete_file_id", BIG, primary_key=True, autoincrement=False),
          _col("table_id", BIG), _col("begin_snapshot", BIG), _col("end_snapshot", BIG),
          _col("data_file_id", BIG), _col("path", TEXT), _col("path_is_relative", CatalogBool),
          _col("format", TEXT), _col("delete_count", BIG), _col("file_size_bytes", BIG),
          _col("footer_size", BIG), _col("encryption_key", TEXT), _col("partial_max", BIG))
    table("ducklake_column", _col("column_id", BIG), _col("begin_snapshot", BIG), _col("end_snapshot", BIG),
          _col("table_id", BIG), _col("column_order", BIG), _col("column_name", TEXT), _col("column_type", TEXT),
          _col("initial_default", TEXT), _col("default_value", TEXT), _col("nulls_allowed", CatalogBool),
          _col("parent_column", BIG), _col("default_value_type", TEXT), _col("default_value_dialect", TEXT))
    table("ducklake_table_stats", _col("table_id", BIG), _col("record_count", BIG), _col("next_row_id", BIG),
          _col("file_size_bytes", BIG))
    table("ducklake_table_column_stats", _col("table_id", BIG), _col("column_id", BIG),
          _col("contains_null", CatalogBool), _col("contains_nan", CatalogBool), _col("min_value", TEXT),
          _col("max_value", TEXT), _col("extra_stats", TEXT))
    table("ducklake_partition_info", _col("partition_id", BIG), _col("table_id", BIG),
          _col("begin_snapshot", BIG), _col("end_snapshot", BIG))
    table("ducklake_partition_column", _col("partition_id", BIG), _col("table_id", BIG),
          _col("partition_key_index", BIG), _col("column_id", BIG), _col("transform", TEXT))
    table("ducklake_file_partition_value", _col("data_file_id", BIG), _col("table_id", BIG),
          _col("partition_key_index", BIG), _col("partition_value", TEXT))
    table("ducklake_files_scheduled_for_deletion", _col("data_file_id", BIG), _col("path", TEXT),
          _col("path_is_relative", CatalogBool), _col("schedule_start", CatalogTimestamp))
    table("ducklake_inlined_data_tables", _col("table_id", BIG), _col("table_name", TEXT),
          _col("schema_version", BIG))
    table("ducklake_column_mapping", _col("mapping_id", BIG), _col("table_id", BIG), _col("type", TEXT))
    table("ducklake_name_mapping", _col("mapping_id", BIG), _col("column_id", BIG), _col("source_name", TEXT),
          _col("target_field_id", BIG), _col("parent_column", BIG), _col("is_partition", CatalogBool))
    table("ducklake_schema_versions", _col("begin_snapshot", BIG), _col("schema_version", BIG),
          _col("table_id", BIG))
    table("ducklake_macro", _col("schema_id", BIG), _col("macro_id", BIG), _col("macro_name", TEXT),
          _col("begin_snapshot", BIG), _col("end_snapshot", BIG))
    table("ducklake_macro_impl", _col("macro_id", BIG), _col("impl_id", BIG), _col("dialect", TEXT),
          _col("sql", TEXT), _col("type", TEXT))
    table("ducklake_macro_parameters", _col("macro_id", BIG), _col("impl_id", BIG), _col("column_id", BIG),
          _col("parameter_name", TEXT), _col("parameter_type", TEXT), _col("default_value", TEXT),
          _col("default_value_type", TEXT))
    table("ducklake_sort_info", _col("sort_id", BIG), _col("table_id", BIG), _col("begin_snapshot", BIG),
          _col("end_snapshot", BIG))
    table("ducklake_sort_expression", _col("sort_id", BIG), _col("table_id", BIG),
          _col("sort_key_index", BIG), _col("expression", TEXT), _col("dialect", TEXT),
          _col("sort_direction", TEXT), _col("null_order", TEXT))
    if layout != LAYOUT_V10:
        table("ducklake_view_column_tag", _col("view_id", BIG), _col("column_name", TEXT), _col("begin_snapshot", BIG),
              _col("end_snapshot", BIG), _col("key", TEXT), _col("value", TEXT))
    return md


LAYOUTS = {layout: build_metadata(layout) for layout in (LAYOUT_V10, LAYOUT_V11_DEV, LAYOUT_V11)}
METADATA = LAYOUTS[LAYOUT_V10]
# Every table and column of any layout: queries name their columns, so a 1.0 catalog is never asked for a 1.1 one.
T = LAYOUTS[LAYOUT_V11].tables  # short alias used by the catalog modules: T["ducklake_snapshot"]


def end_live_rows(conn: sa.Connection, table: sa.Table, snapshot_id: int, *where: Any,
                  end: sa.Column[Any] | None = None) -> int:
    """Set end_snapshot (or the column `end`: inlined data tables name it per version) on the live rows matching
    `where`; returns how many were ended.

    Where the driver reports no rowcount for UPDATE (DuckDB) the rows are counted first (inside the same
    commit transaction, which already holds the snapshot claim that serializes writers)."""
    end = table.c.end_snapshot if end is None else end
    live = [end.is_(None), *where]
    counted = None
    if not dialect_for(conn).reports_update_rowcount:
        counted = conn.execute(sa.select(sa.func.count()).select_from(table).where(*live)).scalar_one()
    result = conn.execute(table.update().where(*live).values({end: snapshot_id}))
    return counted if counted is not None else result.rowcount
