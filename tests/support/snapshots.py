"""A table's rows (with row ids) at every snapshot, as we and as DuckDB read them: what maintenance must not change."""

from __future__ import annotations

from tests.support.compare import duckdb_rows, normalize
from tests.support.reference import attach, connect


def our_history(lake, table: str, first: int, last: int) -> dict[int, list[tuple]]:
    """Snapshot -> sorted rows (columns, then rowid) as we read them: one Spark job per distinct schema."""
    from functools import reduce

    from pyspark.sql import functions as F

    frames = {v: lake.plan_scan(table, version=v).to_dataframe(lake.spark, row_ids=True)
              for v in range(first, last + 1)}
    by_schema: dict[str, list[int]] = {}
    for v, frame in frames.items():
        by_schema.setdefault(frame.schema.json(), []).append(v)
    out: dict[int, list[tuple]] = {}
    for versions in by_schema.values():
        tagged = [frames[v].select("*", F.lit(v).alias("_snapshot")) for v in versions]
        rows = reduce(lambda a, b: a.unionByName(b), tagged).collect()
        for v in versions:
            out[v] = sorted((tuple(normalize(x) for x in r[:-1]) for r in rows if r[-1] == v), key=repr)
    return dict(sorted(out.items()))


def duckdb_history(catalog: str, table: str, first: int, last: int) -> dict[int, list[tuple]]:
    """Snapshot -> sorted rows (columns, then rowid) as DuckDB's reference extension reads them."""
    con = connect()
    try:
        attach(con, catalog)
        return {v: duckdb_rows(con, f"SELECT *, rowid FROM lake.{table} AT (VERSION => {v})")
                for v in range(first, last + 1)}
    finally:
        con.close()


def first_snapshot_of(lake, table: str) -> int:
    """The snapshot that created the table."""
    return lake.table_info(table).begin_snapshot


def referenced_files(lake) -> set[str]:
    """Absolute paths of every data and delete file any catalog row (so any snapshot) refers to."""
    import sqlalchemy as sa

    from spark_ducklake.catalog.database.spec_tables import T
    from spark_ducklake.operations.maintenance.catalog_files import table_dirs

    with lake.engine.connect() as conn:
        dirs = table_dirs(conn, lake.data_path)
        out = set()
        for name in ("ducklake_data_file", "ducklake_delete_file"):
            tbl = T[name]
            for table_id, path, rel in conn.execute(sa.select(tbl.c.table_id, tbl.c.path, tbl.c.path_is_relative)):
                out |= {d + path if rel else path for d in dirs[table_id]}
    return out
