"""Removing files from storage: those scheduled for deletion (`cleanup_old_files`), and Parquet files under the
data path that the catalog does not know (`delete_orphaned_files`), as the reference's functions do.

Both only touch files older than a threshold: `older_than`, else the lake option `delete_older_than`, else two
days (the reference's default); `cleanup_all=True` drops the threshold. The threshold is what keeps files a
running query may still read (scheduled ones) or a concurrent writer has staged but not yet committed (orphans)
alive. Every file any snapshot references is in the catalog, so never an orphan.
"""

from __future__ import annotations

import contextlib
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, NamedTuple

import pyarrow.fs as pafs
import sqlalchemy as sa

from ...catalog.database.spec_tables import T
from ...catalog.database.transactions import write_transaction
from ...catalog.reads import reader
from ...dataplane.arrow.storage import filesystem
from ...dataplane.spark.file_log import SCAN_LOG_PREFIX
from ...errors import DuckLakeError
from ...spec.intervals import cutoff as interval_cutoff
from .catalog_files import known_files, scheduled_files
from .expire import point_in_time
from .locking import chunks
from .targets import progress

if TYPE_CHECKING:
    from ..context import LakeContext

log = logging.getLogger(__name__)
DEFAULT_DELETE_OLDER_THAN = "2 days"  # the reference's default when the option is not set
ORPHAN_SUFFIXES = (".parquet", ".puffin")  # what the reference considers its own
# What a Spark writer that died leaves besides Parquet files: its staging folders (ours: `_staging-<uuid>/`,
# Hadoop's committer: `_temporary/`) with everything in them, `_SUCCESS` markers and Hadoop's `.<name>.crc`;
# and the scan logs a Spark Connect client that died left next to the data.
SCRATCH_DIR_PREFIXES = ("_staging-", "_temporary", SCAN_LOG_PREFIX)


def is_orphan_candidate(relative: str) -> bool:
    """Whether a file below the data path (path relative to it) is one a lake writer may have left behind."""
    parts = relative.replace("\\", "/").strip("/").split("/")
    name = parts[-1]
    if name.endswith(ORPHAN_SUFFIXES) or name == "_SUCCESS" or (name.startswith(".") and name.endswith(".crc")):
        return True
    return any(part.startswith(SCRATCH_DIR_PREFIXES) for part in parts[:-1])


class CleanupRow(NamedTuple):
    """A row of `cleanup_old_files()` / `delete_orphaned_files()`: a file removed (or, dry run, to remove)."""

    path: str


def cleanup_old_files(ctx: LakeContext, older_than: datetime | timedelta | str | None = None,
                      cleanup_all: bool = False, dry_run: bool = False) -> list[CleanupRow]:
    """Delete the files scheduled for deletion before the threshold, and their ducklake_files_scheduled rows."""
    ctx.check_writable()
    with ctx.engine.connect() as conn:
        limit = _threshold(conn, "cleanup_old_files", older_than, cleanup_all)
        due = [f for f in scheduled_files(conn, ctx.data_path)
               if limit is None or (f.schedule_start is not None and f.schedule_start < limit)]
    if dry_run or not due:
        return [CleanupRow(f.path) for f in due]
    failed = _remove({f.path for f in due})
    removed = [f for f in due if f.path not in failed]
    sf = T["ducklake_files_scheduled_for_deletion"]
    with write_transaction(ctx.engine) as conn:
        for ids in chunks(sorted({f.data_file_id for f in removed})):
            conn.execute(sf.delete().where(sf.c.data_file_id.in_(ids)))
    _raise_failures(failed)
    return [CleanupRow(f.path) for f in removed]


