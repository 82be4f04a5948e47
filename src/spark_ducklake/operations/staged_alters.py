"""Several ALTERs of one table in one transaction, and writes between them: one snapshot, as DuckDB commits them.

DuckDB applies every ALTER of a transaction to its local copy of the table and writes, at COMMIT, one new version
of each changed column row and one schema version. Here the ALTERs of a table fold into one `AlterColumns` (the
columns as the transaction began -> as the last ALTER left them) kept at the place of the first; rows written
after that place were staged with the columns of their moment, and a later ALTER re-shapes the inlined ones
(matched by column id: dropped columns go, new ones take their initial default, widened types are cast). Parquet
files need nothing: they are read by field id.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import pyarrow as pa

from ..catalog.changes.data import InlineInsert
from ..catalog.changes.ddl import AlterColumns, CreateTable
from ..errors import DuckLakeError, NotFoundError
from ..spec import types
from ..spec.model import Column

if TYPE_CHECKING:
    from .transaction import Transaction


def fold_alter(staged_ops: Sequence, op: AlterColumns) -> list:
    """`staged_ops` with `op` staged: merged into an earlier ALTER of the same table (whose place it keeps,
    re-shaping the inlined rows staged after it), else appended."""
    ops = list(staged_ops)
    for i, staged in enumerate(ops):
        if isinstance(staged, AlterColumns) and staged.table_id == op.table_id:
            ops[i] = AlterColumns(op.table_id, staged.old, op.new)
            for j in range(i + 1, len(ops)):
                later = ops[j]
                if isinstance(later, InlineInsert) and later.ref is None and later.table.table_id == op.table_id:
                    ops[j] = reshape_insert(later, op.new)
            return ops
    return [*ops, op]


def alter_new(tx: Transaction, key: tuple[str, str], columns: list[Column]) -> None:
    """An ALTER of a table created in the same transaction: its pending CREATE takes the new columns (DuckDB
    writes only the final table too) and the inlined rows staged for it are re-shaped."""
    created = tx.created(key)
    if created is None:  # dropped or renamed since its update_schema began
        raise NotFoundError(f"table {key[0]}.{key[1]} does not exist")
    info, ref = created
    tx.replace_ops([replace(op, columns=copy.deepcopy(columns)) if isinstance(op, CreateTable) and op.ref is ref
                    else reshape_insert(op, columns) if isinstance(op, InlineInsert) and op.ref is ref else op
                    for op in tx.ops])
    tx.table(key).created = created._replace(info=replace(info, columns=copy.deepcopy(columns)))


def reshape_insert(op: InlineInsert, columns: list[Column]) -> InlineInsert:
    """The same inlined rows under the table's new columns (matched by column id)."""
    old = {c.column_id: i for i, c in enumerate(op.table.columns)}
    arrays, fields = [], []
    for col in columns:
        target = types.to_arrow_field(col)
        if col.column_id in old:
            values = op.data.column(old[col.column_id])
            if values.type != target.type:
                try:
                    values = values.cast(target.type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    raise DuckLakeError(f"cannot re-shape the rows inserted into {op.table.qualified_name} earlier "
                                        f"in this transaction to column {col.name!r} ({col.type}): {exc}") from None
        else:
            value = None if col.is_nested else types.parse_literal(col.type, col.initial_default)
            values = pa.array([value] * op.data.num_rows, target.type)
        arrays.append(values)
        fields.append(pa.field(col.name, target.type))
    data = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
    return InlineInsert(replace(op.table, columns=copy.deepcopy(columns)), data, op.ref, op.row_ids)


def next_column_id(columns: list[Column]) -> int:
    """One past the highest column id in a column tree (ids are never reused)."""
    return 1 + max((c.column_id for top in columns for c in top.walk()), default=0)
