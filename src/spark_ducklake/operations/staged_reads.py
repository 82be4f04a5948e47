"""Read-your-writes inside a transaction: the lake as an open Transaction would leave it, nobody else seeing it.

The staged operations are applied by the commit code itself (`catalog.commit.preview`) in a catalog transaction
that is rolled back afterwards, so staged Parquet files, inlined rows, deletes, updates, new tables, views and
schemas show exactly as they will after COMMIT. Only the planning happens inside that transaction (it queues other
writers for as long, a few catalog queries); the scan plans it returns hold everything Spark needs (file paths,
inlined rows as Arrow), so the DataFrames built from them outlive it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa

from ..catalog.commit import preview
from ..catalog.reads import reader
from .context import LakeContext


class StagedContext(LakeContext):
    """A read-only LakeContext whose catalog reads all go to one connection, pinned to one snapshot."""

    def __init__(self, base: LakeContext, conn: sa.Connection | None, snapshot: int):
        self.__dict__.update(base.__dict__)
        self.table_cache = reader.TableCache()  # its snapshot is never committed: keep it out of the base's cache
        self.read_only = True
        self.pinned_snapshot = snapshot
        self._conn = conn

    @property
    def staged_snapshot(self) -> int | None:
        """The snapshot id staged rows carry in this preview (None when nothing is staged): DuckDB shows their
        snapshot_id as NULL until COMMIT."""
        return None if self._conn is None else self.pinned_snapshot

    @contextmanager
    def connect(self):
        """The preview's connection (or a fresh one when nothing is staged)."""
        if self._conn is None:
            with self.engine.connect() as conn:
                yield conn
        else:
            yield self._conn


@contextmanager
def staged_context(ctx: LakeContext, operations: list, read_snapshot: int, *,
                   catalog_only: bool = False) -> Iterator[LakeContext]:
    """`ctx` as of `read_snapshot` with `operations` applied (not committed) for the length of the block."""
    if not catalog_only:
        ctx.spark  # noqa: B018 - start or check Spark before the catalog is held, not while
    if not operations:
        yield StagedContext(ctx, None, read_snapshot)
        return
    with preview(ctx.engine, operations, read_snapshot=read_snapshot, data_path=ctx.data_path,
                 inlining_limit=ctx.data_inlining_row_limit) as (conn, snap):
        yield StagedContext(ctx, conn, snap)