def delete_orphaned_files(ctx: LakeContext, older_than: datetime | timedelta | str | None = None,
                          cleanup_all: bool = False, dry_run: bool = False) -> list[CleanupRow]:
    """Delete files under the data path that no catalog row (of any snapshot) refers to: Parquet/Puffin files and
    what dead writers leave (staging folders and their contents, `_SUCCESS`, `.crc`), then the folders emptied."""
    ctx.check_writable()
    with ctx.engine.connect() as conn:
        limit = _threshold(conn, "delete_orphaned_files", older_than, cleanup_all)
    # Storage first, catalog second: a file committed while we list is then already known.
    stored = [f for f in _list_files(ctx.data_path) if limit is None or (f[1] is not None and f[1] < limit)]
    with ctx.engine.connect() as conn:
        known = known_files(conn, ctx.data_path)
    orphans = sorted(path for path, _mtime in stored if path not in known)
    if dry_run or not orphans:
        return [CleanupRow(p) for p in orphans]
    dirs = _local_dirs(ctx.data_path)  # before deleting: deletions touch the folders' modification times
    failed = _remove(set(orphans))
    _remove_emptied_dirs(ctx.data_path, dirs, {p for p in orphans if p not in failed}, limit)
    _raise_failures(failed)
    return [CleanupRow(p) for p in orphans if p not in failed]


def _threshold(conn: sa.Connection, function: str, older_than, cleanup_all: bool) -> datetime | None:
    """The cut-off time, or None for everything (cleanup_all)."""
    if cleanup_all and older_than is not None:
        raise ValueError(f"{function}: give either cleanup_all or older_than, not both")
    if cleanup_all:
        return None
    if older_than is not None:
        return point_in_time(older_than)
    default = reader.option_value(reader.options(conn), "delete_older_than") or DEFAULT_DELETE_OLDER_THAN
    return interval_cutoff(default)


def _list_files(data_path: str) -> list[tuple[str, datetime | None]]:
    """(absolute path, modification time) of every Parquet/Puffin file below the data path."""
    fs, inner = filesystem(data_path)
    scheme = data_path.split("://", 1)[0] + "://" if "://" in data_path else ""
    selector = pafs.FileSelector(inner.rstrip("/") or "/", recursive=True, allow_not_found=True)
    out = []
    root = inner.rstrip("/")
    for info in fs.get_file_info(selector):
        if info.type == pafs.FileType.File and is_orphan_candidate(info.path[len(root):]):
            mtime = info.mtime
            if mtime is not None and mtime.tzinfo is None:
                mtime = mtime.replace(tzinfo=timezone.utc)
            out.append((scheme + info.path, mtime))
    return out


def _local_dirs(data_path: str) -> dict[str, datetime]:
    """Every folder below a local data path (not the path itself) with its modification time."""
    if "://" in data_path:
        return {}  # object stores have no folders to leave behind
    out = {}
    for top, names, _files in os.walk(data_path):
        for name in names:
            path = os.path.join(top, name)
            with contextlib.suppress(OSError):
                out[path] = datetime.fromtimestamp(os.stat(path).st_mtime, timezone.utc)
    return out


def _remove_emptied_dirs(data_path: str, dirs: dict[str, datetime], removed: set[str],
                         limit: datetime | None) -> None:
    """Remove the folders (deepest first) that are empty now and held only debris: a writer's staging folder,
    or one whose orphans we just deleted. A folder changed after the threshold is kept (a live writer's)."""
    emptied = {os.path.dirname(p) for p in removed}
    for path in sorted(dirs, key=lambda p: p.count(os.sep), reverse=True):
        relative = os.path.relpath(path, data_path).split(os.sep)
        debris = any(part.startswith(SCRATCH_DIR_PREFIXES) for part in relative) or path in emptied
        if debris and (limit is None or dirs[path] < limit):
            try:
                os.rmdir(path)  # only ever an empty folder
            except OSError:
                continue
            emptied.add(os.path.dirname(path))


def _remove(paths: set[str]) -> dict[str, str]:
    """Delete files (in parallel: object stores answer slowly); missing ones count as deleted. Returns
    failures by path."""
    def one(path: str) -> tuple[str, str | None]:
        fs, inner = filesystem(path)
        try:
            fs.delete_file(inner)
        except FileNotFoundError:
            pass
        except OSError as exc:
            if "not exist" in str(exc).lower() or "not found" in str(exc).lower():
                return path, None
            return path, str(exc)
        return path, None

    with progress(f"deleting {len(paths)} file(s)"), ThreadPoolExecutor(max_workers=16) as pool:
        return {path: err for path, err in pool.map(one, sorted(paths)) if err is not None}


def _raise_failures(failed: dict[str, str]) -> None:
    if failed:
        sample = "; ".join(f"{p}: {e}" for p, e in list(failed.items())[:5])
        raise DuckLakeError(f"could not delete {len(failed)} file(s) (they stay scheduled / in place): {sample}")
