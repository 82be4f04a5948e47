"""A lake with thousands of tables: attach, list and describe them all; ours vs DuckDB's extension.

    .venv/bin/python bench/catalog_load.py [--tables 5000] [--quick]   # --quick: 1,000 tables, 3 runs

The catalog (SQLite and PostgreSQL) is built by bulk-inserting table and column rows (big_catalog.py). Timed,
each from a fresh handle (medians): ours `DuckLake.attach(...)` + `lake.tables()` (every table with its columns);
DuckDB: `ATTACH` + `SELECT count(*) FROM duckdb_columns() WHERE database_name = 'lake'` on a fresh connection
with the extensions already loaded. The reference took 16 s for 5,000 tables in its issue #1398.
"""

from __future__ import annotations

import argparse
import statistics

from common import pg_available, scratch_catalog, timed
from report import Row


def measure(big, tables: int, repeat: int, backend: str) -> list[Row]:
    """Rows for one built catalog."""
    from spark_ducklake import DuckLake
    from spark_ducklake.duckdb_reference import attach, connect

    def ours():
        lake = DuckLake.attach(big.catalog)
        found = lake.tables()
        lake.close()
        assert len(found) == tables, f"listed {len(found)} tables, expected {tables}"

    def theirs():
        con = connect()
        try:
            attach(con, big.catalog, big.data_path)
            count = con.execute("SELECT count(DISTINCT table_name) FROM duckdb_columns() "
                                "WHERE database_name = 'lake'").fetchone()[0]
        finally:
            con.close()
        assert count == tables, f"DuckDB listed {count} tables, expected {tables}"

    def theirs_connect_only():
        connect().close()

    connect_cost = statistics.median(timed(theirs_connect_only) for _ in range(3))
    a = statistics.median(timed(ours) for _ in range(repeat))
    b = statistics.median(timed(theirs) for _ in range(repeat)) - connect_cost
    return [Row("catalog_load", f"{backend}: attach + list {tables:,} tables with columns", a, b,
                baseline_name="duckdb ATTACH + duckdb_columns()", group="attach and list",
                notes="DuckDB's time excludes loading its extensions")]


def bench_rows(quick: bool, *, tables: int | None = None, backends: tuple[str, ...] = ("sqlite", "postgres"),
               repeat: int | None = None) -> list[Row]:
    """Case 4; quick: 1,000 tables, 3 runs; full: 5,000 tables, 7 runs."""
    import big_catalog

    tables = tables or (1_000 if quick else 5_000)
    repeat = repeat or (3 if quick else 7)
    rows: list[Row] = []
    for backend in backends:
        if backend == "postgres" and not pg_available():
            rows.append(Row("catalog_load", "postgres", None, None, notes="PostgreSQL not reachable: skipped"))
            continue
        with scratch_catalog(backend, "bench-tables-") as (catalog, root):
            big = big_catalog.many_tables(catalog, f"{root}/data/", tables)
            rows += measure(big, tables, repeat, backend)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=None, help="default: 5000 (--quick: 1000)")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    for row in bench_rows(args.quick, tables=args.tables):
        print(row)


if __name__ == "__main__":
    main()
