"""Operations: one user-level action each (write, delete/update, merge, schema change, history, maintenance,
streaming), orchestrating a Spark job (or pyarrow in-process, for small data) and one commit.

Each takes a `LakeContext` (context.py: catalog engine, data path, Spark session, commit defaults, pinned
snapshot, the shared catalog reads and commit path), never the `DuckLake` facade, which delegates to them.
Imports `dataplane`, `catalog`, `spec` and `errors`; never `sql`, `lake` or `table`.

- context.py        `LakeContext`, what every operation needs of an attached lake
- error_causes.py   raw driver and Spark errors turned into DuckLakeErrors naming the cause
- staging.py        `Staged(ops, files, result)`, what every `stage_*` function returns
- datasource.py     `spark.read.format("ducklake")` batch reads and writes (Python Data Source API);
                    datasource_write.py: what `df.write.format("ducklake")` tasks write and its planner commits
- write.py          conform the data, inline it or stage Parquet files on Spark, commit once
- delete_update.py  DELETE and UPDATE: executors find and rewrite rows, the driver commits once
- merge.py          MERGE INTO with delta-spark's builder: the engine's `merge_rows` verb, then the deletes, updated
                    and inserted rows staged
- schema_change.py  `update_schema` (after pyiceberg's UpdateSchema) and its one-change shortcuts
- history.py        the change feed between two snapshots (as pyarrow Tables: the engine's `change_feed`), and
                    restoring a table
- read_arrow.py     `lake.read_arrow` / `lake.to_pandas`
- transaction.py    many operations staged, committed as one snapshot or not at all; staged inside it:
  - staged_changes.py  row-level changes to one table, each seeing the ones before it (read-your-writes)
  - staged_reads.py    the lake as the open transaction would leave it, for reads inside it
  - staged_alters.py   several ALTERs of one table, and writes between them, in one snapshot
  - staged_names.py    RENAME and DROP of tables, also of tables created in the transaction
  - staged_layout.py   SET/RESET PARTITIONED BY and SORTED BY
  - staged_flush.py    `CALL flush_inlined_data(...)` inside BEGIN ... COMMIT
- maintenance/      flush, compaction, expire, cleanup, add_data_files, checkpoint
- streaming/        Structured Streaming: the `ducklake` stream source and the exactly-once sink
"""
