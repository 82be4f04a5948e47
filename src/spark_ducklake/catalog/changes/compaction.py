"""Commit operations of the maintenance procedures: flushing inlined data, merging and rewriting data files.

They write the catalog rows the reference writes. Merged files replace their sources in every snapshot: the
sources' rows are removed from ducklake_data_file (and scheduled for deletion), the merged file begins at the
oldest source's snapshot and stores each row's snapshot (`partial_max`). Rewritten files replace their sources
from the rewrite on: the sources are ended, not removed. Flushed inlined rows become files that begin at their
oldest row's snapshot; rows deleted meanwhile are marked in partial delete files (per-row delete snapshot).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from ...errors import ConflictError
from ...spec import paths
from ...spec.model import Column, DataFile, NewDataFile, TableInfo
from ...spec.snapshot_changes import Change
from ..commit import CommitContext
from ..conflicts import FLUSHED_DELETES
from ..database.spec_tables import T, end_live_rows
from ..database.versions import catalog_is_v11, v11_values
from ..inlined import codec as inlined
from ..inlined import tables as inlined_tables
from .data import exactness
from .file_rows import PlacedDelete, create_name_mapping, insert_delete_file, schedule_for_deletion

_CHUNK = 500  # ids per IN list (SQLite's parameter limit, long statements elsewhere)


def _chunks(ids: list[int]) -> Any:
    for start in range(0, len(ids), _CHUNK):
        yield ids[start:start + _CHUNK]


@dataclass
class PlacedFile:
    """A written data file and its place in the table's history."""

    file: NewDataFile
    columns: list[Column]  # the columns it was written with (for a name mapping)
    begin_snapshot: int | None = None  # None: the committing snapshot
    partial_max: int | None = None
    row_id_start: int | None = None
    partition_id: int | None = None
    deletes: PlacedDelete | None = None  # deletions of its own rows (flushed inlined rows deleted meanwhile)


def insert_data_files(ctx: CommitContext, table: TableInfo, placed: list[PlacedFile]) -> list[int]:
    """ducklake_data_file rows (with column stats and partition values) for the files; returns their ids."""
    data_rows, stat_rows, part_rows, ids = [], [], [], []
    mappings: dict[int, int] = {}
    for p in placed:
        f, file_id = p.file, ctx.file_id()
        ids.append(file_id)
        mapping_id = None
        if f.needs_name_mapping:
            if id(p.columns) not in mappings:
                mappings[id(p.columns)] = create_name_mapping(ctx, table.table_id, p.columns)
            mapping_id = mappings[id(p.columns)]
        rel, is_rel = paths.relative_to(table.path, f.path)
        data_rows.append({
            "data_file_id": file_id, "table_id": table.table_id,
            "begin_snapshot": ctx.snapshot_id if p.begin_snapshot is None else p.begin_snapshot,
            "end_snapshot": None, "file_order": None, "path": rel, "path_is_relative": is_rel,
            "file_format": "parquet", "record_count": f.record_count, "file_size_bytes": f.file_size_bytes,
            "footer_size": f.footer_size, "row_id_start": p.row_id_start, "partition_id": p.partition_id,
            "encryption_key": f.encryption_key, "mapping_id": mapping_id, "partial_max": p.partial_max,
            **v11_values(ctx.conn, row_group_count=f.row_group_count),
        })
        stat_rows += [{
            "data_file_id": file_id, "table_id": table.table_id, "column_id": cid,
            "column_size_bytes": s.column_size_bytes, "value_count": s.value_count, "null_count": s.null_count,
            "min_value": s.min_value, "max_value": s.max_value, "contains_nan": s.contains_nan,
            "extra_stats": s.extra_stats,  # a merged geometry column keeps its bounding box and types
            **exactness(ctx.conn, s),
        } for cid, s in sorted(f.column_stats.items())]
        part_rows += [{"data_file_id": file_id, "table_id": table.table_id, "partition_key_index": index,
                       "partition_value": value} for index, value in sorted(f.partition_values.items())]
    for name, rows in (("ducklake_data_file", data_rows), ("ducklake_file_column_stats", stat_rows),
                       ("ducklake_file_partition_value", part_rows)):
        if rows:
            ctx.conn.execute(T[name].insert(), rows)
    return ids


