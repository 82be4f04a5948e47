"""`add_data_files`: register existing Parquet files in a table without copying them (the reference's
`ducklake_add_data_files`), in one snapshot.

Footers are read where the files are: on the driver for a few files, in one Spark job for many (each task reads
its share of footers with a thread pool). Columns are matched by name (`footers.py`), so files with or without
field ids work; each distinct layout gets a `map_by_name` name mapping, which readers (ours and DuckDB's) follow.
Ownership passes to the lake, as in the reference: once no snapshot needs a file, `expire_snapshots` +
`cleanup_old_files` delete it like any other.
"""

from __future__ import annotations

import glob
import json
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sqlalchemy as sa

from ...catalog.commit import CommitContext, CommitInfo
from ...catalog.database.spec_tables import T
from ...catalog.operations.data import _claim_rows, _merge_column_stats
from ...catalog.operations.partitioning import current_spec
from ...catalog.reads import reader
from ...errors import NotFoundError, SchemaMismatchError
from ...spark.footers import AddPlan, describe, describe_batches, stats_of
from ...spark.paths import filesystem
from ...spec import paths
from ...spec.model import TableInfo
from ...spec.snapshot_changes import Change
from .targets import progress

if TYPE_CHECKING:
    from ...lake import DuckLake

DRIVER_FILES = 32  # up to this many footers are read on the driver; more start a Spark job
FILES_PER_TASK = 1000
THREADS_PER_TASK = 16  # footer reads wait on storage, not on CPU


def add_data_files(lake: DuckLake, table: str, paths_or_globs: str | list[str], *, allow_missing: bool = False,
                   ignore_extra_columns: bool = False, hive_partitioning: bool | None = None,
                   info: CommitInfo | None = None) -> list[str]:
    """Register the files (paths or globs) in the table as one snapshot; returns the registered paths."""
    from ...lake import split_name

    lake.check_writable()
    files = expand(paths_or_globs)
    schema, name = split_name(table)
    with lake.engine.connect() as conn:
        read_snapshot = reader.latest_snapshot(conn).snapshot_id
        target = reader.find_table(conn, read_snapshot, lake.data_path, schema, name)
        target.partition = current_spec(conn, target.table_id, read_snapshot)
    by_id = {c.column_id: c for c in target.columns}
    keys = [(i, k.column_id, k.transform, k.directory_name(by_id[k.column_id]))
            for i, k in enumerate(target.partition.keys)]
    plan = AddPlan(target.name, target.columns, allow_missing, ignore_extra_columns, hive_partitioning, keys)
    described = describe_files(lake, files, plan)
    op = AddDataFiles(target, described)
    lake.last_committed = _commit(lake, op, read_snapshot, info)
    return [d["path"] for d in described]


def expand(paths_or_globs: str | list[str]) -> list[str]:
    """Absolute file paths: globs (`*`, `?`, `[...]`, `**`) expanded, sorted; a glob matching nothing fails."""
    items = [paths_or_globs] if isinstance(paths_or_globs, str) else list(paths_or_globs)
    if not items:
        raise ValueError("add_data_files needs at least one path")
    out: list[str] = []
    for item in items:
        if not any(ch in item for ch in "*?["):
            out.append(item if paths.is_uri(item) else os.path.abspath(item))
            continue
        matches = _glob_uri(item) if paths.is_uri(item) else sorted(glob.glob(item, recursive=True))
        if not matches:
            raise NotFoundError(f"add_data_files: no file matches {item!r}")
        out.extend(m if paths.is_uri(m) else os.path.abspath(m) for m in matches)
    return list(dict.fromkeys(out))


def _glob_uri(pattern: str) -> list[str]:
    import fnmatch

    import pyarrow.fs as pafs

    scheme, rest = pattern.split("://", 1)
    base = rest[:min(rest.find(ch) for ch in "*?[" if ch in rest)].rsplit("/", 1)[0]
    fs, _ = filesystem(f"{scheme}://{base}")
    infos = fs.get_file_info(pafs.FileSelector(base, recursive=True))
    return sorted(f"{scheme}://{i.path}" for i in infos
                  if i.type == pafs.FileType.File and fnmatch.fnmatchcase(i.path, rest))


def describe_files(lake: DuckLake, files: list[str], plan: AddPlan) -> list[dict]:
    """Descriptions of the files in input order; the first bad file fails the call, naming it."""
    if len(files) <= DRIVER_FILES:
        with ThreadPoolExecutor(max_workers=THREADS_PER_TASK) as pool:
            return list(pool.map(lambda p: describe(p, plan), files))
    results = {}
    with progress(f"reading the footers of {len(files)} files"):
        described = _describe_on_spark(lake.spark, files, plan)
    for text in described:
        record = json.loads(text)
        results[record["path"]] = record
    for path in files:
        record = results.get(path)
        if record is None:
            raise NotFoundError(f"add_data_files: no description came back for {path}")
        if "error" in record:
            raise (NotFoundError if record.get("kind") == "NotFoundError" else SchemaMismatchError)(record["error"])
    return [results[p] for p in files]


