"""MERGE rows computed in-process with pyarrow, by the Spark path's rules (`dataplane/spark/merge_join.py`): each
joined row takes the action of the first clause (in order) whose kind and condition hold; a source row may match
several target rows, and a target row matched by several source rows is changed once (by the first of them), the
counts being of matched pairs (DuckDB's numbers). The result names the target positions to delete (rows updated or
deleted), the new versions of updated rows (keeping their row ids) and the inserted rows; `operations/merge.py`
stages them as one snapshot. `MergeSpec`, the clauses as `MergeBuilder` collects them, is defined here, so both
planes take it.

The join is a hash join on the condition's `target.col = source.col` conjuncts, the rest of the condition
filtering the matched pairs. Conditions and values are SQL strings in `local_expressions.py`'s subset, columns named
`alias.col` or, when only one side has them, `col`. Anything else (a condition without such an equality, Spark
Columns, functions outside the subset, ambiguous names) raises `NotLocal`, and the MERGE runs on Spark.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ...spec import types
from .conform import default_of, match_fields
from .delete_plan import DeletePlan
from .local_dml import stage_positions
from .local_expressions import NotLocal, Scope, coerce_pair, eval_node, parse
from .local_scan import ROWID, read_plan
from .planned_scan import PlannedScan
from .scan_columns import FILE, POS
from .sql_syntax import check_syntax

MergeKind = Literal["matched", "not_matched", "not_matched_by_source"]
MergeAction = Literal["update", "delete", "insert"]


@dataclass(frozen=True)
class MergeClause:
    """One when_... clause: the rows it applies to (`kind`), what it does, its condition (a SQL string or a Spark
    Column; None: always) and its values (None with update/insert: every column from the source's same-named one)."""

    kind: MergeKind
    action: MergeAction
    condition: object = None
    values: dict[str, Any] | None = None


@dataclass(frozen=True)
class MergeSpec:
    """A MERGE as both planes take it: the join condition, the two aliases and the clauses in order."""

    condition: object
    clauses: tuple[MergeClause, ...]
    target_alias: str = "target"
    source_alias: str = "source"


@dataclass
class ArrowMergeRows:
    """What a MERGE changes, computed in-process. The same interface as Spark's `SparkMergeRows`: a context manager
    (nothing to release here), the counts (matched pairs, DuckDB's numbers), `new_rows` (the statement's new rows, as
    the inlining rule counts them: the rows written), `stage_deletes`, and the `updates` (table columns + `rowid`,
    the ids kept) and `inserts` (the same columns, `rowid` null), each None when there are none."""

    plan: PlannedScan
    inserted: int
    updated: int
    deleted: int
    touched: pa.Table  # FILE, POS of the target rows updated or deleted
    updates: pa.Table | None
    inserts: pa.Table | None

    @property
    def new_rows(self) -> int:
        return sum(rows.num_rows for rows in (self.updates, self.inserts) if rows is not None)

    def stage_deletes(self, inline_limit: int) -> DeletePlan:
        """The deletion of the updated and deleted target rows staged (delete files written, or inlined)."""
        return stage_positions(self.plan, self.touched, inline_limit)

    def __enter__(self) -> ArrowMergeRows:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


T, S = "\x1ft.", "\x1fs."  # prefixes of the target's and the source's columns in the joined rows
KINDS = ("matched", "not_matched", "not_matched_by_source")


class _Names:
    """Rewrites a condition's or value's columns to the joined rows' prefixed names."""

    def __init__(self, spec: MergeSpec, target: list[str], source: list[str]) -> None:
        self.aliases = {spec.target_alias.lower(): T, spec.source_alias.lower(): S}
        self.sides = {T: {n.lower(): n for n in target}, S: {n.lower(): n for n in source}}

    def resolve(self, text: str) -> exp.Expression:
        tree = parse(text)
        if any(isinstance(node, exp.Subquery | exp.Select | exp.Star) for node in tree.walk()):
            raise NotLocal(f"{text!r}: subqueries and * are not evaluated in-process")
        return tree.transform(self._column)

    def _column(self, node: exp.Expression) -> exp.Expression:
        if not isinstance(node, exp.Column):
            return node
        name = node.name.lower()
        if node.table:
            side = self.aliases.get(node.table.lower())
            if side is None or node.args.get("db") or name not in self.sides[side]:
                raise NotLocal(f"unknown column {node.sql()}")
        else:
            found = [p for p in (T, S) if name in self.sides[p]]
            if len(found) != 1:
                raise NotLocal(f"column {node.sql()} is {'ambiguous' if found else 'unknown'}")
            side = found[0]
        return exp.column(side + self.sides[side][name], quoted=True)


def merge_rows(spec: MergeSpec, plan: PlannedScan, source: pa.Table) -> ArrowMergeRows:
    """What the MERGE of `source` into the plan's rows changes, computed with pyarrow, nothing staged; NotLocal when
    something is outside the in-process subset (Spark merges it then)."""
    rows, action = _classify(spec, plan, source)
    kinds = np.array([c.action for c in spec.clauses] + ["none"])[action]
    counts = {k: int((kinds == k).sum()) for k in ("update", "delete", "insert")}  # pairs, as DuckDB counts
    action = _once_per_target(spec, rows, action)
    updates, inserts = (_outputs(spec, plan, rows, action, kind) for kind in ("update", "insert"))
    kinds = np.array([c.action for c in spec.clauses] + ["none"])[action]
    touched = rows.filter(pa.array(np.isin(kinds, ["update", "delete"])))
    return ArrowMergeRows(plan, inserted=counts["insert"], updated=counts["update"], deleted=counts["delete"],
                          touched=pa.table({FILE: touched.column(T + FILE), POS: touched.column(T + POS)}),
                          updates=updates, inserts=inserts)


def _classify(spec: MergeSpec, plan: PlannedScan, source: pa.Table) -> tuple[pa.Table, np.ndarray]:
    """The joined rows (target columns, rowid, file and position prefixed T, source columns prefixed S: matched
    pairs, then target rows and source rows without a match) and each row's clause index (len(clauses): none)."""
    for text in [spec.condition] + [c.condition for c in spec.clauses] + [
            v for c in spec.clauses for v in (c.values or {}).values()]:
        if text is not None and not isinstance(text, str):
            raise NotLocal("a Spark Column in the MERGE")
    check_syntax(_text(spec.condition), "merge condition")
    for c in spec.clauses:
        if c.condition is not None:
            check_syntax(_text(c.condition), f"when_{c.kind}_{c.action} condition")
        for k, v in (c.values or {}).items():
            check_syntax(v, f"value of {k}")
    target = read_plan(plan, row_ids=True, positions=True)
    names = _Names(spec, [c.name for c in plan.table.columns], source.column_names)
    target = target.rename_columns([T + n for n in target.column_names])
    source = source.rename_columns([S + n for n in source.column_names])
    keys, residual = _split(names.resolve(_text(spec.condition)))
    t_index, s_index = _join(target, source, keys)
    if residual is not None:
        keep = _mask(residual, _side_by_side(target.take(t_index), source.take(s_index)))
        t_index, s_index = t_index.filter(keep), s_index.filter(keep)
    # rows without a match take part only if a clause acts on their kind (else they get no action anyway)
    wanted = {c.kind for c in spec.clauses}
    lone_t = _unmatched(target.num_rows, t_index) if "not_matched_by_source" in wanted else np.empty(0, np.int64)
    lone_s = _unmatched(source.num_rows, s_index) if "not_matched" in wanted else np.empty(0, np.int64)
    nulls_t, nulls_s = pa.nulls(len(lone_s), pa.int64()), pa.nulls(len(lone_t), pa.int64())
    ti = pa.concat_arrays([t_index, pa.array(lone_t, pa.int64()), nulls_t])
    si = pa.concat_arrays([s_index, nulls_s, pa.array(lone_s, pa.int64())])
    kind = np.concatenate([np.zeros(len(t_index), np.int8), np.full(len(lone_t), 2, np.int8),
                           np.ones(len(lone_s), np.int8)])  # index into KINDS
    rows = _side_by_side(target.take(ti), source.take(si))
    action = np.full(rows.num_rows, len(spec.clauses))
    for index, clause in enumerate(spec.clauses):
        hit = kind == KINDS.index(clause.kind)
        if clause.condition is not None and hit.any():
            hit &= _mask(names.resolve(_text(clause.condition)), rows).to_numpy(zero_copy_only=False)
        action[(action == len(spec.clauses)) & hit] = index
    return rows, action


def _text(value: object) -> str:
    """A condition the checks above found to be a SQL string (a Spark Column raised NotLocal there)."""
    if not isinstance(value, str):
        raise NotLocal("a Spark Column in the MERGE")
    return value


def _unmatched(count: int, matched: pa.Array) -> np.ndarray:
    """Positions in range(count) that `matched` does not hold."""
    seen = np.zeros(count, dtype=bool)
    seen[matched.to_numpy(zero_copy_only=False)] = True
    return np.flatnonzero(~seen).astype(np.int64)


def _split(condition: exp.Expr) -> tuple[list[tuple[str, str]], exp.Expr | None]:
    """(target column, source column) pairs of the condition's top-level equalities, and the rest (or None)."""
    conjuncts: list[exp.Expr] = []
    todo: list[exp.Expr] = [condition]
    while todo:
        node = todo.pop()
        node = node.this if isinstance(node, exp.Paren) else node
        if isinstance(node, exp.And):
            todo += [node.left, node.right]
        else:
            conjuncts.append(node)
    keys, rest = [], []
    for node in conjuncts:
        sides = (node.left, node.right) if isinstance(node, exp.EQ) else ()
        if sides and all(isinstance(x, exp.Column) for x in sides):
            a, b = (x.name for x in sides)
            if a.startswith(T) and b.startswith(S):
                keys.append((a, b))
                continue
            if a.startswith(S) and b.startswith(T):
                keys.append((b, a))
                continue
        rest.append(node)
    if not keys:
        raise NotLocal("a MERGE condition without a target.col = source.col equality")
    residual = None
    for node in rest:
        residual = node if residual is None else exp.and_(residual, node)
    return keys, residual


def _join(target: pa.Table, source: pa.Table, keys: list[tuple[str, str]]) -> tuple[pa.Array, pa.Array]:
    """Positions (target, source) of the pairs whose keys are equal (NULL never equals)."""
    left, right = {"_dl_ti": pa.array(np.arange(target.num_rows), pa.int64())}, {
        "_dl_si": pa.array(np.arange(source.num_rows), pa.int64())}
    for i, (t, s) in enumerate(keys):
        a, b = coerce_pair(target.column(t), source.column(s))
        if a.type != b.type:
            if not (pa.types.is_integer(a.type) and pa.types.is_integer(b.type)):
                raise NotLocal(f"joining {a.type} with {b.type}")
            a, b = a.cast(pa.int64()), b.cast(pa.int64())
        if pa.types.is_floating(a.type) or pa.types.is_nested(a.type):
            raise NotLocal("joining on floating point or nested values")  # NaN and nesting: Spark's rules
        left[f"_k{i}"], right[f"_k{i}"] = a, b
    joined = pa.table(left).join(pa.table(right), [f"_k{i}" for i in range(len(keys))], join_type="inner")
    order = pc.sort_indices(joined, [("_dl_ti", "ascending"), ("_dl_si", "ascending")])
    joined = joined.take(order)
    return joined.column("_dl_ti").combine_chunks(), joined.column("_dl_si").combine_chunks()


def _side_by_side(a: pa.Table, b: pa.Table) -> pa.Table:
    return pa.Table.from_arrays(a.columns + b.columns, names=a.column_names + b.column_names)


def _mask(node: exp.Expr, rows: pa.Table) -> pa.Array:
    """Where `node` is true over `rows` (NULL: false)."""
    value = _values(node, rows)
    if not pa.types.is_boolean(value.type):
        raise NotLocal(f"{node.sql()} is not a condition")
    return pc.fill_null(value, False)


def _values(node: exp.Expr, rows: pa.Table) -> pa.Array:
    value = eval_node(node, Scope(rows))
    if isinstance(value, pa.Scalar):
        return pa.array([value.as_py()] * rows.num_rows, value.type)
    return value.combine_chunks() if isinstance(value, pa.ChunkedArray) else value


def _once_per_target(spec: MergeSpec, rows: pa.Table, action: np.ndarray) -> np.ndarray:
    """`action` with one matched pair per target row: the first source row (pairs are in source order) wins."""
    matched = np.isin(action, [i for i, c in enumerate(spec.clauses) if c.kind == "matched"])
    if not matched.any():
        return action
    ids = rows.column(T + ROWID).to_numpy(zero_copy_only=False)
    where = np.flatnonzero(matched)
    _, first = np.unique(ids[where], return_index=True)  # np.unique: the first occurrence of each id
    if len(first) == len(where):
        return action
    action = action.copy()
    later = np.ones(len(where), dtype=bool)
    later[first] = False
    action[where[later]] = len(spec.clauses)  # no clause: the pair does nothing
    return action


def _outputs(spec: MergeSpec, plan: PlannedScan, rows: pa.Table, action: np.ndarray, kind: str) -> pa.Table | None:
    """The table's columns (in its Arrow types) and `rowid` of the rows whose clause's action is `kind`."""
    parts = []
    target_schema = types.to_arrow_schema(plan.table.columns)
    names = _Names(spec, [c.name for c in plan.table.columns], [n[len(S):] for n in rows.column_names
                                                            if n.startswith(S)])
    for index, clause in enumerate(spec.clauses):
        if clause.action != kind or not (action == index).any():
            continue
        mine = rows.filter(pa.array(action == index))
        given = {k.lower(): v for k, v in (clause.values or {}).items()}
        arrays = []
        for col, field in zip(plan.table.columns, target_schema, strict=True):
            if col.name.lower() in given:
                value = _values(names.resolve(given[col.name.lower()]), mine)
            elif clause.values is None and col.name.lower() in names.sides[S]:  # *_all: the same-named column
                value = mine.column(S + names.sides[S][col.name.lower()]).combine_chunks()
            elif kind == "update":  # left out: an update keeps the row's value, an insert stores the default
                value = mine.column(T + col.name).combine_chunks()
            else:
                value = pa.array([default_of(col)] * mine.num_rows, field.type)
            value = match_fields(value, col)  # struct fields by name, as a write matches them
            try:
                arrays.append(value.cast(field.type))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
                raise NotLocal(f"value of {col.name}: {exc}") from exc
        arrays.append(mine.column(T + ROWID).combine_chunks())
        parts.append(pa.Table.from_arrays(arrays, names=[c.name for c in plan.table.columns] + [ROWID]))
    return pa.concat_tables(parts) if parts else None
