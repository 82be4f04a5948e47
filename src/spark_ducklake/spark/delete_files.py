"""Positional delete files as the reference writes them, one per data file: plain files of a local lake by Spark's
own Parquet writer (no Python on the workers), the others with pyarrow inside one executor task per data file.

Used by row-level deletes (`deletes.py`) and by `flush_inlined_data` (partial delete files of flushed rows).

A plain delete file holds `file_path` (field id 2147483646) and `pos` (2147483645), sorted. When a data file already
has a delete file, the new one replaces it in every snapshot (spec: "the deletion file is rewritten as a partial
deletion file"): it also stores `_ducklake_internal_snapshot_id`, the snapshot that deleted each position, so
readers at older snapshots skip the newer positions; the old file is then scheduled for deletion.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..spec.internal_columns import SNAPSHOT_ID_COLUMN, SNAPSHOT_ID_FIELD_ID
from ..spec.model import DeleteFile
from ..spec.uuid7 import new_uuid
from . import session
from .columns import POS
from .deletion_vectors import as_positional, read_file, referenced_data_file, write_vectors
from .encrypted.deletes import merge_encrypted_olds, restamp_encrypted, write_encrypted_delete_files
from .encrypted.write import new_key
from .paths import delete_paths, filesystem, writes_in_place
from .workers import require_python_workers

# This module runs on executors, which have pyarrow but not sqlalchemy: it imports nothing that needs the catalog
# layer (so no spark.write).
FILE_PATH_FIELD_ID, POS_FIELD_ID = 2147483646, 2147483645

_FILE_PATH = pa.field("file_path", pa.string(), nullable=False,
                      metadata={b"PARQUET:field_id": str(FILE_PATH_FIELD_ID)})
_POS = pa.field("pos", pa.int64(), nullable=False, metadata={b"PARQUET:field_id": str(POS_FIELD_ID)})
_SNAPSHOT = pa.field(SNAPSHOT_ID_COLUMN, pa.int64(), nullable=False,
                     metadata={b"PARQUET:field_id": str(SNAPSHOT_ID_FIELD_ID)})


_MAX_TASKS = 64
KEY, SNAP = "_dl_key", "_dl_snap"  # columns of the positions handed to write_delete_files (with POS)


@dataclass
class DeleteTarget:
    """A data file to write a delete file for: the delete file it has now (merged in and replaced), and the
    snapshot of the new positions when their frame carries none (making the file partial when `old` is set)."""

    data_path: str
    old: DeleteFile | None = None
    snapshot: int | None = None


@dataclass
class WrittenDeleteFile:
    """What writing a delete file produced."""

    path: str
    delete_count: int
    file_size_bytes: int
    footer_size: int
    first_snapshot: int | None = None  # partial files: the oldest and newest snapshot they hold
    last_snapshot: int | None = None
    encryption_key: str | None = field(default=None, repr=False)  # ENCRYPTED lakes: the file's base64 key
    row_group_count: int | None = None  # Parquet files' row groups (None: a Puffin file, or not known)


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
            return dict(zip(moved, pool.map(lambda key: _described(names[key]), moved), strict=True))
    except BaseException:
        delete_paths([names[key] for key in moved])
        raise
    finally:
        delete_paths([staging], directories=True)


def _described(path: str) -> WrittenDeleteFile:
    fs, inner = filesystem(path)
    with fs.open_input_file(inner) as fh:
        meta = pq.ParquetFile(fh).metadata
    return WrittenDeleteFile(path, meta.num_rows, fs.get_file_info(inner).size, meta.serialized_size,
                             row_group_count=meta.num_row_groups)


def write_delete_file(path: str, data_path: str, positions, snapshots=None,
                      old: DeleteFile | None = None, sink=None, *, history: bool = False) -> WrittenDeleteFile:
    """Write the sorted, distinct positions of `data_path` to `path`.

    Without `snapshots` and `old` the file is plain. Otherwise it is partial: `snapshots` (an array, or one
    snapshot id for every position) says when each position was deleted, and the old file's positions are merged
    in with theirs; a position deleted twice keeps its first deletion. With `sink` (encrypted lakes) the file
    goes there instead, and its sizes are left 0. `history`: see `write_vectors` (Puffin files only).
    """
    pos = pa.chunked_array(positions).cast(pa.int64())
    if snapshots is None and old is None:
        unique = pc.unique(pos).sort()
        table = pa.table({"file_path": pa.array([data_path] * len(unique), pa.string()), "pos": unique},
                         schema=pa.schema([_FILE_PATH, _POS]))
        return _write(path, table, sink)
    if snapshots is None or isinstance(snapshots, int):
        snaps = pa.chunked_array([pa.array([snapshots] * len(pos), pa.int64())])
    else:
        snaps = pa.chunked_array(snapshots).cast(pa.int64())
    pos_parts, snap_parts = [pos], [snaps]
    if old is not None:
        fs, inner = filesystem(old.path)
        stored = (as_positional(old.path, old.begin_snapshot, old.partial_max) if old.format == "puffin"
                  else pq.read_table(inner, filesystem=fs))
        pos_parts.append(stored.column("pos").cast(pa.int64()))
        old_snaps = (stored.column(SNAPSHOT_ID_COLUMN).cast(pa.int64()) if SNAPSHOT_ID_COLUMN in stored.column_names
                     else pa.chunked_array([pa.nulls(stored.num_rows, pa.int64())]))
        snap_parts.append(pc.fill_null(old_snaps, old.begin_snapshot))
    merged = pa.table({"pos": pa.chunked_array([c for p in pos_parts for c in p.chunks], pa.int64()),
                       "snap": pa.chunked_array([c for p in snap_parts for c in p.chunks], pa.int64())})
    merged = merged.group_by("pos").aggregate([("snap", "min")]).sort_by("pos")
    table = pa.table({"file_path": pa.array([data_path] * merged.num_rows, pa.string()),
                      "pos": merged.column("pos"), SNAPSHOT_ID_COLUMN: merged.column("snap_min")},
                     schema=pa.schema([_FILE_PATH, _POS, _SNAPSHOT]))
    written = _write(path, table, sink, history)
    written.first_snapshot = pc.min(table.column(SNAPSHOT_ID_COLUMN)).as_py()
    written.last_snapshot = pc.max(table.column(SNAPSHOT_ID_COLUMN)).as_py()
    return written


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
    written = _write(path, pa.table({"file_path": stored.column("file_path"), "pos": stored.column("pos"),
                                     SNAPSHOT_ID_COLUMN: fixed}, schema=pa.schema([_FILE_PATH, _POS, _SNAPSHOT])),
                     history=True)  # only partial files are restamped: 1.1 catalogs' for Puffin files
    written.first_snapshot = pc.min(fixed).as_py()
    written.last_snapshot = pc.max(fixed).as_py()
    return written


def positions_as_of(delete_file: DeleteFile, snapshot_id: int) -> pa.Array:
    """The positions a delete file lists as deleted at `snapshot_id` (int64): a partial file's per-position
    snapshots are honoured, a plain file's positions all date from its begin snapshot."""
    fs, inner = filesystem(delete_file.path)
    if delete_file.format == "puffin":
        stored = as_positional(delete_file.path, delete_file.begin_snapshot, delete_file.partial_max)
    else:
        schema = pq.read_schema(inner, filesystem=fs)
        columns = ["pos"] + ([SNAPSHOT_ID_COLUMN] if SNAPSHOT_ID_COLUMN in schema.names else [])
        stored = pq.read_table(inner, columns=columns, filesystem=fs)
    pos = stored.column("pos").cast(pa.int64())
    if SNAPSHOT_ID_COLUMN in stored.column_names:
        when = pc.fill_null(stored.column(SNAPSHOT_ID_COLUMN).cast(pa.int64()), delete_file.begin_snapshot)
        pos = pos.filter(pc.less_equal(when, snapshot_id))
    return pos.combine_chunks()


