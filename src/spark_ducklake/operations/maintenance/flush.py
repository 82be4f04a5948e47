"""`flush_inlined_data`: inlined rows and inlined deletes become Parquet files, history kept, as the reference does.

Each inlined data table (one per schema version) becomes files written by Spark under that version's columns and
partition spec, sorted by the table's current sort keys, with every row's id and inserting snapshot
(`_ducklake_internal_row_id`, `_ducklake_internal_snapshot_id`); a file begins at its oldest row's snapshot and
records the newest as `partial_max`, so time travel reads what it read before. Inlined rows deleted meanwhile stay
in the file and are marked in a partial delete file (per-row delete snapshot), and inlined deletes of existing
files are merged into (partial) delete files. The flushed rows leave the catalog in the same commit, and emptied
inlined tables of older schema versions are dropped.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq
import sqlalchemy as sa

from ...catalog.changes.compaction import FlushInlined, PlacedFile
from ...catalog.changes.file_rows import PlacedDelete
from ...catalog.changes.partitioning import current_spec
from ...catalog.changes.sorting import current_sort
from ...catalog.database.versions import catalog_is_v11
from ...catalog.inlined import codec as inlined
from ...catalog.inlined import tables as inlined_tables
from ...catalog.planners.compaction import schema_versions
from ...catalog.reads import reader
from ...dataplane.arrow.delete_files import KEY, SNAP, DeleteTarget
from ...dataplane.arrow.scan_columns import POS
from ...dataplane.arrow.storage import delete_paths, filesystem, spark_file_uri
from ...dataplane.arrow.write_options import WriteOptions
from ...dataplane.spark import write as spark_write
from ...dataplane.spark.delete_writes import write_delete_files
from ...dataplane.spark.encrypted.read import encrypted_lineage
from ...dataplane.spark.file_log import read_parquet
from ...dataplane.spark.scan import spark_safe
from ...dataplane.spark.write import ROW_ID_COLUMN, SNAPSHOT_ID_COLUMN
from ...spec.commit_properties import CommitProperties
from ...spec.model import NewDataFile, NewDeleteFile, TableInfo
from ..staging import Staged
from .targets import maintained_tables, progress, spark_writable, usable_sort_keys

if TYPE_CHECKING:
    from ..context import LakeContext

ENDED = "_dl_end_snapshot"


class FlushRow(NamedTuple):
    """A row of `flush_inlined_data()`: a table and how many inlined rows went to files."""

    schema_name: str
    table_name: str
    rows_flushed: int


@dataclass
class _Batch:
    """The inlined rows of one schema version: columns, partition spec and sort keys to write them with."""

    name: str  # the inlined data table
    layout: TableInfo
    rows: pa.Table  # layout columns, then rowid, snapshot, end snapshot


@dataclass
class _TableFlush:
    table: TableInfo
    options: WriteOptions
    batches: list[_Batch] = field(default_factory=list)
    file_deletes: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # file id -> (pos, snapshot)
    live_files: dict = field(default_factory=dict)  # file id -> DataFile, for those with inlined deletes
    ended: list[tuple[int, int, int]] = field(default_factory=list)  # (row id, insert, delete snapshot) of rows


def flush_inlined_data(ctx: LakeContext, schema_name: str | None, table_name: str | None,
                       info: CommitProperties | None = None) -> list[FlushRow]:
    """Flush the inlined data of one table, a schema's tables or every table; one snapshot for all."""
    ctx.check_writable()
    with ctx.engine.connect() as conn:
        read_snapshot = reader.latest_snapshot(conn).snapshot_id
    staged = stage_flush(ctx, schema_name, table_name, read_snapshot)
    if staged.ops:
        ctx.commit(staged.ops, read_snapshot=read_snapshot, properties=info, staged_files=staged.files)
    return staged.result


