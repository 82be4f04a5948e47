"""The pyarrow half of the data plane: everything that moves data with pyarrow, on the driver (small data,
`read_arrow`) or inside Spark tasks. Imports no pyspark at all (an import-linter contract), so it runs where
there is no JVM; `dataplane/spark/` builds on it, never the reverse.

Files, by field id, on both planes:
- storage.py        paths and filesystems as Spark and pyarrow want them; deleting files
- scan_columns.py   the helper columns a scan adds (file path, position, data file id, ...)
- planned_scan.py   `PlannedScan`: what to read of one table at one snapshot, as plain data
- arrow_rows.py     a file's rows read with pyarrow by field id (defaults, promotions, inlined rows)
- arrow_values.py   Arrow values as Spark shows them; native_types.py: which types Spark's reader reads as stored
- task_writer.py    the task writer: Parquet files under their final names, rolled over by size or partition;
                    placement.py: the directory and partition values of a file; write_options.py: the lake's
                    write options and the sizes they give; file_layout.py: row width, name-mapping needs
- delete_files.py   positional delete files written, merged and read as of a snapshot; delete_plan.py: what a
                    DELETE staged; deletion_vectors.py: Iceberg's deletion-vector-v1 blobs (Puffin files)
- footers.py        describing an existing Parquet file from its footer (add_data_files)
- geometry_arrow.py GEOMETRY values reduced to the WKB pyarrow writes; variant_footer.py: Parquet's VARIANT type
- crypto/           encrypted files taken apart and put together (the AES runs on Spark: spark/encrypted/)
- sql_syntax.py     checking user SQL strings with sqlglot before anything runs
- conform.py        Arrow rows fitted to a table (order, casts, defaults, NOT NULL), by the Spark path's rule

Small data in-process (the rule: threshold.py; 64 MiB by default, per handle or SPARK_DUCKLAKE_SMALL_DATA_BYTES):
- local_expressions.py  a subset of Spark SQL (conditions, assignments) evaluated with pyarrow.compute
- local_scan.py     a plan read with pyarrow: field ids, defaults, promotions, deletes, inlined rows
- local_write.py    data files written with pyarrow: partitioning, sort keys, file sizes, stats as on Spark
- local_dml.py      DELETE and UPDATE of small tables: positions found and delete files written in-process, an
                    UPDATE's new versions computed (`LocalUpdate`)
- merge_rows.py     MERGE of a pyarrow source: hash join, clauses in order; `MergeSpec`, the clauses both planes take
- statement_rows.py a transaction's DELETE / UPDATE of a table it already changed: the net change, in-process
- row_versions.py   every row version of data files (row ids, inserting snapshots), for compaction and the feed
- change_rows.py    the change feed (changes, insertions, deletions) computed with pyarrow
- local_compaction.py  merge_adjacent_files' units written with pyarrow
"""
