"""Partition specs: parsing `year(ts)` / `bucket(8, id)` / `col`, the catalog rows, and Iceberg's bucket hash.

A spec applies to files written while it is current; older files keep the spec they were written with
(`ducklake_data_file.partition_id`). Transforms and their results follow the spec's ducklake_partition_column.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from ...errors import NotFoundError, SchemaMismatchError
from ...spec.model import Column, PartitionKey, PartitionSpec, TableInfo
from ...spec.snapshot_changes import Change
from ..database.spec_tables import T
from ..inlined.tables import create_inlined_data_table
from ..reads import reader

TEMPORAL = {"year", "month", "day", "hour"}
_DATES = {"date", "timestamp", "timestamptz", "timestamp_s", "timestamp_ms", "timestamp_ns"}


def parse_keys(table: TableInfo, expressions: list[str]) -> list[PartitionKey]:
    """`['year(ts)', 'bucket(4, id)', 'region']` -> keys; errors name the unknown column or bad transform."""
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
        column_args = [a for a in args if isinstance(a, exp.Column)]
        if len(column_args) != 1:
            raise SchemaMismatchError(f"partition key {text!r} must name exactly one column")
        col = by_name.get(column_args[0].name.lower())
        if col is None:
            raise NotFoundError(f"cannot partition by {text!r}: table {table.qualified_name} has no column "
                                f"{column_args[0].name!r}")
        if isinstance(tree, exp.Column):
            transform = "identity"
        elif name in TEMPORAL:
            transform = name
        elif name == "bucket":
            sizes = [a for a in args if isinstance(a, exp.Literal) and not a.is_string]
            if len(sizes) != 1 or int(sizes[0].this) < 1:
                raise SchemaMismatchError(f"bucket needs a positive bucket count: bucket(8, col), got {text!r}")
            transform = f"bucket({int(sizes[0].this)})"
        else:
            raise SchemaMismatchError(f"unknown partition transform in {text!r}: use a column, year(), month(), "
                                      "day(), hour() or bucket(N, col)")
        _check_type(col, transform, text)
        keys.append(PartitionKey(col.column_id, transform))
    return keys


def _check_type(col: Column, transform: str, text: str) -> None:
    if col.is_nested:
        raise SchemaMismatchError(f"cannot partition by {text!r}: {col.name} is a {col.type}")
    if transform in TEMPORAL and col.type not in _DATES:
        raise SchemaMismatchError(f"cannot partition by {text!r}: {transform}() needs a date or timestamp, "
                                  f"{col.name} is {col.type}")
    if transform == "hour" and col.type == "date":
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
    """ALTER TABLE ... SET PARTITIONED BY / RESET PARTITIONED BY (an empty key list), as the reference writes it."""

    table_id: int
    keys: list[PartitionKey]

    def intents(self) -> list[Change]:
        return [Change("altered_table", str(self.table_id))]

    def apply(self, ctx) -> None:
        from .ddl import _end, _record_schema_version

        info, pc = T["ducklake_partition_info"], T["ducklake_partition_column"]
        _end(ctx, info, info.c.table_id == self.table_id)
        partition_id = ctx.catalog_id()
        ctx.conn.execute(info.insert().values(partition_id=partition_id, table_id=self.table_id,
                                              begin_snapshot=ctx.snapshot_id, end_snapshot=None))
        if self.keys:
            ctx.conn.execute(pc.insert(), [
                {"partition_id": partition_id, "table_id": self.table_id, "partition_key_index": i,
                 "column_id": k.column_id, "transform": k.transform} for i, k in enumerate(self.keys)])
        _record_schema_version(ctx, self.table_id)  # the reference adds a schema version and inlined table here
        columns = reader.load_columns(ctx.conn, [self.table_id], ctx.snapshot_id).get(self.table_id, [])
        create_inlined_data_table(ctx.conn, self.table_id, ctx.schema_version, columns)
        ctx.record("altered_table", self.table_id)


# ----------------------------------------------------------------------------------------- bucket hash
# The hash lives in bucket_hash.py, which imports only numpy: the bucket UDF runs it on executors.
from ...spec.bucket_hash import bucket_int64, bucket_of, hash_bytes  # noqa: E402, F401
