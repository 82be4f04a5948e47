"""A short catalog transaction that changes no snapshot (expire, cleanup), queued behind committing writers."""

from __future__ import annotations

from contextlib import contextmanager

import sqlalchemy as sa

from ...catalog.commit import _queue_behind_other_writers, _releasing_commit_lock

CHUNK = 500  # ids per IN (...) list: far below every dialect's parameter limit


@contextmanager
def catalog_transaction(engine: sa.Engine):
    """A transaction holding the writers' commit lock, so no commit interleaves with the maintenance."""
    options = {"sqlite_begin": "IMMEDIATE"} if engine.dialect.name == "sqlite" else {}
    with engine.connect().execution_options(**options) as conn, _releasing_commit_lock(conn), conn.begin():
        _queue_behind_other_writers(conn)
        yield conn


def chunks(ids: list[int]):
    """`ids` in slices small enough for one IN list."""
    for start in range(0, len(ids), CHUNK):
        yield ids[start:start + CHUNK]
