"""The sqlglot dialects lake.sql parses with: Spark's as sqlglot has it, and DuckDB's with one correction. DuckDB has
no RANGE type, yet sqlglot's DuckDB parser takes `range <` as the start of `RANGE<...>`, so the column of
`FROM range(10)` could not be compared (`WHERE range < 5`, a common DuckDB idiom)."""

from __future__ import annotations

from typing import Any

from sqlglot.dialects.duckdb import DuckDB
from sqlglot.tokens import TokenType

_DuckDBParser: Any = DuckDB.Parser  # sqlglot declares it as a variable, which mypy refuses as a base class


class LakeDuckDB(DuckDB):
    """DuckDB as sqlglot reads it, without a RANGE type (its generator is DuckDB's: trees print as before)."""

    class Parser(_DuckDBParser):
        NESTED_TYPE_TOKENS = DuckDB.Parser.NESTED_TYPE_TOKENS - {TokenType.RANGE}
        TYPE_TOKENS = DuckDB.Parser.TYPE_TOKENS - {TokenType.RANGE}


def reading(dialect: str) -> str | type[DuckDB]:
    """What to pass sqlglot's `read=` for lake.sql's `dialect` ("duckdb" or "spark")."""
    return LakeDuckDB if dialect == "duckdb" else dialect
