"""The values of DuckDB's virtual columns (`rowid`, `snapshot_id`, `filename`, `file_row_number`, `file_index`)
in a scan, computed only when asked for.

As the reference computes them: `rowid` is the row id stored in the file (row lineage) or the file's
row_id_start plus the row's position; `snapshot_id` the per-row snapshot stored in the file or the file's
begin_snapshot; `filename` the data file's path; `file_row_number` the row's position in its file; `file_index`
the file's place in the scan's file list. Inlined rows report their inlined table's name, their row id as the
row number, their own begin snapshot, and the file count plus the inlined table's place as the index.
"""

from __future__ import annotations

from ...errors import DuckLakeError
from ...spec.internal_columns import INLINED_ROW_ID, SNAPSHOT_ID_COLUMN, VIRTUAL_COLUMNS
from ..arrow.scan_columns import BEGIN, POS

FILENAME, FILE_INDEX = "_dl_filename", "_dl_file_index"  # columns of a scan's per-file lookup
INLINED_TABLE, INLINED_BEGIN = "_dl_inlined_table", "_dl_begin_snapshot"  # columns of inlined rows (catalog)


def check_virtual(names, real: list[str]) -> tuple[str, ...]:
    """The asked virtual columns, lower-case and in order; an unknown name or one a real column has is an error."""
    out: list[str] = []
    taken = {n.lower() for n in real}
    for name in names:
        key = name.lower()
        if key not in VIRTUAL_COLUMNS:
            raise DuckLakeError(f"virtual column {name!r} does not exist: choose from {', '.join(VIRTUAL_COLUMNS)}")
        if key in taken:
            raise DuckLakeError(f"virtual column {name!r} is shadowed by the table's own column of that name")
        if key not in out:
            out.append(key)
    return tuple(out)


def file_values(virtual: tuple[str, ...]) -> dict:
    """Name -> Column of the virtual values of rows read from data files, but `rowid`, which the scan computes
    anyway (position columns, and `_ducklake_internal_snapshot_id` when snapshot_id is asked, present)."""
    from pyspark.sql import functions as F

    exprs = {
        "snapshot_id": F.coalesce(F.col(SNAPSHOT_ID_COLUMN), F.col(BEGIN)),
        "filename": F.col(FILENAME),
        "file_row_number": F.col(POS),
        "file_index": F.col(FILE_INDEX),
    }
    return {name: exprs[name] for name in virtual if name in exprs}


def inlined_values(virtual: tuple[str, ...], inlined_names: list[str], first_index: int) -> list:
    """Columns computing the virtual values of inlined rows (`row_id`, and when asked their source columns)."""
    from pyspark.sql import functions as F

    index = F.lit(None).cast("long")
    for position, name in enumerate(inlined_names):  # few inlined tables: one per schema version
        index = F.when(F.col(INLINED_TABLE) == name, F.lit(first_index + position)).otherwise(index)
    exprs = {
        "rowid": F.col(INLINED_ROW_ID),
        "snapshot_id": F.col(INLINED_BEGIN),
        "filename": F.col(INLINED_TABLE),
        "file_row_number": F.col(INLINED_ROW_ID),
        "file_index": index,
    }
    return [exprs[name].cast("long" if name != "filename" else "string").alias(name) for name in virtual]


def virtual_fields(virtual: tuple[str, ...]) -> list:
    """The StructFields of the virtual columns (an empty scan's schema)."""
    from pyspark.sql import types as T

    return [T.StructField(n, T.StringType() if n == "filename" else T.LongType(), True) for n in virtual]
