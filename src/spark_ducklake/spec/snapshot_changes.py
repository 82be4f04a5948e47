"""The `changes_made` vocabulary of ducklake_snapshot_changes (the conflict rules: catalog/conflicts.py)."""

from __future__ import annotations

from dataclasses import dataclass

from .duckdb_keywords import optionally_quoted

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
    "created_scalar_macro": "scalar_macros_created",
    "created_table_macro": "table_macros_created",
    "dropped_scalar_macro": "scalar_macros_dropped",
    "dropped_table_macro": "table_macros_dropped",
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
    entries: list[str]
    buf: list[str]
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
        if value.startswith('"'):  # schema names bare, table / view / macro names as DuckDB writes them
            parts = unquote_name(value)
            value = ".".join(parts[:1] + [optionally_quoted(p) for p in parts[1:]])
        shown.setdefault(DISPLAY_KEYS.get(change.kind, change.kind), []).append(value)
    return shown


INSERT_KINDS = frozenset({"inserted_into_table", "inlined_insert"})
DELETE_KINDS = frozenset({"deleted_from_table", "inlined_delete"})
# Rewriting files: the reference's merge_adjacent_files and rewrite_data_files (compacted_table: DuckLake 0.3).
COMPACT_KINDS = frozenset({"merge_adjacent", "rewrite_delete", "compacted_table"})
FLUSH_KINDS = frozenset({"inline_flush", "flushed_inlined"})  # the reference writes the first, reads both
