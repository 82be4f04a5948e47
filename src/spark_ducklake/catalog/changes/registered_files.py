"""Registering existing Parquet files in a table (`ducklake_add_data_files`): the catalog rows of one commit.

The files were described (footers, layouts, partition values, stats) by operations/maintenance/add_files.py; this
operation claims their row ids, reuses or creates one `map_by_name` name mapping per layout, and merges stats."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from ...spec import paths
from ...spec.model import ColumnStats, TableInfo
from ...spec.snapshot_changes import Change
from ..commit import CommitContext
from ..database.spec_tables import T
from ..database.versions import v11_values
from ..reads.name_maps import load_name_maps
from .data import claim_rows, exactness, merge_column_stats


@dataclass
class AddDataFiles:
    """INSERT by registering existing files: data file rows, name mappings (one per distinct layout), stats."""

    table: TableInfo
    files: list[dict[Any, Any]]  # spark.footers.describe results
    stats: list[dict[int, ColumnStats]]  # each file's column stats, by column id

    def intents(self) -> list[Change]:
        return [Change("inserted_into_table", str(self.table.table_id))]

    def apply(self, ctx: CommitContext) -> None:
        tid = self.table.table_id
        rows = sum(f["record_count"] for f in self.files)
        next_row_id = claim_rows(ctx, tid, rows, sum(f["file_size_bytes"] for f in self.files), rows)
        mappings = _existing_mappings(ctx.conn, tid)  # the reference reuses an equal mapping of the table
        data_rows, stat_rows, part_rows, all_stats = [], [], [], []
        partition_id = self.table.partition.partition_id if self.table.partition and self.table.partition.keys \
            else None
        for f, file_stats in zip(self.files, self.stats, strict=True):
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
                **v11_values(ctx.conn, row_group_count=f.get("row_group_count")),
            })
            next_row_id += f["record_count"]
            all_stats.append(file_stats)
            for cid, s in sorted(file_stats.items()):
                stat_rows.append({
                    "data_file_id": file_id, "table_id": tid, "column_id": cid,
                    "column_size_bytes": s.column_size_bytes, "value_count": s.value_count,
                    "null_count": s.null_count, "min_value": s.min_value, "max_value": s.max_value,
                    "contains_nan": s.contains_nan, "extra_stats": s.extra_stats, **exactness(ctx.conn, s),
                })
            for key_index, value in sorted(f["partition_values"].items(), key=lambda kv: int(kv[0])):
                part_rows.append({"data_file_id": file_id, "table_id": tid, "partition_key_index": int(key_index),
                                  "partition_value": value})
        for name, batch in (("ducklake_data_file", data_rows), ("ducklake_file_column_stats", stat_rows),
                            ("ducklake_file_partition_value", part_rows)):
            if batch:
                ctx.conn.execute(T[name].insert(), batch)
        merge_column_stats(ctx, tid, self.table.columns, all_stats)
        ctx.record("inserted_into_table", tid)


def _existing_mappings(conn: sa.Connection, table_id: int) -> dict[str, int]:
    """The table's map_by_name mappings by layout (as footers.describe writes `mapping`)."""
    cm = T["ducklake_column_mapping"]
    ids = set(conn.execute(sa.select(cm.c.mapping_id).where(cm.c.table_id == table_id,
                                                             cm.c.type == "map_by_name")).scalars())
    if not ids:
        return {}

    def entry(m: Any) -> list[Any]:
        return [m.source, m.column_id, m.hive, [entry(c) for c in m.children]]

    maps = load_name_maps(conn, ids)
    return {json.dumps([entry(m) for m in tree]): mapping_id for mapping_id, tree in sorted(maps.items(),
                                                                                             reverse=True)}


def _create_mapping(ctx: CommitContext, table_id: int, entries: list[Any]) -> int:
    """A map_by_name mapping from a file layout's entries ([source, field id, is_partition, children])."""
    cm, nm = T["ducklake_column_mapping"], T["ducklake_name_mapping"]
    # The reference draws mapping ids from the file id counter; older mappings may be numbered max + 1.
    top = ctx.conn.execute(sa.select(sa.func.max(cm.c.mapping_id))).scalar()
    mapping_id = max(ctx.file_id(), 0 if top is None else top + 1)
    ctx.conn.execute(cm.insert().values(mapping_id=mapping_id, table_id=table_id, type="map_by_name"))
    rows: list[dict[Any, Any]] = []

    def add(entry: Any, parent: int | None) -> None:
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
