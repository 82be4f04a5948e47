"""BEGIN / COMMIT / ROLLBACK of `lake.sql`, spanning several calls: one open Transaction kept on the lake handle."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import (
    AlreadyExistsError,
    DuckLakeError,
    InvalidArgumentError,
    InvalidExpressionError,
    InvalidNameError,
    NotFoundError,
    SchemaMismatchError,
    TransactionAbortedError,
    UnsupportedSqlError,
)
from ..operations.transaction import Transaction
from ..spec.commit_properties import CommitProperties

if TYPE_CHECKING:
    from ..lake import DuckLake
    from ..operations.transaction import Savepoint
    from .references import QueryContext

_KEEPS = (UnsupportedSqlError, NotFoundError, AlreadyExistsError, InvalidNameError, InvalidArgumentError,
          InvalidExpressionError, SchemaMismatchError)
_ENDS = ("COMMIT", "ROLLBACK", "END", "ABORT")  # what an aborted transaction still accepts
_ATTR = "_sql_transaction"  # an attribute of the handle: transactions are per handle, like a DuckDB connection's


def current(lake: DuckLake) -> Transaction | None:
    """The transaction a BEGIN opened on this handle, or None."""
    return getattr(lake, _ATTR, None)


def begin(lake: DuckLake) -> None:
    """BEGIN: later statements stage into one Transaction until COMMIT or ROLLBACK."""
    tx = current(lake)
    if tx is not None:
        tx.abort()  # DuckDB aborts the open transaction too
        tx.aborted = True
        raise TransactionAbortedError("cannot start a transaction within a transaction: BEGIN inside BEGIN")
    setattr(lake, _ATTR, Transaction(lake.context, CommitProperties()))


def commit(lake: DuckLake) -> int | None:
    """COMMIT: one snapshot holding every staged statement (None when nothing was staged; an aborted transaction
    commits nothing, as in DuckDB)."""
    tx = _take(lake, "COMMIT")
    if tx.aborted:
        return None
    try:
        return tx.commit()
    except BaseException:
        tx.abort()  # a failed commit (a conflict) leaves nothing behind, as the context manager does
        raise


def rollback(lake: DuckLake) -> None:
    """ROLLBACK: forget the staged statements and delete the files they wrote."""
    _take(lake, "ROLLBACK").abort()


def after_error(lake: DuckLake, exc: BaseException, point: Savepoint | None) -> None:
    """A statement failed inside a transaction. As in DuckDB, an error found before anything ran (a binder or
    catalog error: a missing table or column, a name taken, a type that does not fit, a statement we do not run)
    leaves the transaction open with nothing of the statement staged; any other error (data that breaks a
    constraint or a cast, a failed job, a conflict) aborts it: later statements fail until ROLLBACK."""
    tx = current(lake)
    if tx is None or tx.aborted:
        return
    if point is not None and keeps_transaction(exc):
        tx.rollback_to(point)
        return
    tx.abort()
    tx.aborted = True


def keeps_transaction(exc: BaseException) -> bool:
    """Whether a failed statement leaves its transaction usable (DuckDB's parser, binder and catalog errors)."""
    if isinstance(exc, _KEEPS) or type(exc) is DuckLakeError:  # the plain class: a limit of ours, checked first
        return True
    try:
        from pyspark.errors import AnalysisException
    except ImportError:  # pragma: no cover - pyspark is a dependency
        return False
    return isinstance(exc, AnalysisException)  # Spark's binder: unknown column or function, type mismatch


def check_usable(lake: DuckLake, text: str) -> None:
    """Refuse a statement other than COMMIT / ROLLBACK in an aborted transaction, with DuckDB's message."""
    tx = current(lake)
    if tx is not None and tx.aborted and text.split(None, 1)[0].upper() not in _ENDS:
        raise TransactionAbortedError("Current transaction is aborted (please ROLLBACK): a statement in it failed")


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
