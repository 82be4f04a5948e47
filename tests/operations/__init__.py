"""What users do to tables (operations/): writes, deletes, MERGE, maintenance, the change feed, streaming,
transactions, schema evolution, partitioning."""
