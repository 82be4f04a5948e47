"""Partition specs: parsing `year(ts)` / `bucket(8, id)` / `col`, the catalog rows, and Iceberg's bucket hash.

A spec applies to files written while it is current; older files keep the spec they were written with
(`ducklake_data_file.partition_id`). Transforms and their results follow the spec's ducklake_partition_column.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from ...errors import NotFoundError, SchemaMismatchError
from ...spec.model import Column, PartitionKey, PartitionSpec, TableInfo
from ...spec.snapshot_changes import Change
from ..database.spec_tables import T
from ..inlined.tables import create_inlined_data_table
from ..reads import reader
from .ddl import end_rows, record_schema_version

TEMPORAL = {"year", "month", "day", "hour"}
EPOCH = {"epoch_year", "epoch_month", "epoch_day", "epoch_hour"}  # DuckLake 1.1 (the reference refuses them on 1.0)
# Spark's and Iceberg's names for the same transforms: units since 1970, not calendar fields.
SPARK_NAMES = {"years": "epoch_year", "months": "epoch_month", "days": "epoch_day", "hours": "epoch_hour"}
_DATES = {"date", "timestamp", "timestamptz", "timestamp_s", "timestamp_ms", "timestamp_ns"}


def parse_keys(table: TableInfo, expressions: list[str], *, v11: bool = False) -> list[PartitionKey]:
    """`['year(ts)', 'bucket(4, id)', 'region']` -> keys; errors name the unknown column or bad transform. `v11`:
    the catalog is DuckLake 1.1 (epoch transforms are 1.1's; on 1.0 they are refused in the reference's words)."""
    import sqlglot
    from sqlglot import exp

    by_name = {c.name.lower(): c for c in table.columns}
    keys = []
    for text in expressions:
        try:
            tree = sqlglot.parse_one(text, read="duckdb")
        except sqlglot.errors.ParseError as e:
            raise SchemaMismatchError(f"cannot parse partition key {text!r}: {e}") from e
        args = [tree] if isinstance(tree, exp.Column) else list(tree.iter_expressions())
        name = type(tree).__name__.lower() if not isinstance(tree, exp.Anonymous) else tree.name.lower()
        if name == "bucket":
            transform = _bucket_transform(args, text)
            args = args[1:]
        elif isinstance(tree, exp.Column):
            transform = "identity"
        elif name in TEMPORAL:
            transform = name
        elif (name in EPOCH or name in SPARK_NAMES) and not v11:
            raise SchemaMismatchError(_epoch_on_v10(name, args))
        elif name in EPOCH or name in SPARK_NAMES:
            transform = SPARK_NAMES.get(name, name)
        else:
            raise SchemaMismatchError(f"Unsupported partition function {name} in {text!r} - only year, month, day, "
                                      "hour, epoch_year, epoch_month, epoch_day, epoch_hour (or Spark's years, "
                                      "months, days, hours), and bucket are supported (the epoch ones need a catalog "
                                      "newer than DuckLake 1.0), or a plain column")
        column_args = [a for a in args if isinstance(a, exp.Column)]
        if len(column_args) != 1 or len(args) != 1:
            raise SchemaMismatchError(f"partition key {text!r} must name exactly one column")
        col = by_name.get(column_args[0].name.lower())
        if col is None:
            raise NotFoundError(f'cannot partition by {text!r}: column "{column_args[0].name}" does not exist in '
                                f"table {table.qualified_name}")
        _check_type(col, transform, text)
        keys.append(PartitionKey(col.column_id, transform))
    return keys


def _epoch_on_v10(name: str, args: list[Any]) -> str:
    """The reference's refusal of an epoch transform on a 1.0 catalog (1.0 readers could not load the catalog),
    with the calendar transform a user of Spark's name may have meant, and the way to 1.1."""
    epoch = SPARK_NAMES.get(name, name)
    calendar = epoch.removeprefix("epoch_")
    column = args[0].sql(dialect="duckdb") if len(args) == 1 else "ts"
    return (f"DuckLake 1.0 does not support the {epoch} partition transform - attach with AUTOMATIC_MIGRATION set "
            f"to TRUE to migrate the catalog to a newer version ({name}({column}) is DuckLake 1.1's {epoch}, "
            f"{calendar}s since 1970: use {calendar}({column}) for calendar values, or migrate the catalog to 1.1 "
            'with automatic_migration=True with ducklake_version="1.1")')


