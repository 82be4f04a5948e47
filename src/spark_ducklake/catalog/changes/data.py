"""Commit operations that change table data: register files, inline rows, replace everything."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.parquet as pq
import sqlalchemy as sa

from ...errors import ConflictError
from ...spec import paths
from ...spec.model import ColumnStats, NewDataFile, NewDeleteFile, TableInfo
from ...spec.snapshot_changes import Change
from ...spec.types import to_arrow_schema
from .. import extra_stats, stats
from ..commit import CommitContext
from ..database.spec_tables import T, end_live_rows
from ..database.versions import layout_values, v11_values
from ..inlined import tables as inlined_tables
from .ddl import TableRef
from .file_rows import PlacedDelete, create_name_mapping, insert_delete_file


def claim_rows(ctx: CommitContext, table_id: int, rows: int, size: int, new_ids: int) -> int:
    """Add to the table's stats and reserve `new_ids` row ids; returns the first reserved id.

    One UPDATE ... RETURNING where the dialect has it (it runs while other writers queue behind us)."""
    ts = T["ducklake_table_stats"]
    bump = ts.update().where(ts.c.table_id == table_id).values(
        record_count=ts.c.record_count + rows, next_row_id=ts.c.next_row_id + new_ids,
        file_size_bytes=ts.c.file_size_bytes + size,
    )
    if ctx.conn.dialect.update_returning:
        after = ctx.conn.execute(bump.returning(ts.c.next_row_id)).scalar()
        if after is not None:
            return after - new_ids
    else:
        before = ctx.conn.execute(sa.select(ts.c.next_row_id).where(ts.c.table_id == table_id)).scalar()
        if before is not None:
            ctx.conn.execute(bump)
            return before
    ctx.conn.execute(ts.insert().values(table_id=table_id, record_count=rows, next_row_id=new_ids,
                                        file_size_bytes=size))
    return 0


def exactness(conn: sa.Connection, s: ColumnStats | stats.TableColumnStats,
              table: str = "ducklake_file_column_stats") -> dict[Any, Any]:
    """A stats row's `min_is_exact` / `max_is_exact` where the catalog has them (1.1): NULL beside a NULL bound,
    as the reference writes them."""
    return layout_values(conn, table, min_is_exact=None if s.min_value is None else s.min_is_exact,
                         max_is_exact=None if s.max_value is None else s.max_is_exact)


def read_column_stats(conn: sa.Connection, table_id: int) -> dict[int, stats.TableColumnStats]:
    """The table's ducklake_table_column_stats rows by column id."""
    tcs = T["ducklake_table_column_stats"]
    flags = [tcs.c[name] for name in layout_values(conn, tcs.name, min_is_exact=None, max_is_exact=None)]
    return {
        r.column_id: stats.TableColumnStats(contains_null=r.contains_null, contains_nan=r.contains_nan,
                                            min_value=r.min_value, max_value=r.max_value,
                                            extra_stats=r.extra_stats, **{c.name: r[i] for i, c in
                                                                          enumerate(flags, start=6)})
        for r in conn.execute(sa.select(tcs.c.column_id, tcs.c.contains_null, tcs.c.contains_nan, tcs.c.min_value,
                                        tcs.c.max_value, tcs.c.extra_stats, *flags).where(tcs.c.table_id == table_id))
    }


