"""Structured Streaming for DuckLake tables: a source emitting new snapshots, an exactly-once sink.

Part of the operations layer: imports `dataplane` (a micro-batch's rows are read by
`dataplane/arrow/arrow_rows.py`), `catalog`, `spec` and `errors`; never the facade. Source and sink
are pickled to wherever Spark runs them, so they carry a reference to the attach string and attach there.

- source.py      `spark.readStream.format("ducklake")`: snapshot-id offsets, one partition per data file
- sink.py        the exactly-once `foreachBatch` sink (one commit per batch, guarded by its batch id)
- catalog_ref.py the attach string by reference (a 0600 file, an env var): no password in an option or plan
"""
