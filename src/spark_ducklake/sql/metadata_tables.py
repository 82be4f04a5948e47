"""The catalog tables under the reference's METADATA_CATALOG name in `lake.sql` queries:
`SELECT * FROM __ducklake_metadata_lake.ducklake_snapshot` (DuckDB's default name for the metadata database of a
lake attached as `lake`) or `<metadata_catalog>.<schema>.ducklake_table` when the lake was attached with
`metadata_catalog=`. Each read is one catalog query, handed to Spark as a small DataFrame typed like the spec."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlglot import exp

from ..catalog.database.spec_tables import CatalogBool, CatalogTimestamp, T
from ..errors import UnsupportedSqlError

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

    table = T.get(node.name.lower())
    if table is None:
        raise UnsupportedSqlError(f"{node.sql(dialect=ctx.dialect)!r}: lake.sql reads the spec's catalog tables "
                                  f"({', '.join(sorted(T)[:3])}, ...) of {metadata_catalog_name(ctx)}, not "
                                  f"{node.name!r}")
    with ctx.lake.context.connect() as conn:
        rows = conn.execute(sa.select(table)).all()
    fields = [pa.field(col.name, _arrow_type(col.type)) for col in table.columns]
    columns = [pa.array([row[i] for row in rows], type=f.type) for i, f in enumerate(fields)]
    return ctx.lake.spark.createDataFrame(pa.Table.from_arrays(columns, schema=pa.schema(fields)))


def _arrow_type(column_type):
    import pyarrow as pa

    if isinstance(column_type, CatalogBool):
        return pa.bool_()
    if isinstance(column_type, CatalogTimestamp):
        return pa.timestamp("us", tz="UTC")
    if isinstance(column_type, sa.BigInteger):
        return pa.int64()
    return pa.string()
