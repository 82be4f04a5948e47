"""The catalog database: one dialect per database kind, connections, the spec's tables, bootstrap and migration.

Lowest catalog layer: imports `spec`, `errors` and `version` only (drivers lazily, as optional dependencies);
every other catalog package builds on it.

- dialects/       one `Dialect` per catalog database (SQLite, DuckDB, PostgreSQL, MySQL/MariaDB): what differs
- connection.py   catalog strings (`sqlite:`, `duckdb:`, `postgres:`, `mysql:`) to SQLAlchemy engines
- spec_tables.py  the DuckLake 1.0 catalog tables as SQLAlchemy Core objects, typed per dialect
- transactions.py write transactions that queue behind our other writers instead of racing them
- bootstrap.py    creating a new lake in an empty database, checking an existing one
- migration.py    upgrading spec 0.3/0.4 catalogs to 1.0 in place, as the reference does
- versions.py     catalog format versions: which we read and write, which one a connection is on
- repairs.py      the repairs DuckLake 1.1 makes while migrating a 1.0 catalog
- mysql_dsn.py    MySQL catalog strings in the reference's key=value form -> PyMySQL arguments
"""