def _record_moved_rows(ctx: CommitContext, table_id: int) -> None:
    """Add `inline_flush` to a compaction's changes_made, beside `merge_adjacent` / `rewrite_delete`.

    DuckDB (ducklake 1.5.5) checks a concurrent DELETE/UPDATE whose deletes it inlines (`inlined_delete`)
    against drops, alters, inserts, inlined deletes and flushes, not against compactions: it would commit
    positions of a file the compaction retired, and the delete is lost (an update duplicated). A flush moves rows
    to other files as a compaction does, and DuckDB refuses such a delete after one ("another transaction has
    flushed the inlined data"). Not one of the operation's intents: our own rules need no help, and a flush
    committed meanwhile touches other files (docs/concurrency.md)."""
    ctx.record("inline_flush", table_id)


def _bump_table_stats(ctx: CommitContext, table_id: int, rows: int, size: int) -> None:
    ts = T["ducklake_table_stats"]
    ctx.conn.execute(ts.update().where(ts.c.table_id == table_id).values(
        record_count=ts.c.record_count + rows, file_size_bytes=ts.c.file_size_bytes + size))


@dataclass
class MergeFiles:
    """merge_adjacent_files: each group of sources becomes the outputs, in every snapshot."""

    table: TableInfo
    merges: list[tuple[list[DataFile], list[PlacedFile]]]

    def intents(self) -> list[Change]:
        return [Change("merge_adjacent", str(self.table.table_id))]

    def apply(self, ctx: CommitContext) -> None:
        df = T["ducklake_data_file"]
        sources = [f for group, _ in self.merges for f in group]
        ids = [f.data_file_id for f in sources]
        removed = 0
        for chunk in _chunks(ids):  # counted first: DuckDB's driver reports no rowcount
            live = [df.c.data_file_id.in_(chunk), df.c.end_snapshot.is_(None)]
            removed += ctx.conn.execute(sa.select(sa.func.count()).select_from(df).where(*live)).scalar_one()
            ctx.conn.execute(df.delete().where(*live))
        if removed != len(ids):
            raise ConflictError(f"data files of table {self.table.qualified_name} were removed meanwhile")
        for name in ("ducklake_file_column_stats", "ducklake_file_partition_value", "ducklake_file_variant_stats",
                     "ducklake_delete_file"):
            for chunk in _chunks(ids):
                ctx.conn.execute(T[name].delete().where(T[name].c.data_file_id.in_(chunk)))
        schedule_for_deletion(ctx, [(f.data_file_id, f.path) for f in sources])
        outputs = [p for _, placed in self.merges for p in placed]
        insert_data_files(ctx, self.table, outputs)
        _bump_table_stats(ctx, self.table.table_id, 0, sum(p.file.file_size_bytes for p in outputs)
                          - sum(f.file_size_bytes for f in sources))
        ctx.record("merge_adjacent", self.table.table_id)
        _record_moved_rows(ctx, self.table.table_id)


@dataclass
class RewriteFiles:
    """rewrite_data_files: the sources (and their delete files) end, the outputs hold their live rows."""

    table: TableInfo
    sources: list[DataFile]
    outputs: list[PlacedFile]

    def intents(self) -> list[Change]:
        return [Change("rewrite_delete", str(self.table.table_id))]

    def apply(self, ctx: CommitContext) -> None:
        df, dl = T["ducklake_data_file"], T["ducklake_delete_file"]
        ids = [f.data_file_id for f in self.sources]
        ended = sum(end_live_rows(ctx.conn, df, ctx.snapshot_id, df.c.data_file_id.in_(chunk))
                    for chunk in _chunks(ids))
        if ended != len(ids):
            raise ConflictError(f"data files of table {self.table.qualified_name} were removed meanwhile")
        for chunk in _chunks(ids):
            end_live_rows(ctx.conn, dl, ctx.snapshot_id, dl.c.data_file_id.in_(chunk))
        insert_data_files(ctx, self.table, self.outputs)
        _bump_table_stats(ctx, self.table.table_id,
                          sum(p.file.record_count for p in self.outputs) - sum(f.record_count for f in self.sources),
                          sum(p.file.file_size_bytes for p in self.outputs)
                          - sum(f.file_size_bytes for f in self.sources))
        ctx.record("rewrite_delete", self.table.table_id)
        _record_moved_rows(ctx, self.table.table_id)


