"""Schema evolution: `lake.update_schema(table)` (after pyiceberg's UpdateSchema) and its one-change shortcuts.

Changes are checked and applied to a copy of the table's column tree as they are called, so bad input fails
before anything is committed; `commit()` (or leaving the `with` block) writes them as one snapshot: new versions
of the changed column rows (same column_id), a schema_version bump, an `altered_table` change and a new inlined
data table, as the reference does. Nested fields are addressed by dotted paths (`s.inner.x`, `l.element`,
`m.value`); quote a name holding a dot with backticks.
"""

from __future__ import annotations

import copy
import datetime as dt
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from ..catalog.changes.ddl import AlterColumns
from ..catalog.changes.partitioning import current_spec
from ..catalog.changes.sorting import current_sort
from ..catalog.database.spec_tables import T
from ..catalog.reads import reader
from ..dataplane.spark import types as spark_types
from ..dataplane.spark.conform import plan_columns
from ..dataplane.spark.ddl import parse_type
from ..errors import AlreadyExistsError, NotFoundError, SchemaMismatchError
from ..spec import types
from ..spec.model import NESTED_TYPES, Column, TableInfo
from ..spec.names import parse_table_name
from .error_causes import translate_methods

if TYPE_CHECKING:
    from ..spec.commit_properties import CommitProperties
    from .context import LakeContext

_LITERALS = (bool, int, float, str, Decimal, dt.date, dt.datetime, bytes)


def split_path(path: str) -> list[str]:
    """`a.b.c` -> ['a', 'b', 'c']; backticks quote a part holding dots (`` `a.b`.c ``)."""
    parts: list[str]
    buf: list[str]
    parts, buf, quoted = [], [], False
    for ch in path:
        if ch == "`":
            quoted = not quoted
        elif ch == "." and not quoted:
            parts.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
    parts.append("".join(buf))
    if quoted or any(not p for p in parts):
        raise SchemaMismatchError(f"invalid column path {path!r}")
    return parts


def default_text(type_str: str, value: Any) -> str | None:
    """A literal default as the catalog stores it; SchemaMismatchError when it is not a literal of the type."""
    if value is None:
        return None
    if type_str in NESTED_TYPES or not isinstance(value, _LITERALS):
        raise SchemaMismatchError(f"a default must be a literal of type {type_str}, not {value!r}")
    if type_str == "boolean":
        if not isinstance(value, bool):
            raise SchemaMismatchError(f"a default for a boolean column must be True or False, not {value!r}")
        return "true" if value else "false"
    text = value if isinstance(value, str) else None
    try:
        parsed = types.parse_literal(type_str, text) if text is not None else value
        return types.format_literal(type_str, parsed) if type_str != "varchar" else str(value)
    except (ValueError, ArithmeticError, TypeError) as exc:
        raise SchemaMismatchError(f"default {value!r} is not a literal of type {type_str}: {exc}") from exc


