"""Planning the lake table reads of one `lake.sql` query: one catalog snapshot per statement, one plan per table.

A `StatementReads` is made per statement. It reads the statement's snapshot once (the open transaction's start,
the attached one, or the latest) and the tables visible at it once, and resolves every plain reference against
that listing (name case, columns). Each distinct read (table, snapshot, pushed predicate, virtual columns) is
planned once, however often the query names it: every reference to it becomes the same DataFrame, so Spark binds
one view for it. Outside a transaction, planned reads are also kept on the lake handle (`PlanCache`) for later
statements: a snapshot's files never change, so a plan is reused only while the latest snapshot is the one it was
planned at (a commit by anyone invalidates it) and only for the same Spark session.

The cache also keeps, per statement text, what sqlglot made of it (`PlannedStatement`: the Spark SQL and the reads
it names), so a statement run again at the same snapshot is neither parsed nor translated again. On classic
sessions each cached read is a global temporary view (`global_temp.__ducklake_plan_<handle>_<n>`, out of
`SHOW TABLES`), created once and dropped when its snapshot stops being the latest: binding a DataFrame to a view
is a Spark command (60-300 ms on a loaded machine) that PySpark's `spark.sql(text, df=...)` would pay, and undo,
at every statement. Spark resolves a view when it analyzes the query, so a dropped view never breaks a DataFrame
made before; a statement racing a drop falls back to binding its reads for the call. Over Spark Connect the reads
travel inside the query's plan, as before.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..catalog.reads import reader
from ..dataplane.arrow.storage import is_connect
from ..dataplane.spark.virtual_columns import check_virtual
from .geometry import geometry_paths, mark_geometry
from .references import CatalogNames, QueryContext, TableRef

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from ..spec.model import TableInfo

PLAN_CACHE_SIZE = 64  # planned reads kept per handle (each holds a DataFrame and its file list)
STATEMENT_CACHE_SIZE = 64  # translated statements kept per handle
VIEW_LIMIT = 4 * PLAN_CACHE_SIZE  # views of one snapshot before they are all dropped and made again as needed
VIEW_PREFIX = "__ducklake_plan_"
_CACHE_ATTR = "_sql_plan_cache"  # an attribute of the lake handle, as the open transaction is (session.py)


@dataclass(frozen=True)
class PlannedStatement:
    """A query statement as Spark runs it: Spark SQL whose `{key}` placeholders name `frames` (other braces
    doubled, as `spark.sql(text, **frames)` takes it)."""

    text: str
    frames: dict[str, DataFrame]


class PlanCache:
    """Planned reads and translated statements of one handle, valid while the latest snapshot and the Spark
    session stay the same (a generation); on classic sessions, the global temporary views of its reads."""

    def __init__(self):
        self._lock = threading.Lock()
        self._frames: OrderedDict[tuple, DataFrame] = OrderedDict()
        self._statements: OrderedDict[tuple, PlannedStatement] = OrderedDict()
        self._views: dict[int, tuple[DataFrame, str, str]] = {}  # id(frame) -> (frame, name, qualified)
        self._token = uuid.uuid4().hex[:12]
        self._count = 0
        self._view_db: str | None = None
        self._snapshot: int | None = None
        self._spark = None
        self._names: CatalogNames | None = None

    def _generation(self, latest: int, spark) -> list:
        """Start a new generation if `latest` or `spark` changed (under the lock); returns the views to drop."""
        if latest == self._snapshot and (spark is None or spark is self._spark):
            return []
        self._frames.clear()  # a new snapshot (or session): nothing planned before is reused
        self._statements.clear()
        old = self._take_views()
        self._snapshot, self._names = latest, None
        if spark is not None:
            self._spark, self._view_db = spark, None
        return old

    def _take_views(self) -> list:
        """The (session, name) of every view made so far, forgotten here (under the lock); `_drop` drops them."""
        views = [(self._spark, name) for _, name, _ in self._views.values()]
        self._views.clear()
        return views

    def _lookup(self, store: OrderedDict, latest: int, spark, key: tuple):
        """What `store` (plans or statements) keeps under `key` in the generation of `latest` and `spark`."""
        with self._lock:
            old = self._generation(latest, spark)
            found = store.get(key)
            if found is not None:
                store.move_to_end(key)
        self._drop(old)
        return found

    @staticmethod
    def _drop(views: list) -> None:
        for spark, name in views:  # best effort: a view left behind holds no lock and ends with the session
            with contextlib.suppress(Exception):
                spark.catalog.dropGlobalTempView(name)

    def get(self, latest: int, spark, key: tuple, build: Callable[[], DataFrame]) -> DataFrame:
        """The read planned for `key` when `latest` was the newest snapshot, built now if there is none."""
        frame = self._lookup(self._frames, latest, spark, key)
        if frame is not None:
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
            old = self._generation(latest, None)
            names = self._names
        self._drop(old)
        if names is not None:
            return names
        names = build()
        with self._lock:
            if latest == self._snapshot:
                self._names = names
        return names

    def knows(self, key: tuple) -> bool:
        """Whether a statement is kept under `key` (at whatever snapshot): worth reading the snapshot to check."""
        with self._lock:
            return key in self._statements

    def statement(self, latest: int, spark, key: tuple) -> PlannedStatement | None:
        """The statement translated under `key` while `latest` was the newest snapshot, else None."""
        return self._lookup(self._statements, latest, spark, key)

    def keep(self, latest: int, spark, key: tuple, planned: PlannedStatement) -> None:
        """Keep a statement translated at `latest` (only while that is still the generation)."""
        with self._lock:
            if latest == self._snapshot and spark is self._spark:
                self._statements[key] = planned
                while len(self._statements) > STATEMENT_CACHE_SIZE:
                    self._statements.popitem(last=False)

    def run(self, spark, planned: PlannedStatement) -> DataFrame:
        """`spark.sql` of a statement: its reads named by their global temporary views on classic sessions
        (made on first use), bound for the call over Spark Connect or when a view went missing meanwhile."""
        if is_connect(spark) or not planned.frames:
            return spark.sql(planned.text, **planned.frames)
        self._make_room(planned)
        names = {key: self._view(spark, frame) for key, frame in planned.frames.items()}
        if any(name is None for name in names.values()):
            return spark.sql(planned.text, **planned.frames)
        try:
            return spark.sql(planned.text.format(**names))
        except Exception as exc:
            condition = getattr(exc, "getCondition", getattr(exc, "getErrorClass", lambda: None))()
            if condition != "TABLE_OR_VIEW_NOT_FOUND" or VIEW_PREFIX not in str(exc):
                raise
        return spark.sql(planned.text, **planned.frames)  # another statement dropped a view (a new snapshot)

    def _make_room(self, planned: PlannedStatement) -> None:
        """Drop the generation's views now if the statement's new ones would pass VIEW_LIMIT: once its views are
        being made, none of them may go (its text would name a dropped view: a failed `spark.sql`, logged by
        Spark as an ERROR, then bound again)."""
        with self._lock:
            missing = sum(id(frame) not in self._views for frame in planned.frames.values())
            old = self._take_views() if len(self._views) + missing > VIEW_LIMIT else []
        self._drop(old)

    def _view(self, spark, frame: DataFrame) -> str | None:
        """The qualified global temporary view of a statement's read, created on first use; None when the session
        changed meanwhile (the read is then bound for the call)."""
        with self._lock:
            if spark is not self._spark:
                return None
            found = self._views.get(id(frame))
            if found is not None:
                return found[2]
            self._count += 1
            name = f"{VIEW_PREFIX}{self._token}_{self._count}"
            db = self._view_db
        if db is None:
            db = spark.conf.get("spark.sql.globalTempDatabase", "global_temp")
        frame.createOrReplaceGlobalTempView(name)
        qualified = f"`{db.replace('`', '``')}`.`{name}`"
        with self._lock:
            if spark is not self._spark:  # a new session meanwhile: drop it again, bind for the call
                self._drop([(spark, name)])
                return None
            self._view_db = db
            self._views[id(frame)] = (frame, name, qualified)
        return qualified

    def close(self) -> None:
        """Forget everything and drop the handle's global temporary views (the handle is closing)."""
        with self._lock:
            old = self._take_views()
            self._frames.clear()
            self._statements.clear()
            self._snapshot, self._names = None, None
        self._drop(old)

    def __len__(self) -> int:
        return len(self._frames)


def close_plan_cache(lake) -> None:
    """Drop a closing handle's cached plans and views (nothing to do if it never ran a query)."""
    cache = getattr(lake, _CACHE_ATTR, None)
    if cache is not None:
        cache.close()


def plan_cache(lake) -> PlanCache:
    """The handle's plan cache (made on first use)."""
    cache = getattr(lake, _CACHE_ATTR, None)
    if cache is None:
        cache = PlanCache()
        setattr(lake, _CACHE_ATTR, cache)
    return cache


class StatementReads:
    """The lake table reads of one statement, planned against one catalog snapshot."""

    def __init__(self, reads: QueryContext, *, cached: bool, snapshot: int | None = None):
        self.reads = reads
        self.context = reads.lake.context
        self._cached = cached  # outside a transaction: plans may outlive the statement
        self._snapshot: int | None = snapshot  # read already by the caller (queries.cached_query)
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
        if self.reads.dialect == "duckdb":
            paths = geometry_paths(plan.table.columns)  # from the plan's columns: no schema asked of Spark
            if paths:
                frame = mark_geometry(frame, paths)
        return frame
