"""Copies of a whole catalog (file copy, or a PostgreSQL database made from it as template), and dumps of them
to compare what two maintenance runs left behind."""

from __future__ import annotations

import shutil
import uuid
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

from tests.support.migration import dump_catalog

TIMESTAMPED = {"ducklake_files_scheduled_for_deletion": 3}  # column index of a time that differs run to run


@contextmanager
def catalog_copy(catalog: str, tmp_path: Path):
    """A catalog string for an exact copy of `catalog` (no one may be connected to it), dropped afterwards."""
    kind, _, target = catalog.partition(":")
    if kind in ("sqlite", "duckdb"):
        copy = tmp_path / f"copy-{uuid.uuid4().hex[:8]}-{Path(target).name}"
        shutil.copyfile(target, copy)
        yield f"{kind}:{copy}"
        return
    import psycopg

    from tests.conftest import PG_DSN

    params = dict(p.split("=", 1) for p in target.split())
    name = f"dl_copy_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_DSN, autocommit=True) as con:
        con.execute(f'CREATE DATABASE "{name}" TEMPLATE "{params["dbname"]}"')
    params["dbname"] = name
    try:
        yield "postgres:" + " ".join(f"{k}={v}" for k, v in params.items())
    finally:
        with psycopg.connect(PG_DSN, autocommit=True) as con:
            con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def comparable_dump(catalog: str) -> dict:
    """dump_catalog without the columns that hold the time of the run."""
    out = {}
    for table, (columns, rows) in dump_catalog(catalog).items():
        cut = TIMESTAMPED.get(table)
        if cut is not None:
            rows = Counter({row[:cut] + row[cut + 1:]: n for row, n in rows.items()})
        out[table] = (columns, rows)
    return out
