"""How a catalog database holds inlined rows: the base `InlinedStorage`, one subclass per database that differs.

The base is what the reference does in SQLite: integers and booleans (0/1) BIGINT, blob BLOB, everything else
VARCHAR in DuckDB's text form (timestamptz in UTC with `+00`; floats `nan`/`inf`), nested values in DuckDB's nested
text (`nested`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import pyarrow as pa
import sqlalchemy as sa

from ...spec.model import Column
from ..database.dialects import Dialect
from .nested import readable_back
from .text import SMALL_INTS, has_duckdb_type, scalar_text


class InlinedStorage:
    """The column types, limits and value forms of `ducklake_inlined_data_*` tables in one catalog database."""

    reference_sql_structs: ClassVar[bool] = True  # a top-level struct may be the reference's SQL-style text
    text_holds_nul: ClassVar[bool] = True  # whether text columns hold a NUL character

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect

    def column_type(self, col: Column) -> sa.types.TypeEngine[Any]:
        """The column type the reference gives `col` in an inlined data table here."""
        if col.type in SMALL_INTS or col.type == "boolean":
            return sa.BigInteger()
        if col.type == "blob":
            return sa.LargeBinary()
        return sa.String()

    def inlines_column(self, col: Column) -> bool:
        """Whether a column (of nested ones: each part) can be held in an inlined data table here."""
        return has_duckdb_type(col)

    def inlines_columns(self, columns: list[Column]) -> bool:
        """Whether a table of these columns can have its rows inlined here."""
        return all(self.inlines_column(col) for top in columns for col in top.walk())

    def creates_table(self, columns: list[Column]) -> bool:
        """Whether the reference creates an inlined data table for these columns here (on DDL)."""
        return True

    def inlines_values(self, columns: list[Column], data: pa.Table) -> bool:
        """Whether these rows (of columns that `inlines_columns`) read back exactly from the inlined table."""
        return all(readable_back(col, v, text_holds_nul=self.text_holds_nul) for col in columns if col.is_nested
                   for v in data.column(col.name).to_pylist())

    def reads_as_text(self, col: Column) -> bool:
        """Whether a column is selected cast to text (the driver's own value would lose something)."""
        return False

    def encode(self, col: Column, value: Any) -> Any:
        """A non-NULL scalar as bound to its inlined data column."""
        if col.type in SMALL_INTS:
            return int(value)
        if col.type == "boolean":
            return self.dialect.bind_bool(value)
        if col.type == "blob":
            return bytes(value)
        return scalar_text(col, value)

    def read(self, col: Column, value: Any) -> Any:
        """A non-NULL scalar as read from its inlined data column, in a form the common decoding takes."""
        return value
