"""One snapshot per commit: a short catalog transaction with the spec's conflict rules and retries.

A commit is a list of operations (`ddl_ops`, `data_ops`). Each attempt opens a transaction, queues behind our
other writers (the catalog database's `Dialect` says how), checks the snapshots committed since our read
snapshot against the spec's conflict rules, lets every operation write its rows with ids drawn from the *current*
counters, and inserts the snapshot's `changes_made` row last. The snapshot row itself goes in first, before any
other row is written, as the reference does: a writer that does not queue (DuckDB) and races for the same
snapshot id then meets us on that row's primary key before either holds another lock (the loser waits for the
winner, fails on the key and retries) instead of deadlocking on table stats or file ids taken in the other order.
A lost race (primary-key violation, serialization failure) rolls the whole attempt back and retries with fresh
ids; data files are never rewritten.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Protocol

import sqlalchemy as sa

from ..errors import ConflictError, DuckLakeError
from ..spec.commit_properties import CommitProperties
from ..spec.model import Snapshot
from ..spec.names import schema_key
from ..spec.snapshot_changes import DELETE_KINDS, Change, parse_changes, render_changes
from .conflicts import FLUSHED_DELETES, find_conflict
from .database.dialects import Dialect, dialect_for
from .database.spec_tables import T
from .database.transactions import queue_behind_other_writers, write_transaction
from .inlined import tables as inlined_tables
from .reads import reader

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry a commit that lost a race: the reference's settings
    `ducklake_max_retry_count`, `ducklake_retry_wait_ms`, `ducklake_retry_backoff` (catalog/retry_settings.py)."""

    max_retries: int = 10
    wait_ms: float = 100.0
    backoff: float = 1.5

    def delay(self, attempt: int) -> float:
        """Seconds to sleep before retry `attempt` (1-based): wait_ms * backoff^(attempt-1), times a random
        0.5-1.0 as the reference draws it (so racing writers spread out)."""
        return self.wait_ms * random.uniform(0.5, 1.0) * self.backoff ** (attempt - 1) / 1000.0


@dataclass
class CommitContext:
    """What operations see while writing one snapshot's rows."""

    conn: sa.Connection
    dialect: Dialect
    data_path: str
    base: Snapshot  # the newest snapshot when this attempt started
    snapshot_id: int
    next_catalog_id: int
    next_file_id: int
    schema_changed: bool = False
    changes: list[Change] = field(default_factory=list)
    newer: list[Change] = field(default_factory=list)  # what snapshots after our read snapshot changed
    deleted_files: set[int] = field(default_factory=set)
    now: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    inlining_limit: int | None = None  # the committing handle's data_inlining_row_limit (below catalog options)

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

    def touched(self, table_id: int, kind: str) -> bool:
        """Whether a snapshot committed after our read snapshot made a `kind` change to the table."""
        return any(c.kind == kind and c.value == str(table_id) for c in self.newer)

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
    info: CommitProperties | None = None,
    retry: RetryPolicy | None = None,
    inlining_limit: int | None = None,
) -> int:
    """Commit the operations as one new snapshot; returns its id. ConflictError leaves the catalog untouched.
    `inlining_limit`: the handle's attach-time data_inlining_row_limit, for operations that check it."""
    info = info or CommitProperties()
    retry = retry or RetryPolicy()
    attempt = 0
    while True:
        based_on: list[int] = []  # the newest snapshot the attempt saw, once it got that far
        try:
            return _attempt(engine, operations, read_snapshot, data_path, info, based_on, inlining_limit)
        except ConflictError:
            raise
        except (sa.exc.IntegrityError, sa.exc.OperationalError, sa.exc.DBAPIError) as exc:
            if not _is_race(exc) or (isinstance(exc, sa.exc.IntegrityError) and not _moved_on(engine, based_on)):
                raise
            attempt += 1
            if attempt > retry.max_retries:
                raise ConflictError(
                    f"gave up after {retry.max_retries} retries: other writers kept committing first (raise "
                    f"ducklake_max_retry_count, e.g. lake.sql('SET ducklake_max_retry_count = "
                    f"{max(retry.max_retries, 1) * 10}'))"
                ) from exc
            log.debug("commit lost a race (attempt %d), retrying: %s", attempt, exc.__class__.__name__)
            time.sleep(retry.delay(attempt))


def _moved_on(engine: sa.Engine, based_on: list[int]) -> bool:
    """Whether another writer committed a snapshot since the failed attempt looked: only then was a key
    violation a lost race (otherwise it is a real error, and retrying would only hide it)."""
    if not based_on:
        return True
    with engine.connect() as conn:
        return reader.latest_snapshot(conn).snapshot_id > based_on[0]


