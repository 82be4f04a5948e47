"""The reference's internal Parquet columns (row lineage, per-row snapshots) and their reserved field ids.

Constants only: Spark tasks import them without the catalog layer's dependencies."""

ROW_ID_COLUMN, ROW_ID_FIELD_ID = "_ducklake_internal_row_id", 2147483540
SNAPSHOT_ID_COLUMN, SNAPSHOT_ID_FIELD_ID = "_ducklake_internal_snapshot_id", 2147483539

# The row id of inlined rows read from the catalog (beside the user's columns, which may include `row_id`).
INLINED_ROW_ID = "_dl_row_id"

# DuckDB's virtual columns of a DuckLake table: readable by name, never part of `SELECT *` (docs/sql.md).
VIRTUAL_COLUMNS = ("rowid", "snapshot_id", "filename", "file_row_number", "file_index")