def stage_flush(ctx: LakeContext, schema_name: str | None, table_name: str | None, read_snapshot: int,
                sort_keys: dict[int, list] | None = None) -> Staged[list[FlushRow]]:
    """Flush what is inlined at `read_snapshot`: the operations, staged files and rows, nothing committed;
    `sort_keys` (table id -> keys) replaces the catalog's then (an open transaction's SET SORTED BY)."""
    with ctx.engine.connect() as conn:
        work = [w for w in (_collect(ctx, conn, t, read_snapshot, sort_keys) for t in maintained_tables(
            ctx, conn, read_snapshot, schema=schema_name, table=table_name, function="flush_inlined_data",
            flush=True)) if w]
    if not work:
        return Staged([], [], [])
    per_thread = str(ctx.option("per_thread_output") or "false").lower() in ("true", "1")
    staged: list[str] = []
    try:
        ops, rows = [], []
        placed_by_table = []
        for flush in work:
            with progress(f"flushing inlined data of {flush.table.qualified_name}"):
                placed = _write_batches(ctx, flush, per_thread, staged)
            placed_by_table.append(placed)
        deletes = _write_deletes(ctx, work, placed_by_table, staged)
        for flush, placed in zip(work, placed_by_table, strict=True):
            for p in placed:
                p.deletes = deletes.get(p.file.path)
            file_deletes = [deletes[_existing_key(fid)] for fid in sorted(flush.file_deletes)]
            ops.append(FlushInlined(flush.table, read_snapshot, placed, file_deletes,
                                    [b.name for b in flush.batches]))
            flushed = sum(p.file.record_count for p in placed)
            if flushed:
                rows.append(FlushRow(flush.table.schema_name, flush.table.name, flushed))
    except BaseException:
        delete_paths(staged)
        raise
    return Staged(ops, staged, rows)


def _collect(ctx: LakeContext, conn: sa.Connection, table: TableInfo, read_snapshot: int,
             staged_sorts: dict[int, list] | None = None) -> _TableFlush | None:
    """What there is to flush for one table, read from the catalog."""
    flush = _TableFlush(table, ctx.write_options(table, conn))
    begins = {version: begin for begin, version in schema_versions(conn, table.table_id)}
    if staged_sorts is not None and table.table_id in staged_sorts:
        sort_keys = staged_sorts[table.table_id]
    else:
        sort_keys = current_sort(conn, table.table_id, read_snapshot)
    for name, version in inlined_tables.inlined_versions(conn, table.table_id):
        at = begins.get(version)
        columns = table.columns if at is None else reader.load_columns(conn, [table.table_id], at).get(
            table.table_id, table.columns)
        if not spark_writable(columns, flush=True) or not sa.inspect(conn).has_table(name):
            continue
        rows = _version_rows(conn, table.table_id, name, version, columns, read_snapshot)
        if rows is not None:
            layout = replace(table, columns=columns, sort_keys=usable_sort_keys(sort_keys, columns),
                             partition=current_spec(conn, table.table_id, at if at is not None else read_snapshot))
            flush.batches.append(_Batch(name, layout, rows))
    inlined_deletes = _inlined_file_deletes(conn, table.table_id, read_snapshot)
    if inlined_deletes:
        live = {f.data_file_id: f for f in reader.data_files(conn, table, read_snapshot)}
        flush.file_deletes = {fid: rows for fid, rows in inlined_deletes.items() if fid in live}
        flush.live_files = {fid: live[fid] for fid in flush.file_deletes}
    return flush if flush.batches or flush.file_deletes else None


