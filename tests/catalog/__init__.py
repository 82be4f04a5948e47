"""The catalog layer (catalog/): backends, DDL, options and settings, reads, pruning, inlined data, migrations,
concurrency."""
