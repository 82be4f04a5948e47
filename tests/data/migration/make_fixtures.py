"""Build the pre-1.0 DuckLake fixtures with an OLD DuckDB + ducklake extension (see README.md here).

Run with the old DuckDB's interpreter, never the project venv:
    /tmp/oldduck-1.4.4/bin/python tests/data/migration/make_fixtures.py tests/data/migration/v0_3
"""

from __future__ import annotations

import glob
import gzip
import json
import os
import shutil
import site
import subprocess
import sys

import duckdb

PG = "host=127.0.0.1 port=5432 user=postgres"
PG_DB = "ducklake_migration_fixture"

# One statement (or statement group) per snapshot; a lake that touches every catalog table.
SCRIPT = [
    "CREATE SCHEMA lake.sales",
    "CREATE TABLE lake.events(id INTEGER, name VARCHAR, amount DECIMAL(9,2), ts TIMESTAMP)",
    "INSERT INTO lake.events SELECT i, 'n' || i, i * 1.5, TIMESTAMP '2024-01-01' + INTERVAL (i) HOUR"
    " FROM range(40) t(i)",
    "INSERT INTO lake.events VALUES (100, 'inl', 1.25, TIMESTAMP '2024-02-01'), (101, NULL, NULL, NULL)",
    "INSERT INTO lake.events SELECT i, 'm' || i, i, TIMESTAMP '2024-03-01' FROM range(40, 60) t(i)",
    "DELETE FROM lake.events WHERE id % 7 = 0 OR id = 101",
    "UPDATE lake.events SET amount = amount + 1 WHERE id < 5",
    "ALTER TABLE lake.events RENAME COLUMN name TO label",
    "ALTER TABLE lake.events ADD COLUMN score INTEGER DEFAULT 7",
    "INSERT INTO lake.events VALUES (200, 'late', 2.5, TIMESTAMP '2024-04-01', 9)",
    "COMMENT ON TABLE lake.events IS 'event log'",
    "COMMENT ON COLUMN lake.events.id IS 'identifier'",
    "CREATE TABLE lake.sales.orders(region VARCHAR, d DATE, qty INTEGER)",
    "ALTER TABLE lake.sales.orders SET PARTITIONED BY (region, year(d))",
    "INSERT INTO lake.sales.orders SELECT CASE WHEN i % 2 = 0 THEN 'eu' ELSE 'us' END,"
    " DATE '2020-06-01' + INTERVAL (i * 40) DAY, i FROM range(30) t(i)",
    "CREATE VIEW lake.sales.big_orders AS SELECT region, qty FROM lake.sales.orders WHERE qty > 20",
    # (0.3 on PostgreSQL fails to rename a table whose inlined-data table would be recreated: inlining off)
    "CALL lake.set_option('data_inlining_row_limit', 0, schema => 'sales', table_name => 'orders')",
    "ALTER TABLE lake.sales.orders RENAME TO orders_v2",
    "INSERT INTO lake.sales.orders_v2 SELECT 'ap', DATE '2023-01-01', i FROM range(12) t(i)",
    "CREATE TABLE lake.scratch(x INTEGER)",
    "INSERT INTO lake.scratch SELECT i FROM range(15) t(i)",
    "DROP TABLE lake.scratch",
    # merged files: several small files merged into one (partial-file bookkeeping)
    "CREATE TABLE lake.merged(k INTEGER, v VARCHAR)",
    "INSERT INTO lake.merged SELECT i, 'a' || i FROM range(12) t(i)",
    "INSERT INTO lake.merged SELECT i, 'b' || i FROM range(12, 25) t(i)",
    "INSERT INTO lake.merged SELECT i, 'c' || i FROM range(25, 40) t(i)",
    "CALL ducklake_merge_adjacent_files('lake', 'merged')",
    # flushed inlined data: a file written with per-row snapshot ids
    "CREATE TABLE lake.flushed(k INTEGER)",
    "INSERT INTO lake.flushed VALUES (1), (2)",
    "INSERT INTO lake.flushed VALUES (3)",
    "CALL ducklake_flush_inlined_data('lake', table_name => 'flushed')",
    "INSERT INTO lake.flushed VALUES (4)",
]


