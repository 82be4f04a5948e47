"""Old-version lakes for the migration tests: copying the fixtures out, and dumping whole catalogs to compare."""

from __future__ import annotations

import gzip
import json
import shutil
from collections import Counter
from pathlib import Path

import sqlalchemy as sa

from spark_ducklake.catalog.database.connection import create_engine, parse_catalog

FIXTURES = Path(__file__).resolve().parent.parent / "data" / "migration"
VERSIONS = {"0.3": "v0_3", "0.4": "v0_4"}


def expected_reads(version: str) -> dict:
    """What the DuckDB that wrote the fixture read at every snapshot: {"schema.table@snap": {columns, rows}}."""
    return json.loads((FIXTURES / VERSIONS[version] / "expected.json").read_text())


def copy_data(version: str, kind: str, dest: Path) -> str:
    """Copy a fixture lake's data files under `dest`; returns the absolute data path."""
    shutil.copytree(FIXTURES / VERSIONS[version] / kind / "data", dest / "data")
    return f"{dest / 'data'}/"


def restore_catalog(version: str, kind: str, dest: Path, data_path: str, pg_catalog: str | None = None) -> str:
    """Recreate a fixture's old catalog under `dest` (or in the given empty PostgreSQL database), pointing at
    `data_path`; returns its catalog string."""
    source = FIXTURES / VERSIONS[version] / kind
    if kind == "sqlite":
        target = dest / "catalog.sqlite"
        shutil.copyfile(source / "catalog.sqlite", target)
        catalog = f"sqlite:{target}"
    elif kind == "duckdb":
        target = dest / "catalog.ducklake"
        with gzip.open(source / "catalog.ducklake.gz") as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)
        catalog = f"duckdb:{target}"
    else:
        assert pg_catalog is not None
        catalog = pg_catalog
        import psycopg

        with psycopg.connect(pg_catalog.split(":", 1)[1], autocommit=True) as con:
            con.execute("DROP SCHEMA IF EXISTS public CASCADE")
            con.execute("CREATE SCHEMA public")
            con.execute((source / "catalog.pg.sql").read_text())
    engine = create_engine(parse_catalog(catalog))
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE ducklake_metadata SET value = :p WHERE key = 'data_path' AND scope IS NULL"),
                     {"p": data_path})
    engine.dispose()
    return catalog


def _columns(conn: sa.Connection, table: str) -> list[tuple]:
    if conn.dialect.name == "sqlite":
        info = conn.exec_driver_sql(f'PRAGMA table_info("{table}")')
        return [(r[1], r[2], r[4], bool(r[3]), bool(r[5])) for r in info]
    rows = conn.execute(sa.text(
        "SELECT column_name, data_type, column_default, is_nullable FROM information_schema.columns"
        " WHERE table_name = :t AND table_schema = current_schema() ORDER BY ordinal_position"), {"t": table})
    return [tuple(r) for r in rows]


def dump_catalog(catalog: str) -> dict[str, tuple[list[tuple], Counter]]:
    """Every table of a catalog: its columns (name, type, default, nullability) and its rows as a multiset."""
    engine = create_engine(parse_catalog(catalog))
    out = {}
    try:
        with engine.connect() as conn:
            for table in sorted(sa.inspect(conn).get_table_names()):
                rows = conn.execute(sa.select(sa.literal_column("*")).select_from(sa.table(table))).all()
                out[table] = (_columns(conn, table), Counter(tuple(r) for r in rows))
    finally:
        engine.dispose()
    return out


def describe_differences(left: dict, right: dict) -> list[str]:
    """Readable differences between two catalog dumps (empty when equal)."""
    problems = []
    for table in sorted(set(left) | set(right)):
        if table not in left or table not in right:
            problems.append(f"{table}: only in {'right' if table not in left else 'left'}")
            continue
        (lcols, lrows), (rcols, rrows) = left[table], right[table]
        if lcols != rcols:
            problems.append(f"{table} columns: {lcols} != {rcols}")
        if lrows != rrows:
            problems.append(f"{table} rows: only left {sorted((lrows - rrows).elements(), key=repr)}, "
                            f"only right {sorted((rrows - lrows).elements(), key=repr)}")
    return problems
