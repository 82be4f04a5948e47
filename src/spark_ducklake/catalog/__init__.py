"""The catalog: DuckLake metadata in a SQL database (SQLite, DuckDB, PostgreSQL, MySQL) through SQLAlchemy Core.

Pure Python: no Spark, no file I/O beyond Parquet footers. Imports only `spec` and `errors` (database drivers
lazily, as optional dependencies); `dataplane`, `operations` and the facade build on it. Inside, each package imports
only those below it (pyproject.toml's `catalog-layers` contract):

    attach | planners  >  changes  >  commit  >  inlined  >  reads | stats | conflicts  >  database

- attach.py    opening a lake from an ATTACH string as one `AttachOptions` record asks: connect, create or check
               (and migrate), pin a snapshot
- commit.py    one snapshot per commit: a short transaction with the spec's conflict rules and retries
- retry_settings.py  the reference's ducklake_max_retry_count / retry_wait_ms / retry_backoff -> RetryPolicy
- write_settings.py  the reference's ducklake_target_file_size / default_data_inlining_row_limit /
               write_deletion_vectors settings of a handle -> WriteSettings
- conflicts.py the spec's conflict rules: may our changes commit after a snapshot committed meanwhile
- stats.py     column statistics from Parquet footers, merged into table-level stats
- extra_stats.py  `extra_stats` of geometry and variant columns, from Parquet footers, as DuckDB writes them
- encryption.py   encrypted lakes (per-file keys in `ducklake_data_file.encryption_key`): what is supported
- database/    dialects, engines, the spec tables, bootstrap and migration
- reads/       the catalog as of a snapshot: tables, files, options, name mappings
- inlined/     small inserts and deletes stored as catalog rows
- changes/     catalog changes (commit operations): the rows each kind of change writes
- planners/    which files a scan, change feed, stream batch or compaction touches
"""
