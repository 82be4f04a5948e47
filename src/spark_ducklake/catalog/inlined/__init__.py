"""Inlined data: small inserts and deletes kept as rows of `ducklake_inlined_data_*` tables in the catalog.

Imports `catalog.reads`, `catalog.database`, `spec` and `errors`; commit operations and planners use it.

- codec.py     inlined tables per catalog database and row (de)coding: the entry point, for any catalog
- storage.py   `InlinedStorage`: what the reference does in SQLite; subclassed per database in
               duckdb.py, postgres.py and mysql.py (which values MySQL/MariaDB cannot hold exactly)
- text.py      DuckDB's text forms of scalars and its type names
- nested.py    DuckDB's text forms of nested values (and the reference's SQL-style structs)
- tables.py    which inlined tables exist; creating, filling and reading them at a snapshot
"""
