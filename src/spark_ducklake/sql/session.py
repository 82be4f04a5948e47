"""BEGIN / COMMIT / ROLLBACK of `lake.sql`, spanning several calls: one open Transaction kept on the lake handle."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import DuckLakeError
from ..spec.commit_properties import CommitProperties

if TYPE_CHECKING:
    from ..lake import DuckLake
    from ..operations.transaction import Transaction
    from .references import QueryContext

_ATTR = "_sql_transaction"  # an attribute of the handle: transactions are per handle, like a DuckDB connection's


def current(lake: DuckLake) -> Transaction | None:
    """The transaction a BEGIN opened on this handle, or None."""
    return getattr(lake, _ATTR, None)


def begin(lake: DuckLake) -> None:
    """BEGIN: later statements stage into one Transaction until COMMIT or ROLLBACK."""
    from ..operations.transaction import Transaction

    if current(lake) is not None:
        raise DuckLakeError("BEGIN inside a transaction: COMMIT or ROLLBACK the open one first")
    setattr(lake, _ATTR, Transaction(lake.context, CommitProperties()))


def commit(lake: DuckLake) -> int | None:
    """COMMIT: one snapshot holding every staged statement (None when nothing was staged)."""
    tx = _take(lake, "COMMIT")
    try:
        return tx.commit()
    except BaseException:
        tx.abort()  # a failed commit (a conflict) leaves nothing behind, as the context manager does
        raise


def rollback(lake: DuckLake) -> None:
    """ROLLBACK: forget the staged statements and delete the files they wrote."""
    _take(lake, "ROLLBACK").abort()


def abort_after_error(lake: DuckLake) -> bool:
    """A statement failed inside a transaction: roll it back (True if one was open), as nothing half-done may
    commit later."""
    tx = current(lake)
    if tx is None:
        return False
    setattr(lake, _ATTR, None)
    tx.abort()
    return True


@contextmanager
def staged_reads(ctx: QueryContext) -> Iterator[QueryContext]:
    """The context a query's lake reads plan with: inside BEGIN, the lake as the open transaction would leave it
    (read-your-writes; nobody else sees it), else `ctx` itself. Plan inside the block, run Spark after it."""
    tx = current(ctx.lake)
    if tx is None:
        yield ctx
        return
    with tx.staged() as staged:
        yield replace(ctx, lake=type(ctx.lake)(staged), snapshot=None)


def _take(lake: DuckLake, verb: str) -> Transaction:
    tx = current(lake)
    if tx is None:
        raise DuckLakeError(f"{verb} without a transaction: no BEGIN is open on this lake handle")
    setattr(lake, _ATTR, None)
    return tx
