"""Planning the lake table reads of one `lake.sql` query: one catalog snapshot per statement, one plan per table.

A `StatementReads` is made per statement. It reads the statement's snapshot once (the open transaction's start,
the attached one, or the latest) and the tables visible at it once, and resolves every plain reference against
that listing (name case, columns). Each distinct read (table, snapshot, pushed predicate, virtual columns) is
planned once, however often the query names it: every reference to it becomes the same DataFrame, so Spark binds
one view for it. Outside a transaction, planned reads are also kept on the lake handle (`PlanCache`) for later
statements: a snapshot's files never change, so a plan is reused only while the latest snapshot is the one it was
planned at (a commit by anyone invalidates it) and only for the same Spark session.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..catalog.reads import reader
from ..spark.virtual_columns import check_virtual
from .references import CatalogNames, QueryContext, TableRef

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from ..spec.model import TableInfo

PLAN_CACHE_SIZE = 64  # planned reads kept per handle (each holds a DataFrame and its file list)
_CACHE_ATTR = "_sql_plan_cache"  # an attribute of the lake handle, as the open transaction is (session.py)


class PlanCache:
    """Planned reads of one handle, valid while the latest snapshot and the Spark session stay the same."""

    def __init__(self):
        self._lock = threading.Lock()
        self._frames: OrderedDict[tuple, DataFrame] = OrderedDict()
        self._snapshot: int | None = None
        self._spark = None
        self._names: CatalogNames | None = None

    def get(self, latest: int, spark, key: tuple, build: Callable[[], DataFrame]) -> DataFrame:
        """The read planned for `key` when `latest` was the newest snapshot, built now if there is none."""
        with self._lock:
            if latest != self._snapshot or spark is not self._spark:
                self._frames.clear()  # a new snapshot (or session): nothing planned before is reused
                self._snapshot, self._spark, self._names = latest, spark, None
            frame = self._frames.get(key)
            if frame is not None:
                self._frames.move_to_end(key)
                return frame
        frame = build()
        with self._lock:
            if latest == self._snapshot and spark is self._spark:
                self._frames[key] = frame
                while len(self._frames) > PLAN_CACHE_SIZE:
                    self._frames.popitem(last=False)
        return frame

    def names(self, latest: int, build: Callable[[], CatalogNames]) -> CatalogNames:
        """The tables visible at `latest`, read once while it is the newest snapshot."""
        with self._lock:
            if latest != self._snapshot:
                self._frames.clear()  # planned at an older snapshot
                self._snapshot, self._names = latest, None
            elif self._names is not None:
                return self._names
        names = build()
        with self._lock:
            if latest == self._snapshot:
                self._names = names
        return names

    def __len__(self) -> int:
        return len(self._frames)


def plan_cache(lake) -> PlanCache:
    """The handle's plan cache (made on first use)."""
    cache = getattr(lake, _CACHE_ATTR, None)
    if cache is None:
        cache = PlanCache()
        setattr(lake, _CACHE_ATTR, cache)
    return cache


class StatementReads:
    """The lake table reads of one statement, planned against one catalog snapshot."""

    def __init__(self, reads: QueryContext, *, cached: bool):
        self.reads = reads
        self.context = reads.lake.context
        self._cached = cached  # outside a transaction: plans may outlive the statement
        self._snapshot: int | None = None
        self._names: CatalogNames | None = None
        self._snapshots: dict[tuple, int] = {}
        self._tables: dict[tuple, TableInfo] = {}
        self._frames: dict[tuple, DataFrame] = {}
        self._spark = None

    @property
    def spark(self):
        """The handle's Spark session, prepared once for the statement (each preparation asks Spark for confs)."""
        if self._spark is None:
            self._spark = self.reads.lake.spark
        return self._spark

    @property
    def snapshot(self) -> int:
        """The snapshot plain references read: read from the catalog once per statement."""
        if self._snapshot is None:
            with self.context.connect() as conn:
                self._snapshot = self.context.snapshot_id(conn, self.reads.snapshot)
        return self._snapshot

    @property
    def names(self) -> CatalogNames:
        """Schemas and tables visible at the statement's snapshot (one catalog read)."""
        if self._names is None:
            if self._cached:  # a snapshot's tables never change: kept with the plans made at it
                self._names = plan_cache(self.reads.lake).names(self.snapshot, self._read_names)
            else:
                self._names = self._read_names()
        return self._names

    def _read_names(self) -> CatalogNames:
        snap = self.snapshot
        with self.context.connect() as conn:
            schemas = {s.name for s in reader.list_schemas(conn, snap, self.context.data_path)}
            tables = reader.list_tables(conn, snap, self.context.data_path)
        return CatalogNames(schemas, {(t.schema_name, t.name): t for t in tables})

    def snapshot_of(self, ref: TableRef) -> int:
        """The snapshot id a reference reads (its time travel checked against the catalog once per statement)."""
        if ref.version is None and ref.timestamp is None:
            return self.snapshot
        key = (ref.version, ref.timestamp)
        if key not in self._snapshots:
            with self.context.connect() as conn:
                self._snapshots[key] = self.context.snapshot_id(conn, ref.version, ref.timestamp)
        return self._snapshots[key]

    def table(self, ref: TableRef) -> TableInfo:
        """The referenced table as of the snapshot it reads; NotFoundError names what is missing."""
        snap = self.snapshot_of(ref)
        if snap == self.snapshot:
            found = self.names.tables.get((ref.schema, ref.name))
            if found is not None:
                return found
        key = (ref.schema, ref.name, snap)
        if key not in self._tables:
            with self.context.connect() as conn:
                self._tables[key] = reader.find_table(conn, snap, self.context.data_path, ref.schema, ref.name)
        return self._tables[key]

    def frame(self, ref: TableRef, virtual: tuple[str, ...]) -> DataFrame:
        """The reference's rows as a DataFrame, files pruned by its pushed predicate (which the query applies
        itself): planned once per statement for every reference reading the same thing."""
        snap = self.snapshot_of(ref)
        where = ref.where()
        key = (ref.schema, ref.name, snap, where, tuple(virtual), self.reads.dialect)
        frame = self._frames.get(key)
        if frame is not None:
            return frame
        build = lambda: self._build(ref, snap, where, virtual)  # noqa: E731 - one build for both paths
        if self._cached:
            frame = plan_cache(self.reads.lake).get(self.snapshot, self.spark, key, build)
        else:
            frame = build()
        self._frames[key] = frame
        return frame

    def _build(self, ref: TableRef, snap: int, where: str | None, virtual: tuple[str, ...]) -> DataFrame:
        travel = ref.version is not None or ref.timestamp is not None
        # inside BEGIN plain references read the transaction's staged state, which plan_scan addresses as latest
        version = snap if travel or self._cached or self.reads.snapshot is not None else None
        plan = self.context.plan_scan((ref.schema, ref.name), version=version, where=where,
                                      inlined_sources=bool(virtual))
        frame = plan.to_dataframe(self.spark, virtual=check_virtual(virtual, [c.name for c in plan.table.columns]))
        if self.reads.dialect == "duckdb" and "binary" in frame.schema.simpleString():
            from .geometry import geometry_columns, mark_geometry  # shown as GEOMETRY in results (geometry.py)

            frame = mark_geometry(frame, geometry_columns(self.reads.lake, (ref.schema, ref.name), snap, None))
        return frame
