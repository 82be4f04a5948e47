"""Several row-level changes to one table in a transaction, each seeing the ones before it (read-your-writes).

The first DELETE or UPDATE of a table the transaction has not written to plans against the table as the
transaction began (delete_update.py). A later one, one after an INSERT, or one on a table created in the
transaction reads the table as the transaction sees it (the staged preview, staged_reads.py), applies its change
there, and re-stages the table's whole net change against the table as it began: one delete of the rows that
existed then and are gone or changed now (positions in their files, inlined row ids), and the inserts of every row
the transaction adds (updated versions keep their row ids, new rows get theirs at COMMIT). The table's earlier
data operations are replaced and their files deleted once the commit no longer needs them, so COMMIT still writes
one snapshot, with one delete file per data file, as the reference does.

The statement runs on the plane `engine_for` picks for the files it reads, through the engine's `restage` verb
(dataplane/arrow/statement_rows.py in-process, dataplane/spark/statement_rows.py on Spark), which stages the
deletion and hands the rest of the net change here as Arrow tables or DataFrames; this module stages the inserts
and swaps the table's operations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..catalog.changes.data import AppendFiles, DeleteRows, InlineInsert, ReplaceAll
from ..catalog.changes.ddl import TableRef
from ..dataplane.arrow.statement_rows import NetRows, TableInTransaction
from ..dataplane.arrow.storage import delete_paths
from ..dataplane.engine import engine_for
from ..errors import DuckLakeError, SchemaMismatchError
from ..spec.internal_columns import INLINED_ROW_ID
from ..spec.names import parse_table_name as split_name
from .delete_update import delete_op, stage_new_rows
from .staging import Staged
from .write import stage_write

if TYPE_CHECKING:
    from .transaction import Transaction

DATA_OPS = (AppendFiles, InlineInsert, DeleteRows, ReplaceAll)


def table_ops(tx: Transaction, uuid: str) -> list:
    """The staged operations that change rows of the table with this uuid."""
    return [op for op in tx.ops if getattr(getattr(op, "table", None), "table_uuid", None) == uuid]


def has_staged_rows(tx: Transaction, uuid: str) -> bool:
    """Whether the transaction inserts, deletes or updates rows of the table with this uuid."""
    return any(isinstance(op, DATA_OPS) for op in table_ops(tx, uuid))


def needs_compose(tx: Transaction, table: str) -> bool:
    """Whether a row-level change of `table` (its name now) must see rows staged earlier in the transaction."""
    key = split_name(table)
    if tx.created(key) is not None:
        return True
    info = tx.ctx.table_info(tx.names.source(key), version=tx.read_snapshot)
    return bool(table_ops(tx, info.table_uuid))


@dataclass
class _Current:
    """The table as the transaction sees it, and how its new rows are staged."""

    view: TableInTransaction  # as it began and as the transaction sees it; which rows are unchanged since
    ref: TableRef | None  # of a table created in the transaction, else None


def _current(tx: Transaction, table: str, what: str) -> _Current:
    """Plan the table as it began and as the transaction sees it (catalog reads only, no Spark)."""
    key = split_name(table)
    schema, name = key
    created = tx.created(key)
    if created is not None:
        info, ref = created
        original, uuid = None, info.table_uuid
    else:
        original, ref = tx.ctx.plan_scan(tx.names.source(key), version=tx.read_snapshot), None
        info = tx.table_info(key)  # the columns its ALTERs in the transaction leave: new rows are written so
        uuid = info.table_uuid
    staged = table_ops(tx, uuid)
    other = [op for op in staged if not isinstance(op, DATA_OPS)]
    if other:
        raise DuckLakeError(f"{schema}.{name}: {type(other[0]).__name__} is staged for it in this transaction; "
                            f"{what} it in another transaction")
    with tx.staged(catalog_only=True) as ctx:  # Spark, if it runs, starts after the preview
        now = ctx.plan_scan(key)
    if original is None:
        return _Current(TableInTransaction(info, None, now, [], []), ref)
    # Rows of the files that existed then are unchanged (staged files have ids of their own); inlined rows are
    # unchanged when their id is one of the rows inlined then that no staged delete or update has ended.
    ended = set().union(*[op.inlined_row_ids for op in staged if isinstance(op, DeleteRows)])
    if any(isinstance(op, ReplaceAll) for op in staged):
        return _Current(TableInTransaction(info, original, now, [], []), ref)
    before = [] if original.inlined is None else original.inlined.column(INLINED_ROW_ID).to_pylist()
    return _Current(TableInTransaction(info, original, now, [f.data_file_id for f in original.files],
                                       [i for i in before if i not in ended]), ref)


def compose_delete(tx: Transaction, table: str, condition) -> int:
    """DELETE on the table as the transaction sees it; returns the rows it deletes."""
    current = _current(tx, table, "delete from")
    return _restage(tx, current, condition, None)


def compose_update(tx: Transaction, table: str, assignments: dict, condition) -> int:
    """UPDATE on the table as the transaction sees it; returns the rows it updates."""
    current = _current(tx, table, "update")
    info = current.view.table
    columns = {c.name.lower() for c in info.columns}
    if not assignments:
        raise SchemaMismatchError("update needs at least one column to set")
    unknown = [n for n in assignments if n.lower() not in columns]
    if unknown:
        raise SchemaMismatchError(f"columns not in table {info.qualified_name}: {', '.join(unknown)}")
    return _restage(tx, current, condition, assignments)


def _restage(tx: Transaction, current: _Current, condition, assignments: dict | None) -> int:
    """The statement applied to the table as the transaction sees it, on the plane `engine_for` picks for the
    files it reads (the table as it began and as the transaction sees it), and the table's net change staged in
    place of its staged data operations; returns the rows the statement matched."""
    view = current.view
    files = {f.path: f for f in view.now.files}
    if view.original is not None:
        files.update({f.path: f for f in view.original.files})
    # A table created in the transaction has no rows of its start to delete: no inlining limit to look up for them.
    limit = 0 if view.original is None else tx.ctx.inlining_limit(view.table)
    engine = engine_for(tx.ctx, list(files.values()))
    matched, net = engine.restage(view, condition, assignments, limit, _net_ops(tx, current))
    if net is None:
        return 0
    _swap(tx, current, net)
    return matched


def _net_ops(tx: Transaction, current: _Current) -> Callable[[NetRows], Staged[None]]:
    """How a statement's net change is staged: the operations (and their files) taking the table from how it
    began to how the statement leaves it."""
    ctx, view = tx.ctx, current.view

    def stage(net: NetRows) -> Staged[None]:
        ops: list = []
        files: list[str] = []
        if not net.deletes.empty:
            ops.append(delete_op(view.original, net.deletes))
        try:
            if net.version_count and view.original is not None:  # versions are of rows that existed then
                plan = replace(view.original, table=view.table)  # written with the columns as altered
                inserted = stage_new_rows(ctx, plan, net.versions, net.version_count, keep_ids=True)
                ops += inserted.ops
                files += inserted.files
            if net.fresh_count:
                write = _stage_fresh(tx, current, net.fresh)
                ops += write.ops
                files += write.files
        except BaseException:
            delete_paths(files)
            raise
        return Staged(ops, [d.path for d in net.deletes.delete_files] + files, None)

    return stage


def _stage_fresh(tx: Transaction, current: _Current, rows) -> Staged[None]:
    """Rows new to the table (a Spark DataFrame or an Arrow table) staged as a write into it."""
    view = current.view
    limit = tx.ctx.inlining_limit(view.table if view.original is not None else None)
    return stage_write(tx.ctx, rows, view.table, current.ref, replace_all=False, read_snapshot=tx.read_snapshot,
                       replace_existing=view.original is not None, limit=limit)


def _swap(tx: Transaction, current: _Current, net: Staged[None]) -> None:
    """Replace the table's staged data operations by `net`'s; their files are deleted when the commit ends."""
    old = {id(op) for op in table_ops(tx, current.view.table.table_uuid) if isinstance(op, DATA_OPS)}
    replaced = [op for op in tx.ops if id(op) in old]
    old_files = set()
    for op in replaced:
        if isinstance(op, AppendFiles):
            old_files |= {f.path for f in op.files}
        elif isinstance(op, DeleteRows):
            old_files |= {d.path for d in op.delete_files}
    tx.replace_ops([op for op in tx.ops if id(op) not in old] + net.ops,
                   files=[f for f in tx.files if f not in old_files] + net.files, discarded=sorted(old_files))
