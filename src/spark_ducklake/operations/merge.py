"""MERGE INTO a lake table, with delta-spark's builder (snake_case): matched / not matched / not matched by source.

The source is a Spark DataFrame, a pyarrow Table or a pandas DataFrame. `engine_for` picks the plane once, and its
`merge_rows` verb computes what changes: with pyarrow on the driver (`dataplane/arrow/merge_rows.py`) for a
pyarrow/pandas source merged into a table whose files are, with it, at most the small-data threshold, else with a
Spark join (`dataplane/spark/merge_join.py`); same rules and results. Each joined row gets the action of the first
clause (in order) whose condition holds. Target rows to update or delete are staged as deletes; updated rows keep
their row ids; everything commits as one snapshot. As in DuckDB, a source row may match several target rows (each
is changed), and several source rows may match one target row: it is changed once, by the first of them in the
source's order, while the result's counts are of matched pairs (DuckDB's numbers).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ..dataplane.arrow.merge_rows import MergeAction, MergeClause, MergeKind, MergeSpec
from ..dataplane.arrow.storage import delete_paths
from ..dataplane.engine import engine_for
from ..errors import DuckLakeError, SchemaMismatchError
from ..spec.arguments import check_assignments, check_condition, check_data
from .delete_update import delete_op, stage_new_rows
from .error_causes import translate_methods
from .staging import Staged
from .write import is_pandas

if TYPE_CHECKING:
    from .context import LakeContext


@dataclass
class MergeResult:
    """Rows changed by a MERGE."""

    inserted: int = 0
    updated: int = 0
    deleted: int = 0


@translate_methods  # execute() runs the merge: its errors reach the user from here
@dataclass
class MergeBuilder:
    """Collects clauses; `execute()` runs the merge."""

    ctx: LakeContext
    table: str | tuple[str, str]  # a name, or (schema, table) as a transaction resolves it
    source: Any  # a Spark DataFrame, a pyarrow Table or a pandas DataFrame (spec/arguments.py check_data)
    condition: object
    target_alias: str = "target"
    source_alias: str = "source"
    clauses: list[MergeClause] = field(default_factory=list)
    run: Callable[[MergeBuilder], MergeResult] | None = None  # stages it in a transaction (Transaction.stage_merge)

    def __post_init__(self):
        check_data(self.source, "the MERGE source")
        check_condition(self.condition, "the merge condition", optional=False)

    def _add(self, kind: MergeKind, action: MergeAction, condition=None, values=None) -> MergeBuilder:
        check_condition(condition, f"the when_{kind}_{action} condition")
        if values is not None:
            check_assignments(values, f"the when_{kind}_{action} values")
            values = dict(values)  # the clause keeps its own copy
        self.clauses.append(MergeClause(kind, action, condition, values))
        return self

    def when_matched_update(self, set: dict, condition=None) -> MergeBuilder:  # noqa: A002 - delta's name
        """Update matched target rows: {column: SQL string or Column}."""
        return self._add("matched", "update", condition, set)

    def when_matched_update_all(self, condition=None) -> MergeBuilder:
        """Update every column of matched target rows from the source's same-named columns."""
        return self._add("matched", "update", condition)

    def when_matched_delete(self, condition=None) -> MergeBuilder:
        """Delete matched target rows."""
        return self._add("matched", "delete", condition)

    def when_not_matched_insert(self, values: dict, condition=None) -> MergeBuilder:
        """Insert source rows without a match: {column: SQL string or Column}."""
        return self._add("not_matched", "insert", condition, values)

    def when_not_matched_insert_all(self, condition=None) -> MergeBuilder:
        """Insert source rows without a match, every column from the source's same-named columns."""
        return self._add("not_matched", "insert", condition)

    def when_not_matched_by_source_update(self, set: dict, condition=None) -> MergeBuilder:  # noqa: A002
        """Update target rows no source row matches."""
        return self._add("not_matched_by_source", "update", condition, set)

    def when_not_matched_by_source_delete(self, condition=None) -> MergeBuilder:
        """Delete target rows no source row matches."""
        return self._add("not_matched_by_source", "delete", condition)

    def spec(self) -> MergeSpec:
        """The merge as the data planes take it (`dataplane/arrow/merge_rows.py`)."""
        return MergeSpec(self.condition, tuple(self.clauses), self.target_alias, self.source_alias)

    def execute(self) -> MergeResult:
        """Run the merge as one snapshot; returns the counts."""
        if not self.clauses:
            raise DuckLakeError("merge needs at least one when_... clause")
        return self.run(self)  # type: ignore[misc]  # both makers (table.py, Transaction.merge) pass run


def stage_merge(m: MergeBuilder, plan) -> Staged[MergeResult]:
    """The operations, staged files and counts of the MERGE against the plan's snapshot, nothing committed: the
    rows it changes computed on the plane `engine_for` picks, then the deletes of the updated and deleted target
    rows, the updated rows (keeping their ids) and the inserted rows staged."""
    names = {c.name.lower() for c in plan.table.columns}
    for clause in m.clauses:
        unknown = [k for k in (clause.values or {}) if k.lower() not in names]
        if unknown:
            raise SchemaMismatchError(f"columns not in table {plan.table.qualified_name}: {', '.join(unknown)}")
    source = pa.Table.from_pandas(m.source, preserve_index=False) if is_pandas(m.source) else m.source
    extra = source.nbytes if isinstance(source, pa.Table) else 0
    ops: list[Any] = []
    written: list[str] = []
    with engine_for(m.ctx, plan.files, extra).merge_rows(m.spec(), plan, source) as rows:
        outcome = MergeResult(inserted=rows.inserted, updated=rows.updated, deleted=rows.deleted)
        if not (rows.inserted or rows.updated or rows.deleted):
            return Staged(ops, written, outcome)
        try:
            staged = rows.stage_deletes(m.ctx.inlining_limit(plan.table))
            if not staged.empty:
                ops.append(delete_op(plan, staged))
                written += [d.path for d in staged.delete_files]
            for new, keep_ids in ((rows.updates, True), (rows.inserts, False)):
                if new is not None:
                    inserted = stage_new_rows(m.ctx, plan, new, rows.new_rows, keep_ids=keep_ids)
                    ops += inserted.ops
                    written += inserted.files
        except BaseException:
            delete_paths(written)
            raise
    return Staged(ops, written, outcome)