def merge_column_stats(ctx: CommitContext, table_id: int, columns: Any, new: list[dict[int, ColumnStats]],
                        seen: dict[int, stats.TableColumnStats] | None = None) -> None:
    """Widen the table's column stats by the new rows' stats, writing only what changed.

    `seen` is what was read before the commit queued (saving a query while others wait). Inserts only ever
    widen the stats, so values inside the seen bounds stay inside; changed rows are updated only if they still
    hold the seen values, and re-read otherwise. Compaction can narrow them, so then everything is re-read.
    """
    tcs = T["ducklake_table_column_stats"]
    # Where the guarded UPDATE below cannot tell that the values changed (DuckDB reports no row count, MySQL's
    # collation compares text case-insensitively) read afresh instead (the commit lock makes that read current).
    if seen is None or not ctx.dialect.detects_stale_updates or ctx.touched(table_id, "compacted_table"):
        seen = read_column_stats(ctx.conn, table_id)
        checked = True
    else:
        checked = False
    types = {col.column_id: col.type for top in columns for col in top.walk() if not col.is_nested}
    # The released 1.1 layout (it has the exactness flags) keeps unknown table bounds unknown, as its reference does.
    released_v11 = bool(layout_values(ctx.conn, tcs.name, min_is_exact=None))
    merged = stats.merge_table_column_stats(seen or None, new, types, unknown_bounds_stay=released_v11)
    for cid, s in sorted(merged.items()):
        if cid in seen and s == seen[cid]:
            continue
        values = {"contains_null": s.contains_null, "contains_nan": s.contains_nan, "min_value": s.min_value,
                  "max_value": s.max_value, "extra_stats": s.extra_stats,
                  **exactness(ctx.conn, s, tcs.name)}
        key = [tcs.c.table_id == table_id, tcs.c.column_id == cid]
        if checked:
            ctx.conn.execute(tcs.update().where(*key).values(**values) if cid in seen else
                             tcs.insert().values(table_id=table_id, column_id=cid, **values))
            continue
        old = seen.get(cid)
        guard = old is not None and [
            tcs.c.contains_null.is_not_distinct_from(old.contains_null),
            tcs.c.contains_nan.is_not_distinct_from(old.contains_nan),
            tcs.c.min_value.is_not_distinct_from(old.min_value),
            tcs.c.max_value.is_not_distinct_from(old.max_value)]
        if not guard or ctx.conn.execute(tcs.update().where(*key, *guard).values(**values)).rowcount != 1:
            # A new column, or another writer widened it first: merge with what is there now.
            return merge_column_stats(ctx, table_id, columns, new)


@dataclass
class AppendFiles:
    """INSERT by registering Parquet files the writer already staged."""

    table: TableInfo
    files: list[NewDataFile]
    ref: TableRef | None = None  # set when the table is created in the same commit

    def _id(self) -> int:
        return self.ref.table_id if self.ref is not None else self.table.table_id  # type: ignore[return-value]  # set by then

    def intents(self) -> list[Change]:
        return [] if self.ref is not None else [Change("inserted_into_table", str(self.table.table_id))]

    def apply(self, ctx: CommitContext) -> None:
        table_id = self._id()
        rows = sum(f.record_count for f in self.files)
        next_row_id = claim_rows(ctx, table_id, rows, sum(f.file_size_bytes for f in self.files), rows)
        data_rows, stat_rows, part_rows, variant_rows = [], [], [], []
        mapping_id = None
        if any(f.needs_name_mapping for f in self.files):
            mapping_id = create_name_mapping(ctx, table_id, self.table.columns)
        for f in self.files:
            file_id = ctx.file_id()
            rel, is_rel = paths.relative_to(self.table.path, f.path)
            data_rows.append({
                "data_file_id": file_id, "table_id": table_id, "begin_snapshot": ctx.snapshot_id,
                "end_snapshot": None, "file_order": None, "path": rel, "path_is_relative": is_rel,
                "file_format": "parquet", "record_count": f.record_count, "file_size_bytes": f.file_size_bytes,
                "footer_size": f.footer_size, "row_id_start": next_row_id,
                # files with partition values come with the table's partition spec
                "partition_id": self.table.partition.partition_id if f.partition_values else None,  # type: ignore[union-attr]
                "encryption_key": f.encryption_key,
                "mapping_id": mapping_id if f.needs_name_mapping else None, "partial_max": None,
                **v11_values(ctx.conn, row_group_count=f.row_group_count),
            })
            next_row_id += f.record_count
            for cid, s in sorted(f.column_stats.items()):
                stat_rows.append({
                    "data_file_id": file_id, "table_id": table_id, "column_id": cid,
                    "column_size_bytes": s.column_size_bytes, "value_count": s.value_count,
                    "null_count": s.null_count, "min_value": s.min_value, "max_value": s.max_value,
                    "contains_nan": s.contains_nan, "extra_stats": s.extra_stats, **exactness(ctx.conn, s),
                })
                variant_rows += extra_stats.variant_stat_rows(file_id, table_id, cid, s.extra_stats)
            for key_index, value in sorted(f.partition_values.items()):
                part_rows.append({"data_file_id": file_id, "table_id": table_id,
                                  "partition_key_index": key_index, "partition_value": value})
        if data_rows:
            ctx.conn.execute(T["ducklake_data_file"].insert(), data_rows)
        if stat_rows:
            ctx.conn.execute(T["ducklake_file_column_stats"].insert(), stat_rows)
        if part_rows:
            ctx.conn.execute(T["ducklake_file_partition_value"].insert(), part_rows)
        if variant_rows:
            ctx.conn.execute(T["ducklake_file_variant_stats"].insert(), variant_rows)
        merge_column_stats(ctx, table_id, self.table.columns, [f.column_stats for f in self.files])
        ctx.record("inserted_into_table", table_id)


