"""The helper columns a scan adds to the table's, on both planes (file path, row position, data file id, ...)."""

from __future__ import annotations

# Helper columns a scan adds (file path, row position, data file id, first row id, first snapshot): underscored
# so no lake column collides with them.
PATH, POS, FILE, ROW_START, BEGIN = "_dl_path", "_dl_pos", "_dl_file", "_dl_row_start", "_dl_begin"
DELETED = "_dl_deleted"  # the snapshot that deleted a position (delete files' and deletion vectors' rows)


