"""Planning from the catalog alone: which files a scan, change feed, stream batch or compaction touches.

Top catalog layer (with `catalog.attach`): may import every other catalog package, `spec` and `errors`, never
Spark; the plans are plain data that the `spark` layer turns into jobs.

- pruning.py      dropping data files whose min/max statistics prove a WHERE conjunct false
- change_feed.py  the files, delete records and inlined rows holding changes between two snapshots
- stream.py       a table's micro-batches: snapshot-id offsets and per-file read tasks for executors
- compaction.py   which files merge_adjacent_files / rewrite_data_files rewrite, into which outputs
"""
