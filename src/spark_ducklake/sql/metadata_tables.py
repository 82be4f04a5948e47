"""The catalog tables under the reference's METADATA_CATALOG name in `lake.sql` queries:
`SELECT * FROM __ducklake_metadata_lake.ducklake_snapshot` (DuckDB's default name for the metadata database of a
lake attached as `lake`) or `<metadata_catalog>.<schema>.ducklake_table` when the lake was attached with
`metadata_catalog=`. Each read is one catalog query, handed to Spark as a small DataFrame typed like the spec."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlglot import exp

from ..catalog.database.spec_tables import CatalogBool, CatalogTimestamp, T
from ..catalog.database.versions import catalog_table
from ..dataplane.spark.session import arrow_frame
from ..errors import NotFoundError, UnsupportedSqlError

if TYPE_CHECKING:
    from .references import QueryContext


def metadata_catalog_name(ctx: QueryContext) -> str:
    """The name the catalog database goes by: attach's `metadata_catalog`, else DuckDB's default."""
    return ctx.lake.context.metadata_catalog or f"__ducklake_metadata_{ctx.catalog_name}"


def is_metadata_table(ctx: QueryContext, node: exp.Table) -> bool:
    """Whether a FROM reference names a table of the metadata catalog (`name.table` or `name.schema.table`)."""
    catalog, db = node.args.get("catalog"), node.args.get("db")
    qualifier = catalog if catalog is not None else db
    return qualifier is not None and qualifier.name.lower() == metadata_catalog_name(ctx).lower()


def metadata_frame(ctx: QueryContext, node: exp.Table):
    """The catalog table's rows now, as a Spark DataFrame."""
    import pyarrow as pa

    with ctx.lake.context.connect() as conn:
        table = catalog_table(conn, node.name.lower()) if node.name.lower() in T else None
        if table is None:
            table = _catalog_table(ctx, conn, node)
        rows = conn.execute(sa.select(table)).all()
    fields = [pa.field(col.name, _arrow_type(col.type)) for col in table.columns]
    columns = [pa.array([_value(row[i], f.type) for row in rows], type=f.type) for i, f in enumerate(fields)]
    return arrow_frame(ctx.lake.spark, pa.Table.from_arrays(columns, schema=pa.schema(fields)))


def _catalog_table(ctx: QueryContext, conn: sa.Connection, node: exp.Table) -> sa.Table:
    """A table of the catalog database outside the spec's fixed list (`ducklake_inlined_data_1_1`, ...), as the
    database has it; an error naming the table when the catalog has no such table."""
    name = node.name.lower()
    if not name.startswith("ducklake_"):
        raise UnsupportedSqlError(f"{node.sql(dialect=ctx.dialect)!r}: {metadata_catalog_name(ctx)} holds the "
                                  f"lake's ducklake_* catalog tables, not {node.name!r}")
    try:
        return sa.Table(name, sa.MetaData(), autoload_with=conn)
    except sa.exc.NoSuchTableError:
        raise NotFoundError(f"Catalog Error: Table with name {node.name} does not exist in "
                            f"{metadata_catalog_name(ctx)}") from None


def _value(value, arrow_type):
    """A catalog value as its arrow column takes it (texts of reflected columns whatever the database held)."""
    import pyarrow as pa

    if value is None or arrow_type != pa.string() or isinstance(value, str):
        return value
    return bytes(value).hex() if isinstance(value, (bytes, bytearray, memoryview)) else str(value)


def _arrow_type(column_type):
    import pyarrow as pa

    if isinstance(column_type, CatalogBool) or isinstance(column_type, sa.Boolean):
        return pa.bool_()
    if isinstance(column_type, CatalogTimestamp):
        return pa.timestamp("us", tz="UTC")
    if isinstance(column_type, sa.Integer):  # BigInteger too; SQLite reflects INTEGER / BIGINT as Integer
        return pa.int64()
    if isinstance(column_type, sa.Float):
        return pa.float64()
    return pa.string()
