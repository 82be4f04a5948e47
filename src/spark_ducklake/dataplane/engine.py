"""One choice per operation between the two data planes: `engine_for` looks at what an operation touches (its
files and input bytes, encryption) once and returns an engine, `ArrowEngine` (pyarrow on the driver, `arrow/`) or
`SparkEngine` (Spark jobs, `spark/`), with the same verbs:

- `read_rows`: a plan's rows as Arrow (`lake.read_arrow`)
- `stage_delete`: the rows a condition matches, their deletion staged (delete files, inlined deletes, ended files)
- `update_rows`: the rows an UPDATE matches and their new versions
- `merge_rows`: what a MERGE changes (`arrow/merge_rows.py`'s hash join, `spark/merge_join.py`'s join)
- `restage`: a transaction's DELETE or UPDATE of a table it already changed, as its net change
  (`arrow/statement_rows.py`, `spark/statement_rows.py`) handed to the caller's staging
- `change_feed`: a table's changes between two snapshots as Arrow
- `write_data_files`: rows (Arrow or a Spark frame) written as a table's files
- `sort_rows`: Arrow rows in a table's sort order (rows to inline)
- `write_units`: compaction's units (merged or rewritten files)

Row results have one interface on both planes (counts, `stage_deletes`, rows as Arrow tables or Spark frames);
the operation turns them into catalog operations. An operation then reads as one straight path: `engine_for(...)`,
then the verbs. Where the in-process plane cannot do a verb exactly as Spark does (a SQL string outside
`arrow/local_expressions.py`'s subset, a layout the in-process writer does not write, encrypted files, a Spark
DataFrame input), `ArrowEngine` hands that verb to Spark itself: the fallback lives here, not in the operations.
After pyiceberg's `io/` seam (`FileIO` picked once per table, `ArrowScan` the one reader).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import pyarrow as pa

from ..catalog.changes.sorting import SortKey
from ..catalog.planners.change_feed import ChangePlan
from ..catalog.planners.compaction import TablePlan
from ..spec.model import Column, DataFile, NewDataFile, TableInfo
from .arrow import local_compaction, local_dml
from .arrow import statement_rows as arrow_statements
from .arrow.change_rows import FeedKind, feed_rows
from .arrow.conform import conform_arrow
from .arrow.delete_plan import DeletePlan
from .arrow.local_dml import LocalUpdate, check_condition, matching_rows, stage_positions
from .arrow.local_expressions import NotLocal, predicate_mask
from .arrow.local_scan import ROWID, encrypted_plan, read_plan
from .arrow.local_write import check_layout, sorted_rows, write_table_files
from .arrow.merge_rows import ArrowMergeRows, MergeSpec
from .arrow.merge_rows import merge_rows as arrow_merge_rows
from .arrow.planned_scan import PlannedScan
from .arrow.statement_rows import NetRows, TableInTransaction
from .arrow.threshold import files_in_process, is_small, threshold_of
from .arrow.write_options import WriteOptions
from .spark import change_feed as spark_feed
from .spark import compaction_units, row_writes
from .spark import deletes as spark_deletes
from .spark import statement_rows as spark_statements
from .spark import updates as spark_updates
from .spark.expressions import check_expression
from .spark.merge_join import SparkMergeRows, merge_join
from .spark.scan_plan import ScanPlan, rows_as_arrow
from .spark.session import arrow_frame
from .spark.sorting import sort_column

T = TypeVar("T")

RowUpdate = LocalUpdate | spark_updates.SparkUpdate  # an UPDATE's matched rows on either plane: same interface


class SparkEngine:
    """The verbs as Spark jobs; the session is taken from the context once, at the first verb that needs it."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx  # a LakeContext (operations/context.py): its Spark session, checked on each use
        self._spark: Any = None

    @property
    def spark(self) -> Any:
        if self._spark is None:
            self._spark = self.ctx.spark  # once per operation: ctx.spark re-verifies the session's confs
        return self._spark

    def stage_delete(self, plan: PlannedScan, condition: Any, inline_limit: int) -> DeletePlan:
        """The rows `condition` matches, found on the executors, and their deletion staged."""
        check_expression(self.spark, plan.table, condition, "condition")
        return spark_deletes.plan_delete(self.spark, plan, condition, inline_limit)  # type: ignore[arg-type]

    def read_rows(self, plan: PlannedScan, columns: list[Column], where: str | None) -> pa.Table:
        """The plan's rows of `columns` (every column `where` names among them) where the SQL condition `where`
        holds, read by Spark and handed over as Arrow (`lake.read(...).toArrow()`'s types, which pyarrow's match)."""
        return rows_as_arrow(self.spark, plan, columns, where)  # type: ignore[arg-type]  # a ScanPlan

    def change_feed(self, plan: ChangePlan, kind: FeedKind) -> pa.Table:
        """One change feed of the plan (`kind`: changes, insertions or deletions), computed on Spark, as Arrow."""
        feed = {"changes": spark_feed.changes, "insertions": spark_feed.insertions,
                "deletions": spark_feed.deletions}[kind]
        return feed(self.spark, plan).toArrow()

    def merge_rows(self, spec: MergeSpec, plan: ScanPlan, source: Any) -> MergeRows:
        """What a MERGE of `source` (a Spark DataFrame or a pyarrow Table) changes, joined on Spark; the joined rows
        stay cached until the result's context exits."""
        frame = arrow_frame(self.spark, source) if isinstance(source, pa.Table) else source
        return merge_join(self.spark, spec, plan, frame)

    def update_rows(self, plan: PlannedScan, assignments: Mapping[str, Any], condition: Any) -> RowUpdate:
        """The rows `condition` matches and their new versions (`assignments`: column -> SQL string or Column),
        one cached frame; the strings are checked first."""
        spark_updates.check_update(self.spark, plan.table, assignments, condition)
        return spark_updates.update_rows(self.spark, plan, assignments, condition)  # type: ignore[arg-type]

    def write_data_files(self, rows: Any, table: TableInfo, options: WriteOptions, *, keep_ids: bool = False,
                         one_file: bool = False) -> list[NewDataFile]:
        """Rows (a Spark DataFrame conformed to the table, or Arrow rows) written as the table's data files by
        Spark's writer; with `keep_ids` their `rowid` column is kept as their row ids, and Arrow rows are then the
        table's Arrow rows already. Arrow rows are one file with `one_file`."""
        return row_writes.write_rows(self.spark, rows, table, options, keep_ids=keep_ids, one_file=one_file)

    def sort_rows(self, rows: pa.Table, table: TableInfo) -> pa.Table:
        """Arrow rows (the table's columns) in the table's sort order, sorted by Spark."""
        frame = arrow_frame(self.spark, rows).orderBy(*[sort_column(k) for k in table.sort_keys or []])
        return conform_arrow(frame.toArrow(), table)

    def write_units(self, plan: TablePlan, options: WriteOptions, sort_keys: list[SortKey], *,
                    snapshot_ids: bool, live_at: int | None = None,
                    inlined_deletes: dict[int, list[int]] | None = None) -> list[list[NewDataFile]]:
        """The files of each compaction unit of `plan`, one Spark job per column layout, nothing committed:
        `snapshot_ids` keeps each row's inserting snapshot (merges); `live_at` drops the rows deleted as of that
        snapshot, by delete files and `inlined_deletes` (rewrites)."""
        return compaction_units.write_units(self.spark, plan, options, sort_keys=sort_keys,
                                            snapshot_ids=snapshot_ids, live_at=live_at,
                                            inlined_deletes=inlined_deletes)

    def restage(self, view: TableInTransaction, condition: Any, assignments: Mapping[str, Any] | None,
                inline_limit: int, stage: Callable[[NetRows], T]) -> tuple[int, T | None]:
        """A transaction's DELETE (`assignments` None) or UPDATE applied on Spark to the table as the transaction
        sees it; its net change handed to `stage` as DataFrames: (the rows it matched, what `stage` returned)."""
        return spark_statements.restage(self.spark, view, condition, assignments, inline_limit, stage)


