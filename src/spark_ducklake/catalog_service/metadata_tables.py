"""`SELECT * FROM <catalog>.<schema>.<table>.<name>`: a table's metadata tables (METADATA_TABLES: snapshots, files,
table_info), the rows the procedures of the same names give, at the snapshot the request resolves to."""

from __future__ import annotations

import dataclasses
import json
from datetime import timedelta
from typing import Any

from ..errors import InvalidArgumentError, NotFoundError
from ..lake import DuckLake
from .fields import EPOCH, request_table, request_text
from .procedures import PROCEDURES, SNAPSHOT_COLUMNS
from .values import result_struct, result_value


@dataclasses.dataclass(frozen=True)
class MetadataTable:
    """`SELECT * FROM <catalog>.<schema>.<table>.<name>`: the result columns and the Python API call
    (`run(lake, schema, table, snapshot)` -> rows), the same rows as the procedure of the same name."""

    columns: tuple[tuple[str, Any], ...]
    run: Any


def _table_info_row(lake: DuckLake, schema: str, table: str, snapshot: int) -> list[tuple]:
    table_id = lake.table_info(f"{schema}.{table}", version=snapshot).table_id
    return [tuple(r) for r in lake.table_info(version=snapshot) if r.table_id == table_id]


METADATA_TABLES: dict[str, MetadataTable] = {
    # the lake's snapshots up to the one read (a table's history is the lake's: snapshot ids are lake-wide)
    "snapshots": MetadataTable(SNAPSHOT_COLUMNS, lambda lake, _s, _t, snap: [
        r for r in lake.snapshots() if r.snapshot_id <= snap]),
    "files": MetadataTable(PROCEDURES["list_files"].columns, lambda lake, s, t, snap: lake.list_files(
        t, s, snapshot_version=snap)),
    "table_info": MetadataTable(PROCEDURES["table_info"].columns, _table_info_row),
}


def metadata(lake: DuckLake, request: dict[str, Any]) -> dict[str, Any]:
    """A table's metadata table (`name`: one of METADATA_TABLES) at the snapshot the request resolves to
    (`version` / `timestamp_us`: VERSION / TIMESTAMP AS OF, else the current one), as a procedure's rows."""
    schema, table = request_table(request)
    kind = METADATA_TABLES.get(request_text(request, "name"))
    if kind is None:
        raise NotFoundError(f"table {schema}.{table} has no metadata table {request.get('name')!r} (it has "
                            f"{', '.join(sorted(METADATA_TABLES))})")
    version = request.get("version")
    if version is not None and not str(version).isdigit():
        raise InvalidArgumentError(f"VERSION AS OF takes a snapshot id, not {version!r}")
    stamp = request.get("timestamp_us")
    when = None if stamp is None else EPOCH + timedelta(microseconds=int(stamp))
    with lake.context.connect() as conn:
        snapshot = lake.context.snapshot_id(conn, None if version is None else int(version), when)
    lake.context.table_info(f"{schema}.{table}", version=snapshot)  # NotFoundError if it did not exist
    rows = kind.run(lake, schema, table, snapshot)
    return {"snapshot": snapshot, "schema": json.dumps(result_struct(kind.columns)),
            "rows": [[result_value(v) for v in row] for row in rows]}
