"""Small data without Spark: reads, writes, deletes, updates (in transactions too), MERGE, merge_adjacent_files and
the change feed run in-process on the driver with pyarrow when the bytes they touch are at most the small-data
threshold (threshold.py); larger data always goes to Spark.

Importable without pyspark (reads need neither pyspark nor Java).

- threshold.py    the rule and its threshold (64 MiB by default; per handle or SPARK_DUCKLAKE_SMALL_DATA_BYTES)
- expressions.py  a subset of Spark SQL (conditions, assignments) evaluated with pyarrow.compute
- scan.py         a ScanPlan read with pyarrow: field ids, defaults, promotions, deletes, inlined rows
- read.py         `lake.read_arrow` / `lake.to_pandas`
- write.py        data files written with pyarrow: partitioning, sort keys, file sizes, stats as on Spark
- dml.py          DELETE and UPDATE of small tables: positions found and delete files written in-process
- merge.py        MERGE of a pyarrow/pandas source: hash join, clauses in order, staged as on Spark
- compose.py      DELETE / UPDATE in a transaction that see its staged rows: the table's net change found
- versions.py     every row version of data files (row ids, inserting snapshots), for compaction and the feed
- compaction.py   merge_adjacent_files' units written with pyarrow
- change_feed.py  table_changes / table_insertions / table_deletions as pyarrow Tables
"""