def _describe_on_spark(spark, files: list[str], plan: AddPlan) -> list[str]:
    """One Spark job: each task reads its share of footers (threads overlap the storage round trips)."""
    tasks = max(1, min(256, -(-len(files) // FILES_PER_TASK)))
    if tasks == 1 and len(files) > DRIVER_FILES:
        tasks = 2
    jobs = spark.createDataFrame([(p,) for p in files], "path string").repartition(tasks)

    def run(batches):  # pickled with no reference to this module (executors cannot import sqlalchemy)
        return describe_batches(batches, plan, THREADS_PER_TASK)

    return [row.description for row in jobs.mapInArrow(run, "description string").collect()]


def _commit(lake: DuckLake, op: AddDataFiles, read_snapshot: int, info: CommitInfo | None) -> int:
    from ...catalog.commit import commit

    return commit(lake.engine, [op], read_snapshot=read_snapshot, data_path=lake.data_path,
                  info=info or CommitInfo(author=lake.author))


@dataclass
class AddDataFiles:
    """INSERT by registering existing files: data file rows, name mappings (one per distinct layout), stats."""

    table: TableInfo
    files: list[dict]  # footers.describe results

    def intents(self) -> list[Change]:
        return [Change("inserted_into_table", str(self.table.table_id))]

    def apply(self, ctx: CommitContext) -> None:
        tid = self.table.table_id
        rows = sum(f["record_count"] for f in self.files)
        next_row_id = _claim_rows(ctx, tid, rows, sum(f["file_size_bytes"] for f in self.files), rows)
        mappings = _existing_mappings(ctx.conn, tid)  # the reference reuses an equal mapping of the table
        data_rows, stat_rows, part_rows, all_stats = [], [], [], []
        partition_id = self.table.partition.partition_id if self.table.partition and self.table.partition.keys \
            else None
        for f in self.files:
            layout = json.dumps(f["mapping"])
            if layout not in mappings:
                mappings[layout] = _create_mapping(ctx, tid, f["mapping"])
            file_id = ctx.file_id()
            rel, is_rel = paths.relative_to(self.table.path, f["path"])
            data_rows.append({
                "data_file_id": file_id, "table_id": tid, "begin_snapshot": ctx.snapshot_id, "end_snapshot": None,
                "file_order": None, "path": rel, "path_is_relative": is_rel, "file_format": "parquet",
                "record_count": f["record_count"], "file_size_bytes": f["file_size_bytes"],
                "footer_size": f["footer_size"], "row_id_start": next_row_id, "partition_id": partition_id,
                "encryption_key": None, "mapping_id": mappings[layout], "partial_max": None,
            })
            next_row_id += f["record_count"]
            file_stats = stats_of(f)
            all_stats.append(file_stats)
            for cid, s in sorted(file_stats.items()):
                stat_rows.append({
                    "data_file_id": file_id, "table_id": tid, "column_id": cid,
                    "column_size_bytes": s.column_size_bytes, "value_count": s.value_count,
                    "null_count": s.null_count, "min_value": s.min_value, "max_value": s.max_value,
                    "contains_nan": s.contains_nan, "extra_stats": None,
                })
            for key_index, value in sorted(f["partition_values"].items(), key=lambda kv: int(kv[0])):
                part_rows.append({"data_file_id": file_id, "table_id": tid, "partition_key_index": int(key_index),
                                  "partition_value": value})
        for name, batch in (("ducklake_data_file", data_rows), ("ducklake_file_column_stats", stat_rows),
                            ("ducklake_file_partition_value", part_rows)):
            if batch:
                ctx.conn.execute(T[name].insert(), batch)
        _merge_column_stats(ctx, tid, self.table.columns, all_stats)
        ctx.record("inserted_into_table", tid)


def _existing_mappings(conn: sa.Connection, table_id: int) -> dict[str, int]:
    """The table's map_by_name mappings by layout (as footers.describe writes `mapping`)."""
    from ...catalog.reads.name_maps import load_name_maps

    cm = T["ducklake_column_mapping"]
    ids = set(conn.execute(sa.select(cm.c.mapping_id).where(cm.c.table_id == table_id,
                                                             cm.c.type == "map_by_name")).scalars())
    if not ids:
        return {}

    def entry(m) -> list:
        return [m.source, m.column_id, m.hive, [entry(c) for c in m.children]]

    maps = load_name_maps(conn, ids)
    return {json.dumps([entry(m) for m in tree]): mapping_id for mapping_id, tree in sorted(maps.items(),
                                                                                             reverse=True)}


def _create_mapping(ctx: CommitContext, table_id: int, entries: list) -> int:
    """A map_by_name mapping from a file layout's entries ([source, field id, is_partition, children])."""
    cm, nm = T["ducklake_column_mapping"], T["ducklake_name_mapping"]
    # The reference draws mapping ids from the file id counter; older mappings may be numbered max + 1.
    top = ctx.conn.execute(sa.select(sa.func.max(cm.c.mapping_id))).scalar()
    mapping_id = max(ctx.file_id(), 0 if top is None else top + 1)
    ctx.conn.execute(cm.insert().values(mapping_id=mapping_id, table_id=table_id, type="map_by_name"))
    rows: list[dict] = []

    def add(entry, parent: int | None) -> None:
        node = len(rows)
        source, field_id, is_partition, children = entry
        rows.append({"mapping_id": mapping_id, "column_id": node, "source_name": source,
                     "target_field_id": field_id, "parent_column": parent, "is_partition": is_partition})
        for child in children:
            add(child, node)

    for entry in entries:
        add(entry, None)
    if rows:
        ctx.conn.execute(nm.insert(), rows)
    return mapping_id
