"""What a DELETE staged: ended files, inlined deletes, delete files written; and which files it ends (every row
deleted)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...spec.model import NewDeleteFile


@dataclass
class DeletePlan:
    """What a DELETE changes, ready to commit."""

    deleted_rows: int = 0
    delete_files: list[NewDeleteFile] = field(default_factory=list)
    ended_files: list[int] = field(default_factory=list)  # data files whose every row is now deleted
    inlined_file_deletes: dict[int, list[int]] = field(default_factory=dict)  # file id -> positions
    inlined_row_ids: list[int] = field(default_factory=list)  # inlined rows to end

    @property
    def empty(self) -> bool:
        """True when the condition matched nothing."""
        return self.deleted_rows == 0


def split_ended(files: dict, file_counts: dict[int, int]) -> tuple[list[int], dict[int, int]]:
    """The data files (`files` by id) a delete of `file_counts` rows per file id ends, and the rest with their
    counts."""
    # As the reference: a data file ends when its delete file would hold every row (inlined deletes of it are not
    # counted: such a file keeps a delete file of its other rows, which DuckDB's change feed needs).
    already = {fid: f.delete_file.delete_count if f.delete_file else 0 for fid, f in files.items()}
    ended = [fid for fid, n in file_counts.items() if n + already[fid] >= files[fid].record_count]
    return ended, {fid: n for fid, n in file_counts.items() if fid not in ended}
