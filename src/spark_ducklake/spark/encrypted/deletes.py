"""Positional delete files of ENCRYPTED lakes, written as DuckDB reads them: each delete file is built by pyarrow
in executor memory (delete_files.write_delete_file), cut into modules and encrypted by Spark's `aes_encrypt` with
a fresh key (write.py), then stored by the same job. A data file's old encrypted delete file is decrypted by Spark
(read.encrypted_delete_positions) and its positions merged in with their snapshots, making the new file partial.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ..columns import FILE, POS
from .write import MODULES, KeptBuffer, encrypt_and_store_files, module_batch

_MAX_TASKS = 64


def write_encrypted_delete_files(spark, positions, targets: dict, names: dict[str, str], write_delete_file,
                                 key_snap: tuple[str, str]) -> dict:
    """`delete_files.write_delete_files` for encrypted lakes: one encrypted delete file per key, at `names[key]`,
    built by `write_delete_file` (passed in by delete_files.py, which imports this module: no import cycle);
    `key_snap` names the positions' key and snapshot columns."""
    from pyspark.sql import functions as F

    from .read import encrypted_delete_positions

    KEY, SNAP = key_snap  # noqa: N806 - delete_files.py's constants
    stamped = SNAP in positions.columns
    frame = positions.select(KEY, POS, F.col(SNAP).cast("long") if stamped else F.lit(None).cast("long").alias(SNAP))
    secret = [key for key, t in targets.items() if t.old is not None and t.old.encryption_key]
    if secret:  # old encrypted delete files: their positions join the new ones (no executor can decrypt alone)
        olds = [targets[k].old for k in secret]
        old_rows = encrypted_delete_positions(
            spark, [(o.path, i, o.begin_snapshot, o.encryption_key) for i, o in enumerate(olds)])
        keys = F.array(*[F.lit(k) for k in secret])
        frame = frame.unionByName(old_rows.select(F.element_at(keys, F.col(FILE).cast("int") + 1).alias(KEY),
                                                  POS, F.col("_dl_deleted").alias(SNAP)))
    # What the tasks need, without the old files' keys (the function is pickled into the plan).
    shipped = {key: (t.data_path, t.snapshot, t.old is not None, None if key in secret else t.old)
               for key, t in targets.items()}

    def write_one(group: pa.Table) -> pa.Table:
        key = group.column(KEY)[0].as_py()
        data_path, snapshot, partial, old = shipped[key]
        snaps = None
        if stamped or partial:  # partial: new positions without a stamp carry the target's snapshot
            snaps = group.column(SNAP)
            snaps = snaps if snapshot is None else pc.fill_null(snaps, snapshot)
        buffer = KeptBuffer()
        written = write_delete_file(names[key], data_path, group.column(POS), snaps, old, sink=buffer)
        buffer.close()
        return pa.Table.from_batches([module_batch(names[key], buffer.kept, (key, written))])

    tasks = max(1, min(len(targets), _MAX_TASKS))
    modules = frame.repartition(tasks, KEY).groupBy(KEY).applyInArrow(write_one, MODULES)
    result = {}
    for (key, written), size, footer_size, secret_key in encrypt_and_store_files(modules):
        written.file_size_bytes, written.footer_size, written.encryption_key = size, footer_size, secret_key
        result[key] = written
    return result