def _bucket_transform(args: list[Any], text: str) -> str:
    """`bucket(N)` of `bucket(N, col)`; the reference's errors for a wrong shape or count."""
    from sqlglot import exp

    if len(args) != 2 or not isinstance(args[1], exp.Column):
        raise SchemaMismatchError(f"Expected bucket(bucket_count, column), but got {text!r}")
    count = args[0]
    negative = isinstance(count, exp.Neg)
    if negative:
        count = count.this
    if not isinstance(count, exp.Literal):
        raise SchemaMismatchError(f"Bucket count must be a constant integer, got {text!r}")
    try:
        value = int(count.this) * (-1 if negative else 1)
    except ValueError:
        raise SchemaMismatchError(f"Bucket count must be an integer, got {count.this!r} in {text!r}") from None
    if value <= 0:
        raise SchemaMismatchError(f"Bucket count must be positive, got {value} in {text!r}")
    if value > 2**31 - 1:
        raise SchemaMismatchError(f"Bucket count cannot exceed {2**31 - 1}, got {value} in {text!r}")
    return f"bucket({value})"


def _check_type(col: Column, transform: str, text: str) -> None:
    if col.is_nested:
        raise SchemaMismatchError(f"cannot partition by {text!r}: {col.name} is a {col.type}")
    if (transform in TEMPORAL or transform in EPOCH) and col.type not in _DATES:
        raise SchemaMismatchError(f"cannot partition by {text!r}: {transform}() needs a date or timestamp, "
                                  f"{col.name} is {col.type}")
    if transform in ("hour", "epoch_hour") and col.type == "date":
        raise SchemaMismatchError(f"cannot partition by {text!r}: hour() needs a timestamp, {col.name} is a date")
    if transform.startswith("bucket") and col.type in ("float32", "float64", "boolean"):
        raise SchemaMismatchError(f"cannot partition by {text!r}: bucket() does not hash {col.type}")


def current_spec(conn: sa.Connection, table_id: int, snapshot_id: int) -> PartitionSpec:
    """The partition spec of the table at the snapshot (no keys when unpartitioned)."""
    info, pc = T["ducklake_partition_info"], T["ducklake_partition_column"]
    row = conn.execute(sa.select(info.c.partition_id).where(info.c.table_id == table_id,
                                                            reader.visible(info, snapshot_id))).first()
    if row is None:
        return PartitionSpec()
    keys = conn.execute(sa.select(pc.c.column_id, pc.c.transform).where(
        pc.c.partition_id == row.partition_id, pc.c.table_id == table_id).order_by(pc.c.partition_key_index))
    return PartitionSpec(row.partition_id, [PartitionKey(k.column_id, k.transform) for k in keys])


@dataclass
class SetPartitioning:
    """ALTER TABLE ... SET PARTITIONED BY / RESET PARTITIONED BY (an empty key list), as the reference writes it.
    `table_id` is a TableRef for a table created in the same commit (its id is known once that applies)."""

    table_id: int | object  # or ddl.TableRef (created in the same commit)
    keys: list[PartitionKey]
    spec: PartitionSpec | None = None  # writes staged after it in a transaction: given the new id at apply

    def intents(self) -> list[Change]:
        return [] if not isinstance(self.table_id, int) else [Change("altered_table", str(self.table_id))]

    def apply(self, ctx: Any) -> None:
        table_id = self.table_id.table_id if not isinstance(self.table_id, int) else self.table_id  # type: ignore[attr-defined]  # a ddl.TableRef
        info, pc = T["ducklake_partition_info"], T["ducklake_partition_column"]
        end_rows(ctx, info, info.c.table_id == table_id)
        partition_id = ctx.catalog_id()
        if self.spec is not None:  # applied before the staged writes that record it on their files
            self.spec.partition_id = partition_id
        ctx.conn.execute(info.insert().values(partition_id=partition_id, table_id=table_id,
                                              begin_snapshot=ctx.snapshot_id, end_snapshot=None))
        if self.keys:
            ctx.conn.execute(pc.insert(), [
                {"partition_id": partition_id, "table_id": table_id, "partition_key_index": i,
                 "column_id": k.column_id, "transform": k.transform} for i, k in enumerate(self.keys)])
        if not isinstance(self.table_id, int):
            return  # created in this commit: its CREATE recorded the schema version and made the inlined table
        record_schema_version(ctx, table_id)  # the reference adds a schema version and inlined table here
        columns = reader.load_columns(ctx.conn, [table_id], ctx.snapshot_id).get(table_id, [])
        create_inlined_data_table(ctx.conn, table_id, ctx.schema_version, columns)
        ctx.record("altered_table", table_id)


# ----------------------------------------------------------------------------------------- bucket hash
# The hash lives in bucket_hash.py, which imports only numpy: the bucket UDF runs it on executors.
from ...spec.bucket_hash import bucket_int64, bucket_of, hash_bytes  # noqa: E402, F401
