"""Rich renderings of lake rows for the terminal (the CLI and the demo)."""

from __future__ import annotations

from rich.table import Table


def snapshots_table(snapshots: list) -> Table:
    """`snapshots()` rows as a table: id, time, schema version, changes, author, message."""
    out = Table(title="snapshots")
    for col in ("id", "time", "schema", "changes", "author", "message"):
        out.add_column(col)
    for s in snapshots:
        changes = "; ".join(f"{k}: {', '.join(v)}" for k, v in s.changes.items())
        out.add_row(str(s.snapshot_id), s.snapshot_time.strftime("%Y-%m-%d %H:%M:%S"), str(s.schema_version),
                    changes, s.author or "", s.commit_message or "")
    return out
