"""The DuckLake spec as plain Python: data model, type strings, names, snapshot-change vocabulary. No I/O.

Layer 1 (above `errors`): imports only `spark_ducklake.errors`, the standard library, and pure-data libraries
(pyarrow for types, numpy, sqlglot). Every other layer builds on it; Spark tasks import several of these modules
on executors, so none may pull in SQLAlchemy, pyspark or the catalog.

- model.py             data objects read from and written to the catalog (snapshots, tables, columns, files)
- types.py             DuckLake type strings <-> Arrow types, literals in the spec's string encodings
- names.py             schema/table/column names: the reference's rules, parsing "schema.table", quoting
- snapshot_changes.py  the `changes_made` vocabulary (its conflict rules are catalog/conflicts.py)
- paths.py             resolving the spec's relative paths (data path -> schema -> table -> file)
- arguments.py         checks of the snapshot arguments users pass (version=, timestamp=, ...)
- commit_properties.py what a commit records: author, message, extra info
- intervals.py         DuckDB INTERVAL text (option values) and the points in time they mean
- internal_columns.py  the reserved internal Parquet columns and their field ids
- bucket_hash.py       Iceberg's bucket() hash in numpy (runs on executors)
- epoch.py             DuckLake 1.1's epoch partition transforms (years, months, days, hours since 1970)
- variant.py           JSON text -> a variant's binary form; variant_unshred.py: a shredded variant back to it
- wkt.py               geometries as WKT text <-> ISO WKB bytes
- duckdb_keywords.py   DuckDB's SQL keywords and its rule for quoting a name
- uuid7.py             time-ordered UUIDs for catalog objects and file names
"""
