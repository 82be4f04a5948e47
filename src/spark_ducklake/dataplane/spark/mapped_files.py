"""Reading files that carry a name mapping (no field ids: files registered with `add_data_files`, by DuckDB's
`ducklake_add_data_files`, or written without ids) with Spark's native Parquet reader, by name.

Spark matches columns by name when the requested schema has no field ids, so the scan asks for each mapped
column under its name in the file (nested struct fields too) and renames afterwards; filters pushed down then
name the file's own columns. Columns whose values live in the file's hive path are joined in per file.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...catalog.reads.name_maps import MappedField, NameMap
from ...spec.internal_columns import ROW_ID_COLUMN, SNAPSHOT_ID_COLUMN
from ...spec.model import Column, DataFile
from ...spec.names import spark_name
from ..arrow.scan_columns import PATH, POS, ScanColumns
from ..arrow.storage import spark_file_uri
from . import types as spark_types
from .file_log import read_parquet

HIVE_PATH = "_dl_hive_path"


def by_name_type(col: Column, mapped: MappedField | None):
    """The Spark type to read `col` by name: struct fields under their names in the file, no field ids."""
    from pyspark.sql import types as T

    if col.type == "struct":
        fields = []
        for child in col.children:
            sub = mapped.child(child.column_id) if mapped is not None else None
            fields.append(T.StructField(sub.source if sub is not None else child.name, by_name_type(child, sub), True))
        return T.StructType(fields)
    if col.type == "list":
        element = col.children[0]
        return T.ArrayType(by_name_type(element, mapped.child(element.column_id) if mapped else None), True)
    if col.type == "map":
        key, value = col.children
        return T.MapType(by_name_type(key, mapped.child(key.column_id) if mapped else None),
                         by_name_type(value, mapped.child(value.column_id) if mapped else None), True)
    return spark_types.native_read_type(col)


def read_mapped(spark, files: Sequence[DataFile], present: list[Column], internal: dict[int, str], name_map: NameMap,
                extra: ScanColumns):
    """The files' rows under the present columns (internal names), like the scan's native reader: the positions,
    snapshot and row id columns `extra` asks for."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    by_id = {m.column_id: m for m in name_map}
    in_file = [c for c in present if not by_id[c.column_id].hive]
    from_path = [c for c in present if by_id[c.column_id].hive]
    fields = [T.StructField(by_id[c.column_id].source, by_name_type(c, by_id[c.column_id]), True) for c in in_file]
    extras = [name for name, wanted in ((SNAPSHOT_ID_COLUMN, extra.snapshots),
                                        (ROW_ID_COLUMN, extra.lineage)) if wanted]
    fields += [T.StructField(name, T.LongType(), True) for name in extras]
    frame = read_parquet(spark, T.StructType(fields), [f.path for f in files], [f.file_size_bytes for f in files])
    cols = [F.col(spark_name(by_id[c.column_id].source)).cast(spark_types.to_spark_type(c)).alias(internal[c.column_id])
            for c in in_file]
    cols += [F.col(name) for name in extras]
    if extra.positions:
        cols += [F.col("_metadata.file_path").alias(PATH), F.col("_metadata.row_index").alias(POS)]
    if not from_path:
        return frame.select(*cols)
    frame = frame.select(*cols, F.col("_metadata.file_path").alias(HIVE_PATH))
    frame = frame.join(F.broadcast(_hive_lookup(spark, files, from_path, internal)), HIVE_PATH)
    return frame.drop(HIVE_PATH)


def _hive_lookup(spark, files: Sequence[DataFile], columns: list[Column], internal: dict[int, str]):
    """(file path, value of each hive-path column) per file."""
    from pyspark.sql import types as T

    schema = T.StructType([T.StructField(HIVE_PATH, T.StringType(), False)] +
                          [T.StructField(internal[c.column_id], spark_types.to_spark_type(c), True) for c in columns])
    rows = [(spark_file_uri(f.path), *[(f.hive_values or {}).get(c.column_id) for c in columns]) for f in files]
    return spark.createDataFrame(rows, schema)
