"""The spec's conflict rules: whether our pending changes may commit after a snapshot committed meanwhile.

Rules: duckdb/advanced_features/conflict_resolution.md, in the `changes_made` vocabulary of spec/snapshot_changes.
"""

from __future__ import annotations

from collections.abc import Set

from ..errors import InvalidNameError
from ..spec.names import schema_key, split_schema_path
from ..spec.snapshot_changes import COMPACT_KINDS, DELETE_KINDS, FLUSH_KINDS, INSERT_KINDS, Change, unquote_name

# An intent only, never written to changes_made: the deletes a flush writes as delete files are rows deleted before
# its read snapshot (inlined deletes of file rows, inlined rows deleted while inlined). No predicate is evaluated,
# so unlike a DELETE it cannot miss rows appended meanwhile: it conflicts with what touches the same files (deletes,
# compactions, drops, alters), never with inserts. The reference's flush conflicts only with drops, inlined deletes
# and other flushes; appends committed while Spark writes its files used to fail it every time.
FLUSHED_DELETES = "flushed_deletes"


def find_conflict(
    ours: list[Change], theirs: list[Change], *, our_deleted_files: set[int] | None = None,
    their_deleted_files: set[int] | None = None, schema_names: dict[str, str] | None = None,
) -> str | None:
    """The first logical conflict between our pending changes and a snapshot committed meanwhile, or None.

    Rules: duckdb/advanced_features/conflict_resolution.md. Deletes from different data files of the same
    table do not conflict when both sides' deleted file ids are known. `schema_names` maps schema ids (as
    text) to names, so drops (stored by id) can be compared with creations (stored by name).
    """
    schema_names = schema_names or {}
    mine: dict[str, set[str]] = {}
    for change in ours:
        mine.setdefault(change.kind, set()).add(change.value)
    other: dict[str, set[str]] = {}
    for change in theirs:
        other.setdefault(change.kind, set()).add(change.value)

    def both(kind_a: str | Set[str], kind_b: str | Set[str]) -> set[str]:
        a = set().union(*(mine.get(k, set()) for k in ([kind_a] if isinstance(kind_a, str) else kind_a)))
        b = set().union(*(other.get(k, set()) for k in ([kind_b] if isinstance(kind_b, str) else kind_b)))
        return a & b

    if hit := both("created_schema", "created_schema"):
        return f"both transactions created schema {sorted(hit)[0]}"
    if hit := both("dropped_schema", "dropped_schema"):
        return f"both transactions dropped schema {sorted(hit)[0]}"
    if hit := both({"created_table", "created_view"}, {"created_table", "created_view"}):
        return f"both transactions created {sorted(hit)[0]}"
    dropped_schema_names = {schema_names.get(v, v) for v in other.get("dropped_schema", set())}
    for created in mine.get("created_table", set()) | mine.get("created_view", set()):
        if _schema_of_created(created) in dropped_schema_names:
            return f"cannot create {created}: its schema was dropped by another transaction"
    if hit := both({"dropped_table", "dropped_view"}, {"dropped_table", "dropped_view"}):
        return f"both transactions dropped table/view {sorted(hit)[0]}"
    if hit := both({"altered_table", "altered_view"}, {"dropped_table", "dropped_view", "altered_table",
                                                        "altered_view"}):
        return f"table {sorted(hit)[0]} was altered or dropped by another transaction"
    # A flush records the deletes it turned into delete files as deleted_from_table (as the reference does), yet it
    # deleted nothing: no predicate of it could have matched our rows. Even a real DELETE in the same snapshot
    # leaves an append committed after it correct; the rule guards deletes committing after inserts (below).
    flushed = other.get("inline_flush", set()) | other.get("flushed_inlined", set())
    deleted = both(INSERT_KINDS, {"dropped_table", "altered_table", "inlined_delete"})
    if hit := deleted | (both(INSERT_KINDS, "deleted_from_table") - flushed):
        return f"cannot insert into table {sorted(hit)[0]}: another transaction dropped, altered or deleted from it"
    if hit := both(DELETE_KINDS, {"dropped_table", "altered_table"} | COMPACT_KINDS | INSERT_KINDS):
        return f"cannot delete from table {sorted(hit)[0]}: another transaction changed it"
    if hit := both(FLUSHED_DELETES, {"dropped_table", "altered_table"} | COMPACT_KINDS):
        return f"cannot flush table {sorted(hit)[0]}: another transaction altered, dropped or compacted it"
    if hit := both("inlined_delete", FLUSH_KINDS):
        return f"cannot delete from table {sorted(hit)[0]}: another transaction flushed its inlined data"
    if hit := both(FLUSH_KINDS, {"dropped_table", "inlined_delete"} | FLUSH_KINDS):
        return f"cannot flush table {sorted(hit)[0]}: another transaction dropped it, flushed it or deleted from it"
    if hit := both(DELETE_KINDS | {FLUSHED_DELETES}, DELETE_KINDS):
        if our_deleted_files is None or their_deleted_files is None or our_deleted_files & their_deleted_files:
            return f"both transactions deleted from the same data file of table {sorted(hit)[0]}"
    if hit := both(COMPACT_KINDS, DELETE_KINDS | {"dropped_table"} | COMPACT_KINDS):
        return f"cannot compact table {sorted(hit)[0]}: another transaction deleted from, compacted or dropped it"
    for created in mine.get("created_schema", set()):  # a nested schema (DuckLake 1.1) in a dropped parent
        if _parent_of(_schema_of_created(created)) in dropped_schema_names:
            return f"cannot create schema {created}: its parent schema was dropped by another transaction"
    for schema_id in mine.get("dropped_schema", set()):
        name = schema_names.get(schema_id, schema_id)
        for created in other.get("created_table", set()) | other.get("created_view", set()):
            if _schema_of_created(created) == name:
                return f"cannot drop schema {name}: another transaction created {created} in it"
        for created in other.get("created_schema", set()):
            if _parent_of(_schema_of_created(created)) == name:
                return f"cannot drop schema {name}: another transaction created schema {created} in it"
    return None


def _parent_of(key: str) -> str | None:
    """The path of a nested schema's parent ('sales' of 'sales.europe'); None for a top-level name."""
    try:
        path = split_schema_path(key)
    except InvalidNameError:  # a 1.0 name that does not read as a path
        return None
    return schema_key(path[:-1]) if len(path) > 1 else None


def _schema_of_created(value: str) -> str:
    return unquote_name(value)[0] if value else value
