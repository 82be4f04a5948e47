"""The change feed on Spark: `table_insertions`, `table_deletions` and `table_changes` between two snapshots.

Data files are read by Spark's native Parquet reader through the scan's own `read_files` (columns by field id,
as of the end snapshot; columns a file predates read as their default). Every row version gets the snapshot
that inserted it and the one that deleted it (see `catalog/planners/change_feed.py`); a feed keeps the versions whose
snapshot falls in the range. As in the reference, a delete and an insert of the same row id in the same snapshot
are an update: `update_preimage` and `update_postimage`.
"""

from __future__ import annotations

from functools import reduce

from ...catalog.inlined import tables as inlined_tables
from ...catalog.planners.change_feed import ChangePlan
from ...spec.internal_columns import INLINED_ROW_ID, ROW_ID_COLUMN, SNAPSHOT_ID_COLUMN
from ...spec.names import spark_name
from ..arrow.scan_columns import BEGIN, DELETED, FILE, POS, ROW_START, ScanColumns
from . import types as spark_types
from .encrypted.read import encrypted_delete_positions
from .scan import broadcast_if_small, delete_file_positions, internal_names, read_files, spark_safe
from .vector_positions import deletion_vector_positions

SNAPSHOT_ID, ROWID, CHANGE_TYPE = "snapshot_id", "rowid", "change_type"
INSERTED = "_dl_inserted"
FILE_END = "_dl_file_end"


def row_versions(spark, plan: ChangePlan):
    """Every row version the plan covers: the table's columns, `rowid`, `_dl_inserted` and `_dl_deleted`
    (snapshot ids; NULL when not deleted by the end snapshot), `_dl_file` and `_dl_pos` (NULL file and the row
    id for inlined rows)."""
    from pyspark.sql import functions as F

    table = plan.table
    parts = []
    internal = internal_names(table, plan.names_stable)
    data = read_files(spark, table, plan.files, internal,
                      ScanColumns(positions=True, snapshots=True, lineage=True))
    if data is not None:
        deleted = _first_deletions(spark, plan)
        if deleted is not None:
            data = data.join(deleted, [FILE, POS], "left")
        deleted_at = F.col(DELETED) if deleted is not None else F.lit(None).cast("long")
        if plan.file_ends:
            ends = spark.createDataFrame(list(plan.file_ends.items()), f"{FILE} long, {FILE_END} long")
            data = data.join(F.broadcast(ends), FILE, "left")
            deleted_at = F.least(deleted_at, F.col(FILE_END))  # least() skips NULLs
        parts.append(data.select(
            *[F.col(spark_name(internal[c.column_id])).alias(c.name) for c in table.columns],
            F.coalesce(F.col(ROW_ID_COLUMN), F.col(ROW_START) + F.col(POS)).alias(ROWID),
            F.coalesce(F.col(SNAPSHOT_ID_COLUMN), F.col(BEGIN)).alias(INSERTED),
            deleted_at.alias(DELETED), F.col(FILE), F.col(POS),
        ))
    if plan.inlined is not None and plan.inlined.num_rows:
        small = spark.createDataFrame(spark_safe(plan.inlined))
        parts.append(small.select(
            *[F.col(spark_name(c.name)).cast(spark_types.to_spark_type(c)).alias(c.name) for c in table.columns],
            F.col(INLINED_ROW_ID).alias(ROWID), F.col(inlined_tables.BEGIN_COL).alias(INSERTED),
            F.col(inlined_tables.END_COL).alias(DELETED), F.lit(None).cast("long").alias(FILE),
            F.col(INLINED_ROW_ID).alias(POS),
        ))
    if not parts:
        return spark.createDataFrame([], _versions_schema(plan))
    # Partial files and inlined rows may hold versions inserted or deleted after the end snapshot.
    versions = reduce(lambda a, b: a.unionByName(b), parts).where(F.col(INSERTED) <= plan.end)
    return versions.withColumn(DELETED, F.when(F.col(DELETED) <= plan.end, F.col(DELETED)))


