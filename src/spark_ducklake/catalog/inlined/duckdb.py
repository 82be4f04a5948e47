"""Inlined data in DuckDB catalogs: native DuckDB types, nested included.

Scalars are bound as text cast by DuckDB where the driver has no exact mapping, and read natively, except nested
values holding an INTERVAL (the Python driver turns months into 30 days), which are read as DuckDB's VARCHAR
rendering, as are the types Arrow holds as strings.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import sqlalchemy as sa

from ...spec.model import Column
from .storage import InlinedStorage
from .text import TEXT_TYPES, CastFromText, duckdb_type_name

_NATIVE = {"boolean": sa.Boolean, "int64": sa.BigInteger, "float32": sa.Float, "float64": sa.Double,
           "varchar": sa.String, "blob": sa.LargeBinary}


class DuckDBStorage(InlinedStorage):
    """Native values: DuckDB reads and writes every value it can type."""

    reference_sql_structs = False  # nested values are native, never the reference's SQL text

    def column_type(self, col: Column) -> sa.types.TypeEngine[Any]:
        """The native DuckDB type."""
        native = _NATIVE.get(col.type)
        return native() if native is not None else CastFromText(duckdb_type_name(col))

    def inlines_values(self, columns: list[Column], data: pa.Table) -> bool:
        """Every value: DuckDB stores them natively."""
        return True

    def reads_as_text(self, col: Column) -> bool:
        """Arrow's string types, and nested values holding an INTERVAL."""
        return col.type in TEXT_TYPES or (col.is_nested and any(c.type == "interval" for c in col.walk()))

    def encode(self, col: Column, value: Any) -> Any:
        """Floats and strings as they are; the rest as the base does."""
        if col.type in ("float32", "float64", "varchar"):
            return value
        return super().encode(col, value)
