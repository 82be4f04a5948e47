"""Maintenance procedures with the reference's names and results: flushing inlined data, compaction, expiring
snapshots, removing files no snapshot needs, registering existing Parquet files, and CHECKPOINT running them all."""