def _is_race(exc: sa.exc.DBAPIError) -> bool:
    if isinstance(exc, sa.exc.IntegrityError):
        return True
    text = str(exc.orig if getattr(exc, "orig", None) is not None else exc).lower()
    markers = ("could not serialize", "deadlock", "database is locked", "conflict", "busy",
               "try restarting transaction")
    return any(marker in text for marker in markers)


def _attempt(engine: sa.Engine, operations: Any, read_snapshot: int, data_path: str, info: CommitProperties,
             based_on: list[int], inlining_limit: int | None) -> int:
    with write_transaction(engine, queued=False) as conn:
        if not any(change.kind in _DDL_KINDS for op in operations for change in op.intents()):
            for op in operations:  # reads that stay valid while we queue (DDL in the commit would change them)
                if hasattr(op, "prepare"):
                    op.prepare(conn)
        checked_later = conn.dialect.name == "postgresql"  # in the snapshot's own statement: no round trip
        if not info.commit_message and not checked_later:
            _check_message_optional(conn)
        queue_behind_other_writers(conn)
        return _write_snapshot(conn, operations, read_snapshot, data_path, info, based_on,
                               check_message=checked_later, inlining_limit=inlining_limit)


@contextmanager
def preview(engine: sa.Engine, operations: list[Operation], *, read_snapshot: int, data_path: str,
            inlining_limit: int | None = None) -> Iterator[tuple[sa.Connection, int]]:
    """(connection, snapshot id) of the catalog as it would be after committing `operations`, inside a transaction
    that is rolled back when the block ends: an open transaction reads its own staged changes, nobody else does.
    It queues like a commit (other writers wait for the block), and raises ConflictError as the commit would."""
    dialect = dialect_for(engine)
    with engine.connect().execution_options(**dialect.write_options) as conn:
        transaction = conn.begin()
        try:
            if not any(change.kind in _DDL_KINDS for op in operations for change in op.intents()):
                for op in operations:
                    if hasattr(op, "prepare"):
                        op.prepare(conn)
            queue_behind_other_writers(conn)
            yield conn, _write_snapshot(conn, operations, read_snapshot, data_path, CommitProperties(), [],
                                        require_changes=False, inlining_limit=inlining_limit)
        finally:
            transaction.rollback()
            dialect.unlock_commits(conn)


def _write_snapshot(conn: sa.Connection, operations: Any, read_snapshot: int, data_path: str, info: CommitProperties,
                    based_on: list[int], *, require_changes: bool = True, check_message: bool = False,
                    inlining_limit: int | None = None) -> int:
    """Check conflicts, apply the operations and insert the snapshot rows, in `conn`'s queued transaction.

    `check_message` (PostgreSQL): the insert also returns the lake's require_commit_message option, refused
    (rolling back the whole transaction) when the commit has no message."""
    # One query for the newest snapshot and everything committed since we read.
    recent = reader.list_snapshots(conn, since=read_snapshot - 1) or [reader.latest_snapshot(conn)]
    base = recent[-1]
    based_on.append(base.snapshot_id)
    snapshot_id = base.snapshot_id + 1
    newer = [snap for snap in recent if snap.snapshot_id > read_snapshot]
    if newer:
        _check_conflicts(conn, operations, newer)
    ctx = CommitContext(
        conn=conn, dialect=dialect_for(conn), data_path=data_path, base=base, snapshot_id=snapshot_id,
        next_catalog_id=base.next_catalog_id, next_file_id=base.next_file_id,
        newer=[change for snap in newer for change in parse_changes(snap.changes)], inlining_limit=inlining_limit,
    )
    # The snapshot's primary key is the serialization point with writers that do not queue (the reference), so
    # it is claimed before any other row: if one took this id meanwhile, the insert fails (after waiting for it to
    # commit) and the whole attempt retries. The counters are placeholders until the operations have run.
    snapshot = T["ducklake_snapshot"]
    conn.execute(snapshot.insert().values(
        snapshot_id=snapshot_id, snapshot_time=ctx.now, schema_version=base.schema_version,
        next_catalog_id=base.next_catalog_id, next_file_id=base.next_file_id,
    ))
    for op in operations:
        op.apply(ctx)
    if not ctx.changes and require_changes:
        raise DuckLakeError("nothing to commit")
    counters = (ctx.schema_version, ctx.next_catalog_id, ctx.next_file_id)
    update = None
    if counters != (base.schema_version, base.next_catalog_id, base.next_file_id):
        update = snapshot.update().where(snapshot.c.snapshot_id == snapshot_id).values(
            schema_version=ctx.schema_version, next_catalog_id=ctx.next_catalog_id, next_file_id=ctx.next_file_id)
    changes = T["ducklake_snapshot_changes"].insert().values(
        snapshot_id=snapshot_id, changes_made=render_changes(ctx.changes), author=info.author,
        commit_message=info.commit_message, commit_extra_info=info.extra_info,
    )
    if conn.dialect.name == "postgresql":  # one round trip while other writers queue: a data-modifying CTE
        statement = changes if update is None else changes.add_cte(update.cte("snapshot_counters"))
        if check_message and not info.commit_message:
            statement = statement.returning(_message_option().scalar_subquery())
            _refuse_without_message(conn.execute(statement).scalar())
        else:
            conn.execute(statement)
    else:
        if update is not None:
            conn.execute(update)
        conn.execute(changes)
    return snapshot_id


