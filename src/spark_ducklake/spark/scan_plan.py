"""A planned scan: what the catalog says to read at one snapshot, turned into a DataFrame on demand."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from ..spec.model import DataFile, TableInfo
from . import scan


@dataclass
class ScanPlan:
    """Files (after pruning), inlined rows and deletes of one table at one snapshot."""

    table: TableInfo
    snapshot_id: int
    files: Sequence[DataFile]  # plan_scan gives a FileList: catalog columns, DataFile objects made on first use
    total_files: int
    inlined: pa.Table | None
    inlined_deletes: dict[int, list[int]]
    names_stable: bool
    deletion_vectors: bool = False  # the write_deletion_vectors option: new delete files are Puffin files
    # 1.1 catalogs: a new Puffin file for a data file that has a delete file is partial (one blob per snapshot, the
    # old file replaced in every snapshot), as the 1.1 reference writes it; 1.0 (DuckDB 1.5.5): a bare blob.
    vector_history: bool = False

    def to_dataframe(self, spark, *, row_ids: bool = False, positions: bool = False,
                     virtual: tuple[str, ...] = ()):
        """The Spark DataFrame for this plan (Spark's native Parquet scan underneath); `virtual` appends DuckDB's
        virtual columns (the plan made with inlined_sources=True)."""
        return scan.scan_table(spark, self.table, self.files, snapshot_id=self.snapshot_id, inlined=self.inlined,  # type: ignore[arg-type]
                          inlined_deletes=self.inlined_deletes, names_stable=self.names_stable, row_ids=row_ids,
                          positions=positions, virtual=virtual)