@translate_methods  # lake.update_schema hands it out; commit() runs as its `with` block ends
class SchemaUpdate:
    """Pending schema changes of one table; `commit()` writes them as one snapshot."""

    def __init__(self, ctx: LakeContext, table: str | tuple[str, str], *, read_snapshot: int | None = None,
                 stage=None, properties: CommitProperties | None = None, pending: TableInfo | None = None,
                 layout=None, staged_rows=None):
        ctx.check_writable()
        self.ctx, self.properties = ctx, properties
        # a transaction's: () -> a context manager giving the LakeContext with its staged rows (SET NOT NULL sees
        # rows it inserted and misses rows it deleted, as in DuckDB)
        self._staged_rows = staged_rows
        self._layout = layout  # a transaction's: () -> (partition keys, sort keys) as it leaves them so far
        self._stage = stage  # a transaction's: takes the ALTER operation instead of committing it
        c = T["ducklake_column"]
        self.read_snapshot: int | None
        self.table: TableInfo
        self.columns: list[Column]
        if pending is not None:  # created in the same transaction: not in the catalog yet
            self.read_snapshot, self.table = read_snapshot, pending
            self._next_id = 1 + max((n.column_id for top in pending.columns for n in top.walk()), default=0)
            self.columns, self.changed = copy.deepcopy(pending.columns), False
            return
        with ctx.connect() as conn:
            self.read_snapshot = read_snapshot if read_snapshot is not None else \
                reader.latest_snapshot(conn).snapshot_id
            self.table = reader.find_table(conn, self.read_snapshot, ctx.data_path, *parse_table_name(table))
            top = conn.execute(sa.select(sa.func.max(c.c.column_id)).where(c.c.table_id == self.table.table_id))
            self._next_id = (top.scalar() or 0) + 1  # column ids are never reused, even after a drop
        self.columns = copy.deepcopy(self.table.columns)
        self.changed = False

    # ----------------------------------------------------------------------------------------- lookups
    def _find(self, path: str) -> tuple[list[Column], Column]:
        """(the list holding the column, the column) for a dotted path."""
        siblings, found = self.columns, None
        for depth, part in enumerate(split_path(path)):
            if found is not None:
                if not found.is_nested:
                    raise SchemaMismatchError(f"column {'.'.join(split_path(path)[:depth])} of "
                                              f"{self.table.qualified_name} has no fields (type {found.type})")
                siblings = found.children
            match = [c for c in siblings if c.name.lower() == part.lower()]
            if not match:
                raise NotFoundError(f"column {path!r} does not exist in table {self.table.qualified_name}")
            found = match[0]
        assert found is not None  # split_path gives one part at least
        return siblings, found

    def _parent_of(self, path: str) -> tuple[list[Column], str, Column | None]:
        parts = split_path(path)
        if len(parts) == 1:
            return self.columns, parts[0], None
        _siblings, parent = self._find(".".join(f"`{p}`" for p in parts[:-1]))
        if parent.type != "struct":
            raise SchemaMismatchError(f"fields can only be added to structs; {'.'.join(parts[:-1])} is "
                                      f"{parent.type}")
        return parent.children, parts[-1], parent

    def _new_column(self, name: str, type_: Any) -> Column:
        col = plan_columns(_as_ddl(name, type_))[0]
        for node in col.walk():  # fresh ids after every id the table ever used
            node.column_id, self._next_id = self._next_id, self._next_id + 1
        return col

    # ----------------------------------------------------------------------------------------- changes
    def add_column(self, path: str, type_: Any, *, default: Any = None, nullable: bool = True) -> SchemaUpdate:
        """ADD COLUMN (a dotted path adds a struct field); old rows read `default` (or NULL)."""
        siblings, name, _parent = self._parent_of(path)
        if any(c.name.lower() == name.lower() for c in siblings):
            raise AlreadyExistsError(f"column {path!r} already exists in table {self.table.qualified_name}")
        col = self._new_column(name, type_)
        text = default_text(col.type, default)
        if not nullable and text is None:
            raise SchemaMismatchError(f"new NOT NULL column {path!r} needs a default for the existing rows")
        col.initial_default = col.default_value = text
        col.nullable = nullable
        siblings.append(col)
        return self._touched()

    def drop_column(self, path: str) -> SchemaUpdate:
        """DROP COLUMN (or struct field); the data stays in old files, unread."""
        siblings, col = self._find(path)
        if len(siblings) == 1:
            where = "table" if siblings is self.columns else "struct"
            raise SchemaMismatchError(f"cannot drop {path!r}: it is the last column of its {where}")
        if siblings is self.columns:
            self._refuse_layout_column(path, col)
        siblings.remove(col)
        return self._touched()

    def _refuse_layout_column(self, path: str, col: Column) -> None:
        """As the reference: a column the table is partitioned or sorted by cannot be dropped (RESET it first)."""
        import sqlglot
        from sqlglot import exp

        if self._layout is not None:
            partition, sort = self._layout()
        elif self.table.table_id < 0:  # created in this transaction: no layout yet
            return
        else:
            assert self.read_snapshot is not None  # __init__ read it for a table of the catalog
            with self.ctx.connect() as conn:
                partition = current_spec(conn, self.table.table_id, self.read_snapshot).keys
                sort = current_sort(conn, self.table.table_id, self.read_snapshot)
        if any(k.column_id == col.column_id for k in partition):
            raise SchemaMismatchError(f"cannot drop column {path!r}: the table is partitioned by this column "
                                      "(RESET PARTITIONED BY first)")
        for key in sort:
            try:
                names = {c.name.lower() for c in sqlglot.parse_one(key.expression, read="duckdb").find_all(exp.Column)}
            except sqlglot.errors.ParseError:
                names = set()
            if col.name.lower() in names:
                raise SchemaMismatchError(f"cannot drop column {path!r}: the table is sorted by this column "
                                          "(RESET SORTED BY first)")

    def rename_column(self, path: str, new_name: str) -> SchemaUpdate:
        """RENAME COLUMN (or struct field); files keep being read by field id."""
        siblings, col = self._find(path)
        if any(c is not col and c.name.lower() == new_name.lower() for c in siblings):
            raise AlreadyExistsError(f"column {new_name!r} already exists next to {path!r}")
        if not new_name:
            raise SchemaMismatchError("a column name cannot be empty")
        col.name = new_name
        return self._touched()

    def update_column_type(self, path: str, type_: Any) -> SchemaUpdate:
        """Widen a column's type; only the spec's lossless promotions are allowed."""
        _siblings, col = self._find(path)
        new_type = self._new_column(col.name, type_).type
        self._next_id -= 1  # the probe column's id is not used
        if col.is_nested or new_type in NESTED_TYPES:
            raise SchemaMismatchError(f"cannot change the type of nested column {path!r}; change its fields")
        if not types.can_promote(col.type, new_type) or new_type == col.type:
            raise SchemaMismatchError(f"cannot change column {path!r} from {col.type} to {new_type}: only the "
                                      f"spec's lossless promotions are allowed ({types.promotion_list()})")
        col.type = new_type
        return self._touched()

    def set_nullable(self, path: str, nullable: bool) -> SchemaUpdate:
        """SET / DROP NOT NULL (setting it checks that no visible row holds a NULL)."""
        _siblings, col = self._find(path)
        if nullable == col.nullable:  # the reference's wording: setting what is already there is an error
            raise SchemaMismatchError(
                f"Cannot SET NOT NULL on column {path} - it already has a NOT NULL constraint" if not nullable else
                f"Cannot DROP NULL on column {path} - it has no NOT NULL constraint defined")
        if not nullable:
            self._check_no_nulls(path, col.column_id)
        col.nullable = nullable
        return self._touched()

    def set_default(self, path: str, value: Any) -> SchemaUpdate:
        """SET DEFAULT (None drops it) for rows inserted from now on."""
        _siblings, col = self._find(path)
        col.default_value = default_text(col.type, value)
        return self._touched()

    def _check_no_nulls(self, path: str, column_id: int) -> None:
        """Refuse NOT NULL over NULLs. The catalog answers when no file's statistics count a NULL of the column
        and no row is inlined; only otherwise does Spark look at the rows (deletes may have removed them)."""
        if self._staged_rows is None:
            self._check_rows(self.ctx, self.read_snapshot, path, column_id)
            return
        with self._staged_rows() as staged:  # the rows are read inside: staged files may go at the block's end
            self._check_rows(staged, None, path, column_id)

    def _check_rows(self, ctx: LakeContext, version: int | None, path: str, column_id: int) -> None:
        plan = ctx.plan_scan((self.table.schema_name, self.table.name), version=version)
        inlined_clean = _no_inlined_nulls(plan.inlined, split_path(path))
        if inlined_clean is False:
            raise SchemaMismatchError(f"cannot set NOT NULL on {path!r}: the table has NULLs in it")
        if inlined_clean and _no_nulls_counted(ctx, plan, column_id):
            return
        from pyspark.sql import functions as F

        column = F.col(".".join(f"`{p}`" for p in split_path(path)))
        if plan.to_dataframe(ctx.spark).where(column.isNull()).limit(1).count():
            raise SchemaMismatchError(f"cannot set NOT NULL on {path!r}: the table has NULLs in it")

    def _touched(self) -> SchemaUpdate:
        self.changed = True
        return self

    # ----------------------------------------------------------------------------------------- commit
    def commit(self) -> int | None:
        """Write the changes as one snapshot; returns its id (None when nothing changed)."""
        if not self.changed:
            return None
        op = AlterColumns(self.table.table_id, self.table.columns, self.columns)
        if self._stage is not None:
            self._stage(op)
            return None
        return self.ctx.commit([op], read_snapshot=self.read_snapshot, properties=self.properties)

    def __enter__(self) -> SchemaUpdate:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()