def _version_rows(conn: sa.Connection, table_id: int, name: str, version: int, columns, read_snapshot: int):
    """The inlined rows of one schema version inserted up to the snapshot (deleted ones too), in its columns."""
    dialect = conn.engine.dialect.name
    tbl = inlined.inlined_data_table(sa.MetaData(), dialect, table_id, version, columns, v11=catalog_is_v11(conn))
    query = (sa.select(*inlined.select_columns(tbl, columns, dialect), tbl.c[inlined.BEGIN].label(SNAPSHOT_ID_COLUMN),
                       tbl.c[inlined.END].label(ENDED))
             .where(tbl.c[inlined.BEGIN] <= read_snapshot).order_by(tbl.c[inlined.ROW_ID]))
    rows = conn.execute(query).mappings().all()
    if not rows:
        return None
    data = inlined.decode_rows(rows, columns, dialect)
    for key, source in (("rowid", inlined.ROW_ID), (SNAPSHOT_ID_COLUMN, SNAPSHOT_ID_COLUMN), (ENDED, ENDED)):
        data = data.append_column(key, pa.array([r[source] for r in rows], pa.int64()))
    return data


def _inlined_file_deletes(conn: sa.Connection, table_id: int, read_snapshot: int) -> dict[int, list[tuple[int, int]]]:
    name = inlined.inlined_delete_table_name(table_id)
    if not sa.inspect(conn).has_table(name):
        return {}
    tbl = sa.table(name, sa.column("file_id"), sa.column("row_id"), sa.column("begin_snapshot"))
    out: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for file_id, pos, begin in conn.execute(sa.select(tbl.c.file_id, tbl.c.row_id, tbl.c.begin_snapshot)
                                            .where(tbl.c.begin_snapshot <= read_snapshot)):
        out[file_id].append((pos, begin))
    return dict(out)


def _write_batches(ctx: LakeContext, flush: _TableFlush, per_thread: bool, staged: list[str]) -> list[PlacedFile]:
    """Write each schema version's rows (Spark); the files placed at their rows' snapshots."""
    options = replace(flush.options, sort_on_insert=True)  # flushes sort even when inserts do not
    placed = []
    for batch in flush.batches:
        frame = ctx.spark.createDataFrame(spark_safe(batch.rows.drop_columns([ENDED])))
        if not per_thread:
            frame = frame.coalesce(1)
        files = spark_write.write_data_files(ctx.spark, frame, batch.layout, options=options, row_ids=True,
                                             snapshot_ids=True)
        staged += [f.path for f in files]
        ranges = _encrypted_ranges(ctx.spark, files) if options.encrypted else {}
        for f in files:
            rows, snaps = ranges[f.path] if f.encryption_key else (_range(f, ROW_ID_COLUMN),
                                                                    _range(f, SNAPSHOT_ID_COLUMN))
            placed.append(PlacedFile(f, batch.layout.columns, begin_snapshot=snaps[0], partial_max=snaps[1],
                                     row_id_start=rows[0], partition_id=batch.layout.partition.partition_id  # type: ignore[union-attr]  # partitioned
                                     if f.partition_values else None))
        # A row id alone is not enough: an update's versions share it (each has its own insert snapshot).
        flush.ended += [(r, b, e) for r, b, e in zip(batch.rows.column("rowid").to_pylist(),
                                                     batch.rows.column(SNAPSHOT_ID_COLUMN).to_pylist(),
                                                     batch.rows.column(ENDED).to_pylist(), strict=True)
                        if e is not None]
    return placed


def _range(f: NewDataFile, column: str) -> tuple[int, int]:
    """(min, max) of an internal column, from the file's footer statistics."""
    fs, inner = filesystem(f.path)
    meta = pq.read_metadata(inner, filesystem=fs)
    index = meta.schema.names.index(column)
    stats = [meta.row_group(i).column(index).statistics for i in range(meta.num_row_groups)]
    return min(s.min for s in stats), max(s.max for s in stats)


def _encrypted_ranges(spark, files: list[NewDataFile]) -> dict[str, tuple[tuple[int, int], tuple[int, int]]]:
    """((min, max) row id, (min, max) snapshot) per encrypted file: their footers are decrypted by Spark only."""
    from pyspark.sql import functions as F

    secret = [(f.path, f.encryption_key) for f in files if f.encryption_key]
    if not secret:
        return {}
    by_uri = {spark_file_uri(p): p for p, _k in secret}
    agg = encrypted_lineage(spark, secret).groupBy("_dl_uri").agg(
        F.min("_dl_rid"), F.max("_dl_rid"), F.min("_dl_begin"), F.max("_dl_begin")).collect()
    return {by_uri[r[0]]: ((r[1], r[2]), (r[3], r[4])) for r in agg}


