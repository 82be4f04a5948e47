"""DuckDB catalogs: a file one process writes at a time, native types, UPDATE without a row count."""

from __future__ import annotations

import os
from typing import Any

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from ....errors import CatalogError
from .base import Dialect


class DuckDBDialect(Dialect):
    """A DuckDB database file as the catalog."""

    name = kind = "duckdb"
    reports_update_rowcount = False  # duckdb_engine reports none for UPDATE
    default_metadata_schema = "main"  # duckdb_engine's has_table would otherwise look in every schema

    def create_engine(self, target: str, *, read_only: bool = False) -> sa.Engine:
        """A DuckDB engine on the file that never holds it between calls (it admits one writer process)."""
        try:
            import duckdb_engine  # noqa: F401
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise CatalogError("DuckDB catalogs need 'pip install spark-ducklake[duckdb]'") from exc
        path = os.path.abspath(target)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        # New files in the installed DuckDB's newest storage format, as the reference creates them (v1.5.0+ with
        # DuckDB 1.5): older formats refuse VARIANT columns, which inlined data tables may have. Existing files
        # keep their format.
        config = {"storage_compatibility_version": "latest"}
        return sa.create_engine(f"duckdb:///{path}", poolclass=NullPool,
                                connect_args={"read_only": read_only, "config": config})

    def use_schema(self, dbapi_connection: Any, schema: str) -> None:
        """`SET schema`; a schema not created yet is left to bootstrap (unqualified names then miss the lake)."""
        if _schema_exists(dbapi_connection, schema):
            dbapi_connection.execute(f"SET schema = {_literal(schema)}")

    def uuid_type(self) -> sa.types.TypeEngine[Any]:
        """DuckDB's UUID."""
        return sa.Uuid(as_uuid=False)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _schema_exists(dbapi_connection: Any, schema: str) -> bool:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("SELECT count(*) FROM information_schema.schemata WHERE catalog_name = current_database() "
                       "AND schema_name = ?", [schema])
        return cursor.fetchone()[0] > 0
    finally:
        cursor.close()
