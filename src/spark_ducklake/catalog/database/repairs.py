"""The repairs the released DuckLake 1.1 makes while migrating a 1.0 catalog (its introduction page: "adds
`ducklake_schema_versions` rows that are missing for inlined data tables, restores the defaults of struct fields
that were renamed, and clears column bounds (statistics) that older versions may have stored with the wrong type").

The reference's code for them was not available (docs/catalogs.md, "Migration repairs"), so each repair here fixes
the defect as DuckDB 1.5.5 (ducklake 1.0) produces it, observed on its catalogs, and leaves correct rows alone:

- schema versions: an insert that starts an inlined data table for a table that had none bumps the schema version
  without recording it for the table; the row added begins at the first snapshot of that schema version.
- renamed struct fields: renaming a nested field writes its new ducklake_column row without `initial_default` and
  default (`default_value` 'NULL', `default_value_type` ''), so rows written before the field existed read NULL;
  the values come back from the field's previous version.
- bounds: FLOAT bounds of a column later widened to DOUBLE are FLOAT text that, read as DOUBLE, can cut off the
  values (DuckDB issue duckdb/ducklake#1307): they are widened to cover both readings (as duckdb/ducklake#1399
  does). Bounds that do not parse as the column's type, and TIMESTAMPTZ bounds without a UTC offset (which the
  1.1 reference ignores), are cleared.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from ...spec.types import EXTRA_STATS_TYPES, format_literal, parse_literal
from .spec_tables import T

_OFFSET = re.compile(r":[0-9]{2}(\.[0-9]+)?[+-][0-9]{2}(:[0-9]{2})*$")  # the 1.1 reference's check
_STRING_TYPES = {"varchar", "json", "blob", "uuid", "time", "timetz", "interval"} | EXTRA_STATS_TYPES


@dataclass
class RepairCounts:
    """What the repairs changed (rows), for the log and the tests."""

    schema_versions: int = 0
    struct_defaults: int = 0
    bounds_widened: int = 0
    bounds_cleared: int = 0
    details: list[str] = field(default_factory=list)


def repair_for_v11(conn: sa.Connection) -> RepairCounts:
    """Run the three repairs inside the caller's (migration) transaction."""
    counts = RepairCounts()
    counts.schema_versions = _inlined_schema_versions(conn)
    counts.struct_defaults = _renamed_struct_field_defaults(conn)
    counts.bounds_widened, counts.bounds_cleared = _wrongly_typed_bounds(conn)
    return counts


def _inlined_schema_versions(conn: sa.Connection) -> int:
    sv, registry = T["ducklake_schema_versions"], T["ducklake_inlined_data_tables"]
    snap, tbl = T["ducklake_snapshot"], T["ducklake_table"]
    have = {(t, v) for t, v in conn.execute(sa.select(sv.c.table_id, sv.c.schema_version))}
    added = []
    for table_id, version in conn.execute(sa.select(registry.c.table_id, registry.c.schema_version).distinct()):
        if version is None or (table_id, version) in have:
            continue
        begin = conn.execute(sa.select(sa.func.min(snap.c.snapshot_id)).where(
            snap.c.schema_version == version)).scalar()
        if begin is None:  # that snapshot expired: the first one kept at this version or later
            begin = conn.execute(sa.select(sa.func.min(snap.c.snapshot_id)).where(
                snap.c.schema_version >= version)).scalar()
        created = conn.execute(sa.select(sa.func.min(tbl.c.begin_snapshot)).where(tbl.c.table_id == table_id)).scalar()
        if begin is None or created is None:
            continue
        added.append({"table_id": table_id, "schema_version": version, "begin_snapshot": max(begin, created)})
        have.add((table_id, version))
    if added:
        conn.execute(sv.insert(), added)
    return len(added)


