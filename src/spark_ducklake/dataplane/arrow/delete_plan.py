"""What a DELETE staged: ended files, inlined deletes, delete files written; and which files it ends (every row
deleted)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ...spec.model import DataFile, NewDeleteFile


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


def split_ended(files: dict[int, DataFile], file_counts: dict[int, int]) -> tuple[list[int], dict[int, int]]:
    """The data files (`files` by id) a delete of `file_counts` rows per file id ends, and the rest with their
    counts."""
    # As the reference: a data file ends when its delete file would hold every row (inlined deletes of it are not
    # counted: such a file keeps a delete file of its other rows, which DuckDB's change feed needs).
    already = {fid: f.delete_file.delete_count if f.delete_file else 0 for fid, f in files.items()}
    ended = [fid for fid, n in file_counts.items() if n + already[fid] >= files[fid].record_count]
    return ended, {fid: n for fid, n in file_counts.items() if fid not in ended}


@dataclass
class DeleteSplit:
    """How a delete of some rows per data file is staged, whichever plane found the rows: `plan` (its row count
    and the files it ends), the `rest` (file id -> rows) still to delete by position, inlined into the catalog when
    `inline_rest`, else written as delete files of `files[id]`."""

    plan: DeletePlan
    files: dict[int, DataFile]
    rest: dict[int, int]
    inline_rest: bool


def split_deletes(scan_files: Iterable[DataFile], counts: Mapping[int | None, int], inline_limit: int) -> DeleteSplit:
    """`counts`: matched rows per data file id (None: inlined rows) of a scan over `scan_files`."""
    plan = DeletePlan(deleted_rows=sum(counts.values()))
    file_counts = {fid: n for fid, n in counts.items() if fid is not None}
    files = {f.data_file_id: f for f in scan_files if f.data_file_id in file_counts}
    plan.ended_files, rest = split_ended(files, file_counts)
    return DeleteSplit(plan, files, rest, inline_rest=bool(rest) and sum(rest.values()) <= inline_limit)


def replaces_old_file(deletion_vectors: bool, vector_history: bool) -> bool:
    """Whether a file's new delete file replaces its old one: always, except a bare deletion vector (no history),
    which holds every deleted position itself."""
    return not deletion_vectors or vector_history
