"""`spark.readStream.format("ducklake")`: a table's new snapshots as micro-batches (Python Data Source API).

Offsets are snapshot ids: a batch covers snapshots (a, b], so a query restarted from its checkpoint neither loses
nor repeats a row. The catalog is read where Spark plans the stream (the driver's Python worker: offsets and one
partition per data file); executors read the files with pyarrow (`arrow_rows.py`). By default a batch holds the
rows its snapshots inserted (what the reference's `table_insertions` returns, updates' new row versions
included); with `include_changes` it holds `table_changes` rows (snapshot_id, rowid, change_type, columns).

Options: the catalog as `catalog_file` (a file holding the attach string: what `read_stream` passes when the
string holds a password, see catalog_ref.py), `catalog_env` (an environment variable holding it) or `catalog` /
`catalog_url` (the attach string itself; file paths absolute, as the planner may run elsewhere), `table` (or the load
path), `data_path`, `starting_snapshot` (`earliest`: every insertion since the table was created, the default;
`latest`: only snapshots committed from now on; or a snapshot id, inclusive), `max_snapshots_per_trigger`
(snapshots that changed the table, per batch), `include_changes`. The stream keeps the columns the table had
when the query started (read by column id, so renames keep the old name until a restart); a later schema change
stops the query with an error telling to restart it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql import types as T
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.pandas.types import to_arrow_schema

from ...catalog.attach import AttachOptions
from ...catalog.encryption import DATA_SOURCE_REFUSED, is_encrypted
from ...catalog.inlined.tables import BEGIN_COL
from ...catalog.planners import stream as stream_plan
from ...catalog.planners.stream import FileTask
from ...catalog.reads import reader
from ...dataplane.arrow import arrow_rows
from ...dataplane.arrow.delete_files import snapshot_range
from ...dataplane.spark import types
from ...spec.model import TableInfo
from ...spec.names import parse_table_name as split_name
from .catalog_ref import CatalogRef

if TYPE_CHECKING:
    from ..context import LakeContext

try:  # Spark 4.2+: read limits and Trigger.AvailableNow for Python sources
    from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxFiles, SupportsTriggerAvailableNow
except ImportError:  # pragma: no cover - older pyspark: every batch reads all available snapshots
    ReadAllAvailable = ReadMaxFiles = None  # type: ignore[assignment,misc]  # the classes, or None without them
    SupportsTriggerAvailableNow = object  # type: ignore[assignment,misc]  # no mixin to add

FORMAT = "ducklake"
OFFSET_KEY = "snapshot_id"


@dataclass(frozen=True)
class StreamOptions:
    """The source's options, parsed."""

    catalog: CatalogRef  # where the attach string is found: never the password itself
    table: str
    data_path: str | None = None
    starting_snapshot: str | int = "earliest"
    max_snapshots_per_trigger: int | None = None
    include_changes: bool = False
    metadata_schema: str | None = None  # the lake's METADATA_SCHEMA, when it has one

    @classmethod
    def parse(cls, options: Any) -> StreamOptions:
        """From the data source's (case-insensitive, string-valued) options."""
        catalog = CatalogRef.from_options(options)
        table = options.get("table") or options.get("path")
        if catalog is None or not table:
            raise ValueError("the ducklake source needs the catalog (option 'catalog_file', 'catalog_env' or "
                             "'catalog') and option 'table' (or a path)")
        start_text = str(options.get("starting_snapshot", "earliest")).strip().lower()
        start: str | int = start_text
        if start_text not in ("earliest", "latest"):
            if not start_text.isdigit():
                raise ValueError(f"starting_snapshot must be 'earliest', 'latest' or a snapshot id, got "
                                 f"{start_text!r}")
            start = int(start_text)
        limit = options.get("max_snapshots_per_trigger")
        if limit is not None and (not str(limit).isdigit() or int(limit) < 1):
            raise ValueError(f"max_snapshots_per_trigger must be a positive integer, got {limit!r}")
        changes = str(options.get("include_changes", "false")).strip().lower()
        if changes not in ("true", "false"):
            raise ValueError(f"include_changes must be true or false, got {changes!r}")
        return cls(catalog=catalog, table=table, data_path=options.get("data_path"), starting_snapshot=start,
                   max_snapshots_per_trigger=int(limit) if limit is not None else None,
                   include_changes=changes == "true", metadata_schema=options.get("metadata_schema") or None)

    def attach_string(self) -> str:
        """The catalog's attach string, read where it is needed (the planner, the sink), never pickled onwards."""
        return self.catalog.resolve()

    def attach(self):
        """The lake, read-only, catalog only."""
        from ..context import LakeContext  # lazy: executors import this module (the stream reader); it needs sqlglot

        return LakeContext.attach(self.attach_string(), AttachOptions(
            data_path=self.data_path, create_if_missing=False, read_only=True, metadata_schema=self.metadata_schema,
            override_data_path=True))  # the data path the reading lake was attached with