def snapshot_range(path: str) -> tuple[int, int] | None:
    """(min, max) of a delete file's per-position snapshots from its footer; None without that column."""
    fs, inner = filesystem(path)
    with fs.open_input_file(inner) as fh:
        meta = pq.ParquetFile(fh).metadata
    names = [meta.schema.column(i).name for i in range(meta.num_columns)]
    if SNAPSHOT_ID_COLUMN not in names:
        return None
    index = names.index(SNAPSHOT_ID_COLUMN)
    lows, highs = [], []
    for g in range(meta.num_row_groups):
        stats = meta.row_group(g).column(index).statistics
        if stats is None or not stats.has_min_max:
            return (0, 2**62)  # no statistics: any snapshot
        lows.append(stats.min)
        highs.append(stats.max)
    return (min(lows), max(highs)) if lows else None


def _write(path: str, table: pa.Table, sink=None, history: bool = False) -> WrittenDeleteFile:
    if sink is not None:
        pq.write_table(table, sink)
        return WrittenDeleteFile(path, table.num_rows, 0, 0)
    if path.endswith(".puffin"):  # write_deletion_vectors: the same rows as Iceberg deletion vectors
        return WrittenDeleteFile(path, *write_vectors(path, table, history))
    fs, inner = filesystem(path)
    with fs.open_output_stream(inner) as out:
        pq.write_table(table, out)
    meta = pq.read_metadata(inner, filesystem=fs)
    return WrittenDeleteFile(path, meta.num_rows, fs.get_file_info(inner).size, meta.serialized_size,
                             row_group_count=meta.num_row_groups)