def _as_ddl(name: str, type_: Any):
    """A one-column schema for plan_columns from a DDL type string, Spark DataType or pyarrow DataType."""
    import pyarrow as pa
    from pyspark.sql.types import DataType, StructField, StructType

    if isinstance(type_, str):  # one type, nothing more (a column list here could add columns)
        return StructType([StructField(name, parse_type(type_))])
    if isinstance(type_, DataType):
        return StructType([StructField(name, type_)])
    if isinstance(type_, pa.DataType):
        return pa.schema([pa.field(name, type_)])
    raise SchemaMismatchError(f"a column type must be a DDL string, Spark or pyarrow type, not {type_!r}")


def _no_inlined_nulls(rows, parts: list[str]) -> bool | None:
    """Whether the visible inlined rows hold no NULL at the column path (a NULL struct counts); None when the
    path leads into a list or map (Spark then decides)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if rows is None or rows.num_rows == 0:
        return True
    values = rows.column(parts[0])
    missing = pc.is_null(values)
    for part in parts[1:]:
        if not pa.types.is_struct(values.type):
            return None
        values = pc.struct_field(values, part)
        missing = pc.or_(missing, pc.is_null(values))
    return not pc.any(missing).as_py()


def _no_nulls_counted(ctx: LakeContext, plan, column_id: int) -> bool:
    """Whether every file of the plan has statistics for the column saying it holds no NULL."""
    if not plan.files:
        return True
    import sqlalchemy as sa

    fcs = T["ducklake_file_column_stats"]
    with ctx.connect() as conn:  # a transaction's preview connection holds its staged files' stats
        clean = set(conn.execute(sa.select(fcs.c.data_file_id).where(
            fcs.c.table_id == plan.table.table_id, fcs.c.column_id == column_id, fcs.c.null_count == 0)).scalars())
    return all(f.data_file_id in clean for f in plan.files)


def evolve_for(ctx: LakeContext, table: TableInfo, incoming_schema, *,
               read_snapshot: int | None = None) -> tuple[object | None, TableInfo]:
    """For `write(..., merge_schema=True)`: the ALTER adding the data's new top-level columns and widening
    promotable types (None if the table already fits), and the table as the write should see it."""
    import dataclasses

    update = SchemaUpdate(ctx, (table.schema_name, table.name), read_snapshot=read_snapshot)
    _evolve(update, update.columns, plan_columns(incoming_schema), "")
    if not update.changed:
        return None, table
    op = AlterColumns(table.table_id, update.table.columns, update.columns)
    return op, dataclasses.replace(update.table, columns=update.columns)


def _evolve(update: SchemaUpdate, existing: list[Column], incoming: list[Column], prefix: str) -> None:
    """Add what `incoming` has and `existing` lacks, widen promotable types, and recurse into structs."""
    for col in incoming:
        path = f"{prefix}`{col.name}`"
        match = [c for c in existing if c.name.lower() == col.name.lower()]
        if not match:
            update.add_column(path, spark_types.to_spark_type(col))
        elif col.type == "struct" and match[0].type == "struct":
            _evolve(update, match[0].children, col.children, f"{prefix}`{match[0].name}`.")
        elif (not col.is_nested and not match[0].is_nested and col.type != match[0].type
              and types.can_promote(match[0].type, col.type)):
            update.update_column_type(f"{prefix}`{match[0].name}`", spark_types.to_spark_type(col))