class ArrowEngine:
    """The verbs with pyarrow on the driver; a verb outside what it does exactly as Spark goes to Spark."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.spark_engine = SparkEngine(ctx)  # the fallback of a verb the in-process plane cannot do

    def stage_delete(self, plan: PlannedScan, condition: Any, inline_limit: int) -> DeletePlan:
        """The rows `condition` matches, found with pyarrow, and their deletion staged (delete files written)."""
        try:
            check_condition(plan, condition)
            matches = matching_rows(plan, condition)
        except NotLocal:  # outside the in-process subset: Spark evaluates it
            return self.spark_engine.stage_delete(plan, condition, inline_limit)
        return stage_positions(plan, matches, inline_limit)

    def read_rows(self, plan: PlannedScan, columns: list[Column], where: str | None) -> pa.Table:
        """The plan's rows of `columns` (every column `where` names among them) where `where` holds, read with
        pyarrow; encrypted delete files on Spark. NotLocal when `where` is outside `arrow/local_expressions.py`'s
        subset: `lake.read_arrow` promises no Spark for a filter, so its caller says so instead of starting a JVM."""
        if encrypted_plan(plan):
            return self.spark_engine.read_rows(plan, columns, where)
        rows = read_plan(plan, columns)
        return rows if where is None else rows.filter(predicate_mask(where, rows))

    def change_feed(self, plan: ChangePlan, kind: FeedKind) -> pa.Table:
        """One change feed of the plan as Arrow, computed with pyarrow; encrypted delete files (only Spark
        decrypts them; `engine_for` already sent encrypted data files there) on Spark."""
        if plan.delete_keys:
            return self.spark_engine.change_feed(plan, kind)
        return feed_rows(plan, kind)

    def update_rows(self, plan: PlannedScan, assignments: Mapping[str, Any], condition: Any) -> RowUpdate:
        """The rows `condition` matches and their new versions, computed with pyarrow."""
        try:
            return local_dml.update_rows(plan, assignments, condition)
        except NotLocal:  # a condition or an assignment outside the in-process subset: Spark evaluates them
            return self.spark_engine.update_rows(plan, assignments, condition)

    def write_data_files(self, rows: Any, table: TableInfo, options: WriteOptions, *, keep_ids: bool = False,
                         one_file: bool = False) -> list[NewDataFile]:
        """Arrow rows (the table's columns, and `rowid` kept as their row ids with `keep_ids`) written as the
        table's data files with pyarrow; a Spark DataFrame, and rows only Spark writes as the lake wants
        (`writes_in_process`), are written by Spark."""
        if not isinstance(rows, pa.Table) or not self.writes_in_process(table, options):
            return self.spark_engine.write_data_files(rows, table, options, keep_ids=keep_ids, one_file=one_file)
        ids = rows.column(ROWID).combine_chunks() if keep_ids else None
        data = conform_arrow(rows.drop_columns([ROWID]) if keep_ids else rows, table)
        return write_table_files(data, table, options, row_ids=ids)

    def writes_in_process(self, table: TableInfo, options: WriteOptions) -> bool:
        """Whether pyarrow writes the table's files as the lake wants: not encrypted (the AES runs on Spark,
        `spark/encrypted/`) and a layout `local_write.check_layout` takes."""
        if options.encrypted:
            return False
        try:
            check_layout(table, options.sort_on_insert)
        except NotLocal:
            return False
        return True

    def sort_rows(self, rows: pa.Table, table: TableInfo) -> pa.Table:
        """Arrow rows (the table's columns) in the table's sort order, sorted with pyarrow; sort expressions
        outside the in-process subset on Spark."""
        try:
            return sorted_rows(rows, table)
        except NotLocal:
            return self.spark_engine.sort_rows(rows, table)

    def merge_rows(self, spec: MergeSpec, plan: ScanPlan, source: Any) -> MergeRows:
        """What a MERGE of a pyarrow `source` changes, joined with pyarrow; a Spark DataFrame source, an encrypted
        target and what is outside `arrow/merge_rows.py`'s subset (NotLocal) are merged on Spark."""
        if not isinstance(source, pa.Table) or any(f.encryption_key for f in plan.files):
            return self.spark_engine.merge_rows(spec, plan, source)
        try:
            return arrow_merge_rows(spec, plan, source)
        except NotLocal:
            return self.spark_engine.merge_rows(spec, plan, source)

    def write_units(self, plan: TablePlan, options: WriteOptions, sort_keys: list[SortKey], *,
                    snapshot_ids: bool, live_at: int | None = None,
                    inlined_deletes: dict[int, list[int]] | None = None) -> list[list[NewDataFile]]:
        """Merged units written with pyarrow; rewrites (which drop deleted rows), encrypted files and layouts
        outside `local_compaction.check_units` go to Spark."""
        if snapshot_ids and live_at is None and inlined_deletes is None and not options.encrypted:
            try:
                local_compaction.check_units(plan, sort_keys)
            except NotLocal:
                pass
            else:
                return local_compaction.merge_units(plan, options, sort_keys)
        return self.spark_engine.write_units(plan, options, sort_keys, snapshot_ids=snapshot_ids, live_at=live_at,
                                             inlined_deletes=inlined_deletes)

    def restage(self, view: TableInTransaction, condition: Any, assignments: Mapping[str, Any] | None,
                inline_limit: int, stage: Callable[[NetRows], T]) -> tuple[int, T | None]:
        """A transaction's DELETE (`assignments` None) or UPDATE applied with pyarrow to the table as the
        transaction sees it; its net change handed to `stage` as Arrow tables. A condition or assignment outside
        the in-process subset (NotLocal) hands the whole statement to Spark before anything is written."""
        try:
            return arrow_statements.restage(view, condition, assignments, inline_limit, stage)
        except NotLocal:
            return self.spark_engine.restage(view, condition, assignments, inline_limit, stage)


Engine = ArrowEngine | SparkEngine
MergeRows = ArrowMergeRows | SparkMergeRows  # `merge_rows`' result: the same interface, Arrow or Spark rows


def engine_for(ctx: Any, files: Sequence[DataFile] | None = None, extra_bytes: int = 0, *,
               any_size: bool = False) -> Engine:
    """The data plane of one operation over these files plus `extra_bytes` of other input: in-process when
    that is at most the small-data threshold (`arrow/threshold.py`) and nothing is encrypted, else Spark.
    `any_size`: in-process whatever the size (a caller without Spark that holds the rows: the catalog service)."""
    if files is None:
        small = any_size or is_small(threshold_of(ctx), extra_bytes)
    else:
        small = files_in_process(ctx, files, extra_bytes) or (any_size and not any(f.encryption_key for f in files))
    return ArrowEngine(ctx) if small else SparkEngine(ctx)
