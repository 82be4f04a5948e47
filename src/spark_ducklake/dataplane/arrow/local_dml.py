"""DELETE and UPDATE of small tables in-process: rows found with pyarrow, delete files written on the driver.

The decisions are the Spark path's (dataplane/spark/deletes.py): a data file whose every row is gone is ended; few
positions become inlined deletes; otherwise one delete file per touched data file, merged with the file's old
one into a partial delete file. Conditions and assignments outside `expressions.py`'s subset raise `NotLocal`
before anything is written, and the operation runs on Spark instead. An UPDATE's matched rows and their new
versions are one `LocalUpdate`, with the interface of `spark/updates.py`'s `SparkUpdate`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ...spec import types
from ...spec.model import NewDeleteFile
from ...spec.uuid7 import new_uuid
from .delete_files import write_delete_file
from .delete_plan import DeletePlan, replaces_old_file, split_deletes
from .local_expressions import NotLocal, check, evaluate, predicate_mask
from .local_scan import ROWID, read_plan, visible_schema
from .planned_scan import PlannedScan
from .scan_columns import FILE, POS
from .sql_syntax import check_syntax
from .storage import delete_paths


def check_condition(plan: PlannedScan, condition: object) -> None:
    """NotLocal unless `condition` (None or a SQL string; a Spark Column is refused) evaluates in-process over the
    table's rows."""
    if condition is None:
        return
    if not isinstance(condition, str):
        raise NotLocal("a Spark Column condition")
    check_syntax(condition, "condition")  # refused as the Spark path refuses it, not retried there
    check(condition, visible_schema(plan.table.columns), condition=True)


def matching_rows(plan: PlannedScan, condition: str | None, *, row_ids: bool = False) -> pa.Table:
    """The rows `condition` matches, with `_dl_file` and `_dl_pos` (and `rowid` if asked)."""
    rows = read_plan(plan, row_ids=row_ids, positions=True)
    return rows if condition is None else rows.filter(predicate_mask(condition, rows))


def updated_rows(plan: PlannedScan, matches: pa.Table, assignments: Mapping[str, object]) -> pa.Table:
    """The new versions of `matches` (the table's columns in its Arrow types, assignments applied and cast as
    Spark casts them); NotLocal for an assignment outside the subset or a value that does not fit."""
    by_name = {c.name.lower(): c for c in plan.table.columns}
    values = {by_name[k.lower()].column_id: v for k, v in assignments.items()}
    schema = visible_schema(plan.table.columns)
    arrays = []
    for col, field in zip(plan.table.columns, schema, strict=True):
        if col.column_id not in values:
            arrays.append(matches.column(col.name))
            continue
        value = values[col.column_id]
        if not isinstance(value, str):
            raise NotLocal("a Spark Column assignment")
        check_syntax(value, f"value of {col.name}")
        check(value, schema, condition=False)
        result = evaluate(value, matches)
        try:
            arrays.append(result.cast(field.type) if result.type != field.type else result)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise NotLocal(f"value of {col.name}: {exc}") from exc
    out = pa.Table.from_arrays(arrays, schema=schema)
    target = types.to_arrow_schema(plan.table.columns)
    try:
        return pa.Table.from_arrays([out.column(i).cast(f.type) for i, f in enumerate(target)],
                                    names=[c.name for c in plan.table.columns])
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise NotLocal(str(exc)) from exc


class LocalUpdate:
    """The matched rows of an UPDATE read with pyarrow: their positions (`matches`) and their new versions. A
    context manager like `SparkUpdate`, holding nothing to release."""

    def __init__(self, plan: PlannedScan, matches: pa.Table, new_versions: pa.Table) -> None:
        self.plan = plan
        self.matches = matches  # the old versions, with `_dl_file`, `_dl_pos` and `rowid`
        self.new_versions = new_versions  # the table's columns in its Arrow types, and `rowid`

    def __enter__(self) -> LocalUpdate:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def stage_deletes(self, inline_limit: int) -> DeletePlan:
        """The deletion of the old versions staged (delete files written, inlined deletes, ended files)."""
        return stage_positions(self.plan, self.matches, inline_limit)


def update_rows(plan: PlannedScan, assignments: Mapping[str, object], condition: Any) -> LocalUpdate:
    """The rows `condition` matches with `assignments` applied, read and computed now; NotLocal (before anything
    is written) for a condition or an assignment outside the in-process subset."""
    check_condition(plan, condition)
    matches = matching_rows(plan, condition, row_ids=True)
    new_rows = updated_rows(plan, matches, assignments)
    return LocalUpdate(plan, matches, new_rows.append_column(ROWID, matches.column(ROWID)))


def stage_positions(plan: PlannedScan, matches: pa.Table, inline_limit: int) -> DeletePlan:
    """Stage the deletion of `matches` (columns `_dl_file`, `_dl_pos`): ended files, inlined deletes or delete
    files written next to the data (deleted again if a later step fails: the caller's job once returned)."""
    file_ids = matches.column(FILE).to_pylist()
    pos = matches.column(POS).to_pylist()
    split = split_deletes(plan.files, Counter(file_ids), inline_limit)
    result, files, rest = split.plan, split.files, split.rest
    result.inlined_row_ids = [p for f, p in zip(file_ids, pos, strict=True) if f is None]
    if split.inline_rest:
        for fid, p in zip(file_ids, pos, strict=True):
            if fid in rest:
                result.inlined_file_deletes.setdefault(fid, []).append(p)
        return result
    written: list[str] = []
    try:
        for fid in sorted(rest):
            data_file = files[fid]
            mine = pc.filter(matches.column(POS), pc.equal(matches.column(FILE), fid))
            old = data_file.delete_file
            snapshot = plan.snapshot_id + 1  # DeleteRows restamps partial files if the commit lands later
            suffix = "puffin" if plan.deletion_vectors else "parquet"  # write_deletion_vectors
            path = f"{plan.table.path}ducklake-{new_uuid()}-delete.{suffix}"
            written.append(path)
            w = write_delete_file(path, data_file.path, mine, snapshot if old is not None else None, old,
                                  history=plan.vector_history)
            replaced = replaces_old_file(plan.deletion_vectors, plan.vector_history)
            result.delete_files.append(NewDeleteFile(fid, w.path, w.delete_count, w.file_size_bytes, w.footer_size,
                                                     replaces=old if replaced else None,
                                                     first_snapshot=w.first_snapshot,
                                                     predicted_snapshot=snapshot,
                                                     row_group_count=w.row_group_count))
    except BaseException:
        delete_paths(written)
        raise
    return result