def stream_schema(table: TableInfo, include_changes: bool):
    """The stream's Spark schema: the table's columns (nullable), after the change columns if asked."""
    fields = [T.StructField(c.name, types.to_spark_type(c), True) for c in table.columns]
    if include_changes:
        fields = [T.StructField("snapshot_id", T.LongType(), True), T.StructField("rowid", T.LongType(), True),
                  T.StructField("change_type", T.StringType(), True)] + fields
    return T.StructType(fields)


class DuckLakeDataSource(DataSource):
    """The `ducklake` streaming source; resolves the table (and its columns) when the query is defined."""

    @classmethod
    def name(cls) -> str:
        """The format name."""
        return FORMAT

    def __init__(self, options: dict[str, str]):
        super().__init__(options)
        self.settings = StreamOptions.parse(options)
        self.table: TableInfo | None = None
        self.schema_snapshot: int | None = None

    def schema(self):
        """The table's columns as of the newest snapshot (plus the change columns)."""
        schema, name = split_name(self.settings.table)
        ctx = self.settings.attach()
        try:
            with ctx.engine.connect() as conn:
                self.schema_snapshot = stream_plan.latest_snapshot(conn)
                self.table = reader.find_table(conn, self.schema_snapshot, ctx.data_path, schema, name)
        finally:
            ctx.close()
        return stream_schema(self.table, self.settings.include_changes)

    def streamReader(self, schema) -> DuckLakeStreamReader:  # noqa: N802 - Spark's name
        """The reader planning and reading the batches."""
        ours = self.schema() if self.table is None else stream_schema(self.table, self.settings.include_changes)
        if schema.fieldNames() != ours.fieldNames():
            raise ValueError(f"the ducklake source's schema is the table's: {ours.simpleString()}, not "
                             f"{schema.simpleString()}")
        assert self.table is not None and self.schema_snapshot is not None  # schema() resolved them
        return DuckLakeStreamReader(self.settings, self.table, self.schema_snapshot, schema)


class BatchPartition(InputPartition):
    """One task of a batch: data files read together (several only to pair updates) and maybe inlined rows."""

    def __init__(self, start: int, end: int, files: list[FileTask], inlined: pa.Table | None = None):
        super().__init__(None)
        self.start, self.end, self.files, self.inlined = start, end, files, inlined


class DuckLakeStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets and partitions from the catalog (planner side), rows from the files (executors)."""

    def __init__(self, settings: StreamOptions, table: TableInfo, schema_snapshot: int, schema):
        self.settings, self.table, self.schema_snapshot, self.schema = settings, table, schema_snapshot, schema
        self._lake: LakeContext | None = None
        self._spans: dict = {}  # delete file -> snapshots its footer holds (files never change)
        self._until: int | None = None  # Trigger.AvailableNow: the newest snapshot when the query began
        self._last: int | None = None  # the newest offset handed out (for Spark without admission control)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_lake"], state["_spans"] = None, {}  # executors never talk to the catalog
        return state

    def _attached(self) -> LakeContext:
        if self._lake is None:
            self._lake = self.settings.attach()
        return self._lake

    def _conn(self):
        return self._attached().engine.connect()

    def initialOffset(self) -> dict:  # noqa: N802 - Spark's name
        """Where a new query starts: before the table's first snapshot, at the newest, or before the given one."""
        start = self.settings.starting_snapshot
        with self._conn() as conn:
            if start == "latest":
                offset = stream_plan.latest_snapshot(conn)
            elif start == "earliest":
                offset = self.table.begin_snapshot - 1
            else:
                offset = reader.get_snapshot(conn, int(start)).snapshot_id - 1  # parse() made it an int
        self._last = offset
        return {OFFSET_KEY: offset}

    def getDefaultReadLimit(self):  # noqa: N802 - Spark's name
        """max_snapshots_per_trigger, carried as Spark's ReadMaxFiles (counting snapshots)."""
        if self.settings.max_snapshots_per_trigger and ReadMaxFiles is not None:
            return ReadMaxFiles(self.settings.max_snapshots_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:  # noqa: N802 - Spark's name
        """Trigger.AvailableNow: read up to the newest snapshot as of now, in batches as the limit allows."""
        with self._conn() as conn:
            self._until = stream_plan.latest_snapshot(conn)

    def latestOffset(self, start: dict | None = None, limit=None) -> dict:  # noqa: N802 - Spark's name
        """The end of the next batch: the newest snapshot, or fewer snapshots as the read limit says."""
        begin = start[OFFSET_KEY] if start else self._last
        cap: int | None
        if ReadMaxFiles is not None and isinstance(limit, ReadMaxFiles):
            cap = limit.max_files
        elif limit is None:
            cap = self.settings.max_snapshots_per_trigger
        else:
            cap = None
        with self._conn() as conn:
            latest = stream_plan.latest_snapshot(conn)
            if self._until is not None:
                latest = min(latest, self._until)
            if begin is None:
                end = latest
            else:
                end = stream_plan.batch_end(conn, self.table.table_id, begin, latest, cap)
        self._last = end
        return {OFFSET_KEY: end}

    def partitions(self, start: dict, end: dict) -> list[BatchPartition]:
        """One partition per data file holding rows of snapshots (start, end], one for inlined rows; in change
        mode files sharing a snapshot with deletions go together (an update's halves meet in one task)."""
        first, last = start[OFFSET_KEY] + 1, end[OFFSET_KEY]
        if last < first:
            return []
        changes = self.settings.include_changes
        with self._conn() as conn:
            if is_encrypted({"encrypted": self._attached().option("encrypted")}):  # tasks have no AES (docs/types.md)
                raise ValueError(DATA_SOURCE_REFUSED.format(verb="stream", table=self.table.qualified_name,
                                                            method="table_changes"))
            stream_plan.check_columns(conn, self.table, last, self.schema_snapshot)
            plan = stream_plan.plan_batch(conn, self.table, first, last, deletes=changes, delete_spans=self._spans,
                                          snapshot_range=snapshot_range)
        if changes:
            return [BatchPartition(first, last, files, plan.inlined if inlined else None)
                    for files, inlined in stream_plan.change_groups(plan)]
        parts = [BatchPartition(first, last, [f]) for f in plan.files]
        if plan.inlined is not None:
            import pyarrow.compute as pc

            begins = plan.inlined.column(BEGIN_COL)
            new = plan.inlined.filter(pc.and_(pc.greater_equal(begins, first), pc.less_equal(begins, last)))
            if new.num_rows:
                parts.append(BatchPartition(first, last, [], new))
        return parts

    def read(self, partition: BatchPartition):  # type: ignore[override]  # Spark hands back partitions() ones
        """The partition's rows as Arrow record batches in the stream's schema."""
        full = to_arrow_schema(self.schema, timezone="UTC")
        changes = self.settings.include_changes
        columns = pa.schema(list(full)[3:]) if changes else full
        parts = [arrow_rows.file_versions(f, self.table.columns, columns, partition.start, partition.end,
                                          deletes=changes) for f in partition.files]
        if partition.inlined is not None:
            parts.append(arrow_rows.inlined_versions(partition.inlined, self.table.columns, columns))
        if not parts:
            return
        versions = pa.concat_tables(parts)
        out = (arrow_rows.changes(versions, columns, partition.start, partition.end) if changes
               else arrow_rows.insertions(versions, columns, partition.start, partition.end))
        yield from out.to_batches(max_chunksize=65536)

    def commit(self, end: dict) -> None:
        """Nothing to release: offsets live in Spark's checkpoint."""

    def stop(self) -> None:
        """Release the catalog connections."""
        if self._lake is not None:
            self._lake.close()
            self._lake = None
