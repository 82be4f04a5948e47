"""`spark.read.format("ducklake")`: batch reads of a table at a snapshot through Spark's Python Data Source API.

The source is the streaming source's class (`operations/streaming/source.py`, one class per format name) with a batch
reader added. Where Spark plans the read (the driver's Python worker) the catalog gives the table at the snapshot
(`versionAsOf`, default the newest) and one partition per live data file; executors read the files with pyarrow
(`dataplane/arrow/arrow_rows.py`: columns by field id, defaults for missing columns, deletions by
snapshot) and keep the rows alive at the snapshot. With `spark.sql.python.filterPushdown.enabled` (Spark
4.1+, off by default) filters on top-level columns prune files by the catalog's min/max stats; Spark still
applies every filter, so pruning
never changes a result. The Python API has no column pruning and reads slower than `lake.read` (bench/datasource.py).

`df.write.format("ducklake").mode("append" | "overwrite").option("table", ...).save()` writes an existing
table as `lake.write` would (operations/datasource_write.py): tasks write Parquet files with pyarrow, split by the
table's partition keys, or hand small batches back for the planner to inline; one snapshot (overwrite: the table's
rows end in that same snapshot). Files are not sorted by SET SORTED BY keys.

Options: the catalog (`catalog_file`, `catalog_env` or `catalog`: see streaming/catalog_ref.py), `table` (or the
load path), `data_path`, `versionAsOf`, `filterPushdown`
(Spark refuses a source implementing pushdown while its conf is off, so this option must follow the conf).
`lake.register()` (or `register(spark, lake)`) registers the source with that lake's catalog and data path, and
the session's pushdown conf at that time, as defaults.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition
from pyspark.sql.pandas.types import to_arrow_schema

from ..catalog.changes.partitioning import current_spec
from ..catalog.encryption import DATA_SOURCE_REFUSED
from ..catalog.planners import stream as stream_plan
from ..catalog.reads import reader
from ..dataplane.arrow import arrow_rows
from ..dataplane.arrow.delete_files import snapshot_range
from ..dataplane.arrow.write_options import rows_per_file
from ..spec.names import parse_table_name as split_name
from .datasource_write import DuckLakeWriter
from .streaming.catalog_ref import (
    ENV_OPTION,
    FILE_OPTION,
    PLAIN_OPTIONS,
    attach_string,
    catalog_options,
    metadata_schema_option,
)
from .streaming.source import FORMAT, DuckLakeDataSource, StreamOptions, stream_schema

if TYPE_CHECKING:
    from .context import LakeContext

CATALOG_KEYS = (FILE_OPTION, ENV_OPTION, *PLAIN_OPTIONS)
_FILTERS = {"EqualTo": "=", "GreaterThan": ">", "GreaterThanOrEqual": ">=", "LessThan": "<",
            "LessThanOrEqual": "<="}


def _option(options: Any, name: str) -> str | None:
    """An option by case-insensitive name (Spark hands them over lower-cased or as written)."""
    for key, value in dict(options).items():
        if key.lower() == name.lower():
            return value
    return None


class DuckLakeBatchSource(DuckLakeDataSource):
    """The `ducklake` format: the streaming source plus batch reads at a snapshot."""

    defaults: dict[str, str] = {}  # set on the subclass `register(lake)` makes

    def __init__(self, options: dict[str, str]):
        given = {k.lower(): v for k, v in dict(options).items()}
        defaults = self.defaults
        if any(given.get(key) for key in CATALOG_KEYS):  # the caller's catalog, however given, replaces the lake's
            defaults = {k: v for k, v in defaults.items() if k not in CATALOG_KEYS}
        merged = {**defaults, **given}
        super().__init__(merged)
        version = _option(merged, "versionAsOf")
        if version is not None and not str(version).strip().isdigit():
            raise ValueError(f"versionAsOf must be a snapshot id, got {version!r}")
        self.version = int(version) if version is not None else None

    def schema(self):
        """The table's columns as of `versionAsOf` (default: the newest snapshot)."""
        if self.version is None:
            return super().schema()

        schema, name = split_name(self.settings.table)
        lake = self.settings.attach()
        try:
            with lake.engine.connect() as conn:
                reader.get_snapshot(conn, self.version)
                self.schema_snapshot = self.version
                self.table = reader.find_table(conn, self.version, lake.data_path, schema, name)
        finally:
            lake.close()
        return stream_schema(self.table, False)

    def writer(self, schema, overwrite: bool) -> DuckLakeWriter:
        """The batch writer: files written (or rows handed back) by the tasks, one snapshot committed by `commit`."""
        if self.version is not None:
            raise ValueError("versionAsOf is a read option: a write always goes to the newest snapshot")
        table, name = split_name(self.settings.table)
        explicit = _option(self.options, "data_inlining_row_limit")
        if explicit is not None and not str(explicit).strip().isdigit():
            raise ValueError(f"data_inlining_row_limit must be a row count, got {explicit!r}")
        lake = self.settings.attach()
        if explicit is not None:
            lake.data_inlining_row_limit = int(explicit)  # as lake.write on a handle attached with it
        try:
            with lake.engine.connect() as conn:
                snapshot = reader.latest_snapshot(conn).snapshot_id
                info = reader.find_table(conn, snapshot, lake.data_path, table, name)
                info.partition = current_spec(conn, info.table_id, snapshot)
                limit = lake.inlining_limit(info, conn)
                options = lake.write_options(info, conn)  # one read of the options, not one per key
        finally:
            lake.close()
        if options.encrypted:  # refused here, on the driver, before any task writes
            raise ValueError(DATA_SOURCE_REFUSED.format(verb="write to", table=info.qualified_name, method="write"))
        by_name = {c.name.lower(): c for c in info.columns}
        names = [f.name.lower() for f in schema.fields]
        if sorted(names) != sorted(by_name):
            raise ValueError(f"format('ducklake') writes need the table's columns {[c.name for c in info.columns]}, "
                             f"got {schema.fieldNames()} (lake.write(..., merge_schema=True) evolves the schema)")
        return DuckLakeWriter(self.settings, info, snapshot, overwrite, limit=limit, options=options,
                              rows_per_file=rows_per_file(info, options))

    def reader(self, schema) -> DuckLakeBatchReader:
        """The batch reader at the source's snapshot."""
        ours = self.schema() if self.table is None else None
        if ours is not None and schema.fieldNames() != ours.fieldNames():
            raise ValueError(f"the ducklake source's schema is the table's: {ours.simpleString()}")
        # Spark refuses a reader that has pushFilters while its conf is off: the option picks the class
        pushdown = str(_option(self.options, "filterPushdown") or "false").strip().lower() == "true"
        cls = PushdownBatchReader if pushdown else DuckLakeBatchReader
        assert self.schema_snapshot is not None  # schema() above (or Spark's call before) read it
        return cls(self.settings, self.table, self.schema_snapshot, schema)


