"""Where the files the catalog knows live: table directories, every data and delete file ever registered, and the
files scheduled for deletion."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

import sqlalchemy as sa

from ...catalog.database.spec_tables import T
from ...spec import paths


def table_dirs(conn: sa.Connection, data_path: str) -> dict[int, set[str]]:
    """Absolute directories of every table id, over all its rows and its schema's rows (dropped ones too)."""
    sc, t = T["ducklake_schema"], T["ducklake_table"]
    schema_dirs: dict[int, set[str]] = defaultdict(set)
    for schema_id, path, is_rel in conn.execute(sa.select(sc.c.schema_id, sc.c.path, sc.c.path_is_relative)):
        schema_dirs[schema_id].add(paths.join(data_path, path, is_rel))
    out: dict[int, set[str]] = defaultdict(set)
    for table_id, schema_id, path, is_rel in conn.execute(
            sa.select(t.c.table_id, t.c.schema_id, t.c.path, t.c.path_is_relative)):
        for schema_dir in schema_dirs.get(schema_id, ()):
            out[table_id].add(paths.join(schema_dir, path, is_rel))
    return dict(out)


def file_path(dirs: dict[int, set[str]], table_id: int, path: str, is_relative: bool | None) -> str:
    """A data or delete file's absolute path (its table's first directory when the table has several)."""
    base = min(dirs.get(table_id) or {""})
    return paths.join(base, path, is_relative)


def known_files(conn: sa.Connection, data_path: str) -> set[str]:
    """Absolute paths of every data and delete file in the catalog, in any snapshot, and of every file
    scheduled for deletion: what `delete_orphaned_files` must never touch."""
    dirs = table_dirs(conn, data_path)
    known: set[str] = set()
    for name in ("ducklake_data_file", "ducklake_delete_file"):
        tbl = T[name]
        for table_id, path, is_rel in conn.execute(sa.select(tbl.c.table_id, tbl.c.path, tbl.c.path_is_relative)):
            for base in dirs.get(table_id, ("",)):
                known.add(paths.join(base, path, is_rel))
    for scheduled in scheduled_files(conn, data_path):
        known.add(scheduled.path)
    return {p.replace("\\", "/") for p in known}


class ScheduledFile:
    """A row of ducklake_files_scheduled_for_deletion with its absolute path."""

    __slots__ = ("data_file_id", "path", "schedule_start")

    def __init__(self, data_file_id: int, path: str, schedule_start: datetime | None):
        self.data_file_id = data_file_id
        self.path = path
        self.schedule_start = schedule_start


def scheduled_files(conn: sa.Connection, data_path: str) -> list[ScheduledFile]:
    """Every file waiting in ducklake_files_scheduled_for_deletion (paths relative to the data path resolved)."""
    sf = T["ducklake_files_scheduled_for_deletion"]
    rows = conn.execute(sa.select(sf.c.data_file_id, sf.c.path, sf.c.path_is_relative, sf.c.schedule_start))
    return [ScheduledFile(fid, paths.join(data_path, path, is_rel), start) for fid, path, is_rel, start in rows]


def schedule_row(data_path: str, file_id: int, absolute: str, now: datetime) -> dict:
    """A ducklake_files_scheduled_for_deletion row: the path relative to the data path when under it."""
    rel, is_rel = paths.relative_to(data_path, absolute)
    return {"data_file_id": file_id, "path": rel, "path_is_relative": is_rel, "schedule_start": now}
