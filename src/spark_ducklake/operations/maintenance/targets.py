"""Which tables a maintenance call works on, and what it needs to know about them (options, sort keys)."""

from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import TYPE_CHECKING

import sqlalchemy as sa

from ...catalog.reads import reader
from ...errors import SchemaMismatchError
from ...spec.model import Column, TableInfo
from ...spec.names import parse_table_name as split_name

if TYPE_CHECKING:
    from ..context import LakeContext

log = logging.getLogger(__name__)

# DuckLake types Spark writes as themselves; tables with others (uuid, time, unsigned, ...) are left alone.
_WRITABLE = {"boolean", "int8", "int16", "int32", "int64", "float32", "float64", "varchar", "blob", "date",
             "timestamp", "timestamptz", "list", "struct", "map", "geometry"}  # geometry: spark_types.write_column
# Also writable by a flush: inlined rows become new files, written as an INSERT writes them (timestamp_ns: Parquet
# TIMESTAMP(MICROS), the precision Spark and our inlined reads have). A compaction would lose the nanoseconds of
# files DuckDB wrote, so it leaves such tables alone.
_FLUSH_WRITABLE = _WRITABLE | {"timestamp_ns"}


def spark_writable(columns: list[Column], *, flush: bool = False) -> bool:
    """Whether Spark can write every column in its own DuckLake type (so rewriting a file keeps its types);
    `flush`: for new files of inlined rows."""
    return not _unwritable(columns, flush)


def _unwritable(columns: list[Column], flush: bool = False) -> list[str]:
    writable = _FLUSH_WRITABLE if flush else _WRITABLE
    return sorted({f"{c.name} ({c.type})" for top in columns for c in top.walk()
                   if c.type not in writable and not c.type.startswith("decimal(")})


def maintained_tables(ctx: LakeContext, conn: sa.Connection, snapshot_id: int, *, schema: str | None = None,
                      table: str | None = None, function: str, flush: bool = False) -> list[TableInfo]:
    """The named table, else every table (of `schema`) whose `auto_compact` option is not false; only those Spark
    can write (`flush`: see spark_writable)."""
    if table is not None:
        schema_name, name = (schema, table) if schema is not None else split_name(table)
        found = [reader.find_table(conn, snapshot_id, ctx.data_path, schema_name, name)]
    else:
        if schema is not None:
            reader.find_schema(conn, snapshot_id, ctx.data_path, schema)  # NotFoundError naming it
        rows = reader.options(conn)
        found = [t for t in reader.list_tables(conn, snapshot_id, ctx.data_path, schema=schema)
                 if str(reader.option_value(rows, "auto_compact", table_id=t.table_id, schema_id=t.schema_id)
                        or "true").lower() not in ("false", "0")]
    writable = [t for t in found if spark_writable(t.columns, flush=flush)]
    for t in found:
        if t not in writable:
            message = (f"{function} cannot rewrite {t.qualified_name}: Spark cannot write columns "
                       f"{', '.join(_unwritable(t.columns, flush))} in their DuckDB types")
            if table is not None:
                raise SchemaMismatchError(message)
            log.warning("%s; skipped", message)
    return writable


def usable_sort_keys(sort_keys: list, columns: list[Column]) -> list:
    """The sort keys, or none when they name a column these columns lack (an older schema version's)."""
    from sqlglot import exp, parse_one

    names = {c.name.lower() for c in columns}
    usable = all(col.name.lower() in names for key in sort_keys
                 for col in parse_one(key.expression, read="duckdb").find_all(exp.Column))
    return sort_keys if usable else []


@contextmanager
def progress(message: str):
    """A spinner with `message` on the driver's terminal while Spark works (nothing when not a terminal)."""
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        log.info(message)
        yield
        return
    with console.status(message):
        yield
