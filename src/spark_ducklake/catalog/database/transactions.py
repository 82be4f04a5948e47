"""Write transactions on the catalog that queue behind our other writers instead of racing them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa

from .dialects import dialect_for


@contextmanager
def write_transaction(engine: sa.Engine, *, queued: bool = True) -> Iterator[sa.Connection]:
    """A transaction on a connection of its own that takes the database's write lock up front where it has one.

    `queued`: wait for our other writers at once. A commit passes False, does the reads that stay valid while it
    waits, then calls `queue_behind_other_writers`. The commit lock of a session (MySQL) is released once the
    transaction has ended, however it ended."""
    dialect = dialect_for(engine)
    with engine.connect().execution_options(**dialect.write_options) as conn:
        try:
            with conn.begin():
                if queued:
                    dialect.lock_commits(conn)
                yield conn
        finally:
            dialect.unlock_commits(conn)


def queue_behind_other_writers(conn: sa.Connection) -> None:
    """Wait until our other writers have committed, inside `conn`'s write transaction.

    PostgreSQL: a transaction-scoped advisory lock. MySQL: a named lock of the session, released by
    `write_transaction`. SQLite: BEGIN IMMEDIATE already holds the write lock. DuckDB files admit one writing
    process anyway."""
    dialect_for(conn).lock_commits(conn)