@dataclass
class FlushInlined:
    """flush_inlined_data: inlined rows to files, inlined deletes of files to (partial) delete files."""

    table: TableInfo
    read_snapshot: int
    files: list[PlacedFile] = field(default_factory=list)
    file_deletes: list[PlacedDelete] = field(default_factory=list)  # for existing data files
    inlined_tables: list[str] = field(default_factory=list)  # the inlined data tables whose rows were flushed

    @property
    def deleted_file_ids(self) -> set[int]:
        return {d.file.data_file_id for d in self.file_deletes}

    def intents(self) -> list[Change]:
        # Deletes of the new files' own rows (deleted while inlined) need no intent: nobody else sees those files,
        # and a concurrent delete of the inlined rows conflicts with `inline_flush`.
        out = [Change(FLUSHED_DELETES, str(self.table.table_id))] if self.file_deletes else []
        if self.files or self.file_deletes:
            out.append(Change("inline_flush", str(self.table.table_id)))
        return out

    def apply(self, ctx: CommitContext) -> None:
        tid, conn = self.table.table_id, ctx.conn
        ids = insert_data_files(ctx, self.table, self.files)
        for file_id, placed in zip(ids, self.files, strict=True):
            if placed.deletes is not None:
                insert_delete_file(ctx, self.table, file_id, placed.deletes)
        for delete in self.file_deletes:
            insert_delete_file(ctx, self.table, delete.file.data_file_id, delete)
        v11 = catalog_is_v11(conn)
        for name in self.inlined_tables:
            rows = inlined.system_table(name, v11)
            conn.execute(rows.delete().where(rows.c[inlined.BEGIN] <= self.read_snapshot))
        if self.file_deletes:
            dels = sa.table(inlined.inlined_delete_table_name(tid), sa.column("file_id"),
                            sa.column("begin_snapshot"))
            for chunk in _chunks(sorted(self.deleted_file_ids)):
                conn.execute(dels.delete().where(dels.c.file_id.in_(chunk),
                                                 dels.c.begin_snapshot <= self.read_snapshot))
        drop_superseded_inlined_tables(conn, tid)
        _bump_table_stats(ctx, tid, 0, sum(p.file.file_size_bytes for p in self.files))
        if self.file_deletes:  # as the reference records it: no delete for the flushed rows' own deletes
            ctx.record("deleted_from_table", tid)
        # Also with file deletes alone (the reference writes deleted_from_table alone then): marks the snapshot
        # as a flush, which our appenders need not fear (conflicts.find_conflict).
        ctx.record("inline_flush", tid)


def drop_superseded_inlined_tables(conn: sa.Connection, table_id: int) -> None:
    """Drop (and unregister) the empty inlined data tables of older schema versions, as the reference does."""
    registry = T["ducklake_inlined_data_tables"]
    for name, version in inlined_tables.inlined_versions(conn, table_id)[:-1]:
        if sa.inspect(conn).has_table(name):
            if conn.execute(sa.select(sa.func.count()).select_from(sa.table(name))).scalar_one():
                continue
            conn.execute(sa.schema.DropTable(sa.Table(name, sa.MetaData()), if_exists=True))
        conn.execute(registry.delete().where(registry.c.table_id == table_id, registry.c.schema_version == version))
