"""Large catalogs built fast: catalog rows bulk-inserted (SQLAlchemy Core), not made by thousands of commits.

`many_files` makes a table with N data files over S snapshots: DuckDB's extension writes one real file and its
catalog rows, which are copied N-1 times (new ids, snapshots, row ids) with every copy a hard link of the one file,
so each catalog row names a distinct real Parquet file that DuckDB and Spark can open. `many_tables` makes a lake
with N tables of a few columns each (rows copied from one table our API created). Both give catalogs any reader
(ours or the reference) sees as ordinary lakes.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

import sqlalchemy as sa

CHUNK = 5_000
LINKS_PER_COPY = 50_000


@dataclass
class BigLake:
    """A built catalog: the catalog string, data path, table name and sizes."""

    catalog: str
    data_path: str
    table: str
    files: int
    snapshots: int


def _insert(conn: sa.Connection, table: sa.Table, rows: list[dict]) -> None:
    for start in range(0, len(rows), CHUNK):
        conn.execute(table.insert(), rows[start:start + CHUNK])


def _row(r) -> dict:
    return dict(r._mapping)


def many_files(catalog: str, data_path: str, files: int, snapshots: int, table: str = "t") -> BigLake:
    """A lake whose table `table` (id BIGINT, v DOUBLE; 100 rows a file) has `files` files over `snapshots`."""
    from spark_ducklake import DuckLake
    from spark_ducklake.catalog.database.spec_tables import METADATA
    from spark_ducklake.duckdb_reference import attach, connect

    T = METADATA.tables  # the 1.0 layout the lake is created with: whole-table selects name only its columns
    snapshots = max(snapshots, files)
    lake = DuckLake.attach(catalog, data_path)
    lake.create_table(table, "id BIGINT, v DOUBLE")
    lake.close()
    con = connect()
    attach(con, catalog, data_path)
    con.execute(f"INSERT INTO lake.{table} SELECT i, i * 0.5 FROM range(100) r(i)")
    con.close()

    engine = DuckLake.attach(catalog).engine
    df, fcs, snap, chg = (T["ducklake_data_file"], T["ducklake_file_column_stats"], T["ducklake_snapshot"],
                          T["ducklake_snapshot_changes"])
    with engine.begin() as conn:
        template = _row(conn.execute(sa.select(df)).one())
        stats = [_row(r) for r in conn.execute(sa.select(fcs))]
        last = _row(conn.execute(sa.select(snap).order_by(snap.c.snapshot_id.desc()).limit(1)).one())
        changes = _row(conn.execute(sa.select(chg).where(chg.c.snapshot_id == last["snapshot_id"])).one())
        table_dir = _table_dir(conn, data_path, template["table_id"])
        source = os.path.join(table_dir, template["path"])
        first_snapshot, first_file = last["snapshot_id"] + 1, template["data_file_id"] + 1
        extra_snaps, extra_files = snapshots - 1, files - 1
        # Spread the files evenly over the new snapshots: file k begins at snapshot begin_of[k].
        begin_of = [first_snapshot + (k * extra_snaps) // max(extra_files, 1) for k in range(extra_files)]
        file_rows, stat_rows = [], []
        for k in range(extra_files):
            file_id = first_file + k
            name = f"ducklake-bench-{file_id:08d}.parquet"
            target = os.path.join(table_dir, name)
            if k % LINKS_PER_COPY == LINKS_PER_COPY - 1:  # file systems cap links per inode (ext4: 65,000)
                shutil.copyfile(source, target)
                source = target
            else:
                os.link(source, target)
            file_rows.append({**template, "data_file_id": file_id, "begin_snapshot": begin_of[k], "path": name,
                              "row_id_start": template["record_count"] * (k + 1)})
            stat_rows += [{**s, "data_file_id": file_id} for s in stats]
        snap_rows, change_rows, cursor = [], [], 0
        for s in range(first_snapshot, first_snapshot + extra_snaps):
            while cursor < extra_files and begin_of[cursor] <= s:
                cursor += 1
            snap_rows.append({**last, "snapshot_id": s, "next_file_id": first_file + cursor})
            change_rows.append({**changes, "snapshot_id": s})
        _insert(conn, snap, snap_rows)
        _insert(conn, chg, change_rows)
        _insert(conn, df, file_rows)
        _insert(conn, fcs, stat_rows)
        ts = T["ducklake_table_stats"]
        total = template["record_count"] * files
        conn.execute(ts.update().where(ts.c.table_id == template["table_id"]).values(
            record_count=total, next_row_id=total, file_size_bytes=template["file_size_bytes"] * files))
    engine.dispose()
    return BigLake(catalog, data_path, table, files, snapshots)


def _table_dir(conn: sa.Connection, data_path: str, table_id: int) -> str:
    from spark_ducklake.catalog.database.spec_tables import T

    sc, tb = T["ducklake_schema"], T["ducklake_table"]
    row = conn.execute(sa.select(sc.c.path, tb.c.path.label("tpath"))
                       .select_from(tb.join(sc, sc.c.schema_id == tb.c.schema_id))
                       .where(tb.c.table_id == table_id)).one()
    return os.path.join(data_path, row.path, row.tpath)


def many_tables(catalog: str, data_path: str, tables: int, columns: int = 8) -> BigLake:
    """A lake with `tables` tables of `columns` columns each, created in one snapshot."""
    from spark_ducklake import DuckLake
    from spark_ducklake.catalog.database.spec_tables import T
    from spark_ducklake.spec.uuid7 import new_uuid

    lake = DuckLake.attach(catalog, data_path)
    kinds = ["BIGINT", "VARCHAR", "DOUBLE", "DATE", "DECIMAL(12,2)", "BOOLEAN", "TIMESTAMP", "INTEGER"]
    lake.create_table("t0", ", ".join(f"c{i} {kinds[i % len(kinds)]}" for i in range(columns)))
    engine = lake.engine
    tb, col, snap, ts = T["ducklake_table"], T["ducklake_column"], T["ducklake_snapshot"], T["ducklake_table_stats"]
    sv = T["ducklake_schema_versions"]
    with engine.begin() as conn:
        template = _row(conn.execute(sa.select(tb)).one())
        template_cols = [_row(r) for r in conn.execute(sa.select(col).where(col.c.table_id == template["table_id"]))]
        last = _row(conn.execute(sa.select(snap).order_by(snap.c.snapshot_id.desc()).limit(1)).one())
        stats = [_row(r) for r in conn.execute(sa.select(ts).where(ts.c.table_id == template["table_id"]))]
        versions = [_row(r) for r in conn.execute(sa.select(sv).where(sv.c.table_id == template["table_id"]))]
        next_id = last["next_catalog_id"]
        table_rows, col_rows, stat_rows, version_rows = [], [], [], []
        for k in range(1, tables):
            table_id = next_id + k - 1
            table_rows.append({**template, "table_id": table_id, "table_uuid": new_uuid(), "table_name": f"t{k}",
                               "path": f"t{k}/"})
            col_rows += [{**c, "table_id": table_id} for c in template_cols]
            stat_rows += [{**s, "table_id": table_id} for s in stats]
            version_rows += [{**v, "table_id": table_id} for v in versions]
        _insert(conn, tb, table_rows)
        _insert(conn, col, col_rows)
        _insert(conn, ts, stat_rows)
        _insert(conn, sv, version_rows)
        conn.execute(snap.update().where(snap.c.snapshot_id == last["snapshot_id"])
                     .values(next_catalog_id=next_id + tables - 1))
    lake.close()
    return BigLake(catalog, data_path, "t0", 0, 1)