def _renamed_struct_field_defaults(conn: sa.Connection) -> int:
    col = T["ducklake_column"]
    rows = conn.execute(sa.select(
        col.c.table_id, col.c.column_id, col.c.begin_snapshot, col.c.end_snapshot, col.c.column_name,
        col.c.column_type, col.c.initial_default, col.c.default_value, col.c.default_value_type,
        col.c.default_value_dialect,
    ).where(col.c.parent_column.is_not(None)).order_by(col.c.table_id, col.c.column_id, col.c.begin_snapshot)).all()
    repaired = 0
    previous = None
    for row in rows:
        now = dict(row._mapping)
        prev = previous if previous and (previous["table_id"], previous["column_id"]) == (
            now["table_id"], now["column_id"]) else None
        previous = now
        if prev is None or prev["end_snapshot"] != now["begin_snapshot"] or \
                prev["column_name"] == now["column_name"] or prev["column_type"] != now["column_type"]:
            continue  # not a rename
        values = {}
        if now["initial_default"] is None and prev["initial_default"] is not None:
            values["initial_default"] = prev["initial_default"]
        if not now["default_value_type"] and prev["default_value_type"]:
            values.update({k: prev[k] for k in ("default_value", "default_value_type", "default_value_dialect")})
        if not values:
            continue
        conn.execute(col.update().where(col.c.table_id == now["table_id"], col.c.column_id == now["column_id"],
                                        col.c.begin_snapshot == now["begin_snapshot"]).values(**values))
        now.update(values)  # a later rename of the same field copies the repaired values
        repaired += 1
    return repaired


def _wrongly_typed_bounds(conn: sa.Connection) -> tuple[int, int]:
    col = T["ducklake_column"]
    history: dict[tuple[int, int], list[str]] = {}
    for table_id, column_id, column_type in conn.execute(
            sa.select(col.c.table_id, col.c.column_id, col.c.column_type).order_by(col.c.begin_snapshot)):
        history.setdefault((table_id, column_id), []).append(column_type)
    current = {key: types[-1] for key, types in history.items() if types[-1] not in _STRING_TYPES}
    widened_from_float = {key for key, types in history.items() if types[-1] == "float64" and "float32" in types}
    widened = cleared = 0
    for name in ("ducklake_file_column_stats", "ducklake_table_column_stats"):
        stats = T[name]
        per_file = name == "ducklake_file_column_stats"
        ids = [stats.c.data_file_id] if per_file else []
        for row in conn.execute(sa.select(stats.c.table_id, stats.c.column_id, stats.c.min_value, stats.c.max_value,
                                          *ids).where(sa.or_(stats.c.min_value.is_not(None),
                                                             stats.c.max_value.is_not(None)))):
            column = (row.table_id, row.column_id)
            type_str = current.get(column)
            if type_str is None:
                continue
            low, high = _repaired(type_str, row.min_value, row.max_value, column in widened_from_float)
            if (low, high) == (row.min_value, row.max_value):
                continue
            where = [stats.c.table_id == row.table_id, stats.c.column_id == row.column_id]
            if per_file:
                where.append(stats.c.data_file_id == row.data_file_id)
            conn.execute(stats.update().where(*where).values(min_value=low, max_value=high))
            if low is None and high is None:
                cleared += 1
            else:
                widened += 1
    return widened, cleared


def _repaired(type_str: str, low: str | None, high: str | None, was_float: bool) -> tuple[str | None, str | None]:
    """The bounds as they should be: (None, None) where they cannot be trusted."""
    try:
        values = [parse_literal(type_str, text) for text in (low, high)]
    except (ValueError, TypeError, ArithmeticError):
        return None, None
    if type_str == "timestamptz" and any(t is not None and not _OFFSET.search(t) for t in (low, high)):
        return None, None
    if was_float:
        low = _widened(type_str, low, values[0], min)
        high = _widened(type_str, high, values[1], max)
    return low, high


def _widened(type_str: str, text: str | None, value: float | None, pick: Any) -> str | None:
    """A FLOAT bound read as DOUBLE: the wider of its DOUBLE reading and the FLOAT value it was written from."""
    if value is None:
        return text
    try:
        as_float32 = struct.unpack("f", struct.pack("f", value))[0]
    except (OverflowError, struct.error):
        return text
    wider = pick(value, as_float32)
    return text if wider == value else format_literal(type_str, wider)
