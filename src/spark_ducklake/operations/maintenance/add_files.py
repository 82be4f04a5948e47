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
from typing import TYPE_CHECKING

from ...catalog.changes.partitioning import current_spec
from ...catalog.changes.registered_files import AddDataFiles
from ...catalog.reads import reader
from ...dataplane.arrow.conform import not_null_message
from ...dataplane.arrow.footers import AddPlan, describe, describe_batches, stats_of
from ...dataplane.arrow.storage import filesystem
from ...dataplane.spark.workers import require_python_workers
from ...errors import ConstraintError, NotFoundError, SchemaMismatchError
from ...spec import paths
from ...spec.commit_properties import CommitProperties
from ...spec.model import directory_names
from ...spec.names import parse_table_name as split_name
from .targets import progress

if TYPE_CHECKING:
    from ..context import LakeContext

DRIVER_FILES = 32  # up to this many footers are read on the driver; more start a Spark job
FILES_PER_TASK = 1000
THREADS_PER_TASK = 16  # footer reads wait on storage, not on CPU


def add_data_files(ctx: LakeContext, table: str | tuple[str, str], paths_or_globs: str | list[str], *,
                   allow_missing: bool = False, ignore_extra_columns: bool = False,
                   hive_partitioning: bool | None = None, info: CommitProperties | None = None) -> list[str]:
    """Register the files (paths or globs) in the table as one snapshot; returns the registered paths."""
    ctx.check_writable()
    files = expand(paths_or_globs)
    schema, name = split_name(table)
    with ctx.engine.connect() as conn:
        read_snapshot = reader.latest_snapshot(conn).snapshot_id
        target = reader.find_table(conn, read_snapshot, ctx.data_path, schema, name)
        target.partition = current_spec(conn, target.table_id, read_snapshot)
    names = directory_names(target.partition.keys, target.columns)
    keys = [(i, k.column_id, k.transform, names[i]) for i, k in enumerate(target.partition.keys)]
    plan = AddPlan(target.name, target.columns, allow_missing, ignore_extra_columns, hive_partitioning, keys)
    described = describe_files(ctx, files, plan)
    stats = [stats_of(f) for f in described]
    check_not_null(target, described, stats)
    op = AddDataFiles(target, described, stats)
    ctx.commit([op], read_snapshot=read_snapshot, properties=info)
    return [d["path"] for d in described]


def check_not_null(target, described: list[dict], stats: list[dict]) -> None:
    """ConstraintError (the reference's message) when a file's statistics count NULLs in a NOT NULL column: NOT
    NULL holds on every write path, added files too."""
    for description, by_id in zip(described, stats, strict=True):
        for col in target.columns:
            found = by_id.get(col.column_id)
            if not col.nullable and found is not None and (found.null_count or 0) > 0:
                raise ConstraintError(f"{not_null_message(target, col)} ({description['path']} holds "
                                      f"{found.null_count} NULL value(s))")


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


def describe_files(ctx: LakeContext, files: list[str], plan: AddPlan) -> list[dict]:
    """Descriptions of the files in input order; the first bad file fails the call, naming it."""
    if len(files) <= DRIVER_FILES:
        with ThreadPoolExecutor(max_workers=THREADS_PER_TASK) as pool:
            return list(pool.map(lambda p: describe(p, plan), files))
    results = {}
    with progress(f"reading the footers of {len(files)} files"):
        described = _describe_on_spark(ctx.spark, files, plan)
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
    require_python_workers(spark)
    jobs = spark.createDataFrame([(p,) for p in files], "path string").repartition(tasks)

    def run(batches):  # pickled with no reference to this module (executors cannot import sqlalchemy)
        return describe_batches(batches, plan, THREADS_PER_TASK)

    return [row.description for row in jobs.mapInArrow(run, "description string").collect()]