def _check_message_optional(conn: sa.Connection) -> None:
    """The lake option `require_commit_message` refuses commits without a message, as the reference does."""
    _refuse_without_message(conn.execute(_message_option()).scalar())


def _message_option() -> sa.Select[Any]:
    md = T["ducklake_metadata"]
    return sa.select(md.c.value).where(md.c.key == "require_commit_message", md.c.scope.is_(None))


def _refuse_without_message(value: str | None) -> None:
    if value is not None and value.strip().lower() in ("true", "1"):
        raise DuckLakeError("Commit Information for the snapshot is required but has not been provided. This "
                            "lake requires a commit message (option require_commit_message): pass commit_message=... "
                            "(in SQL: CALL lake.set_commit_message(...) inside BEGIN), or "
                            "set_option('require_commit_message', False)")


_DDL_KINDS = {"created_schema", "dropped_schema", "created_table", "dropped_table", "altered_table",
              "created_view", "dropped_view", "altered_view", "created_scalar_macro", "created_table_macro",
              "dropped_scalar_macro", "dropped_table_macro"}


def _check_conflicts(conn: sa.Connection, operations: Any, newer: list[Snapshot]) -> None:
    ours = [change for op in operations for change in op.intents()]
    our_files: set[int] | None = set()  # None: "every file of the table" (an overwrite)
    for op in operations:
        ids: set[int] | None = getattr(op, "deleted_file_ids", set())
        our_files = None if ids is None or our_files is None else our_files | ids
    deleting = {c.value for c in ours if c.kind in DELETE_KINDS or c.kind == FLUSHED_DELETES}
    snapshots = [(snap.snapshot_id, parse_changes(snap.changes)) for snap in newer]
    # Catalog lookups only when a rule needs them: they run while other writers queue behind us.
    drops = any(c.kind == "dropped_schema" for c in ours) or any(
        c.kind == "dropped_schema" for _sid, theirs in snapshots for c in theirs)
    schema_names = _schema_names(conn) if drops else {}
    for snapshot_id, theirs in snapshots:
        both_delete = any(c.kind in DELETE_KINDS and c.value in deleting for c in theirs)
        problem = find_conflict(
            ours, theirs, our_deleted_files=our_files,
            their_deleted_files=_files_deleted_in(conn, snapshot_id, theirs) if both_delete else None,
            schema_names=schema_names,
        )
        if problem:
            raise ConflictError(f"conflict with snapshot {snapshot_id}: {problem}")


def _schema_names(conn: sa.Connection) -> dict[str, str]:
    """Every schema id (dropped ones too) and the name it goes by: a nested schema's by its path (DuckLake 1.1),
    as created_table / created_view name it."""
    sc = T["ducklake_schema"]
    if not reader.nested_schemas(conn):
        return {str(i): n for i, n in conn.execute(sa.select(sc.c.schema_id, sc.c.schema_name))}
    rows = {r.schema_id: r for r in conn.execute(sa.select(sc.c.schema_id, sc.c.schema_name, sc.c.parent_schema_id))}
    parents = {i: r.parent_schema_id for i, r in rows.items()}
    paths = {i: reader.schema_path(i, rows, parents) for i in rows}
    return {str(i): schema_key(path) if path else rows[i].schema_name for i, path in paths.items()}


def _files_deleted_in(conn: sa.Connection, snapshot_id: int, changes: list[Any]) -> set[int]:
    """Data file ids a snapshot deleted from (delete files, ended files, inlined deletes), plus each table's
    inlined-rows key when it ended inlined rows."""
    dl, df = T["ducklake_delete_file"], T["ducklake_data_file"]
    # a partial delete file begins with its oldest deletion; its newest (the committing snapshot) is partial_max
    ids = set(conn.execute(sa.select(dl.c.data_file_id).where(
        sa.or_(dl.c.begin_snapshot == snapshot_id, dl.c.partial_max == snapshot_id))).scalars())
    ids |= set(conn.execute(sa.select(df.c.data_file_id).where(df.c.end_snapshot == snapshot_id)).scalars())
    for table_id in {int(c.value) for c in changes if c.kind == "inlined_delete" and c.value.isdigit()}:
        ids |= inlined_tables.files_deleted_at(conn, table_id, snapshot_id)
    return ids