@dataclass
class InlineInsert:
    """INSERT of a few rows straight into the catalog's inlined data table."""

    table: TableInfo
    data: pa.Table  # columns in table order, Arrow types of types.to_arrow_type
    ref: TableRef | None = None
    row_ids: list[int] | None = None  # kept ids of updated rows (row lineage); new rows get fresh ones

    def __post_init__(self) -> None:
        self.stats = _arrow_stats(self.data, self.table)  # computed once, before the commit's critical section
        self._seen: dict[int, stats.TableColumnStats] | None = None
        self._target: sa.Table | None = None

    def prepare(self, conn: sa.Connection) -> None:
        """Catalog reads that can happen before the commit queues behind other writers."""
        if self.ref is None:
            self._seen = read_column_stats(conn, self.table.table_id)
            self._target = inlined_tables.current_inlined_table(conn, self.table.table_id, self.table.columns)

    def _id(self) -> int:
        return self.ref.table_id if self.ref is not None else self.table.table_id  # type: ignore[return-value]  # set by then

    def intents(self) -> list[Change]:
        return [] if self.ref is not None else [Change("inlined_insert", str(self.table.table_id))]

    def apply(self, ctx: CommitContext) -> None:
        table_id = self._id()
        # Updated rows keep their ids, so only brand-new rows advance next_row_id (as the reference does).
        n = self.data.num_rows
        first = claim_rows(ctx, table_id, n, 0, 0 if self.row_ids is not None else n)
        prepared = self._target is not None and not ctx.schema_changed  # DDL earlier in this commit: look again
        target = self._target if prepared else \
            inlined_tables.current_inlined_table(ctx.conn, table_id, self.table.columns)
        ids = self.row_ids if self.row_ids is not None else list(range(first, first + n))
        inlined_tables.insert_rows(ctx.conn, target, self.data, self.table.columns, ids, ctx.snapshot_id)  # type: ignore[arg-type]  # exists: the write created it
        ctx.file_id()  # the reference spends one file id per inlined insert; keep the counters in step
        merge_column_stats(ctx, table_id, self.table.columns, [self.stats], self._seen)
        ctx.record("inlined_insert", table_id)


def _arrow_stats(data: pa.Table, table: TableInfo) -> dict[int, ColumnStats]:
    """Column stats of a few in-memory rows, computed the same way as for files (via a Parquet footer)."""
    buf = io.BytesIO()
    pq.write_table(data.cast(to_arrow_schema(table.columns)), buf)
    buf.seek(0)
    return stats.file_column_stats(pq.ParquetFile(buf).metadata, table.columns)


@dataclass
class ReplaceAll:
    """Delete every row visible now (the first half of an overwrite)."""

    table: TableInfo

    def intents(self) -> list[Change]:
        return [Change("deleted_from_table", str(self.table.table_id))]

    @property
    def deleted_file_ids(self) -> None:
        return None  # every file: conflicts with any concurrent delete on this table

    def apply(self, ctx: CommitContext) -> None:
        tid = self.table.table_id
        for name in ("ducklake_data_file", "ducklake_delete_file"):
            tbl = T[name]
            ctx.conn.execute(tbl.update().where(tbl.c.table_id == tid, tbl.c.end_snapshot.is_(None))
                             .values(end_snapshot=ctx.snapshot_id))
        ended = inlined_tables.end_all_rows(ctx.conn, tid, ctx.snapshot_id)
        ctx.record("deleted_from_table", tid)
        if ended:
            ctx.record("inlined_delete", tid)


class Restamped(Protocol):
    """What rewriting a partial delete file for another snapshot id produced (spark.delete_files)."""

    file_size_bytes: int
    footer_size: int
    first_snapshot: int | None


# (path, foreseen snapshot, actual snapshot[, encryption key]) -> the rewritten file. Supplied by the data plane:
# the catalog layer writes no files, but only the commit knows the snapshot id a partial delete file's new
# positions must carry.
Restamp = Callable[..., Restamped]


