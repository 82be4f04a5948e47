"""The data plane: the Parquet files of a lake, moved with pyarrow or by Spark jobs; no commits.

- arrow/  everything that moves data with pyarrow, on the driver (small data, `read_arrow`) or inside Spark tasks:
  reading files by field id, the task writer, delete files, deletion vectors, footers, encryption layout, storage
- spark/  everything that builds Spark plans: session, shipping, scans, writes, deletes, change feed on Spark
- engine.py  one choice per operation between the two (`engine_for`: an ArrowEngine or a SparkEngine, with the
  same verbs: stage_delete, write_data_files, write_units, merge_rows)

`arrow/` imports no pyspark (an import-linter contract); `spark/` may use `arrow/`, never the reverse.
"""