def _existing_key(file_id: int) -> str:
    return f"file:{file_id}"


def _write_deletes(ctx: LakeContext, work: list[_TableFlush], placed_by_table: list[list[PlacedFile]],
                   staged: list[str]) -> dict[str, PlacedDelete]:
    """Partial delete files for flushed rows deleted while inlined (keyed by the new file's path) and for
    inlined deletes of existing files (keyed by `file:<id>`), in one Spark job per table."""
    from pyspark.sql import functions as F

    spark, out = ctx.spark, {}
    for flush, placed in zip(work, placed_by_table, strict=True):
        targets: dict[str, DeleteTarget] = {}
        parts = []
        if flush.ended and placed:
            targets.update({p.file.path: DeleteTarget(p.file.path) for p in placed})
            gone = spark.createDataFrame(flush.ended, f"_dl_rid long, _dl_begin long, {SNAP} long")
            keys = spark.createDataFrame([(spark_file_uri(p.file.path), p.file.path) for p in placed],
                                         f"_dl_uri string, {KEY} string")
            if flush.options.encrypted:  # the flushed files' row ids are decrypted by Spark (spark/encrypted/)
                read = encrypted_lineage(spark, [(p.file.path, p.file.encryption_key) for p in placed])  # type: ignore[misc]  # keyed
            else:
                read = (read_parquet(spark, f"`{ROW_ID_COLUMN}` long, `{SNAPSHOT_ID_COLUMN}` long",
                                     [p.file.path for p in placed])
                        .select(F.col("_metadata.file_path").alias("_dl_uri"),
                                F.col("_metadata.row_index").alias(POS), F.col(ROW_ID_COLUMN).alias("_dl_rid"),
                                F.col(SNAPSHOT_ID_COLUMN).alias("_dl_begin")))
            parts.append(read.join(F.broadcast(gone), ["_dl_rid", "_dl_begin"]).join(F.broadcast(keys), "_dl_uri")
                         .select(KEY, POS, SNAP))
        if flush.file_deletes:
            rows = []
            for fid, deletes in flush.file_deletes.items():
                f = flush.live_files[fid]
                targets[_existing_key(fid)] = DeleteTarget(f.path, f.delete_file)
                rows += [(_existing_key(fid), pos, snap) for pos, snap in deletes]
            parts.append(spark.createDataFrame(rows, f"{KEY} string, {POS} long, {SNAP} long"))
        if not parts:
            continue
        frame = parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])
        with ctx.connect() as conn:
            # 1.1 catalogs with write_deletion_vectors: Puffin files of one blob per snapshot, as the 1.1 reference
            # flushes; DuckDB 1.5.5 (1.0 catalogs) flushes deletes to Parquet whatever the option says.
            vectors = catalog_is_v11(conn) and ctx.writes_deletion_vectors(conn, flush.table)
        written = write_delete_files(spark, frame, targets, flush.table.path, vectors=vectors, history=vectors,
                                     encrypted=flush.options.encrypted)
        staged += [w.path for w in written.values()]
        for key, w in written.items():
            existing = key.startswith("file:")
            fid = int(key[5:]) if existing else -1
            out[key] = PlacedDelete(
                NewDeleteFile(fid, w.path, w.delete_count, w.file_size_bytes, w.footer_size,
                              encryption_key=w.encryption_key, row_group_count=w.row_group_count), w.first_snapshot,  # type: ignore[arg-type]  # holds rows
                partial_max=w.last_snapshot if existing else None,
                replaces=flush.live_files[fid].delete_file if existing else None)
    return out
