"""`lake.register(spark)`: every lake table as a temporary view of plain `spark.sql`.

A view reads the snapshot that was current when it was registered (its files are planned then). `lake.sql`
commands on the same handle re-register the views after they commit; commits by other writers become visible when
`lake.register()` is called again (catalog reads only: it plans files, Spark runs no job). Lake views become
temporary views too, read as `lake.sql` reads them (their SQL translated by sqlglot, their tables at the same
snapshot); a view Spark cannot run is left out with a warning naming it.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, NamedTuple

from ..catalog.reads import reader
from ..errors import InvalidArgumentError
from ..spec.names import split_schema_path
from .queries import run_query
from .references import QueryContext

if TYPE_CHECKING:
    from ..lake import DuckLake

_ATTR = "_sql_views"  # (name format, registered view names) of this handle


class RegisteredView(NamedTuple):
    """A temporary view `register` made: its name, the table (or lake view) it shows and the snapshot it reads."""

    view: str
    table: str
    snapshot_id: int


def register(lake: DuckLake, spark=None, view_name: str = "{schema}_{table}") -> list[RegisteredView]:
    """Create or replace one temporary view per table and per lake view (named by `view_name`, with {schema} and
    {table}), drop the views of those gone since the last registration; returns the views."""
    if spark is not None:
        lake.context.use_spark(spark)  # register(spark=...) must be the session this lake moves its data with
    if "{table}" not in view_name:
        raise InvalidArgumentError(f"view_name must contain {{table}}, got {view_name!r}")
    session = lake.spark
    snapshot = lake.current_snapshot()
    with lake.context.connect() as conn:  # a nested schema's view names join its path with '_': sales_europe_t
        nested = {s.name: "_".join(split_schema_path(s.name))
                  for s in reader.list_schemas(conn, snapshot, lake.data_path) if s.parent_id is not None}
    views = []
    for info in lake.tables(version=snapshot):
        name = view_name.format(schema=nested.get(info.schema_name, info.schema_name), table=info.name)
        lake.read((info.schema_name, info.name), version=snapshot).createOrReplaceTempView(name)
        views.append(RegisteredView(name, info.qualified_name, snapshot))
    for view in lake.views(version=snapshot):
        name = view_name.format(schema=nested.get(view.schema_name, view.schema_name), table=view.name)
        try:
            _view_frame(lake, view.schema_name, view.name, snapshot).createOrReplaceTempView(name)
        except Exception as exc:  # noqa: BLE001 - one view Spark cannot run must not stop the rest
            warnings.warn(f"lake view {view.schema_name}.{view.name} is not registered: {exc}", stacklevel=3)
            continue
        views.append(RegisteredView(name, f"{view.schema_name}.{view.name}", snapshot))
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


def _view_frame(lake: DuckLake, schema: str, name: str, snapshot: int):
    """A lake view at `snapshot` as `lake.sql` reads it: its SQL translated by sqlglot, its tables at `snapshot`."""
    from sqlglot import exp

    table = exp.Table(this=exp.to_identifier(name), db=exp.to_identifier(schema),
                      version=exp.Version(this="VERSION", kind="AS OF", expression=exp.Literal.number(snapshot)))
    return run_query(QueryContext(lake, "lake", "spark"), exp.select("*").from_(table))