class FilePartition(InputPartition):
    """One data file (or the inlined rows) of a batch read."""

    def __init__(self, task=None, inlined: pa.Table | None = None):
        super().__init__(None)
        self.task, self.inlined = task, inlined


class DuckLakeBatchReader(DataSourceReader):
    """Partitions from the catalog at the snapshot; rows alive at it from the files."""

    def __init__(self, settings: StreamOptions, table, snapshot: int, schema):
        self.settings, self.table, self.snapshot, self.schema = settings, table, snapshot, schema
        self.where: str | None = None

    def partitions(self) -> list[FilePartition]:
        """One partition per data file live at the snapshot (after pruning), one for the inlined rows."""
        lake = self.settings.attach()
        try:
            key = f"{self.table.schema_name}.{self.table.name}"
            scan = lake.plan_scan(key, version=self.snapshot, where=self.where)
            if any(f.encryption_key or (f.delete_file is not None and f.delete_file.encrypted) for f in scan.files):
                raise ValueError(DATA_SOURCE_REFUSED.format(verb="read", table=key, method="read"))
            kept = {f.path for f in scan.files}
            with lake.engine.connect() as conn:
                plan = stream_plan.plan_batch(conn, self.table, 0, self.snapshot, deletes=True,
                                              snapshot_range=snapshot_range)
        finally:
            lake.close()
        parts = [FilePartition(task=f) for f in plan.files if f.file_end is None and f.path in kept]
        if plan.inlined is not None and plan.inlined.num_rows:
            parts.append(FilePartition(inlined=plan.inlined))
        return parts or [FilePartition()]

    def read(self, partition: FilePartition):  # type: ignore[override]  # Spark hands back partitions() ones
        """The partition's rows alive at the snapshot, as Arrow record batches."""
        import pyarrow.compute as pc

        columns = to_arrow_schema(self.schema, timezone="UTC")
        if partition.task is not None:
            versions = arrow_rows.file_versions(partition.task, self.table.columns, columns, 0, self.snapshot,
                                                deletes=True)
        elif partition.inlined is not None:
            versions = arrow_rows.inlined_versions(partition.inlined, self.table.columns, columns)
        else:
            return
        inserted, deleted = versions.column(arrow_rows.INSERTED), versions.column(arrow_rows.DELETED)
        alive = pc.and_kleene(pc.less_equal(inserted, self.snapshot),
                              pc.or_kleene(pc.is_null(deleted), pc.greater(deleted, self.snapshot)))
        out = versions.filter(pc.fill_null(alive, False)).select(columns.names).cast(columns)
        yield from out.to_batches(max_chunksize=65536)


