"""One snapshot per commit: a short catalog transaction with the spec's conflict rules and retries.

A commit is a list of operations (see `operations.py`). Each attempt opens a transaction, claims the next
snapshot id first (its primary key is the serialization point between writers), checks the snapshots committed
since our read snapshot against the spec's conflict rules, and lets every operation write its rows with ids drawn
from the *current* counters. A lost race (primary-key violation, serialization failure) rolls the whole attempt
back and retries with fresh ids; data files are never rewritten.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Protocol

import sqlalchemy as sa

from ..errors import ConflictError, DuckLakeError
from . import inlined_tables, reader
from .changes import Change, find_conflict, parse_changes, render_changes
from .model import Snapshot
from .spec_tables import T

log = logging.getLogger(__name__)


@dataclass
class CommitInfo:
    """Who and why, stored in ducklake_snapshot_changes."""

    author: str | None = None
    message: str | None = None
    extra_info: str | None = None


@dataclass
class RetryPolicy:
    """How often and how patiently to retry a commit that lost a race (the reference's defaults)."""

    max_retries: int = 10
    wait_ms: float = 100.0
    backoff: float = 1.5

    def delay(self, attempt: int) -> float:
        """Seconds to sleep before retry `attempt` (1-based): exponential with full jitter."""
        return random.uniform(0, self.wait_ms * self.backoff ** (attempt - 1)) / 1000.0


@dataclass
class CommitContext:
    """What operations see while writing one snapshot's rows."""

    conn: sa.Connection
    dialect: str
    data_path: str
    base: Snapshot  # the newest snapshot when this attempt started
    snapshot_id: int
    next_catalog_id: int
    next_file_id: int
    schema_changed: bool = False
    changes: list[Change] = field(default_factory=list)
    deleted_files: set[int] = field(default_factory=set)
    now: datetime = field(default_factory=lambda: datetime.now(timezone.utc))

    def catalog_id(self) -> int:
        """Allocate an id for a schema, table, view, partition or mapping."""
        value = self.next_catalog_id
        self.next_catalog_id += 1
        return value

    def file_id(self) -> int:
        """Allocate an id for a data or delete file."""
        value = self.next_file_id
        self.next_file_id += 1
        return value

    @property
    def schema_version(self) -> int:
        """The schema version the new snapshot will carry."""
        return self.base.schema_version + (1 if self.schema_changed else 0)

    def record(self, kind: str, value: object) -> None:
        """Add an entry to this snapshot's changes_made."""
        self.changes.append(Change(kind, str(value)))


class Operation(Protocol):
    """One logical change inside a commit; `apply` may run several times (once per attempt)."""

    def intents(self) -> list[Change]:
        """The changes_made entries this operation will produce, for conflict checks before applying."""

    def apply(self, ctx: CommitContext) -> None:
        """Write this operation's catalog rows."""


def commit(
    engine: sa.Engine,
    operations: list[Operation],
    *,
    read_snapshot: int,
    data_path: str,
    info: CommitInfo | None = None,
    retry: RetryPolicy | None = None,
) -> int:
    """Commit the operations as one new snapshot; returns its id. ConflictError leaves the catalog untouched."""
    info = info or CommitInfo()
    retry = retry or RetryPolicy()
    attempt = 0
    while True:
        try:
            return _attempt(engine, operations, read_snapshot, data_path, info)
        except ConflictError:
            raise
        except (sa.exc.IntegrityError, sa.exc.OperationalError, sa.exc.DBAPIError) as exc:
            if not _is_race(exc):
                raise
            attempt += 1
            if attempt > retry.max_retries:
                raise ConflictError(
                    f"gave up after {retry.max_retries} retries: other writers kept committing first"
                ) from exc
            log.debug("commit lost a race (attempt %d), retrying: %s", attempt, exc.__class__.__name__)
            time.sleep(retry.delay(attempt))


def _is_race(exc: sa.exc.DBAPIError) -> bool:
    if isinstance(exc, sa.exc.IntegrityError):
        return True
    text = str(exc.orig if getattr(exc, "orig", None) is not None else exc).lower()
    markers = ("could not serialize", "deadlock", "database is locked", "conflict", "busy")
    return any(marker in text for marker in markers)


def _attempt(engine: sa.Engine, operations, read_snapshot: int, data_path: str, info: CommitInfo) -> int:
    options = {"sqlite_begin": "IMMEDIATE"} if engine.dialect.name == "sqlite" else {}
    with engine.connect().execution_options(**options) as conn, conn.begin():
        base = reader.latest_snapshot(conn)
        snapshot_id = base.snapshot_id + 1
        # Claim the snapshot id first: a concurrent writer blocks or fails right here.
        conn.execute(T["ducklake_snapshot"].insert().values(
            snapshot_id=snapshot_id, snapshot_time=datetime.now(timezone.utc),
            schema_version=base.schema_version, next_catalog_id=base.next_catalog_id,
            next_file_id=base.next_file_id,
        ))
        if base.snapshot_id > read_snapshot:
            _check_conflicts(conn, operations, read_snapshot)
        ctx = CommitContext(
            conn=conn, dialect=engine.dialect.name, data_path=data_path, base=base, snapshot_id=snapshot_id,
            next_catalog_id=base.next_catalog_id, next_file_id=base.next_file_id,
        )
        for op in operations:
            op.apply(ctx)
        if not ctx.changes:
            raise DuckLakeError("nothing to commit")
        snap = T["ducklake_snapshot"]
        conn.execute(snap.update().where(snap.c.snapshot_id == snapshot_id).values(
            snapshot_time=ctx.now, schema_version=ctx.schema_version,
            next_catalog_id=ctx.next_catalog_id, next_file_id=ctx.next_file_id,
        ))
        conn.execute(T["ducklake_snapshot_changes"].insert().values(
            snapshot_id=snapshot_id, changes_made=render_changes(ctx.changes), author=info.author,
            commit_message=info.message, commit_extra_info=info.extra_info,
        ))
        return snapshot_id


def _check_conflicts(conn: sa.Connection, operations, read_snapshot: int) -> None:
    ours = [change for op in operations for change in op.intents()]
    our_files: set[int] | None = set()  # None: "every file of the table" (an overwrite)
    for op in operations:
        ids = getattr(op, "deleted_file_ids", set())
        our_files = None if ids is None or our_files is None else our_files | ids
    schema_names = _schema_names(conn)
    for snap in reader.list_snapshots(conn, since=read_snapshot):
        theirs = parse_changes(snap.changes)
        problem = find_conflict(
            ours, theirs, our_deleted_files=our_files,
            their_deleted_files=_files_deleted_in(conn, snap.snapshot_id, theirs), schema_names=schema_names,
        )
        if problem:
            raise ConflictError(f"conflict with snapshot {snap.snapshot_id}: {problem}")


def _schema_names(conn: sa.Connection) -> dict[str, str]:
    sc = T["ducklake_schema"]
    return {str(i): n for i, n in conn.execute(sa.select(sc.c.schema_id, sc.c.schema_name))}


def _files_deleted_in(conn: sa.Connection, snapshot_id: int, changes: list) -> set[int]:
    """Data file ids a snapshot deleted from (delete files, ended files, inlined deletes), plus each table's
    inlined-rows key when it ended inlined rows."""
    dl, df = T["ducklake_delete_file"], T["ducklake_data_file"]
    ids = set(conn.execute(sa.select(dl.c.data_file_id).where(dl.c.begin_snapshot == snapshot_id)).scalars())
    ids |= set(conn.execute(sa.select(df.c.data_file_id).where(df.c.end_snapshot == snapshot_id)).scalars())
    for table_id in {int(c.value) for c in changes if c.kind == "inlined_delete" and c.value.isdigit()}:
        ids |= inlined_tables.files_deleted_at(conn, table_id, snapshot_id)
    return ids
