"""`CALL flush_inlined_data(...)` inside BEGIN ... COMMIT: the flush staged in the open transaction.

The rows inlined when the transaction began (and inlined deletes of files) are written to files now, with the sort
keys the transaction has set (SET SORTED BY staged before the CALL, as the reference flushes with its transaction's
keys); the catalog changes join the transaction's snapshot at COMMIT, and ROLLBACK deletes the files. A table whose
rows the transaction changes is refused: the flush would move rows those staged changes address.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..catalog.changes.sorting import SetSorting, current_sort
from ..dataplane.arrow.storage import delete_paths
from ..errors import DuckLakeError
from .maintenance.flush import stage_flush
from .staged_changes import has_staged_rows

if TYPE_CHECKING:
    from .transaction import Transaction


def flush_in_transaction(tx: Transaction, schema_name: str | None, table_name: str | None) -> list:
    """Stage flush_inlined_data of one table, a schema's tables or every table in `tx`; returns its rows."""
    # tables created in the transaction are keyed by their TableRef: they have nothing inlined before it began
    sorted_ids = {op.table_id for op in tx.ops if isinstance(op, SetSorting) and isinstance(op.table_id, int)}
    sorts = {}
    if sorted_ids:
        with tx.staged(catalog_only=True) as ctx, ctx.connect() as conn:
            sorts = {tid: current_sort(conn, tid, ctx.pinned_snapshot) for tid in sorted_ids}
    staged = stage_flush(tx.ctx, schema_name, table_name, tx.read_snapshot, sorts)
    changed = [op.table for op in staged.ops if has_staged_rows(tx, op.table.table_uuid)]
    if changed:
        delete_paths(staged.files)
        raise DuckLakeError(f"flush_inlined_data of {changed[0].qualified_name}: its rows are changed in this "
                            "transaction; flush it in another transaction")
    tx.stage(*staged.ops, files=staged.files)
    return staged.result
