"""The Spark half of the data plane: everything that builds Spark plans (scans, writes, deletes, the change feed
on Spark). No commits.

Imports `dataplane.arrow`, `catalog`, `spec` and `errors` (never `operations` or the facade). pyspark is
imported inside functions, so catalog-only callers and executors load these modules without a JVM; modules that
run on executors need only pyarrow, pandas and numpy (tests/deployment/test_user_session.py checks this).

- session.py         the Spark session data moves with (the caller's, the active one, or a local one)
- shipping.py        the package zipped and shipped to executors once per session
- scan_plan.py       `ScanPlan`: the plain `arrow/planned_scan.py` plan plus `to_dataframe`
- scan.py            a table's DataFrame at a snapshot on Spark's Parquet reader (field ids, deletes, inlined rows)
- file_log.py        scans handed to Spark as a streaming file-sink log, so planning never lists a file;
                     jvm_index.py: the optional JVM file index that reads that log faster than Spark's
- position_filter.py deleted positions applied as a Spark filter on bitmap literals: no join, no Spark job
- vector_positions.py  deletion-vector files' positions as a DataFrame, each file read by an executor task
- workers.py         whether Spark's Python workers can run our Arrow jobs, checked once per session
- arrow_files.py     reading files with pyarrow on executors, for types Spark's reader cannot decode
- virtual_columns.py the values of DuckDB's virtual columns in a scan (rowid, snapshot_id, filename, ...)
- mapped_files.py    reading files without field ids by name (add_data_files, name mappings)
- change_feed.py     table_insertions / table_deletions / table_changes between two snapshots
- write.py           writing a DataFrame as DuckLake data files (native Parquet writer, field ids)
- row_writes.py      a write's rows (a DataFrame or Arrow rows) to `write.py`, NOT NULL columns guarded
- compaction_units.py  compaction's groups of files rewritten into one file each, one Spark job per layout
- write_in_place.py  Spark tasks running `arrow/task_writer.py`: files straight to their final names
- partition.py       partition key columns of a DataFrame (bucket, calendar parts)
- conform.py         fitting Spark data to a table (new-table columns, a DataFrame checked and cast)
- deletes.py         finding the positions a condition matches; delete_writes.py: one Spark job writing them
- merge_join.py      MERGE rows on Spark: the full outer join, clauses in order, new values per clause
- statement_rows.py  a transaction's DELETE / UPDATE of a table it already changed: the net change, on Spark
- updates.py         an UPDATE's matched rows and their new versions, one cached frame (`SparkUpdate`)
- encrypted/         encrypted lakes: DuckDB's AES-GCM Parquet files read and written on Spark
- types.py           DuckLake columns <-> Spark types; columns.py, sorting.py: Spark Columns for names, sort keys
- expressions.py     checking user SQL strings against a DataFrame; ddl.py: DDL column lists to Spark types
"""
