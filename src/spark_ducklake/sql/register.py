"""`lake.register(spark)`: every lake table as a temporary view of plain `spark.sql`.

A view reads the snapshot that was current when it was registered (its files are planned then). `lake.sql`
commands on the same handle re-register the views after they commit; commits by other writers become visible when
`lake.register()` is called again (catalog reads only: it plans files, Spark runs no job).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ..errors import InvalidArgumentError

if TYPE_CHECKING:
    from ..lake import DuckLake

_ATTR = "_sql_views"  # (name format, registered view names) of this handle


class RegisteredView(NamedTuple):
    """A temporary view `register` made: its name, the table it shows and the snapshot it reads."""

    view: str
    table: str
    snapshot_id: int


def register(lake: DuckLake, spark=None, view_name: str = "{schema}_{table}") -> list[RegisteredView]:
    """Create or replace one temporary view per table (named by `view_name`, with {schema} and {table}), drop
    the views of tables gone since the last registration; returns the views."""
    if spark is not None:
        lake.context.use_spark(spark)  # register(spark=...) must be the session this lake moves its data with
    if "{table}" not in view_name:
        raise InvalidArgumentError(f"view_name must contain {{table}}, got {view_name!r}")
    session = lake.spark
    snapshot = lake.current_snapshot()
    views = []
    for info in lake.tables(version=snapshot):
        name = view_name.format(schema=info.schema_name, table=info.name)
        lake.read((info.schema_name, info.name), version=snapshot).createOrReplaceTempView(name)
        views.append(RegisteredView(name, info.qualified_name, snapshot))
    _, before = getattr(lake, _ATTR, (None, set()))
    for gone in before - {v.view for v in views}:
        session.catalog.dropTempView(gone)
    setattr(lake, _ATTR, (view_name, {v.view for v in views}))
    return views


def refresh(lake: DuckLake) -> None:
    """Re-register the views of a handle that registered them (after one of its `lake.sql` commands commits)."""
    state = getattr(lake, _ATTR, None)
    if state is not None:
        register(lake, view_name=state[0])
