"""Row-level commits: DELETE / UPDATE / MERGE. Spark found the rows (by data file path and position, as its scan
read them) and wrote the deleted positions, the new row versions and the inserted rows to a staging folder;
`commit_row_level` stages them as the Python API does and commits one snapshot after the one the scan read, with
the Python API's conflict rules (updated rows keep their row ids)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..catalog.changes.data import AppendFiles, InlineInsert
from ..catalog.inlined import codec as inlined
from ..dataplane.arrow.conform import conform_arrow
from ..dataplane.arrow.local_dml import stage_positions
from ..dataplane.arrow.local_scan import ROWID, read_new_files
from ..dataplane.arrow.scan_columns import FILE, POS
from ..dataplane.arrow.storage import delete_paths, filesystem
from ..dataplane.spark.scan_plan import ScanPlan
from ..dataplane.spark.write import describe_file
from ..errors import ConflictError
from ..lake import DuckLake
from ..operations.delete_update import delete_op, inlined_insert
from ..operations.write import load_layout, write_arrow_here
from ..spec.internal_columns import ROW_ID_COLUMN
from .fields import UnsupportedRequestError, local_path, request_table, request_text
from .writes import adopt_files, is_rewritten, rewritten_files

_OLD_FILE, _OLD_POS = "_dl_file_path", "_dl_pos"  # an updated row's old place, as the plugin writes it


def commit_row_level(lake: DuckLake, origins: dict[str, pa.Table], request: dict[str, Any]) -> dict[str, Any]:
    """Commit what one DELETE / UPDATE / MERGE statement wrote (all under `staging`) as one snapshot, after
    the snapshot its scan read (`snapshot`): deleted positions staged as the Python API stages them (ended
    files, inlined deletes or delete files), new row versions keeping their row ids, inserted rows inlined
    or adopted. Nothing is committed on any error and the files are deleted."""
    name = request_table(request)
    staging = request_text(request, "staging")

    def staged(key: str) -> list[str]:
        return [p for p in request.get(key) or [] if isinstance(p, str) and staging and p.startswith(staging)]

    try:
        return {"snapshot": _commit_row_level(lake, origins, name, int(request["snapshot"]), staged("deletes"),
                                                staged("updates"), staged("files"))}
    finally:
        delete_paths([staging], directories=True)


def _commit_row_level(lake: DuckLake, origins: dict[str, pa.Table], name: tuple[str, str], snapshot: int,
                      deletes: list[str], updates: list[str], inserts: list[str]) -> int | None:
    ctx = lake.context
    plan = lake.plan_scan(name, version=snapshot)
    limit = ctx.inlining_limit(plan.table)
    removed = [pq.read_table(p, columns=["file_path", "pos"]) for p in deletes]
    versions = [pq.read_table(p) for p in updates]
    removed += [t.select([_OLD_FILE, _OLD_POS]).rename_columns(["file_path", "pos"]) for t in versions]
    located = _locate(plan, pa.concat_tables(removed) if removed else None, origins)
    files = [f for f in (describe_file(p, plan.table.columns) for p in sorted(inserts)) if f.record_count]
    # the inlining limit holds for the statement's new rows: a MERGE's updated and inserted rows together
    new_rows = sum(t.num_rows for t in versions) + sum(f.record_count for f in files)
    ops: list = []
    written: list[str] = []
    try:
        if located is not None and located.num_rows:
            staged = stage_positions(plan, located.select([FILE, POS]), limit)
            written += [d.path for d in staged.delete_files]
            ops.append(delete_op(plan, staged))
        if versions and located is not None:  # an updated row keeps its row id, as DuckLake.update does
            rows = pa.concat_tables(versions)
            ids = located.column(ROWID).slice(located.num_rows - rows.num_rows)
            data = conform_arrow(rows.drop_columns([_OLD_FILE, _OLD_POS]), plan.table)
            inline = inlined_insert(ctx, plan, data, ids, few=new_rows <= limit)
            if inline is not None:
                ops.append(inline)
            else:  # no Spark here: pyarrow writes them whatever their size
                rewritten = write_arrow_here(ctx, data.append_column(ROWID, ids), plan.table, snapshot, keep_ids=True)
                if rewritten is None:
                    raise UnsupportedRequestError(f"the lake catalog cannot write updated rows of {name[0]}.{name[1]}"
                                                  " keeping their row ids: its layout or types are written by Spark "
                                                  "(use DuckLake.update)")
                ops.append(AppendFiles(plan.table, rewritten))
                written += [f.path for f in rewritten]
        if files:
            rows = read_new_files(files, plan.table.columns) if new_rows <= limit else None
            table = dataclasses.replace(plan.table)  # a copy: the layout is loaded in
            load_layout(ctx, table, snapshot)
            if rows is not None and inlined.inlinable(plan.table.columns, ctx.engine, rows):
                ops.append(InlineInsert(plan.table, conform_arrow(rows, plan.table)))
            elif is_rewritten(table, bool(table.partition and table.partition.keys)):  # partitioned, ids given
                files = rewritten_files(lake, table, files, snapshot)
                written += [f.path for f in files]
                ops.append(AppendFiles(table, files))
            else:
                adopted = adopt_files(files, plan.table.path)
                written += [f.path for f in adopted]
                ops.append(AppendFiles(plan.table, adopted))
        if not ops:
            return None
    except BaseException:
        delete_paths(written)
        raise
    return ctx.commit(ops, read_snapshot=snapshot, staged_files=written)


def _locate(plan: ScanPlan, removed: pa.Table | None, origins: dict[str, pa.Table]) -> pa.Table | None:
    """The rows a statement removes (`file_path`, `pos` as its scan read them) as `_dl_file` (data file id, null
    for an inlined row), `_dl_pos` (position, or an inlined row's id) and `rowid`, in the same order."""
    if removed is None:
        return None
    by_path = {local_path(f.path): f for f in plan.files}
    out_file: list[int | None] = []
    out_pos: list[int] = []
    out_id: list[int] = []
    row_ids: dict[str, pa.Array | None] = {}
    for path, pos in zip(removed.column("file_path").to_pylist(), removed.column("pos").to_pylist(), strict=True):
        path = local_path(path)
        if path in origins:  # a row the service materialized: an inlined row or a file's with inlined deletes
            origin = origins[path]
            out_file.append(origin.column(FILE)[pos].as_py())
            out_pos.append(origin.column(POS)[pos].as_py())
            out_id.append(origin.column(ROWID)[pos].as_py())
            continue
        f = by_path.get(path)
        if f is None:
            raise ConflictError(f"{plan.table.qualified_name}: the statement read a file ({path}) that is not in "
                                f"snapshot {plan.snapshot_id}")
        if path not in row_ids:
            row_ids[path] = _embedded_row_ids(path)
        embedded = row_ids[path]
        out_file.append(f.data_file_id)
        out_pos.append(pos)
        out_id.append(embedded[pos].as_py() if embedded is not None and embedded[pos].is_valid
                      else (f.row_id_start or 0) + pos)
    return pa.table({FILE: pa.array(out_file, pa.int64()), POS: pa.array(out_pos, pa.int64()),
                     ROWID: pa.array(out_id, pa.int64())})


def _embedded_row_ids(path: str) -> pa.Array | None:
    """A data file's own row-id column (compacted or updated rows), None when it has none."""
    fs, inner = filesystem(path)
    if ROW_ID_COLUMN not in pq.read_schema(inner, filesystem=fs).names:
        return None
    return pq.read_table(inner, columns=[ROW_ID_COLUMN], filesystem=fs).column(0).combine_chunks().cast(pa.int64())
