"""The lake's macros (`ducklake_macro`, `ducklake_macro_impl`, `ducklake_macro_parameters`) as one row per
implementation, like the reference's `duckdb_functions()` rows for them. We read them; only the reference creates
them, and every operation here leaves their rows alone."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from ..database.spec_tables import T
from .reader import schema_keys, visible

NO_TYPE = "unknown"  # the reference's parameter_type/default_value_type when none was given


@dataclass(frozen=True)
class MacroParameter:
    """One parameter: its name, its declared type (None: untyped), its default value as text (None: required)
    and that value's type (`int32`, `varchar`, ...)."""

    name: str
    type: str | None
    default: str | None
    default_type: str | None = None


@dataclass(frozen=True)
class MacroRow:
    """One implementation of a macro visible at a snapshot."""

    schema_name: str
    macro_name: str
    macro_id: int
    impl_id: int
    macro_type: str  # scalar | table
    dialect: str
    sql: str
    parameters: tuple[MacroParameter, ...]


def list_macros(conn: sa.Connection, snapshot_id: int, schema: str | None = None) -> list[MacroRow]:
    """Macros visible at the snapshot (optionally of one schema, matched ignoring case), by schema and name."""
    m, impl, sc = T["ducklake_macro"], T["ducklake_macro_impl"], T["ducklake_schema"]
    query = (
        sa.select(sc.c.schema_name, m.c.macro_name, m.c.macro_id, impl.c.impl_id, impl.c.type, impl.c.dialect,
                  impl.c.sql)
        .select_from(m.join(sc, m.c.schema_id == sc.c.schema_id).join(impl, impl.c.macro_id == m.c.macro_id))
        .where(visible(m, snapshot_id), visible(sc, snapshot_id))
        .order_by(sc.c.schema_name, m.c.macro_name, impl.c.impl_id)
    )
    keys = schema_keys(conn, snapshot_id)  # nested schemas go by their paths
    if keys is not None and schema is not None:
        query = query.where(m.c.schema_id.in_([i for i, key in keys.items() if key.lower() == schema.lower()]))
    elif schema is not None:
        query = query.where(sa.func.lower(sc.c.schema_name) == schema.lower())
    rows = conn.execute(query.add_columns(m.c.schema_id)).all()
    if keys is not None:  # by path; a macro of a schema with a dropped parent is gone with it
        rows = sorted((r for r in rows if r.schema_id in keys),
                      key=lambda r: (keys[r.schema_id], r.macro_name, r.impl_id))
    if not rows:
        return []
    p = T["ducklake_macro_parameters"]
    params: dict[tuple[int, int], list[MacroParameter]] = {}
    found = conn.execute(
        sa.select(p.c.macro_id, p.c.impl_id, p.c.parameter_name, p.c.parameter_type, p.c.default_value,
                  p.c.default_value_type)
        .where(p.c.macro_id.in_({r.macro_id for r in rows}))
        .order_by(p.c.macro_id, p.c.impl_id, p.c.column_id)
    )
    for macro_id, impl_id, name, type_, default, default_type in found:
        params.setdefault((macro_id, impl_id), []).append(MacroParameter(
            name, None if type_ in (None, NO_TYPE) else type_,
            # the reference keeps a default only when its type is known ('NULL'/'unknown' means none)
            None if default_type in (None, NO_TYPE) else default,
            None if default_type in (None, NO_TYPE) else default_type))
    return [MacroRow(keys[r.schema_id] if keys else r.schema_name, r.macro_name, r.macro_id, r.impl_id, r.type,
                     r.dialect, r.sql,
                     tuple(params.get((r.macro_id, r.impl_id), ()))) for r in rows]
