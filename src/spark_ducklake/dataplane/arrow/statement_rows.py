"""A DELETE or UPDATE applied with pyarrow to a table as its transaction sees it (rows staged earlier included),
and the net change that takes the table from how the transaction began to how it is after the statement.

The table as the transaction sees it is read with its positions and row ids, each row marked as unchanged since
the transaction began or not (`marked_rows`); the statement is applied (`delete_rows`, `update_rows`); then the
net change is split out (`net_change`): the positions of the rows that existed then and are gone or changed now,
the rows whose ids existed then (updated versions, which keep them) and the new rows. The same steps on Spark
are `dataplane/spark/statement_rows.py`; the engines' `restage` verb (`engine.py`) runs one or the other. Here
`restage` runs the steps, stages the deletion of the rows gone (`local_dml.stage_positions`) and hands the net
change (`NetRows`, shared with the Spark plane) to the caller's staging. Conditions and assignments outside
`local_expressions.py`'s subset raise `NotLocal` before anything is written. Imports no pyspark.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from ...spec.model import TableInfo
from .conform import conform_arrow
from .delete_plan import DeletePlan
from .local_dml import check_condition, stage_positions, updated_rows
from .local_expressions import NotLocal, predicate_mask
from .local_scan import ROWID, read_plan
from .planned_scan import PlannedScan
from .scan_columns import FILE, POS
from .storage import delete_paths

ORIGINAL = "_dl_original"  # the row is as it was when the transaction began
_NO_FILE = -1  # inlined rows' file in the anti-join (no data file has a negative id)
T = TypeVar("T")


@dataclass
class TableInTransaction:
    """A table as its transaction began and as the transaction sees it, and which rows are unchanged since."""

    table: TableInfo  # the columns new rows are written with (as the transaction's ALTERs leave them)
    original: PlannedScan | None  # at the transaction's snapshot (None for a table created in it)
    now: PlannedScan  # the table with the transaction's staged changes
    files: list[int]  # data files whose visible rows are unchanged since the transaction began
    inlined: list[int]  # inlined row ids unchanged since it began


@dataclass
class NetRows:
    """A statement's net change, as a caller stages it: rows are Arrow tables in-process, Spark DataFrames on
    Spark (valid while the caller's staging runs)."""

    deletes: DeletePlan  # the deletion of the rows that existed when the transaction began and are gone or changed
    versions: Any  # the table's columns and rowid: rows whose ids existed then (updated versions keep them)
    version_count: int
    fresh: Any  # the table's columns: rows new in the transaction
    fresh_count: int


@dataclass
class Statement:
    """The table after one statement: rows it left as they were (with `_dl_original`) and new versions."""

    kept: pa.Table  # the rows the statement did not match: the table's columns, rowid, _dl_file, _dl_pos, _dl_original
    changed: pa.Table | None  # new versions of the matched rows (the table's columns, rowid); None: a DELETE
    matched: int


@dataclass
class NetChange:
    """What takes the table from how the transaction began to how it is after the statement."""

    gone: pa.Table  # _dl_file, _dl_pos of rows that existed then and are gone or changed now
    kept_ids: pa.Table  # the table's columns and rowid: rows whose ids existed then (updated versions)
    fresh: pa.Table  # the table's columns: rows new in the transaction


def marked_rows(now: PlannedScan, files: list[int], inlined: list[int]) -> pa.Table:
    """The rows of `now` with row ids and positions, marked `_dl_original` when they are in one of `files` or
    are one of the `inlined` row ids (unchanged since the transaction began)."""
    rows = read_plan(now, row_ids=True, positions=True)
    unchanged = pc.is_in(rows.column(FILE), value_set=pa.array(files, pa.int64()))
    if inlined:
        inlined_now = pc.and_(pc.is_null(rows.column(FILE)),
                              pc.is_in(rows.column(POS), value_set=pa.array(inlined, pa.int64())))
        unchanged = pc.or_(unchanged, inlined_now)
    return rows.append_column(ORIGINAL, pc.fill_null(unchanged, False))


def _hits(now: PlannedScan, table: TableInfo, rows: pa.Table, condition: object) -> pa.Array:
    check_condition(replace(now, table=table), condition)  # NotLocal for a Spark Column: a string or None now
    return predicate_mask(condition if isinstance(condition, str) else None, rows)


def delete_rows(now: PlannedScan, table: TableInfo, rows: pa.Table, condition: object) -> Statement:
    """DELETE over the marked rows."""
    hit = _hits(now, table, rows, condition)
    kept = rows.filter(pc.invert(hit))
    return Statement(kept, None, rows.num_rows - kept.num_rows)


def update_rows(now: PlannedScan, table: TableInfo, rows: pa.Table, assignments: Mapping[str, object],
                condition: object) -> Statement:
    """UPDATE over the marked rows: the matched rows' new versions keep their row ids."""
    if any(not isinstance(v, str) for v in assignments.values()):
        raise NotLocal("a Spark Column assignment")
    hit = _hits(now, table, rows, condition)
    matches = rows.filter(hit)
    plan = replace(now, table=table)
    new = conform_arrow(updated_rows(plan, matches, assignments), table)
    return Statement(rows.filter(pc.invert(hit)), new.append_column(ROWID, matches.column(ROWID)), matches.num_rows)


def net_change(original: PlannedScan | None, table: TableInfo, after: Statement) -> NetChange:
    """Split the table after the statement into what left the rows the transaction began with, and what is new."""
    names = [c.name for c in table.columns]
    unchanged = after.kept.column(ORIGINAL)
    others = after.kept.filter(pc.invert(unchanged))
    new = conform_arrow(others.select(names), table).append_column(ROWID, others.column(ROWID))
    if after.changed is not None:
        new = pa.concat_tables([new, after.changed.select([*names, ROWID])])
    if original is None:
        gone = pa.table({FILE: pa.array([], pa.int64()), POS: pa.array([], pa.int64())})
        return NetChange(gone, new.slice(0, 0), new.drop_columns([ROWID]))
    then = read_plan(original, [], row_ids=True, positions=True)
    last = pc.max(then.column(ROWID)).as_py()
    last = -1 if last is None else last
    kept = after.kept.filter(unchanged).select([FILE, POS])
    gone = _keyed(then.select([FILE, POS])).join(_keyed(kept), keys=["_k_file", POS], join_type="left anti")
    gone = gone.sort_by([("_k_file", "ascending"), (POS, "ascending")]).select([FILE, POS])
    old_id = pc.less_equal(new.column(ROWID), pa.scalar(last, pa.int64()))
    return NetChange(gone, new.filter(old_id), new.filter(pc.invert(old_id)).drop_columns([ROWID]))


def _keyed(positions: pa.Table) -> pa.Table:
    """Positions with a join key for their file that is never NULL (inlined rows have no file)."""
    return positions.append_column("_k_file", pc.fill_null(positions.column(FILE), _NO_FILE))



def restage(view: TableInTransaction, condition: object, assignments: Mapping[str, object] | None,
            inline_limit: int, stage: Callable[[NetRows], T]) -> tuple[int, T | None]:
    """A DELETE (`assignments` None) or UPDATE applied to the table as the transaction sees it, the deletion of
    the rows it leaves gone staged, and the net change handed to `stage`: (the rows the statement matched, what
    `stage` returned; None when it matched nothing). The delete files are deleted again if `stage` fails."""
    rows = marked_rows(view.now, view.files, view.inlined)
    if assignments is None:
        after = delete_rows(view.now, view.table, rows, condition)
    else:
        after = update_rows(view.now, view.table, rows, assignments, condition)
    if not after.matched:
        return 0, None
    net = net_change(view.original, view.table, after)
    deletes = DeletePlan()
    if view.original is not None and net.gone.num_rows:
        deletes = stage_positions(view.original, net.gone, inline_limit)
    try:
        staged = stage(NetRows(deletes, net.kept_ids, net.kept_ids.num_rows, net.fresh, net.fresh.num_rows))
    except BaseException:
        delete_paths([d.path for d in deletes.delete_files])
        raise
    return after.matched, staged
