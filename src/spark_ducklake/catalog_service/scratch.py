"""The service's scratch files: rows it materializes for Spark's reader (inlined rows, files with inlined deletes,
tables Spark cannot read alone, a change feed) as Parquet files in a scratch folder under the service's temporary
folder (never the lake's data path), named by what they hold so rows asked for again are not written again, and
where each materialized row came from, for the DELETE / UPDATE / MERGE that read it."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import uuid
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..dataplane.arrow.conform import conform_arrow
from ..dataplane.arrow.local_scan import ROWID, read_plan
from ..dataplane.arrow.scan_columns import FILE, POS
from ..dataplane.spark.scan_plan import ScanPlan


class Scratch:
    """The scratch folder (made on first need, removed with `log_root`) and the origins of its files' rows."""

    def __init__(self, log_root: str):
        self.log_root = log_root
        self.folder: str | None = None
        # A materialized file's rows: where each came from (`_dl_file`, `_dl_pos`, `rowid` as read_plan gives
        # them), so a DELETE / UPDATE that read them through the plugin finds the rows it changes.
        self.origins: dict[str, pa.Table] = {}

    def path(self, prefix: str, *key: Any) -> str:
        """A Parquet file of the service's scratch folder (made on first need) named by `key`: rows that never
        change (a snapshot's, a change range's) asked for again land on the file already written."""
        if self.folder is None:
            self.folder = tempfile.mkdtemp(prefix="inlined-", dir=self.log_root)
        digest = hashlib.sha256(json.dumps(list(key)).encode()).hexdigest()[:32]
        return os.path.join(self.folder, f"{prefix}{digest}.parquet")

    def scan_rows(self, part: ScanPlan, path: str) -> pa.Table:
        """`part`'s rows in the table's Arrow types, for the scratch file `path`; where each row came from (data
        file, position, row id) is kept, so a DELETE/UPDATE/MERGE finding rows in that file locates them
        (row_level.py's `_locate`)."""
        rows = read_plan(part, row_ids=True, positions=True)
        self.origins[path] = rows.select([FILE, POS, ROWID])
        return conform_arrow(rows.drop_columns([FILE, POS, ROWID]), part.table)


def write_parquet(data: pa.Table, path: str) -> None:
    """`data` as the Parquet file `path`, written aside and renamed: a half-written file is never a scan's file."""
    pending = f"{path}.{uuid.uuid4().hex}.tmp"
    pq.write_table(data, pending)
    os.replace(pending, path)
