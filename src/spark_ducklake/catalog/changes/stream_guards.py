"""Which micro-batch of a streaming query a table last committed, kept in the snapshots' commit_extra_info.

Each snapshot a streaming sink commits carries `{"spark_streaming": {"query_id": ..., "table": ..., "batch_id": N}}`
(Delta's idempotent writes keep `txnAppId`/`txnVersion` the same way). Batch ids only grow and a batch is
committed at most once, so the newest snapshot naming the query and table holds the highest batch id.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from ...errors import DuckLakeError
from ..database.spec_tables import T

KEY = "spark_streaming"


def batch_info(query_id: str, table: str, batch_id: int) -> str:
    """The commit_extra_info recording one committed micro-batch."""
    return json.dumps({KEY: {"query_id": query_id, "table": table, "batch_id": batch_id}})


def last_committed_batch(conn: sa.Connection, query_id: str, table: str) -> int | None:
    """The highest batch id of the query committed to the table, or None."""
    sc = T["ducklake_snapshot_changes"]
    query = (sa.select(sc.c.commit_extra_info)
             .where(sc.c.commit_extra_info.contains(json.dumps(query_id), autoescape=True))
             .order_by(sc.c.snapshot_id.desc()))
    for (text,) in conn.execute(query):
        try:
            info = json.loads(text)[KEY]
        except (ValueError, TypeError, KeyError):
            continue
        if isinstance(info, dict) and info.get("query_id") == query_id and info.get("table") == table:
            return int(info["batch_id"])
    return None


def holds_batch(conn: sa.Connection, query_id: str, table: str, batch_id: int) -> bool:
    """Whether the table already holds this batch of the query (or a later one: batch ids only grow)."""
    done = last_committed_batch(conn, query_id, table)
    return done is not None and batch_id <= done


class BatchAlreadyCommitted(DuckLakeError):
    """The table already holds this micro-batch of the query (a re-delivery): nothing was committed."""


@dataclass
class GuardBatch:
    """A commit operation that aborts the commit if the batch is already in the table: checked while the commit
    holds the writers' lock, so two deliveries of one batch never both land."""

    query_id: str
    table: str
    batch_id: int

    def intents(self) -> list[Any]:
        """Changes nothing itself."""
        return []

    def apply(self, ctx: Any) -> None:
        """Raise BatchAlreadyCommitted when a snapshot records this batch (or a later one) of the query."""
        if holds_batch(ctx.conn, self.query_id, self.table, self.batch_id):
            raise BatchAlreadyCommitted(f"batch {self.batch_id} of query {self.query_id} is already in {self.table}")