@dataclass
class DeleteRows:
    """DELETE: new (merged) delete files, fully deleted files ended, inlined deletes and inlined rows ended."""

    table: TableInfo
    delete_files: list[NewDeleteFile]
    ended_files: list[int]
    inlined_file_deletes: dict[int, list[int]]
    inlined_row_ids: list[int]
    restamp: Restamp | None = None  # needed when delete_files holds partial files (those with `replaces`)

    def __post_init__(self) -> None:
        if self.restamp is None and any(d.replaces is not None for d in self.delete_files):
            raise TypeError("DeleteRows with partial delete files needs a restamp function")

    @property
    def deleted_file_ids(self) -> set[int]:
        ids = {d.data_file_id for d in self.delete_files} | set(self.ended_files) | set(self.inlined_file_deletes)
        if self.inlined_row_ids:
            ids.add(inlined_tables.inlined_rows_key(self.table.table_id))
        return ids

    def intents(self) -> list[Change]:
        out = []
        if self.delete_files or self.ended_files:
            out.append(Change("deleted_from_table", str(self.table.table_id)))
        if self.inlined_file_deletes or self.inlined_row_ids:
            out.append(Change("inlined_delete", str(self.table.table_id)))
        return out

    def apply(self, ctx: CommitContext) -> None:
        tid, df, dl = self.table.table_id, T["ducklake_data_file"], T["ducklake_delete_file"]
        plain = [d for d in self.delete_files if d.replaces is None]
        # Ended data files keep their delete file as it is (so does the reference: its feed reads the rows those
        # did not delete as deleted when the data file ends).
        replaced = [d.data_file_id for d in plain]
        if replaced:
            ctx.conn.execute(dl.update().where(dl.c.table_id == tid, dl.c.data_file_id.in_(replaced),
                                               dl.c.end_snapshot.is_(None)).values(end_snapshot=ctx.snapshot_id))
        if self.ended_files:
            ended = end_live_rows(ctx.conn, df, ctx.snapshot_id, df.c.data_file_id.in_(self.ended_files))
            if ended != len(self.ended_files):
                raise ConflictError(f"data files of table {self.table.qualified_name} were removed meanwhile")
        self._replace_delete_files(ctx)
        rows = []
        for d in plain:
            rel, is_rel = paths.relative_to(self.table.path, d.path)
            rows.append({"delete_file_id": ctx.file_id(), "table_id": tid, "begin_snapshot": ctx.snapshot_id,
                         "end_snapshot": None, "data_file_id": d.data_file_id, "path": rel,
                         "path_is_relative": is_rel, "format": paths.delete_file_format(d.path),
                         "delete_count": d.delete_count,
                         "file_size_bytes": d.file_size_bytes, "footer_size": d.footer_size,
                         "encryption_key": d.encryption_key, "partial_max": None,
                         **v11_values(ctx.conn, row_group_count=d.row_group_count)})
        if rows:
            ctx.conn.execute(dl.insert(), rows)
        if self.inlined_file_deletes:
            target = inlined_tables.inlined_delete_table(ctx.conn, tid)
            ctx.conn.execute(target.insert(), [
                {"file_id": fid, "row_id": pos, "begin_snapshot": ctx.snapshot_id}
                for fid, positions in sorted(self.inlined_file_deletes.items()) for pos in sorted(positions)
            ])
        if self.inlined_row_ids:
            ended = inlined_tables.end_rows(ctx.conn, tid, self.inlined_row_ids, ctx.snapshot_id)
            if ended != len(set(self.inlined_row_ids)):
                raise ConflictError(f"inlined rows of table {self.table.qualified_name} were deleted meanwhile")
        for change in self.intents():
            ctx.changes.append(change)

    def _replace_delete_files(self, ctx: CommitContext) -> None:
        """Partial delete files take their data file's old delete file's place in every snapshot."""
        for d in self.delete_files:
            if d.replaces is None:
                continue
            if d.predicted_snapshot != ctx.snapshot_id:  # others committed first: the foreseen id is taken
                # ENCRYPTED lakes: rewritten by Spark with the same key, so a retried commit's key stays valid.
                # restamp is set whenever a file has `replaces` (__post_init__ checks it)
                # Deletion vectors stay plaintext on ENCRYPTED lakes (their key is recorded, never used).
                encrypted = d.encryption_key and not d.path.endswith(".puffin")
                fixed = (self.restamp(d.path, d.predicted_snapshot, ctx.snapshot_id, d.encryption_key)  # type: ignore[misc]
                         if encrypted else self.restamp(d.path, d.predicted_snapshot, ctx.snapshot_id))  # type: ignore[misc]
                d.file_size_bytes, d.footer_size, d.first_snapshot = (fixed.file_size_bytes, fixed.footer_size,
                                                                      fixed.first_snapshot)
                d.predicted_snapshot = ctx.snapshot_id
            insert_delete_file(ctx, self.table, d.data_file_id, PlacedDelete(
                d, begin_snapshot=d.first_snapshot, partial_max=ctx.snapshot_id, replaces=d.replaces))  # type: ignore[arg-type]  # a partial file has one
