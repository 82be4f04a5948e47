"""Interchangeability with the reference: DuckDB 1.5.5 (DuckLake 1.0) and the 1.1 binary, both directions."""
