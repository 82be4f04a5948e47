"""A catalog service request's fields (the JVM sends JSON): names, texts, Spark schemas and types, data file paths,
and the error for a request the plugin cannot serve yet."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from ..errors import InvalidArgumentError

# Timestamps cross the protocol as microseconds since this instant.
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class UnsupportedRequestError(InvalidArgumentError):
    """A request the catalog plugin cannot serve yet (a scan Spark's Parquet reader cannot do alone, a write or
    a change it does not take): the reply names the cause."""


def request_table(request: dict[str, Any]) -> tuple[str, str]:
    """The (namespace, table) a request names."""
    return request_text(request, "namespace"), request_text(request, "table")


def request_text(request: dict[str, Any], key: str) -> str:
    """A request's text field; a request lacking it is invalid."""
    value = request.get(key)
    if not isinstance(value, str):
        raise InvalidArgumentError(f"catalog service request lacks {key!r}")
    return value


def spark_struct(schema_json: Any):
    """A Spark StructType from the JSON the JVM sends (pyspark's types need no JVM)."""
    from pyspark.sql.types import StructType

    if not isinstance(schema_json, str):
        raise InvalidArgumentError("catalog service request lacks the table's schema")
    return StructType.fromJson(json.loads(schema_json))


def spark_type(type_json: Any):
    """A Spark DataType from its JSON (Spark's DataType.json)."""
    if not isinstance(type_json, str):
        raise InvalidArgumentError("ALTER TABLE change lacks its type")
    field = {"name": "x", "type": json.loads(type_json), "nullable": True, "metadata": {}}
    return spark_struct(json.dumps({"type": "struct", "fields": [field]})).fields[0].dataType


def local_path(path: str) -> str:
    """A data file's path as both sides write it (the JVM may add a `file:` scheme)."""
    return path[len("file:"):] if path.startswith("file:") else path
