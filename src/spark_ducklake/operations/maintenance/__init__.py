"""Maintenance procedures with the reference's names and results: flushing inlined data, compaction, expiring
snapshots, removing files no snapshot needs, registering existing Parquet files, and CHECKPOINT running them all.

Part of the operations layer: each function takes a `LakeContext` and imports `spark`, `catalog`, `spec` and
`errors` (plus operations/context.py); never the facade.

- targets.py        which tables a call works on, and their options and usable sort keys
- flush.py          `flush_inlined_data`: inlined rows and deletes become Parquet files, history kept
- compaction.py     `merge_adjacent_files`, `rewrite_data_files` (plans from catalog/planners/compaction.py)
- expire.py         `expire_snapshots`: forget old snapshots and the catalog rows only they needed
- cleanup.py        `cleanup_old_files`, `delete_orphaned_files`: removing files from storage
- catalog_files.py  where the files the catalog knows live (table dirs, data/delete files, scheduled deletions)
- locking.py        a short catalog transaction that changes no snapshot, queued behind committing writers
- add_files.py      `add_data_files`: register existing Parquet files without copying them
- checkpoint.py     `checkpoint`: every function above in the reference's CHECKPOINT order
"""
