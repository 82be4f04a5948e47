"""The reference's catalog functions as rows: `snapshots`, `ducklake_table_info`, `ducklake_list_files`,
`ducklake_settings`.

Each row type has the reference's column names in its order; values are what the extension returns on the same
lake (sizes in bytes, absolute paths). Pure catalog reads, no Spark.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

import sqlalchemy as sa

from ...spec.model import TableInfo
from ...spec.snapshot_changes import display_changes
from ...version import __version__
from ..database.spec_tables import T
from . import reader
from .options import DESCRIPTIONS, OptionRow


class SnapshotRow(NamedTuple):
    """A row of `snapshots()`, with the reference's columns."""

    snapshot_id: int
    snapshot_time: datetime
    schema_version: int
    changes: dict[str, list[str]]
    author: str | None
    commit_message: str | None
    commit_extra_info: str | None


def snapshot_rows(snapshots: list[Any]) -> list[SnapshotRow]:
    """`snapshots()` rows of catalog snapshot records (changes as a dict of kind -> names)."""
    return [SnapshotRow(s.snapshot_id, s.snapshot_time, s.schema_version, display_changes(s.changes), s.author,
                        s.commit_message, s.commit_extra_info) for s in snapshots]


class TableInfoRow(NamedTuple):
    """A row of `table_info()` (the reference's `ducklake_table_info`): a table's visible files and their sizes."""

    table_name: str
    schema_id: int
    table_id: int
    table_uuid: str
    file_count: int
    file_size_bytes: int
    delete_file_count: int
    delete_file_size_bytes: int


class FileRow(NamedTuple):
    """A row of `list_files()` (the reference's `ducklake_list_files`): a data file and its delete file, if any."""

    data_file: str
    data_file_size_bytes: int
    data_file_footer_size: int | None
    data_file_encryption_key: bytes | None
    delete_file: str | None
    delete_file_size_bytes: int | None
    delete_file_footer_size: int | None
    delete_file_encryption_key: bytes | None


class SettingsRow(NamedTuple):
    """The row of `settings()` (the reference's `ducklake_settings`)."""

    catalog_type: str
    extension_version: str
    data_path: str


def table_sizes(conn: sa.Connection, snapshot_id: int) -> list[TableInfoRow]:
    """One row per table visible at the snapshot: counts and byte sizes of its visible data and delete files."""
    t, df, dl = T["ducklake_table"], T["ducklake_data_file"], T["ducklake_delete_file"]

    def totals(files: sa.Table) -> Any:
        return (sa.select(files.c.table_id, sa.func.count().label("n"),
                          sa.func.sum(files.c.file_size_bytes).label("size"))
                .where(reader.visible(files, snapshot_id)).group_by(files.c.table_id).subquery())

    data, deletes = totals(df), totals(dl)
    query = (
        sa.select(t.c.table_name, t.c.schema_id, t.c.table_id, t.c.table_uuid, data.c.n, data.c.size,
                  deletes.c.n.label("del_n"), deletes.c.size.label("del_size"))
        .select_from(t.outerjoin(data, data.c.table_id == t.c.table_id)
                     .outerjoin(deletes, deletes.c.table_id == t.c.table_id))
        .where(reader.visible(t, snapshot_id))
        .order_by(t.c.table_id)
    )
    return [TableInfoRow(r.table_name, r.schema_id, r.table_id, str(r.table_uuid), int(r.n or 0), int(r.size or 0),
                         int(r.del_n or 0), int(r.del_size or 0))
            for r in conn.execute(query)]


def list_files(conn: sa.Connection, table: TableInfo, snapshot_id: int) -> list[FileRow]:
    """The table's data files visible at the snapshot, each with its visible delete file."""
    out = []
    for f in reader.data_files(conn, table, snapshot_id):
        d = f.delete_file
        out.append(FileRow(f.path, f.file_size_bytes, f.footer_size, None,
                           d.path if d else None, d.file_size_bytes if d else None, d.footer_size if d else None,
                           None))
    return out


def settings(catalog_kind: str, data_path: str) -> SettingsRow:
    """The lake's backend (`duckdb`, `sqlite`, `postgres`, ...), our version, and the data path."""
    return SettingsRow(catalog_kind, __version__, data_path)


def option_rows(conn: sa.Connection, snapshot_id: int, data_path: str) -> list[OptionRow]:
    """The reference's `options()`: every option set, with its description, scope and the named schema/table."""
    names: dict[tuple[str, int | None], str]
    names = {("schema", s.schema_id): s.name for s in reader.list_schemas(conn, snapshot_id, data_path)}
    names.update({("table", t.table_id): t.qualified_name for t in reader.list_tables(conn, snapshot_id, data_path)})
    return sorted(OptionRow(key, DESCRIPTIONS.get(key, ""), value, (scope or "global").upper(),
                            names.get((scope, scope_id)) if scope else None)
                  for key, value, scope, scope_id in reader.options(conn))
