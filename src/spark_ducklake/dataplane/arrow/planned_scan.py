"""What the catalog says to read of one table at one snapshot, as plain data: the pyarrow readers take it as it
is; `spark/scan_plan.py`'s `ScanPlan` adds the DataFrame."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from ...spec.model import DataFile, TableInfo


@dataclass
class PlannedScan:
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
