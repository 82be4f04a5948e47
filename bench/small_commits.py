"""Small commits: N inserts of 10 rows each, one writer, no Spark; latency and commits/s against peers.

    .venv/bin/python bench/small_commits.py [--commits 1000] [--quick]   # --quick: 100 commits

Ours: `lake.write(pyarrow_table, "t")` (10 rows: inlined into the catalog) on SQLite and PostgreSQL. Baselines on
the same machine and the same rows: DuckDB's extension (`INSERT INTO lake.t SELECT * FROM arrow_table`, inlined
too) on the same kind of catalog; pyiceberg `table.append` with its SQL catalog on SQLite (a Parquet data file,
manifest and metadata JSON per commit); delta-rs `write_deltalake(mode="append")` (a Parquet file and a log
entry per commit). Prints median and p99 latency and commits/s. Each engine writes to its own fresh table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time

from common import drop_pg_database, fresh_pg_database, percentile, pg_available
from report import Row


def batch(i: int):
    """The i-th 10-row batch."""
    import pyarrow as pa

    return pa.table({"id": pa.array(range(i * 10, i * 10 + 10), pa.int64()),
                     "name": [f"row-{i}-{j}" for j in range(10)],
                     "amount": pa.array([j * 0.25 for j in range(10)], pa.float64())})


def latencies(commit, commits: int, warmup: int = 3) -> list[float]:
    """Seconds of each of `commits` calls of commit(i) (after a few unmeasured ones)."""
    for i in range(warmup):
        commit(-1 - i)
    out = []
    for i in range(commits):
        start = time.perf_counter()
        commit(i)
        out.append(time.perf_counter() - start)
    return out


def ours(catalog: str, data: str, commits: int) -> list[float]:
    """lake.write of each batch (inlined)."""
    from spark_ducklake import DuckLake

    lake = DuckLake.attach(catalog, data)
    lake.create_table("t", "id BIGINT, name VARCHAR, amount DOUBLE")
    out = latencies(lambda i: lake.write(batch(i), "t"), commits)
    assert lake.plan_scan("t").inlined.num_rows == (commits + 3) * 10
    lake.close()
    return out


def duckdb_ref(catalog: str, data: str, commits: int) -> list[float]:
    """DuckDB's extension inserting each batch (inlined as well: 10 rows is its default limit)."""
    from spark_ducklake import DuckLake
    from spark_ducklake.duckdb_reference import attach, connect

    DuckLake.attach(catalog, data).close()
    con = connect()
    attach(con, catalog, data)
    con.execute("CREATE TABLE lake.t (id BIGINT, name VARCHAR, amount DOUBLE)")

    def commit(i):
        arrow_batch = batch(i)  # noqa: F841 - scanned by name by DuckDB
        con.execute("INSERT INTO lake.t SELECT * FROM arrow_batch")

    out = latencies(commit, commits)
    assert con.execute("SELECT count(*) FROM lake.t").fetchone()[0] == (commits + 3) * 10
    con.close()
    return out


def iceberg(root: str, commits: int) -> list[float]:
    """pyiceberg appends with the SQL catalog on SQLite."""
    from pyiceberg.catalog.sql import SqlCatalog

    os.makedirs(f"{root}/warehouse", exist_ok=True)
    catalog = SqlCatalog("bench", uri=f"sqlite:///{root}/iceberg.sqlite", warehouse=f"file://{root}/warehouse")
    catalog.create_namespace("bench")
    table = catalog.create_table("bench.t", schema=batch(0).schema)
    out = latencies(lambda i: table.append(batch(i)), commits)
    assert catalog.load_table("bench.t").scan().to_arrow().num_rows == (commits + 3) * 10
    return out


def delta(root: str, commits: int) -> list[float]:
    """delta-rs appends to a local Delta table."""
    from deltalake import DeltaTable, write_deltalake

    path = f"{root}/delta"
    write_deltalake(path, batch(0).slice(0, 0), mode="error")
    out = latencies(lambda i: write_deltalake(path, batch(i), mode="append"), commits)
    assert DeltaTable(path).to_pyarrow_table().num_rows == (commits + 3) * 10
    return out


def _rows(backend: str, engine: str, ours_lat: list[float], theirs: list[float]) -> list[Row]:
    def rate(values):
        return len(values) / sum(values)

    name = f"{engine} ({backend})" if engine.startswith("duckdb") else engine
    return [
        Row("small_commits", f"{backend} median latency vs {name}", statistics.median(ours_lat),
            statistics.median(theirs), baseline_name=name, group="median latency"),
        Row("small_commits", f"{backend} p99 latency vs {name}", percentile(ours_lat, 99), percentile(theirs, 99),
            baseline_name=name, group="p99 latency"),
        Row("small_commits", f"{backend} commits/s vs {name}", rate(ours_lat), rate(theirs), unit="commits/s",
            baseline_name=name, group="commits/s"),
    ]


def _catalog(backend: str, root: str, tag: str, dbs: list[str]) -> str:
    if backend == "sqlite":
        return f"sqlite:{root}/{tag}.sqlite"
    dsn, name = fresh_pg_database()
    dbs.append(name)
    return f"postgres:{dsn}"


def bench_rows(quick: bool, *, commits: int | None = None, backends: tuple[str, ...] = ("sqlite", "postgres"),
               peers: tuple[str, ...] = ("duckdb", "pyiceberg", "deltalake")) -> list[Row]:
    """Case 5; quick: 100 commits, full: 1,000."""
    commits = commits or (100 if quick else 1_000)
    rows: list[Row] = []
    root = tempfile.mkdtemp(prefix="bench-commits-")
    try:
        peer_lat: dict[str, list[float]] = {}
        if "pyiceberg" in peers:
            peer_lat["pyiceberg (SQLite catalog)"] = iceberg(f"{root}/iceberg", commits)
        if "deltalake" in peers:
            peer_lat["deltalake (delta-rs)"] = delta(f"{root}/delta", commits)
        for backend in backends:
            if backend == "postgres" and not pg_available():
                rows.append(Row("small_commits", "postgres", None, None, notes="PostgreSQL not reachable: skipped"))
                continue
            dbs: list[str] = []
            try:
                mine = ours(_catalog(backend, root, "ours", dbs), f"{root}/{backend}-ours/", commits)
                engines = dict(peer_lat)
                if "duckdb" in peers:
                    ref = duckdb_ref(_catalog(backend, root, "ref", dbs), f"{root}/{backend}-ref/", commits)
                    engines = {"duckdb-ducklake": ref, **engines}
                for engine, theirs in engines.items():
                    rows += _rows(backend, engine, mine, theirs)
            finally:
                for name in dbs:
                    drop_pg_database(name)
        for row in rows:
            row.notes = row.notes or f"{commits} commits of 10 rows"
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commits", type=int, default=1_000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    for row in bench_rows(args.quick, commits=None if args.quick else args.commits):
        print(row)


if __name__ == "__main__":
    main()
