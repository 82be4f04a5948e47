"""The `changes_made` vocabulary of ducklake_snapshot_changes, and the spec's conflict rules."""

from __future__ import annotations

from dataclasses import dataclass

# changes_made key -> the key the reference's snapshots() function shows.
DISPLAY_KEYS = {
    "created_schema": "schemas_created",
    "dropped_schema": "schemas_dropped",
    "created_table": "tables_created",
    "dropped_table": "tables_dropped",
    "altered_table": "tables_altered",
    "inserted_into_table": "tables_inserted_into",
    "deleted_from_table": "tables_deleted_from",
    "compacted_table": "tables_compacted",
    "inline_flush": "flushed_inlined",
    "created_view": "views_created",
    "dropped_view": "views_dropped",
    "altered_view": "views_altered",
}


@dataclass(frozen=True)
class Change:
    """One entry of changes_made, e.g. Change('inserted_into_table', '1')."""

    kind: str
    value: str

    def render(self) -> str:
        """The entry as stored: `kind:value`."""
        return f"{self.kind}:{self.value}"


def quote_name(*parts: str) -> str:
    """Names as changes_made stores them: `"main"."t"`, quotes doubled."""
    return ".".join('"' + p.replace('"', '""') + '"' for p in parts)


def unquote_name(text: str) -> list[str]:
    """Inverse of quote_name (also accepts unquoted parts)."""
    parts, buf, i, quoted = [], [], 0, False
    while i < len(text):
        ch = text[i]
        if quoted:
            if ch == '"' and i + 1 < len(text) and text[i + 1] == '"':
                buf.append('"')
                i += 1
            elif ch == '"':
                quoted = False
            else:
                buf.append(ch)
        elif ch == '"':
            quoted = True
        elif ch == ".":
            parts.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
        i += 1
    parts.append("".join(buf))
    return parts


def parse_changes(text: str | None) -> list[Change]:
    """Split a changes_made string on top-level commas (commas inside quotes belong to names)."""
    if not text:
        return []
    entries, buf, quoted = [], [], False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            entries.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
    entries.append("".join(buf))
    changes = []
    for entry in entries:
        kind, _, value = entry.partition(":")
        if kind:
            changes.append(Change(kind.strip(), value.strip()))
    return changes


def render_changes(changes: list[Change]) -> str:
    """changes_made text, entries de-duplicated in first-seen order."""
    seen: dict[str, None] = {}
    for change in changes:
        seen.setdefault(change.render(), None)
    return ",".join(seen)


def display_changes(text: str | None) -> dict[str, list[str]]:
    """The MAP(VARCHAR, VARCHAR[]) the reference's snapshots() shows for a changes_made string."""
    shown: dict[str, list[str]] = {}
    for change in parse_changes(text):
        value = change.value
        if value.startswith('"'):
            value = ".".join(unquote_name(value))
        shown.setdefault(DISPLAY_KEYS.get(change.kind, change.kind), []).append(value)
    return shown


_INSERTS = {"inserted_into_table", "inlined_insert"}
DELETE_KINDS = _DELETES = frozenset({"deleted_from_table", "inlined_delete"})
# Rewriting files: the reference's merge_adjacent_files and rewrite_data_files (compacted_table: DuckLake 0.3).
COMPACT_KINDS = frozenset({"merge_adjacent", "rewrite_delete", "compacted_table"})
FLUSH_KINDS = frozenset({"inline_flush", "flushed_inlined"})  # the reference writes the first, reads both


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

    def both(kind_a: str | set[str], kind_b: str | set[str]) -> set[str]:
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
    if hit := both(_INSERTS, {"dropped_table", "altered_table"} | _DELETES):
        return f"cannot insert into table {sorted(hit)[0]}: another transaction dropped, altered or deleted from it"
    if hit := both(_DELETES, {"dropped_table", "altered_table"} | COMPACT_KINDS | _INSERTS):
        return f"cannot delete from table {sorted(hit)[0]}: another transaction changed it"
    if hit := both("inlined_delete", FLUSH_KINDS):
        return f"cannot delete from table {sorted(hit)[0]}: another transaction flushed its inlined data"
    if hit := both(FLUSH_KINDS, {"dropped_table", "inlined_delete"} | FLUSH_KINDS):
        return f"cannot flush table {sorted(hit)[0]}: another transaction dropped it, flushed it or deleted from it"
    if hit := both(_DELETES, _DELETES):
        if our_deleted_files is None or their_deleted_files is None or our_deleted_files & their_deleted_files:
            return f"both transactions deleted from the same data file of table {sorted(hit)[0]}"
    if hit := both(COMPACT_KINDS, _DELETES | {"dropped_table"} | COMPACT_KINDS):
        return f"cannot compact table {sorted(hit)[0]}: another transaction deleted from, compacted or dropped it"
    for schema_id in mine.get("dropped_schema", set()):
        for created in other.get("created_table", set()) | other.get("created_view", set()):
            name = schema_names.get(schema_id, schema_id)
            if _schema_of_created(created) == name:
                return f"cannot drop schema {name}: another transaction created {created} in it"
    return None


def _schema_of_created(value: str) -> str:
    return unquote_name(value)[0] if value else value
