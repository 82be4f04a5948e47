"""Delete files written by Spark jobs: positions grouped by data file, one delete file per file, each written by an
executor task with the pyarrow writer of `arrow/delete_files.py`; encrypted lakes' through `encrypted/`; and
restamping a partial file whose commit landed on another snapshot."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ...spec.internal_columns import SNAPSHOT_ID_COLUMN
from ...spec.uuid7 import new_uuid
from ..arrow.delete_files import (
    FILE_PATH_FIELD,
    FILE_PATH_FIELD_ID,
    KEY,
    POS_FIELD,
    POS_FIELD_ID,
    SNAP,
    SNAPSHOT_FIELD,
    DeleteTarget,
    WrittenDeleteFile,
    described_file,
    write_delete_file,
    write_positions,
)
from ..arrow.deletion_vectors import as_positional, read_file, referenced_data_file
from ..arrow.scan_columns import POS
from ..arrow.storage import delete_paths, filesystem, writes_in_place
from . import session
from .encrypted.deletes import merge_encrypted_olds, restamp_encrypted, write_encrypted_delete_files
from .encrypted.write import new_key
from .workers import require_python_workers

_MAX_TASKS = 64


def write_delete_files(spark, positions, targets: dict[str, DeleteTarget], table_path: str, *,
                       vectors: bool = False, history: bool = False,
                       encrypted: bool = False) -> dict[str, WrittenDeleteFile]:
    """One delete file per key of `positions` (columns `_dl_key`, `_dl_pos` and maybe `_dl_snap`; the key names a
    target), written in one Spark job: each key's positions meet in one task, which merges them with the target's
    old delete file and writes the result straight to its final name. Returns the files by key; on failure none
    is left behind. `encrypted` (ENCRYPTED lakes): the files are encrypted as DuckDB's (encrypted/deletes.py).
    `history` (1.1 catalogs): a partial deletion-vector file keeps one blob per snapshot (`write_vectors`)."""
    suffix = "puffin" if vectors else "parquet"  # the lake's write_deletion_vectors option
    names = {key: f"{table_path}ducklake-{new_uuid()}-delete.{suffix}" for key in targets}
    if not (vectors or encrypted or SNAP in positions.columns or writes_in_place(table_path)) and all(
            target.old is None for target in targets.values()):
        return _write_plain_with_spark(spark, positions, targets, names, table_path)
    require_python_workers(spark)
    if encrypted and vectors:  # as the reference: deletion vectors stay plaintext on ENCRYPTED lakes
        positions, targets = merge_encrypted_olds(spark, positions, targets, (KEY, SNAP))
    elif encrypted:
        try:
            return write_encrypted_delete_files(spark, positions, targets, names, write_delete_file, (KEY, SNAP))
        except BaseException:
            delete_paths(list(names.values()))
            raise
    stamped = SNAP in positions.columns
    result_schema = (f"{KEY} string, path string, delete_count long, file_size_bytes long, footer_size long, "
                     "first_snapshot long, last_snapshot long, row_group_count long")

    def write_one(group: pa.Table) -> pa.Table:
        key = group.column(KEY)[0].as_py()
        target = targets[key]
        snaps = group.column(SNAP) if stamped else None
        # No stamp at all (a target an encrypted target's stamps came along with): as if the frame had none.
        snapshots = snaps if snaps is not None and snaps.null_count < len(snaps) else (
            target.snapshot if target.old is not None else None)
        w = write_delete_file(names[key], target.data_path, group.column(POS), snapshots, target.old,
                              history=history)
        return pa.table({KEY: [key], "path": [w.path], "delete_count": [w.delete_count],
                         "file_size_bytes": [w.file_size_bytes], "footer_size": [w.footer_size],
                         "first_snapshot": pa.array([w.first_snapshot], pa.int64()),
                         "last_snapshot": pa.array([w.last_snapshot], pa.int64()),
                         "row_group_count": pa.array([w.row_group_count], pa.int64())})

    columns = [KEY, POS, SNAP] if stamped else [KEY, POS]
    try:
        # As many tasks as files (capped), not spark.sql.shuffle.partitions: a user's session keeps the default 200,
        # and a small delete must not schedule 200 tasks (a grouping on KEY reuses this partitioning: one shuffle).
        tasks = max(1, min(len(targets), _MAX_TASKS))
        rows = (positions.select(*columns).repartition(tasks, KEY).groupBy(KEY)
                .applyInArrow(write_one, result_schema).collect())
    except BaseException:
        delete_paths(list(names.values()))
        raise
    # ENCRYPTED lakes' deletion vectors: plaintext, yet with a key of their own recorded, as the reference does
    # (DuckDB refuses a file of an encrypted lake without one).
    return {r[KEY]: WrittenDeleteFile(r["path"], r["delete_count"], r["file_size_bytes"], r["footer_size"],
                                      r["first_snapshot"], r["last_snapshot"], new_key() if encrypted else None,
                                      r["row_group_count"])
            for r in rows}


def _write_plain_with_spark(spark, positions, targets: dict[str, DeleteTarget], names: dict[str, str],
                            table_path: str) -> dict[str, WrittenDeleteFile]:
    """Plain delete files on a local lake, written by Spark's own Parquet writer (no Python on the workers): the
    positions of each target sorted and distinct in one task, one file per target, moved to its final name."""
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow.fs as pafs
    from pyspark.sql import functions as F


    index = "_dl_index"  # the folder of each target's file: a small integer, no escaping to undo
    keys = sorted(targets)
    paths = spark.createDataFrame([(key, i, targets[key].data_path) for i, key in enumerate(keys)],
                                  f"{KEY} string, {index} int, file_path string")
    frame = (positions.select(KEY, F.col(POS).cast("long").alias("pos")).distinct()
             .join(F.broadcast(paths), KEY)
             .select(F.col("file_path").alias("file_path", metadata={"parquet.field.id": FILE_PATH_FIELD_ID}),
                     F.col("pos").alias("pos", metadata={"parquet.field.id": POS_FIELD_ID}), index))
    tasks = max(1, min(len(targets), _MAX_TASKS))
    staging = f"{table_path}_staging-{uuid.uuid4().hex}/"  # a dead writer's: delete_orphaned_files reclaims it
    fs, staging_path = filesystem(staging)
    moved: list[str] = []
    try:
        (frame.repartition(tasks, index).sortWithinPartitions(index, "pos").write.mode("error")
         .partitionBy(index).option("maxRecordsPerFile", 0).option("compression", "snappy").parquet(staging))
        found: dict[int, list[str]] = {}
        for info in fs.get_file_info(pafs.FileSelector(staging_path, recursive=True)):
            if info.type == pafs.FileType.File and info.base_name.endswith(".parquet"):
                folder = info.path[len(staging_path):].strip("/").split("/", 1)[0]
                found.setdefault(int(folder.split("=", 1)[1]), []).append(info.path)
        if any(len(files) != 1 for files in found.values()):  # one task per target: never more than a file
            raise RuntimeError(f"Spark wrote more than one delete file for a data file under {staging}")
        for i, (src,) in sorted(found.items()):
            fs.move(src, filesystem(names[keys[i]])[1])
            moved.append(keys[i])
        with ThreadPoolExecutor(max_workers=8) as pool:
            return dict(zip(moved, pool.map(lambda key: described_file(names[key]), moved), strict=True))
    except BaseException:
        delete_paths([names[key] for key in moved])
        raise
    finally:
        delete_paths([staging], directories=True)


def restamp(path: str, before: int, after: int, key: str | None = None) -> WrittenDeleteFile:
    """Rewrite a partial delete file (not yet committed, so nobody reads it) in place, its positions deleted at
    snapshot `before` now deleted at `after`: the commit landed on another snapshot id than the one foreseen.
    `key` (ENCRYPTED lakes): the file is decrypted and encrypted again with it by Spark (the active session)."""
    if key:
        return restamp_encrypted(session.get_or_create_spark(), path, before, after, key, write_delete_file)
    fs, inner = filesystem(path)
    if path.endswith(".puffin"):  # every blob of a partial vector file names its snapshot
        stored = as_positional(path, before, None)
        data_file = referenced_data_file(read_file(path))
        stored = stored.append_column("file_path", pa.array([data_file] * stored.num_rows, pa.string()))
    else:
        stored = pq.read_table(inner, filesystem=fs)
    snaps = stored.column(SNAPSHOT_ID_COLUMN)
    fixed = pc.if_else(pc.equal(snaps, before), pa.scalar(after, pa.int64()), snaps)
    rows = pa.table({"file_path": stored.column("file_path"), "pos": stored.column("pos"), SNAPSHOT_ID_COLUMN: fixed},
                    schema=pa.schema([FILE_PATH_FIELD, POS_FIELD, SNAPSHOT_FIELD]))
    # history: only partial files are restamped, 1.1 catalogs' for Puffin files
    written = write_positions(path, rows, history=True)
    written.first_snapshot = pc.min(fixed).as_py()
    written.last_snapshot = pc.max(fixed).as_py()
    return written
