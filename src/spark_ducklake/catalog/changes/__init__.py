"""Catalog changes: the catalog rows one change writes, run by `catalog.commit` inside its transaction.

(Named `changes`, not `operations`: the user's operations live in the top-level `operations` package.)

Each operation is an object whose `apply` gets a `CommitContext` (ids drawn from the current counters) and
records its `changes_made`. Imports `catalog.commit`, `catalog.inlined`, `catalog.reads`, `catalog.database`,
`catalog.stats`, `spec` and `errors`; never Spark, and no file I/O (a file rewrite a commit needs, such as
restamping a partial delete file, is a function the data plane passes in).

- ddl.py            schemas and tables: create, drop, rename, column changes
- data.py           register files, inline rows, delete, replace everything
- compaction.py     what maintenance commits: flushed inlined data, merged and rewritten files
- file_rows.py      file rows data and maintenance operations share: name mappings, delete files, deletions
- partitioning.py   partition specs (`year(ts)`, `bucket(8, id)`) and their catalog rows
- sorting.py        `SET SORTED BY` / `RESET SORTED BY` (ducklake_sort_info / _expression)
- tags.py           tags and comments, as the reference's COMMENT ON writes them
- macros.py         lake macros (ducklake_macro*): creating and dropping them
- registered_files.py  existing Parquet files registered in a table (`ducklake_add_data_files`)
- views.py          lake views: reading them at a snapshot, creating and dropping them
- stream_guards.py  which micro-batch of a streaming query a table last committed (exactly-once sinks)
"""
