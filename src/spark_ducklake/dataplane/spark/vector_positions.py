"""Deleted positions of deletion-vector files as a DataFrame, each file read by an executor task."""

from __future__ import annotations

from ..arrow.deletion_vectors import positions_table
from .workers import require_python_workers


def deletion_vector_positions(spark, delete_files: list[tuple[str, int, int, int | None]], names: tuple[str, str, str]):
    """A DataFrame of (file id, position, deleting snapshot) of the given deletion-vector files, each read by an
    executor task; `delete_files` holds (path, data file id, begin snapshot, partial_max)."""
    require_python_workers(spark)
    rows = [(p, fid, begin, last) for p, fid, begin, last in delete_files]
    jobs = spark.createDataFrame(rows, "path string, fid long, begin long, last long").repartition(
        max(1, min(len(rows), 64)))
    schema = f"{names[0]} long, {names[1]} long, {names[2]} long"

    def run(batches):
        for batch in batches:
            for path, fid, begin, last in zip(*(batch.column(i).to_pylist() for i in range(4)), strict=True):
                yield from positions_table(path, fid, begin, last, names).to_batches()

    return jobs.mapInArrow(run, schema)
