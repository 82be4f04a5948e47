"""Tests reach the reference DuckDB extension through the package's own loader."""

from spark_ducklake.duckdb_reference import attach, connect

__all__ = ["attach", "connect"]