class PushdownBatchReader(DuckLakeBatchReader):
    """The batch reader with filter pushdown (option `filterPushdown`, needs spark.sql.python.filterPushdown)."""

    def pushFilters(self, filters):  # noqa: N802 - Spark's name
        """Keep the comparisons of top-level columns with constants for file pruning; Spark re-applies them all."""
        names = {c.name.lower() for c in self.table.columns}
        parts = [text for text in (_predicate(flt, names) for flt in filters) if text is not None]
        self.where = " AND ".join(parts) or None
        return list(filters)


def _predicate(flt, names: set[str]) -> str | None:
    """Spark SQL for a pushed filter the catalog can prune by, or None."""
    kind = type(flt).__name__
    attribute: tuple[str, ...] = getattr(flt, "attribute", ())
    if len(attribute) != 1 or attribute[0].lower() not in names:
        return None  # nested fields are not pruned by
    column = "`" + attribute[0].replace("`", "``") + "`"
    if kind in _FILTERS:
        literal = _literal(flt.value)
        return None if literal is None else f"{column} {_FILTERS[kind]} {literal}"
    if kind == "In":
        literals = [_literal(v) for v in flt.value]
        texts = [text for text in literals if text is not None]
        return None if not literals or len(texts) != len(literals) else f"{column} IN ({', '.join(texts)})"
    if kind in ("IsNull", "IsNotNull"):
        return f"{column} IS {'NOT ' if kind == 'IsNotNull' else ''}NULL"
    return None


def _literal(value) -> str | None:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value) if value == value else None  # NaN is not pruned by
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, dt.datetime):
        return None  # time zones of pushed timestamps are ambiguous here: Spark filters them
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    return None


def register(spark, lake: LakeContext | None = None) -> None:
    """Make `spark.read.format("ducklake")` and `spark.readStream.format("ducklake")` available (with `lake`'s
    catalog and data path as defaults); one class per format name, so the batch source reads streams too."""
    source: type = DuckLakeBatchSource
    if lake is not None:
        pushdown = str(spark.conf.get("spark.sql.python.filterPushdown.enabled", "false")).lower()
        source = type("DuckLakeBatchSource", (DuckLakeBatchSource,), {"defaults": {
            **catalog_options(attach_string(lake)), "data_path": lake.data_path, "filterpushdown": pushdown,
            **metadata_schema_option(lake), **_limit_option(lake)}})
    spark.dataSource.register(source)


def _limit_option(lake: LakeContext) -> dict[str, str]:
    """The handle's attach-time data_inlining_row_limit (catalog options apply anyway), for its writes."""
    limit = lake.data_inlining_row_limit
    return {} if limit is None else {"data_inlining_row_limit": str(int(limit))}


def stream_options(ctx: LakeContext, table: str, *, starting_snapshot: str | int = "earliest",
                   max_snapshots_per_trigger: int | None = None, include_changes: bool = False) -> dict[str, str]:
    """The streaming source's options for a table of this lake; the catalog by reference when its attach string
    holds a password (streaming/catalog_ref.py)."""
    schema, name = split_name(table)
    ctx.table_info(f"{schema}.{name}")  # fail now, naming what is missing
    options = {**catalog_options(attach_string(ctx)), "table": f"{schema}.{name}", "data_path": ctx.data_path,
               "starting_snapshot": str(starting_snapshot), "include_changes": str(bool(include_changes)).lower(),
               **metadata_schema_option(ctx)}
    if max_snapshots_per_trigger is not None:
        options["max_snapshots_per_trigger"] = str(max_snapshots_per_trigger)
    return options


def read_stream(ctx: LakeContext, table: str, *, starting_snapshot: str | int = "earliest",
                max_snapshots_per_trigger: int | None = None, include_changes: bool = False):
    """A streaming DataFrame of the table's new snapshots (see the module docstring for the options)."""
    options = stream_options(ctx, table, starting_snapshot=starting_snapshot,
                             max_snapshots_per_trigger=max_snapshots_per_trigger, include_changes=include_changes)
    register(ctx.spark)
    return ctx.spark.readStream.format(FORMAT).options(**options).load()
