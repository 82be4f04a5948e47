"""Writing data files straight to their final names, for object stores (where a rename is a copy), and for
tables with list or map columns anywhere (Spark's writer cannot give their elements, keys and values the field ids
DuckDB matches files by: see `file_layout.uses_pyarrow_writer`).

Spark's own Parquet writer always commits through a rename (task attempt dir -> job dir -> our staging move): on
S3 that is two or three copies of every byte. Here each Spark task streams its rows (Arrow batches, via
`mapInArrow`) into pyarrow Parquet writers that write `ducklake-<uuid>.parquet` under the table directory
directly, and returns the file's description (path, sizes, footer stats). The commit records exactly the files
the tasks returned: a failed or duplicate (speculative) task attempt leaves at most unreferenced files, which
`delete_orphaned_files` removes. Field ids, codec, row groups and file size follow the lake options as for
Spark's writer. Runs on executors: imports nothing beyond pyarrow and the catalog's pure modules.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence

import pyarrow as pa

from ...errors import SchemaMismatchError
from ...spec import types
from ...spec.model import Column, NewDataFile, PartitionSpec, TableInfo
from ..arrow.file_layout import estimated_row_width
from ..arrow.task_writer import TaskWriter, key_runs, partition_directories, row_group_rows, writer_options
from .encrypted.write import MODULES, KeptBuffer, encrypt_and_store, module_batch
from .workers import require_python_workers

_RESULT = "path string, info binary"
_FIELD_ID = b"PARQUET:field_id"


def arrow_schema(spark_schema, columns: Sequence[Column] = ()) -> pa.Schema:
    """The Arrow schema `mapInArrow` hands over for `spark_schema`, with the Parquet field ids its metadata
    carries (Spark's Arrow conversion drops field metadata) and, from the table's `columns`, those of list
    elements and map keys/values, which a Spark type cannot carry but DuckDB matches files by."""
    from pyspark.sql.pandas.types import to_arrow_schema

    plain = to_arrow_schema(spark_schema, timezone="UTC")
    by_id = {c.column_id: c for c in columns}
    return pa.schema([_field(plain.field(i), f, by_id.get(_spark_id(f)))  # type: ignore[arg-type]  # None: no column
                      for i, f in enumerate(spark_schema.fields)])


def _spark_id(spark_field) -> int | None:
    return (spark_field.metadata or {}).get(types.FIELD_ID_KEY)


def _field(arrow_field: pa.Field, spark_field, column: Column | None) -> pa.Field:
    field_id = _spark_id(spark_field)
    if field_id is None and column is not None:
        field_id = column.column_id
    return _with_id(pa.field(spark_field.name, _type(arrow_field.type, spark_field.dataType, column),
                             spark_field.nullable), field_id)


def _with_id(arrow_field: pa.Field, field_id: int | None) -> pa.Field:
    return arrow_field if field_id is None else arrow_field.with_metadata({_FIELD_ID: str(field_id)})


def _child(column: Column | None, index: int, name: str | None = None) -> Column | None:
    """The catalog's child column (by name for struct fields, else by position), None when unknown."""
    if column is None:
        return None
    if name is not None:
        return next((c for c in column.children if c.name == name), None)
    return column.children[index] if index < len(column.children) else None


def _inner(name: str, arrow_type: pa.DataType, spark_type, column: Column | None, nullable: bool) -> pa.Field:
    """A list element or map key/value field, with its catalog column's id when known."""
    field = pa.field(name, _type(arrow_type, spark_type, column), nullable)
    return _with_id(field, column.column_id if column is not None else None)


def _type(arrow_type: pa.DataType, spark_type, column: Column | None) -> pa.DataType:
    from pyspark.sql import types as T

    if isinstance(spark_type, T.StructType):
        return pa.struct([_field(arrow_type.field(i), f, _child(column, i, f.name))
                          for i, f in enumerate(spark_type.fields)])
    if type(spark_type).__name__ == "GeometryType" or getattr(column, "type", None) == "geometry":
        return types.GEOMETRY_WKB  # written as Parquet GEOMETRY, with its statistics (nested too, as DuckDB)
    if isinstance(spark_type, T.VariantType):  # struct<value, metadata>, unshredded: variant_footer.py annotates it
        return arrow_type
    if isinstance(spark_type, T.ArrayType):  # the element's id is the list's child column id, as DuckDB writes
        return pa.list_(_inner("element", arrow_type.value_type, spark_type.elementType, _child(column, 0), True))
    if isinstance(spark_type, T.MapType):  # keys and values: the map's two child column ids
        return pa.map_(_inner("key", arrow_type.key_type, spark_type.keyType, _child(column, 0), False),
                       _inner("value", arrow_type.item_type, spark_type.valueType, _child(column, 1),
                              arrow_type.item_field.nullable))
    return arrow_type








def write_files_in_place(frame, table: TableInfo, spec: PartitionSpec | None, key_columns: list[str], *,
                         options, rows_per_file: int, row_width: int, hive: bool) -> list[NewDataFile]:
    """Write `frame` (the table's columns with field ids, then the partition `key_columns`, rows of one partition
    value adjacent within each Spark partition) as files under their final names; nothing committed. Returns
    the files written, described from the footers their writers produced."""
    place = partition_directories(table, spec, hive) if spec is not None else (lambda _values: ("", {}))
    return [f for _key, f in write_groups_in_place(frame, table, key_columns, place, options=options,
                                                   rows_per_file=rows_per_file, row_width=row_width)]


def write_groups_in_place(frame, table: TableInfo, key_columns: list[str], place, *, options, rows_per_file: int,
                          row_width: int) -> list[tuple[tuple, NewDataFile]]:
    """The engine of `write_files_in_place`: rows are grouped by `key_columns` (cast to strings, adjacent within
    each Spark partition); `place(key values)` gives a group's (directory under the table, partition values).
    Returns (key values, file) for every file written."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    require_python_workers(frame.sparkSession)

    for key in key_columns:  # the text Spark's partitionBy would have put in the path
        frame = frame.withColumn(key, F.col(key).cast("string"))
    target = arrow_schema(T.StructType([f for f in frame.schema.fields if f.name not in key_columns]),
                          table.columns)
    columns, table_path = table.columns, table.path
    kw = writer_options(options, row_width)
    group_rows = row_group_rows(options, row_width)

    encrypt = getattr(options, "encrypted", False)
    if encrypt:  # files are built in executor memory first: keep them moderate
        rows_per_file = min(rows_per_file, max(1000, ENCRYPTED_FILE_BYTES // max(1, row_width)))

    def task(batches):
        if encrypt:  # ENCRYPTED lakes: each file written to memory, then cut into modules for aes_encrypt
            yield from _encrypting_task(batches, table_path, target, kw, group_rows, rows_per_file, columns,
                                        key_columns, place)
            return
        out = TaskWriter(table_path, target, kw, group_rows, rows_per_file, columns)
        for batch in batches:
            for values, part in key_runs(batch, key_columns):
                out.write(place(values), values, part.select(target.names))
        out.close()
        if out.files:
            yield pa.record_batch({"path": [f.path for _k, f in out.files],
                                   "info": [pickle.dumps(item) for item in out.files]})

    if encrypt:
        return encrypt_and_store(frame.mapInArrow(task, MODULES))
    return [pickle.loads(row["info"]) for row in frame.mapInArrow(task, _RESULT).collect()]


ENCRYPTED_FILE_BYTES = 128 * 2**20  # an encrypted file is built in executor memory: at most about this size


def _encrypting_task(batches, table_path, target, kw, group_rows, rows_per_file, columns, key_columns, place):
    """A write task of an encrypted lake: `MODULES` rows (encrypted/write.py) of each file as soon as it is done."""
    buffers: dict[str, KeptBuffer] = {}
    out = TaskWriter(table_path, target, kw, group_rows, rows_per_file, columns,
                      open_stream=lambda path: buffers.setdefault(path, KeptBuffer()))

    def drain():
        while out.files:
            key, described = out.files.pop(0)
            yield module_batch(described.path, buffers.pop(described.path).kept, (key, described))

    for batch in batches:
        for values, part in key_runs(batch, key_columns):
            out.write(place(values), values, part.select(target.names))
            yield from drain()
    out.close()
    yield from drain()




def write_arrow_groups(groups, table: TableInfo, *, options, rows_per_file: int,
                       row_width: int) -> list[NewDataFile]:
    """Write conformed Arrow rows, given as ((directory, partition values), key, rows) groups, as files under
    their final names (the data source's tasks and planner); nothing committed."""
    if getattr(options, "encrypted", False):  # DuckLakeBatchSource.writer refuses first (catalog/encryption.py)
        raise SchemaMismatchError("format('ducklake') cannot write to an ENCRYPTED lake: use lake.write "
                                  "(docs/types.md, 'Encrypted lakes')")
    schema = types.to_parquet_schema(table.columns)  # geometry (at any depth) as Parquet GEOMETRY
    out = TaskWriter(table.path, schema, writer_options(options, row_width), row_group_rows(options, row_width),
                      rows_per_file, table.columns)
    for where, key, rows in groups:
        for batch in rows.cast(schema).to_batches():
            out.write(where, key, batch)
    out.close()
    return [f for _key, f in out.files]








def write_units_in_place(frame, plan, options, unit_column: str) -> list[list[NewDataFile]]:
    """Compaction's writer (compaction_units.py) on object stores: one file per unit of `plan` (rows of a unit
    adjacent, `unit_column` its index), in the unit's folder with its partition values; files by unit."""
    units, table = plan.units, plan.table

    def place(values: tuple) -> tuple[str, dict]:
        unit = units[int(values[0])]
        return unit.directory, dict(unit.partition_values)

    written = write_groups_in_place(frame, table, [unit_column], place, options=options, rows_per_file=2**62,
                                    row_width=estimated_row_width(table.columns))
    out: list[list[NewDataFile]] = [[] for _ in units]
    for key, f in written:
        out[int(key[0])].append(f)
    return out
