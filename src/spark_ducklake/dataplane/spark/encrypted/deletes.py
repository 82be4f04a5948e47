"""Positional delete files of ENCRYPTED lakes, written as DuckDB reads them: each delete file is built by pyarrow
in executor memory (delete_files.write_delete_file), cut into modules and encrypted by Spark's `aes_encrypt` with
a fresh key (write.py), then stored by the same job. A data file's old encrypted delete file is decrypted by Spark
(read.encrypted_delete_positions) and its positions merged in with their snapshots, making the new file partial.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ....spec.internal_columns import SNAPSHOT_ID_COLUMN
from ...arrow.scan_columns import FILE, POS
from . import read as encrypted_read
from .keys import unwrap_key, wrap_keys
from .read import encrypted_delete_positions
from .write import MODULES, KeptBuffer, encrypt_and_store_files, module_batch

_MAX_TASKS = 64
POS_COLUMN = "pos"  # a delete file's position column


def write_encrypted_delete_files(spark, positions, targets: dict, names: dict[str, str], write_delete_file,
                                 key_snap: tuple[str, str]) -> dict:
    """`delete_writes.write_delete_files` for encrypted lakes: one encrypted delete file per key, at `names[key]`,
    built by `write_delete_file` (passed in by delete_files.py, which imports this module: no import cycle);
    `key_snap` names the positions' key and snapshot columns."""
    from pyspark.sql import functions as F


    KEY, SNAP = key_snap  # noqa: N806 - delete_files.py's constants
    stamped = SNAP in positions.columns
    frame = positions.select(KEY, POS, F.col(SNAP).cast("long") if stamped else F.lit(None).cast("long").alias(SNAP))
    secret = [key for key, t in targets.items() if t.old is not None and t.old.encrypted]
    if secret:  # old encrypted delete files: their positions join the new ones (no executor can decrypt alone)
        frame = _with_old_positions(spark, frame, targets, secret, key_snap)
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


def restamp_encrypted(spark, path: str, before: int, after: int, key: str, write_delete_file):
    """`delete_writes.restamp` for an encrypted partial delete file: decrypted, its positions deleted at `before`
    now deleted at `after`, encrypted again with the same key (a retried commit keeps the key it staged) and
    stored in place (each task reads its whole file before it writes). `write_delete_file` as above."""
    artifact, (wrapped,) = wrap_keys(spark, [key])  # `handle` is pickled into the plan: no plain key in it

    def handle(_job, table):
        snaps = table.column(SNAPSHOT_ID_COLUMN).cast(pa.int64())
        fixed = pc.if_else(pc.equal(snaps, before), pa.scalar(after, pa.int64()), snaps)
        data_path = table.column("file_path")[0].as_py() if table.num_rows else ""
        buffer = KeptBuffer()
        written = write_delete_file(path, data_path, table.column(POS_COLUMN), fixed, None, sink=buffer)
        buffer.close()
        yield module_batch(path, buffer.kept, written, unwrap_key(artifact, wrapped))

    mapped = encrypted_read.decrypted_map(spark, [(path, key)], handle, MODULES)
    (written, size, footer_size, _key), = encrypt_and_store_files(mapped)
    written.file_size_bytes, written.footer_size, written.encryption_key = size, footer_size, key
    return written


def merge_encrypted_olds(spark, positions, targets: dict, key_snap: tuple[str, str]):
    """(positions, targets) for writing plaintext delete files (deletion vectors) on an ENCRYPTED lake: the
    positions of targets' old encrypted delete files, decrypted by Spark, joined in with their snapshots (new
    positions of those targets stamped with the target's snapshot), and those targets' `old` dropped."""
    from dataclasses import replace

    from pyspark.sql import functions as F


    KEY, SNAP = key_snap  # noqa: N806 - delete_files.py's constants
    secret = [key for key, t in targets.items() if t.old is not None and t.old.encrypted]
    if not secret:
        return positions, targets
    stamps = {key: t.snapshot for key, t in targets.items() if t.old is not None and t.snapshot is not None}
    fallback = (F.element_at(F.create_map(*[F.lit(x) for kv in stamps.items() for x in kv]), F.col(KEY))
                if stamps else F.lit(None))
    given = F.col(SNAP) if SNAP in positions.columns else F.lit(None)
    frame = positions.select(KEY, POS, F.coalesce(given.cast("long"), fallback.cast("long")).alias(SNAP))
    frame = _with_old_positions(spark, frame, targets, secret, key_snap)
    return frame, {key: replace(t, old=None) if key in secret else t for key, t in targets.items()}


def _with_old_positions(spark, frame, targets: dict, secret: list[str], key_snap: tuple[str, str]):
    """`frame` (key, pos, snapshot) with the positions of the `secret` targets' old encrypted delete files,
    decrypted by Spark, unioned in under their keys."""
    from pyspark.sql import functions as F

    KEY, SNAP = key_snap  # noqa: N806 - delete_files.py's constants
    olds = [targets[k].old for k in secret]
    old_rows = encrypted_delete_positions(
        spark, [(o.path, i, o.begin_snapshot, o.encryption_key) for i, o in enumerate(olds)])
    keys = F.array(*[F.lit(k) for k in secret])
    return frame.unionByName(old_rows.select(F.element_at(keys, F.col(FILE).cast("int") + 1).alias(KEY),
                                             POS, F.col("_dl_deleted").alias(SNAP)))