def connect() -> duckdb.DuckDBPyConnection:
    version = duckdb.__version__
    root = f"/tmp/ducklake-old-ext-{version}"
    target = f"{root}/v{version}/linux_amd64"
    os.makedirs(target, exist_ok=True)
    for sp in site.getsitepackages():
        for src in glob.glob(f"{sp}/duckdb_extension_*/extensions/v{version}/*.duckdb_extension"):
            dst = os.path.join(target, os.path.basename(src))
            if not os.path.exists(dst):
                os.symlink(src, dst)
    con = duckdb.connect(config={"extension_directory": root, "allow_unsigned_extensions": "true",
                                 "autoinstall_known_extensions": "false"})
    for ext in ("ducklake", "sqlite_scanner", "postgres_scanner", "icu", "json"):
        con.execute(f"LOAD {ext}")
    return con


def read_every_snapshot(con: duckdb.DuckDBPyConnection) -> dict:
    """{"schema.table@snapshot": {"columns": [...], "rows": [[text, ...], ...]}} for every table at every snapshot."""
    meta = "__ducklake_metadata_lake"
    snapshots = [r[0] for r in con.execute(f"SELECT snapshot_id FROM {meta}.ducklake_snapshot ORDER BY 1").fetchall()]
    result = {}
    for snap in snapshots:
        tables = con.execute(
            f"SELECT s.schema_name, t.table_name FROM {meta}.ducklake_table t JOIN {meta}.ducklake_schema s"
            " USING (schema_id) WHERE t.begin_snapshot <= ? AND (t.end_snapshot IS NULL OR t.end_snapshot > ?)",
            [snap, snap]).fetchall()
        for schema, table in tables:
            rel = con.execute(f'SELECT * FROM lake."{schema}"."{table}" AT (VERSION => {snap})')
            columns = [d[0] for d in rel.description]
            rows = sorted([[None if v is None else str(v) for v in row] for row in rel.fetchall()], key=repr)
            result[f"{schema}.{table}@{snap}"] = {"columns": columns, "rows": rows}
    return result


def build(out: str, kind: str) -> None:
    where = os.path.join(out, kind)
    shutil.rmtree(where, ignore_errors=True)
    os.makedirs(where)
    os.chdir(where)  # the catalog stores the relative data path 'data/'
    if kind == "sqlite":
        catalog = "sqlite:catalog.sqlite"
    elif kind == "duckdb":
        catalog = "catalog.ducklake"
    else:
        subprocess.run(["psql", "-q", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-c",
                        f"DROP DATABASE IF EXISTS {PG_DB}"], check=True)
        subprocess.run(["psql", "-q", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-c",
                        f"CREATE DATABASE {PG_DB}"], check=True)
        catalog = f"postgres:dbname={PG_DB} {PG}"
    con = connect()
    con.execute(f"ATTACH 'ducklake:{catalog}' AS lake (DATA_PATH 'data/', DATA_INLINING_ROW_LIMIT 10)")
    for statement in SCRIPT:
        con.execute(statement)
    truth = read_every_snapshot(con)
    con.close()
    truth_file = os.path.join(out, "expected.json")
    if kind == "sqlite":  # what the old DuckDB reads, the yardstick for every kind after migration
        with open(truth_file, "w") as fh:
            json.dump(truth, fh, indent=0, sort_keys=True)
    else:
        with open(truth_file) as fh:
            assert json.load(fh) == json.loads(json.dumps(truth)), f"{kind} lake reads differently"
    if kind == "duckdb":  # a DuckDB file is mostly empty blocks: ship it gzipped (~20 KB instead of ~8 MB)
        with open("catalog.ducklake", "rb") as src, gzip.open("catalog.ducklake.gz", "wb", 9) as dst:
            shutil.copyfileobj(src, dst)
        os.remove("catalog.ducklake")
    if kind == "postgres":
        dump = subprocess.run(["pg_dump", "-h", "127.0.0.1", "-U", "postgres", "--inserts", "--no-owner",
                               "--no-privileges", "--no-comments", PG_DB], check=True, capture_output=True,
                              text=True).stdout
        # psql meta-commands (\\restrict) are not SQL: drop them so any client can replay the dump
        with open("catalog.pg.sql", "w") as fh:
            fh.writelines(line for line in dump.splitlines(keepends=True) if not line.startswith("\\"))
        subprocess.run(["psql", "-q", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-c",
                        f"DROP DATABASE {PG_DB}"], check=True)


if __name__ == "__main__":
    target = os.path.abspath(sys.argv[1])
    for kind in sys.argv[2:] or ("sqlite", "duckdb", "postgres"):
        build(target, kind)
        print("built", kind, "in", target, "with duckdb", duckdb.__version__)
