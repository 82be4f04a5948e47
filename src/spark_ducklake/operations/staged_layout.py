"""SET/RESET PARTITIONED BY and SORTED BY inside a transaction, as the reference stages them.

The same keys again change nothing (no new partition or sort id); a table created in the transaction takes its
layout by its TableRef; the writes staged after a layout change follow it (files partitioned by the new keys, with
the new partition id filled in when the change applies; rows in the new sort order); keys may name a column added
earlier in the transaction, and a column the layout uses cannot be dropped (schema_change.py asks `layout`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..catalog.changes.partitioning import SetPartitioning, current_spec, parse_keys
from ..catalog.changes.sorting import SetSorting, current_sort, parse_sort_keys
from ..catalog.database.versions import catalog_is_v11
from ..spec.model import PartitionSpec, TableInfo

if TYPE_CHECKING:
    from .transaction import Transaction


def stage_partitioning(tx: Transaction, info: TableInfo, ref, keys: list[str]) -> None:
    """Stage SET PARTITIONED BY (`keys` empty: RESET) of `info`; `ref` is its TableRef when created in `tx`."""
    if keys:
        with tx.ctx.connect() as conn:
            new_keys = parse_keys(info, list(keys), v11=catalog_is_v11(conn))
    else:
        new_keys = []
    if ref is not None:
        info.partition = PartitionSpec(None, new_keys)
        tx.stage(SetPartitioning(ref, new_keys, info.partition))
        if info.sort_keys is None:
            info.sort_keys = []
    elif new_keys != layout(tx, info.table_id)[0]:
        tx.stage(SetPartitioning(info.table_id, new_keys, PartitionSpec(None, new_keys)))


def stage_sorting(tx: Transaction, info: TableInfo, ref, keys: list[str]) -> None:
    """Stage SET SORTED BY (`keys` empty: RESET) of `info`; `ref` is its TableRef when created in `tx`."""
    new_keys = parse_sort_keys(info, list(keys)) if keys else []
    if ref is not None:
        info.sort_keys = new_keys
        tx.stage(SetSorting(ref, new_keys))
        if info.partition is None:
            info.partition = PartitionSpec()
    elif new_keys != layout(tx, info.table_id)[1]:
        tx.stage(SetSorting(info.table_id, new_keys))


def layout(tx: Transaction, table_id: int) -> tuple[list, list]:
    """(partition keys, sort keys) of an existing table as the transaction leaves them so far."""
    parts = [op.keys for op in tx.ops if isinstance(op, SetPartitioning) and op.table_id == table_id]
    sorts = [op.keys for op in tx.ops if isinstance(op, SetSorting) and op.table_id == table_id]
    if parts and sorts:
        return parts[-1], sorts[-1]
    with tx.ctx.engine.connect() as conn:
        return (parts[-1] if parts else current_spec(conn, table_id, tx.read_snapshot).keys,
                sorts[-1] if sorts else current_sort(conn, table_id, tx.read_snapshot))


def follow_staged_layout(tx: Transaction, info: TableInfo) -> None:
    """Give an existing table's TableInfo the layout changes staged in the transaction, for the writes after them."""
    for op in tx.ops:
        if isinstance(op, SetPartitioning) and op.table_id == info.table_id:
            info.partition = op.spec
        elif isinstance(op, SetSorting) and op.table_id == info.table_id:
            info.sort_keys = op.keys
