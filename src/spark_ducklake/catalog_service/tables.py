"""Table and namespace replies: the lake's schemas (`namespaces`), a schema's tables (`tables`), a table's Spark
schema and partitioning at the snapshot it resolves to (`table`), and DDL, each request one call of the Python API,
one snapshot (`create_namespace`, `drop_namespace`, `create_table`, `drop_table`, `rename_table`, `alter_table`)."""

from __future__ import annotations

from typing import Any

from ..catalog.changes.partitioning import current_spec
from ..dataplane.spark.types import to_spark_schema
from ..errors import InvalidArgumentError, NotFoundError
from ..lake import DuckLake
from .fields import UnsupportedRequestError, request_table, request_text, spark_struct, spark_type
from .partitioning import partition_keys, spark_partitioning
from .scans import request_plan


def namespaces(lake: DuckLake, _request: dict[str, Any]) -> dict[str, Any]:
    return {"namespaces": lake.schemas()}


def tables(lake: DuckLake, request: dict[str, Any]) -> dict[str, Any]:
    schema = request_text(request, "namespace")
    if schema not in lake.schemas():
        raise NotFoundError(f"schema {schema!r} not found")
    return {"tables": [t.name for t in lake.tables(schema)]}


def table(lake: DuckLake, request: dict[str, Any]) -> dict[str, Any]:
    plan = request_plan(lake, request)
    with lake.context.engine.connect() as conn:
        spec = current_spec(conn, plan.table.table_id, plan.snapshot_id)
    return {"snapshot": plan.snapshot_id, "schema": to_spark_schema(plan.table.columns).json(),
            "partitioning": spark_partitioning(spec, plan.table.columns)}


def create_namespace(lake: DuckLake, request: dict[str, Any]) -> dict[str, Any]:
    return {"snapshot": lake.create_schema(request_text(request, "namespace"))}


def drop_namespace(lake: DuckLake, request: dict[str, Any]) -> dict[str, Any]:
    return {"snapshot": lake.drop_schema(request_text(request, "namespace"), cascade=bool(request.get("cascade")))}


def create_table(lake: DuckLake, request: dict[str, Any]) -> dict[str, Any]:
    name = ".".join(request_table(request))
    keys = partition_keys(request.get("partitioning") or [])
    with lake.transaction() as tx:
        tx.create_table(name, spark_struct(request.get("schema")))
        if keys:
            tx.set_partitioning(name, keys)
    return {"snapshot": tx.snapshot_id}


def drop_table(lake: DuckLake, request: dict[str, Any]) -> dict[str, Any]:
    return {"snapshot": lake.drop_table(".".join(request_table(request)))}


def rename_table(lake: DuckLake, request: dict[str, Any]) -> dict[str, Any]:
    schema, table = request_table(request)
    return {"snapshot": lake.rename_table(f"{schema}.{table}", request_text(request, "new_name"))}


def alter_table(lake: DuckLake, request: dict[str, Any]) -> dict[str, Any]:
    """ALTER TABLE's changes (`{"change": add|drop|rename|type|nullable, "column": dotted path, ...}`) as one
    schema update, so one snapshot."""
    changes = request.get("changes") or []
    update = lake.update_schema(".".join(request_table(request)))
    for change in changes:
        kind, column = change.get("change"), change.get("column")
        if not isinstance(column, str):
            raise InvalidArgumentError("ALTER TABLE change lacks its column")
        if kind == "add":
            update.add_column(column, spark_type(change.get("type")), nullable=bool(change.get("nullable", True)))
        elif kind == "drop":
            update.drop_column(column)
        elif kind == "rename":
            update.rename_column(column, request_text(change, "new_name"))
        elif kind == "type":
            update.update_column_type(column, spark_type(change.get("type")))
        elif kind == "nullable":
            update.set_nullable(column, bool(change.get("nullable")))
        else:
            raise UnsupportedRequestError(f"ALTER TABLE {change.get('what') or kind} is not supported by the lake "
                                       "catalog (add, drop, rename column, type widening, SET/DROP NOT NULL are)")
    return {"snapshot": update.commit() if changes else None}
