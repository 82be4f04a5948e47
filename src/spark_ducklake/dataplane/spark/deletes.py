"""Row-level deletes on Spark: find the positions a condition matches, stage delete files (`delete_files.py`).

As in the reference: one delete file per touched data file (Iceberg positional deletes), rewritten as a partial
delete file when the data file already had one; a data file whose every row is gone is ended instead; few
positions go to the catalog's inlined delete table.
"""

from __future__ import annotations

from collections import Counter

from ...spec.model import NewDeleteFile
from ..arrow.delete_files import KEY, DeleteTarget
from ..arrow.delete_plan import DeletePlan, replaces_old_file, split_deletes
from ..arrow.scan_columns import FILE, POS
from .delete_writes import write_delete_files
from .scan_plan import ScanPlan
from .session import cached


def plan_delete(spark, plan: ScanPlan, condition, inline_limit: int) -> DeletePlan:
    """Find the rows `condition` matches (on executors) and stage what deleting them takes."""
    # A Column condition may name `rowid` (lake.sql's DELETE ... WHERE rowid = n); unused, Spark prunes it away.
    frame = plan.to_dataframe(spark, positions=True, row_ids=condition is not None and not isinstance(condition, str))
    matches = cached(spark, (frame if condition is None else frame.where(condition)).select(FILE, POS))
    try:
        return stage_deletes(spark, plan, matches, inline_limit)
    finally:
        matches.unpersist()


def stage_deletes(spark, plan: ScanPlan, matches, inline_limit: int) -> DeletePlan:
    """Stage the deletion of `matches` (columns _dl_file, _dl_pos; cached by the caller)."""
    from pyspark.sql import functions as F

    few = matches.limit(inline_limit + 1).collect() if inline_limit > 0 else None
    if few is not None and len(few) <= inline_limit:  # one cheap job answers everything for small deletes
        counts = Counter(r[FILE] for r in few)
        positions = few
    else:
        counts = {r[FILE]: r["count"] for r in matches.groupBy(FILE).count().collect()}  # type: ignore[assignment]  # both map file -> count
        positions = None
    split = split_deletes(plan.files, counts, inline_limit)
    result, files, rest = split.plan, split.files, split.rest
    if None in counts:  # inlined rows: catalog data, small by design
        inlined_rows = positions if positions is not None else matches.where(F.col(FILE).isNull()).collect()
        result.inlined_row_ids = [r[POS] for r in inlined_rows if r[FILE] is None]
    if split.inline_rest:
        if positions is None:
            positions = matches.where(F.col(FILE).isin(list(rest))).collect()
        for r in positions:
            if r[FILE] in rest:
                result.inlined_file_deletes.setdefault(r[FILE], []).append(r[POS])
    elif rest:
        # New positions of a partial file carry the snapshot the commit expects (DeleteRows restamps them if the
        # commit lands on a later one).
        targets = {str(fid): DeleteTarget(files[fid].path, files[fid].delete_file, plan.snapshot_id + 1)
                   for fid in rest}
        new = matches.where(F.col(FILE).isin(list(rest))).select(F.col(FILE).cast("string").alias(KEY), POS)
        written = write_delete_files(spark, new, targets, plan.table.path, vectors=plan.deletion_vectors,
                                     history=plan.vector_history,
                                     encrypted=any(files[fid].encryption_key for fid in rest))
        replaced = replaces_old_file(plan.deletion_vectors, plan.vector_history)
        result.delete_files = [
            NewDeleteFile(int(key), w.path, w.delete_count, w.file_size_bytes, w.footer_size,
                          replaces=targets[key].old if replaced else None, first_snapshot=w.first_snapshot,
                          predicted_snapshot=targets[key].snapshot,
                          encryption_key=w.encryption_key, row_group_count=w.row_group_count)
            for key, w in written.items()]
    return result
