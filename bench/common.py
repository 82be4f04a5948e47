"""Timing helpers shared by the benchmark scripts."""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
import uuid
from contextlib import contextmanager

# The benches compare with DuckDB 1.5.5's ducklake extension on the same lake, and it opens 1.0 catalogs only: lakes
# made here are 1.0 unless a bench asks for another version (new catalogs are otherwise 1.1, as in DuckDB 2.0).
os.environ.setdefault("SPARK_DUCKLAKE_DEFAULT_VERSION", "1.0")


def timed(fn, *args) -> float:
    """Wall seconds of one call."""
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def median_time(fn, repeat: int) -> float:
    """Median wall seconds over `repeat` runs after one warm-up."""
    fn()
    return statistics.median(timed(fn) for _ in range(repeat))


def paired(first, second, repeat: int, warmup: bool = True) -> tuple[float, float]:
    """Median wall times of two workloads run alternately (after one warm-up each unless the caller just ran
    both), so drift hits both alike."""
    if warmup:
        first()
        second()
    a, b = [], []
    for i in range(repeat):
        order = [(first, a), (second, b)] if i % 2 == 0 else [(second, b), (first, a)]
        for fn, sink in order:
            sink.append(timed(fn))
    return statistics.median(a), statistics.median(b)


PG_DSN = os.environ.get("SPARK_DUCKLAKE_BENCH_PG", "host=127.0.0.1 port=5432 user=postgres dbname=test")


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) by nearest rank."""
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def fresh_pg_database(dsn: str = PG_DSN) -> tuple[str, str]:
    """A new empty PostgreSQL database: (libpq string for it, its name)."""
    import psycopg

    name = f"dl_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute(f'CREATE DATABASE "{name}"')
    base = " ".join(p for p in dsn.split() if not p.startswith("dbname="))
    return f"dbname={name} {base}", name


def drop_pg_database(name: str, dsn: str = PG_DSN) -> None:
    """Drop a database made by fresh_pg_database."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def pg_available(dsn: str = PG_DSN) -> bool:
    """Whether the PostgreSQL server answers."""
    try:
        import psycopg

        with psycopg.connect(dsn, connect_timeout=3):
            return True
    except Exception:  # noqa: BLE001 - any failure means "not here"
        return False


@contextmanager
def scratch_catalog(backend: str, prefix: str):
    """(catalog string, scratch folder) of a fresh catalog on `backend` (sqlite or postgres); both removed after."""
    root = tempfile.mkdtemp(prefix=prefix)
    db = None
    try:
        if backend == "sqlite":
            catalog = f"sqlite:{root}/meta.sqlite"
        else:
            dsn, db = fresh_pg_database()
            catalog = f"postgres:{dsn}"
        yield catalog, root
    finally:
        if db:
            drop_pg_database(db)
        shutil.rmtree(root, ignore_errors=True)
