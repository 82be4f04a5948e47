"""What `lake.sql` returns for commands, and small Python rows turned into Spark DataFrames for queries."""

from __future__ import annotations

from typing import NamedTuple

from ..dataplane.spark.session import arrow_frame


class CommandResult(NamedTuple):
    """One command's outcome: its kind ('INSERT', 'CREATE TABLE', ...), the snapshot it committed (None: staged
    in an open transaction, or nothing changed) and the rows it changed where that applies."""

    statement: str
    snapshot_id: int | None
    rows: int | None = None


def rows_to_dataframe(spark, rows: list, fields: tuple[str, ...]):
    """NamedTuple rows as a Spark DataFrame (types from pyarrow; dicts become maps, all-NULL columns strings)."""
    import pyarrow as pa

    columns = {name: _array([getattr(r, name) for r in rows]) for name in fields}
    return arrow_frame(spark, pa.table(columns))


def _array(values: list):
    import pyarrow as pa

    if any(isinstance(v, dict) for v in values):
        inner = pa.array([x for d in values if d for x in d.values()])
        value_type = pa.string() if pa.types.is_null(inner.type) else inner.type
        return pa.array([None if d is None else list(d.items()) for d in values],
                        type=pa.map_(pa.string(), value_type))
    array = pa.array(values)
    return array.cast(pa.string()) if pa.types.is_null(array.type) else array
