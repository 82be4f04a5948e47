"""Lake macros (`ducklake_macro`, `ducklake_macro_impl`, `ducklake_macro_parameters`): the commit operations that
create and drop them (reading them: catalog/reads/macros.py).

As the reference writes them: the macro id comes from next_catalog_id, implementations are numbered from 0 and
their parameters from 0; a parameter without a type or a default stores 'unknown' / 'NULL' / 'unknown';
changes_made says `created_scalar_macro:"schema"."name"` (or `created_table_macro`) and
`dropped_scalar_macro:<id>` (`dropped_table_macro`). Scalar and table macros have separate namespaces.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from ...errors import AlreadyExistsError, NotFoundError
from ...spec.names import check_name
from ...spec.snapshot_changes import Change, quote_name
from ..commit import CommitContext
from ..database.spec_tables import T, end_live_rows
from ..reads import reader
from ..reads.macros import NO_TYPE, MacroParameter

MACRO_KINDS = ("scalar", "table")


def kind_label(kind: str) -> str:
    """The reference's word for a macro kind in its errors: `Macro Function` / `Table Macro Function`."""
    return "Table Macro Function" if kind == "table" else "Macro Function"


@dataclass(frozen=True)
class MacroImpl:
    """One implementation: its body (DuckDB SQL) and parameters."""

    sql: str
    parameters: tuple[MacroParameter, ...]
    dialect: str = "duckdb"


@dataclass
class CreateMacro:
    """CREATE MACRO schema.name: one ducklake_macro row, its implementations and their parameters."""

    schema: str
    name: str
    kind: str  # scalar | table
    impls: tuple[MacroImpl, ...]

    def intents(self) -> list[Change]:
        return [Change(f"created_{self.kind}_macro", quote_name(self.schema, self.name))]

    def apply(self, ctx: CommitContext) -> None:
        check_name(self.name, "macro")
        schema = reader.find_schema(ctx.conn, ctx.snapshot_id, ctx.data_path, self.schema)
        m, impl = T["ducklake_macro"], T["ducklake_macro_impl"]
        taken = ctx.conn.execute(
            sa.select(m.c.macro_name).select_from(m.join(impl, impl.c.macro_id == m.c.macro_id))
            .where(reader.visible(m, ctx.snapshot_id), m.c.schema_id == schema.schema_id,
                   sa.func.lower(m.c.macro_name) == self.name.lower(), impl.c.type == self.kind).limit(1)).scalar()
        if taken is not None:
            raise AlreadyExistsError(f'{kind_label(self.kind)} with name "{taken}" already exists')
        macro_id = ctx.catalog_id()
        ctx.conn.execute(m.insert().values(schema_id=schema.schema_id, macro_id=macro_id, macro_name=self.name,
                                           begin_snapshot=ctx.snapshot_id, end_snapshot=None))
        p = T["ducklake_macro_parameters"]
        for impl_id, body in enumerate(self.impls):
            ctx.conn.execute(impl.insert().values(macro_id=macro_id, impl_id=impl_id, dialect=body.dialect,
                                                  sql=body.sql, type=self.kind))
            for column_id, param in enumerate(body.parameters):
                ctx.conn.execute(p.insert().values(
                    macro_id=macro_id, impl_id=impl_id, column_id=column_id, parameter_name=param.name,
                    parameter_type=param.type or NO_TYPE,
                    default_value="NULL" if param.default is None else param.default,
                    default_value_type=param.default_type or NO_TYPE))
        ctx.schema_changed = True
        ctx.record(f"created_{self.kind}_macro", quote_name(self.schema, self.name))


@dataclass
class DropMacro:
    """DROP MACRO [TABLE] by id: end its ducklake_macro row (implementations and parameters go at expiry)."""

    macro_id: int
    kind: str

    def intents(self) -> list[Change]:
        return [Change(f"dropped_{self.kind}_macro", str(self.macro_id))]

    def apply(self, ctx: CommitContext) -> None:
        m = T["ducklake_macro"]
        if not end_live_rows(ctx.conn, m, ctx.snapshot_id, m.c.macro_id == self.macro_id):
            raise NotFoundError(f"macro id {self.macro_id} does not exist")
        ctx.schema_changed = True
        ctx.record(f"dropped_{self.kind}_macro", self.macro_id)
