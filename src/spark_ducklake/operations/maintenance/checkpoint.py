"""`checkpoint`: every maintenance function in the reference's CHECKPOINT order, each with its defaults.

1. flush_inlined_data (inlined rows become files, which compaction can then merge),
2. expire_snapshots (option expire_older_than; nothing without it),
3. merge_adjacent_files and 4. rewrite_data_files (tables with auto_compact not false; rewrite_delete_threshold),
5. cleanup_old_files and 6. delete_orphaned_files (option delete_older_than, else 2 days),
each its own commit or catalog transaction, as the reference runs them one CALL after another.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from .cleanup import cleanup_old_files, delete_orphaned_files
from .compaction import merge_adjacent_files, rewrite_data_files
from .expire import expire_snapshots
from .flush import flush_inlined_data

if TYPE_CHECKING:
    from ..context import LakeContext

STEPS = ("flush_inlined_data", "expire_snapshots", "merge_adjacent_files", "rewrite_data_files",
         "cleanup_old_files", "delete_orphaned_files")


class CheckpointResult(NamedTuple):
    """What each step of `checkpoint()` returned (the rows of the function of the same name)."""

    flushed: list
    expired: list
    merged: list
    rewritten: list
    cleaned: list
    orphans_deleted: list


def checkpoint(ctx: LakeContext) -> CheckpointResult:
    """Run the six maintenance functions in order over the whole lake, each with its defaults."""
    ctx.check_writable()
    return CheckpointResult(
        flushed=flush_inlined_data(ctx, None, None),
        expired=expire_snapshots(ctx),
        merged=merge_adjacent_files(ctx, None, None),
        rewritten=rewrite_data_files(ctx, None, None),
        cleaned=cleanup_old_files(ctx),
        orphans_deleted=delete_orphaned_files(ctx),
    )
