"""CALL and table functions of `lake.sql`, under the reference's names, mapped onto `DuckLake`'s methods.

Three spellings, as in DuckDB: `ducklake_<name>('<lake>', ...)`, `<lake>.<name>(...)`, and plain `<name>(...)` (for
the metadata functions). `CALL` returns the function's rows (a list of NamedTuples); in FROM they are a DataFrame.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from sqlglot import exp

from ..catalog.reads.metadata_functions import FileRow, SettingsRow, SnapshotRow, TableInfoRow
from ..catalog.reads.options import OptionRow
from ..errors import InvalidArgumentError, UnsupportedSqlError
from ..operations.maintenance.checkpoint import CheckpointResult
from ..operations.maintenance.cleanup import CleanupRow
from ..operations.maintenance.compaction import CompactionRow
from ..operations.maintenance.flush import FlushRow
from ..spec.commit_properties import CommitProperties
from .references import QueryContext, evaluate, timestamp_text
from .results import rows_to_dataframe
from .session import current
from .sqlglot_dialects import reading

if TYPE_CHECKING:
    from ..lake import DuckLake


class SnapshotIdRow(NamedTuple):
    """The row of `current_snapshot()` / `last_committed_snapshot()`."""

    id: int | None


class AddedFileRow(NamedTuple):
    """A row of `ducklake_add_data_files`: a file now owned by the table."""

    path: str


@dataclass(frozen=True)
class Function:
    """One callable: how to run it, the key of its rows' NamedTuple (`_row_fields`; None: it returns a DataFrame),
    its parameters."""

    run: Callable
    row: str | None
    params: tuple[str, ...] = ()  # positional parameter names, in order (also accepted as name => value)
    changes: bool = False  # changes the lake: not inside BEGIN ... COMMIT
    metadata: bool = False  # may be called without a catalog qualifier
    staged: Callable | None = None  # (transaction, arguments): how it runs inside BEGIN ... COMMIT, if it may


def _rows(name: str):
    return {"snapshot": SnapshotRow, "file": FileRow, "settings": SettingsRow, "table_info": TableInfoRow,
            "option": OptionRow, "checkpoint": CheckpointResult, "cleanup": CleanupRow, "compaction": CompactionRow,
            "flush": FlushRow}[name]


def _changes(method: str):
    def run(lake: DuckLake, a: dict):
        return getattr(lake, method)(a["table"], a["start"], a["end"])
    return run


FUNCTIONS: dict[str, Function] = {
    "snapshots": Function(lambda lake, a: lake.snapshots(), "snapshot", metadata=True),
    "table_info": Function(lambda lake, a: lake.table_info(), "table_info", metadata=True),
    "options": Function(lambda lake, a: lake.options(), "option", metadata=True),
    "settings": Function(lambda lake, a: lake.settings(), "settings", metadata=True),
    "current_snapshot": Function(lambda lake, a: [SnapshotIdRow(lake.current_snapshot())], "id", metadata=True),
    "last_committed_snapshot": Function(lambda lake, a: [SnapshotIdRow(lake.last_committed_snapshot())], "id",
                                        metadata=True),
    "list_files": Function(lambda lake, a: lake.list_files(a["table"], a.get("schema"),
                                                           snapshot_version=a.get("snapshot_version"),
                                                           snapshot_time=a.get("snapshot_time")),
                           "file", ("table",), metadata=True),
    "table_changes": Function(_changes("table_changes"), None, ("table", "start", "end"), metadata=True),
    "table_insertions": Function(_changes("table_insertions"), None, ("table", "start", "end"), metadata=True),
    "table_deletions": Function(_changes("table_deletions"), None, ("table", "start", "end"), metadata=True),
    "expire_snapshots": Function(lambda lake, a: lake.expire_snapshots(a.get("older_than"), a.get("versions"),
                                                                       bool(a.get("dry_run", False))),
                                 "snapshot", changes=True),
    "cleanup_old_files": Function(lambda lake, a: lake.cleanup_old_files(
        a.get("older_than"), bool(a.get("cleanup_all", False)), bool(a.get("dry_run", False))), "cleanup",
        changes=True),
    "delete_orphaned_files": Function(lambda lake, a: lake.delete_orphaned_files(
        a.get("older_than"), bool(a.get("cleanup_all", False)), bool(a.get("dry_run", False))), "cleanup",
        changes=True),
    "merge_adjacent_files": Function(lambda lake, a: lake.merge_adjacent_files(
        a.get("table"), a.get("schema"), min_file_size=a.get("min_file_size"),
        max_file_size=a.get("max_file_size"), max_compacted_files=a.get("max_compacted_files")),
        "compaction", ("table",), changes=True),
    "rewrite_data_files": Function(lambda lake, a: lake.rewrite_data_files(
        a.get("table"), a.get("schema"), delete_threshold=a.get("delete_threshold"),
        max_compacted_files=a.get("max_compacted_files")), "compaction", ("table",), changes=True),
    "flush_inlined_data": Function(lambda lake, a: lake.flush_inlined_data(a.get("schema_name"),
                                                                           a.get("table_name")),
                                   "flush", changes=True,
                                   staged=lambda tx, a: tx.flush_inlined_data(a.get("schema_name"),
                                                                              a.get("table_name"))),
    "add_data_files": Function(lambda lake, a: [AddedFileRow(p) for p in lake.add_data_files(
        a["table"], a["paths"], schema=a.get("schema"), allow_missing=bool(a.get("allow_missing", False)),
        ignore_extra_columns=bool(a.get("ignore_extra_columns", False)),
        hive_partitioning=a.get("hive_partitioning"))], "added", ("table", "paths"), changes=True),
    "set_option": Function(lambda lake, a: lake.set_option(a["name"], a["value"], table_name=a.get("table_name"),
                                                           schema=a.get("schema")) or [],
                           None, ("name", "value"), changes=True),
    "checkpoint": Function(lambda lake, a: [lake.checkpoint()], "checkpoint", changes=True),
    "set_commit_message": Function(lambda lake, a: _set_commit_message(lake, a), None,
                                   ("author", "commit_message")),
}
_KEYWORDS = {  # named parameters each function takes besides its positional ones
    "list_files": ("schema", "snapshot_version", "snapshot_time"),
    "expire_snapshots": ("older_than", "versions", "dry_run"),
    "cleanup_old_files": ("older_than", "cleanup_all", "dry_run"),
    "delete_orphaned_files": ("older_than", "cleanup_all", "dry_run"),
    "merge_adjacent_files": ("schema", "min_file_size", "max_file_size", "max_compacted_files"),
    "rewrite_data_files": ("schema", "delete_threshold", "max_compacted_files"),
    "flush_inlined_data": ("schema_name", "table_name"),
    "add_data_files": ("schema", "allow_missing", "ignore_extra_columns", "hive_partitioning"),
    "set_option": ("schema", "table_name"),
    "set_commit_message": ("extra_info",),
}
# Options the reference refuses as NULL (function -> option -> what it must be), rather than taking their default.
_NON_NULL = {
    "expire_snapshots": {"dry_run": "boolean", "older_than": "timestamp"},
    "merge_adjacent_files": {"max_compacted_files": "integer", "min_file_size": "integer", "max_file_size": "integer"},
    "rewrite_data_files": {"max_compacted_files": "integer"},
}
_TIMES = {"older_than", "snapshot_time"}  # timestamps (now() - INTERVAL ...), intervals ('7 days') or ISO text


def _set_commit_message(lake: DuckLake, a: dict) -> list:
    """The reference's set_commit_message: author, message and extra info of the snapshot the open transaction
    commits (the last call wins; outside BEGIN the statement's own transaction commits nothing: no effect)."""
    tx = current(lake)
    if tx is not None:
        texts = [None if a.get(k) is None else str(a[k]) for k in ("author", "commit_message", "extra_info")]
        tx.properties = CommitProperties(*texts)
    return []


def _row_fields(key: str) -> tuple[str, ...]:
    if key == "id":
        return SnapshotIdRow._fields
    if key == "added":
        return AddedFileRow._fields
    return _rows(key)._fields


def _resolve(ctx: QueryContext, qualifier: str | None, func: exp.Func) -> tuple[str, Function, list, dict]:
    """(name, function, positional args, named args) of a call, the catalog argument checked and dropped."""
    name = (func.name if isinstance(func, exp.Anonymous) else func.sql_name()).lower()
    args = list(func.expressions) if isinstance(func, exp.Anonymous) else list(func.args.values())
    prefixed = name.startswith("ducklake_")
    if prefixed:
        name = name[len("ducklake_"):]
    function = FUNCTIONS.get(name)
    if function is None:
        raise UnsupportedSqlError(f"function {func.name or name!r} is not supported by lake.sql (supported: "
                                  f"{', '.join(sorted(FUNCTIONS))}, also as ducklake_<name>('<lake>', ...))")
    positional = [a for a in args if not isinstance(a, exp.Kwarg | exp.PropertyEQ)]
    named = {a.this.name.lower(): a.expression for a in args if isinstance(a, exp.Kwarg | exp.PropertyEQ)}
    if prefixed:
        if not positional:
            raise UnsupportedSqlError(f"ducklake_{name} needs the lake's name as its first argument")
        _check_catalog(ctx, str(evaluate(ctx, positional.pop(0))))
        if name in ("table_changes", "table_insertions", "table_deletions") and len(positional) == 4:
            schema, table = (str(evaluate(ctx, e)) for e in positional[:2])
            positional = [exp.Tuple(expressions=[exp.Literal.string(schema), exp.Literal.string(table)])] + \
                positional[2:]
    elif qualifier is not None:
        _check_catalog(ctx, qualifier)
    # DuckDB resolves an unqualified `CALL set_option(...)` in the default database (after USE): for lake.sql
    # that is this lake, as for unqualified table names
    elif not function.metadata and ctx.dialect != "duckdb":
        raise UnsupportedSqlError(f"call {name} as ducklake_{name}('{ctx.catalog_name}', ...) or "
                                  f"{ctx.catalog_name}.{name}(...)")
    return name, function, positional, named


def _check_catalog(ctx: QueryContext, given: str) -> None:
    if given.lower() != ctx.catalog_name.lower():
        raise UnsupportedSqlError(f"lake {given!r} is not this lake (named {ctx.catalog_name!r} here; pass "
                                  "catalog_name= to lake.sql)")


def _arguments(ctx: QueryContext, name: str, function: Function, positional: list, named: dict) -> dict:
    if len(positional) > len(function.params):
        raise UnsupportedSqlError(f"{name} takes {len(function.params)} positional argument(s) after the lake's "
                                  f"name, got {len(positional)}")
    allowed = set(function.params) | set(_KEYWORDS.get(name, ()))
    unknown = sorted(set(named) - allowed)
    if unknown:
        raise UnsupportedSqlError(f"{name} has no parameter {', '.join(unknown)} (it takes: "
                                  f"{', '.join(sorted(allowed)) or 'none'})")
    values = {}
    for key, node in [*zip(function.params, positional, strict=False), *named.items()]:
        if isinstance(node, exp.Null) and key in _NON_NULL.get(name, {}):
            raise InvalidArgumentError(f"The {key} option must be a non-null {_NON_NULL[name][key]}.")
        values[key] = _value(ctx, key, node)
    optional = {"table"} if name in ("merge_adjacent_files", "rewrite_data_files") else set()
    missing = [p for p in function.params if p not in values and p not in optional]
    if missing:
        raise UnsupportedSqlError(f"{name} needs argument(s) {', '.join(missing)}")
    return values


def _value(ctx: QueryContext, key: str, node: exp.Expression):
    if isinstance(node, exp.Tuple):  # (schema, table) of ducklake_table_changes
        return tuple(evaluate(ctx, e) for e in node.expressions)
    if key in ("start", "end"):
        value = evaluate(ctx, node) if isinstance(node, exp.Literal) and not node.is_string else None
        return value if isinstance(value, int) else _datetime(timestamp_text(ctx, node))
    if key in _TIMES:
        if isinstance(node, exp.Literal) and node.is_string:
            try:
                return datetime.fromisoformat(node.this)
            except ValueError:
                return node.this  # an interval such as '7 days'
        if isinstance(node, exp.Interval):
            return evaluate(ctx, node)  # a timedelta
        return _datetime(timestamp_text(ctx, node))
    if key == "versions" and isinstance(node, exp.Array):
        return [evaluate(ctx, e) for e in node.expressions]
    return evaluate(ctx, node)


def _datetime(text: str) -> datetime:
    return datetime.fromisoformat(text)


def call(ctx: QueryContext, text: str, in_transaction: bool) -> list:
    """CALL <function>(...): its rows (a list of NamedTuples); DataFrame functions return the collected rows."""
    import sqlglot

    try:
        select = sqlglot.parse_one(f"SELECT {text}", read=reading(ctx.dialect))
    except sqlglot.errors.ParseError as exc:
        raise UnsupportedSqlError(f"cannot parse CALL {text!r}: {str(exc).splitlines()[0]}") from None
    target = select.expressions[0] if isinstance(select, exp.Select) and len(select.expressions) == 1 else None
    qualifier = None
    if isinstance(target, exp.Dot) and isinstance(target.expression, exp.Func):
        qualifier, target = target.this.name, target.expression
    if not isinstance(target, exp.Func):
        raise UnsupportedSqlError(f"CALL {text!r}: expected CALL function(arguments)")
    return _run(ctx, qualifier, target, in_transaction, as_frame=False)


def is_lake_function(node: exp.Table) -> bool:
    """A lake table function (qualified, prefixed ducklake_, or one of ours); others (range(), ...) stay Spark's."""
    name = node.this.name.lower() if isinstance(node.this, exp.Anonymous) else node.this.sql_name().lower()
    return node.args.get("db") is not None or name.startswith("ducklake_") or name in FUNCTIONS


def table_function(ctx: QueryContext, node: exp.Table):
    """A table function in FROM (`snapshots()`, `lake.table_changes('t', 1, 2)`) as a Spark DataFrame."""
    qualifier = node.args["db"].name if node.args.get("db") else None
    return _run(ctx, qualifier, node.this, current(ctx.lake) is not None, as_frame=True)


def _run(ctx: QueryContext, qualifier: str | None, func: exp.Func, in_transaction: bool, *, as_frame: bool):
    name, function, positional, named = _resolve(ctx, qualifier, func)
    if function.changes and in_transaction and function.staged is None:
        raise UnsupportedSqlError(f"{name} changes the lake on its own: run it outside BEGIN ... COMMIT")
    arguments = _arguments(ctx, name, function, positional, named)
    if function.changes and in_transaction and function.staged is not None:  # staged, committed with the transaction
        result = function.staged(current(ctx.lake), arguments)
    else:
        result = function.run(ctx.lake, arguments)
    if function.row is None:
        if not isinstance(result, list):  # a DataFrame (change feed)
            return result if as_frame else result.collect()
        if as_frame:
            raise UnsupportedSqlError(f"{name} returns no rows: CALL it instead of selecting from it")
        return result
    if as_frame:
        return rows_to_dataframe(ctx.lake.spark, result, _row_fields(function.row))
    return result