def _first_deletions(spark, plan: ChangePlan):
    """(`_dl_file`, `_dl_pos`, `_dl_deleted`): the first snapshot that deleted each deleted position."""
    from pyspark.sql import functions as F

    parts = []
    vectors: list[tuple[str, int, int, int | None]]
    vectors = [(path, fid, begin, None) for path, fid, begin in plan.delete_files if path.endswith(".puffin")]
    positional = [d for d in plan.delete_files if not d[0].endswith(".puffin") and d[0] not in plan.delete_keys]
    secret = [(path, fid, begin, plan.delete_keys[path]) for path, fid, begin in plan.delete_files
              if path in plan.delete_keys and not path.endswith(".puffin")]  # vectors: plaintext, key or not
    if secret:  # ENCRYPTED lakes: decrypted on the executors (dataplane/spark/encrypted/)
        parts.append(encrypted_delete_positions(spark, secret))
    if positional:
        parts.append(delete_file_positions(spark, positional))
    if vectors:  # deletion vectors (write_deletion_vectors), read by executor tasks
        parts.append(deletion_vector_positions(spark, vectors, (FILE, POS, DELETED)))
    if plan.inlined_deletes:
        parts.append(spark.createDataFrame(plan.inlined_deletes, f"{FILE} long, {POS} long, {DELETED} long"))
    if not parts:
        return None
    events = reduce(lambda a, b: a.unionByName(b), parts)
    return broadcast_if_small(events.groupBy(FILE, POS).agg(F.min(DELETED).alias(DELETED)), plan.deleted_positions)


def _versions_schema(plan: ChangePlan):
    from pyspark.sql import types as T

    fields = [T.StructField(c.name, spark_types.to_spark_type(c), True) for c in plan.table.columns]
    fields += [T.StructField(name, T.LongType(), True) for name in (ROWID, INSERTED, DELETED, FILE, POS)]
    return T.StructType(fields)


def insertions(spark, plan: ChangePlan):
    """`table_insertions`: snapshot_id, rowid and the table's columns of rows inserted in the range."""
    from pyspark.sql import functions as F

    versions = row_versions(spark, plan)
    return versions.where(F.col(INSERTED).between(plan.start, plan.end)).select(
        F.col(INSERTED).alias(SNAPSHOT_ID), ROWID, *_data_columns(plan))


def deletions(spark, plan: ChangePlan):
    """`table_deletions`: snapshot_id, rowid and the table's columns of rows deleted in the range."""
    from pyspark.sql import functions as F

    versions = row_versions(spark, plan)
    return versions.where(F.col(DELETED).between(plan.start, plan.end)).select(
        F.col(DELETED).alias(SNAPSHOT_ID), ROWID, *_data_columns(plan))


def changes(spark, plan: ChangePlan):
    """`table_changes`: snapshot_id, rowid, change_type and the table's columns, inserts and deletes in the range
    (a delete and an insert of one row id in one snapshot being an update's pre- and postimage)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    versions = row_versions(spark, plan)
    versions = versions.where(F.col(INSERTED).between(plan.start, plan.end)
                              | F.col(DELETED).between(plan.start, plan.end))
    event = F.explode(F.array(
        F.struct(F.col(INSERTED).alias("snap"), F.lit(1).alias("ins")),
        F.struct(F.col(DELETED).alias("snap"), F.lit(0).alias("ins")),
    )).alias("_dl_event")
    events = (versions.select(*_data_columns(plan), ROWID, event)
              .where(F.col("_dl_event.snap").between(plan.start, plan.end))
              .select("*", F.col("_dl_event.snap").alias(SNAPSHOT_ID), F.col("_dl_event.ins").alias("_dl_ins")))
    same_row = Window.partitionBy(SNAPSHOT_ID, ROWID)
    update = (F.max("_dl_ins").over(same_row) == 1) & (F.min("_dl_ins").over(same_row) == 0)
    inserted = F.col("_dl_ins") == 1
    change_type = (F.when(update & inserted, "update_postimage").when(update, "update_preimage")
                   .when(inserted, "insert").otherwise("delete"))
    return events.select(SNAPSHOT_ID, ROWID, change_type.alias(CHANGE_TYPE), *_data_columns(plan))


def _data_columns(plan: ChangePlan) -> list:
    from pyspark.sql import functions as F

    return [F.col(spark_name(c.name)) for c in plan.table.columns]
