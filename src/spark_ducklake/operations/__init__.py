"""Operations: one user-level action each (write, delete/update, merge, schema change, history, maintenance,
streaming), orchestrating a Spark job and one commit.

Each takes a `LakeContext` (context.py: catalog engine, data path, Spark session, commit defaults, pinned
snapshot, the shared catalog reads and commit path), never the `DuckLake` facade, which delegates to them.
Imports `spark`, `catalog`, `spec` and `errors`; never `sql`, `lake` or `table`.

- context.py        `LakeContext`, what every operation needs of an attached lake
- error_causes.py   raw driver and Spark errors turned into DuckLakeErrors naming the cause
- datasource.py     `spark.read.format("ducklake")` batch reads and writes (Python Data Source API)
- write.py          conform the data, inline it or stage Parquet files on Spark, commit once
- delete_update.py  DELETE and UPDATE: executors find and rewrite rows, the driver commits once
- merge.py          MERGE INTO with delta-spark's builder
- schema_change.py  `update_schema` (after pyiceberg's UpdateSchema) and its one-change shortcuts
- history.py        the change feed between two snapshots, and restoring a table
- transaction.py    many operations staged, committed as one snapshot or not at all
- maintenance/      flush, compaction, expire, cleanup, add_data_files, checkpoint
- streaming/        Structured Streaming: the `ducklake` stream source and the exactly-once sink
- local/            small data without Spark: reads, writes, deletes, updates with pyarrow on the driver
"""
