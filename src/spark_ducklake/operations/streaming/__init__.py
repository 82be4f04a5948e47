"""Structured Streaming for DuckLake tables: a source emitting new snapshots, an exactly-once sink."""
