"""Catalog rows about files shared by the data and maintenance operations: name mappings, delete files,
files scheduled for deletion."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from ...errors import ConflictError
from ...spec import paths
from ...spec.model import DeleteFile, NewDeleteFile, TableInfo
from ..commit import CommitContext
from ..database.spec_tables import T
from ..database.versions import v11_values


def create_name_mapping(ctx: CommitContext, table_id: int, columns: Any) -> int:
    """A map_by_name mapping of the table's columns, as the reference records for files without field ids."""
    cm, nm = T["ducklake_column_mapping"], T["ducklake_name_mapping"]
    # The reference numbers mappings on their own (max + 1), not from next_catalog_id.
    top = ctx.conn.execute(sa.select(sa.func.max(cm.c.mapping_id))).scalar()
    mapping_id = 0 if top is None else top + 1
    ctx.conn.execute(cm.insert().values(mapping_id=mapping_id, table_id=table_id, type="map_by_name"))
    rows: list[dict[Any, Any]] = []

    def add(col: Any, parent: int | None, source: str) -> None:
        node = len(rows)
        rows.append({"mapping_id": mapping_id, "column_id": node, "source_name": source,
                     "target_field_id": col.column_id, "parent_column": parent, "is_partition": False})
        for child in col.children:
            # Parquet's list child is the repeated group 'list'; map children keep their names.
            add(child, node, "list" if col.type == "list" else child.name)

    for col in columns:
        add(col, None, col.name)
    ctx.conn.execute(nm.insert(), rows)
    return mapping_id


@dataclass
class PlacedDelete:
    """A (partial) delete file written for a data file, and the snapshots it covers."""

    file: NewDeleteFile
    begin_snapshot: int  # the first deletion's snapshot
    partial_max: int | None = None  # the last deletion's snapshot, when the file holds several
    replaces: DeleteFile | None = None  # the data file's delete file this one supersedes in every snapshot


def insert_delete_file(ctx: CommitContext, table: TableInfo, data_file_id: int, delete: PlacedDelete) -> None:
    """One ducklake_delete_file row; a superseded delete file is removed and scheduled for deletion."""
    dl = T["ducklake_delete_file"]
    if delete.replaces is not None:
        live = [dl.c.delete_file_id == delete.replaces.delete_file_id, dl.c.end_snapshot.is_(None)]
        if ctx.conn.execute(sa.select(sa.func.count()).select_from(dl).where(*live)).scalar_one() != 1:
            raise ConflictError(f"a delete file of table {table.qualified_name} changed meanwhile")
        ctx.conn.execute(dl.delete().where(*live))
        schedule_for_deletion(ctx, [(delete.replaces.delete_file_id, delete.replaces.path)])
    rel, is_rel = paths.relative_to(table.path, delete.file.path)
    ctx.conn.execute(dl.insert().values(
        delete_file_id=ctx.file_id(), table_id=table.table_id, begin_snapshot=delete.begin_snapshot,
        end_snapshot=None, data_file_id=data_file_id, path=rel, path_is_relative=is_rel,
        format=paths.delete_file_format(delete.file.path),
        delete_count=delete.file.delete_count, file_size_bytes=delete.file.file_size_bytes,
        footer_size=delete.file.footer_size, encryption_key=delete.file.encryption_key, partial_max=delete.partial_max,
        **v11_values(ctx.conn, row_group_count=delete.file.row_group_count)))


def schedule_for_deletion(ctx: CommitContext, files: list[tuple[int, str]]) -> None:
    """ducklake_files_scheduled_for_deletion rows (file id, absolute path), paths relative to the data path."""
    rows = []
    for file_id, path in files:
        rel, is_rel = paths.relative_to(ctx.data_path, path)
        rows.append({"data_file_id": file_id, "path": rel, "path_is_relative": is_rel, "schedule_start": ctx.now})
    if rows:
        ctx.conn.execute(T["ducklake_files_scheduled_for_deletion"].insert(), rows)
