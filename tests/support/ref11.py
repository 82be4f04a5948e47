"""Driving the DuckLake 1.1 reference (a DuckDB shell built from the reference's sources) as a subprocess.

The binary is ../shared/reference/ducklake-1.1/duckdb (override: SPARK_DUCKLAKE_REF11); it writes catalog
version '1.1-dev1'. Tests ask for it through `require_ref11()`, which skips outside CI when it is missing.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

_DEFAULT = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "ducklake-1.1" / "duckdb"
BINARY = Path(os.environ.get("SPARK_DUCKLAKE_REF11", str(_DEFAULT)))
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_ref11() -> Path:
    """The binary's path; skips (fails in CI) when it is not here."""
    if not os.access(BINARY, os.X_OK):
        message = f"DuckLake 1.1 reference binary not found at {BINARY}"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return BINARY


def attach_sql(catalog: str, data_path: str | None = None, alias: str = "lake", **options) -> str:
    """`ATTACH 'ducklake:<catalog>' AS <alias> (...)` for the binary; options as in the reference (keys upper-cased)."""
    opts = [f"DATA_PATH '{data_path}'"] if data_path is not None else []
    for key, value in options.items():
        opts.append(f"{key.upper()} '{value}'" if isinstance(value, str) else f"{key.upper()} {value}")
    suffix = f" ({', '.join(opts)})" if opts else ""
    return f"ATTACH 'ducklake:{catalog}' AS {alias}{suffix};"


def run(sql: str, *, timeout: float = 120) -> list[list[dict]]:
    """Run a script with the binary; returns the rows of every statement that printed a result (JSON objects)."""
    binary = require_ref11()
    done = subprocess.run([str(binary), "-json", "-bail"], input=sql, capture_output=True, text=True,
                          timeout=timeout, check=False)
    if done.returncode != 0 or "Error" in done.stderr:
        raise RuntimeError(f"DuckLake 1.1 reference failed ({done.returncode}): {done.stderr.strip()}\n"
                           f"-- script:\n{sql}")
    return _parse(done.stdout)


def _parse(text: str) -> list[list[dict]]:
    # -json prints each result as one JSON array; empty results print nothing.
    decoder = json.JSONDecoder()
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        value, end = decoder.raw_decode(text, pos)
        out.append(value)
        pos = end
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out


def query(attach: str, sql: str) -> list[dict]:
    """Rows of one query after an ATTACH statement."""
    results = run(f"{attach}\n{sql}")
    return results[-1] if results else []


def readable_copy(ducklake_file: str, copy: str) -> str:
    """A copy of a DuckDB-file catalog the binary wrote, in a storage version DuckDB 1.5.5 opens (the binary writes
    a development storage format, 999, that 1.5.5 refuses); `COPY FROM DATABASE` keeps every table, row and type.
    Returns the copy's path."""
    run(f"ATTACH '{ducklake_file}' AS src (READ_ONLY); ATTACH '{copy}' AS dst (STORAGE_VERSION 'v1.4.0');"
        " COPY FROM DATABASE src TO dst;")
    return copy


def compare_variant_snapshots(lake, catalog: str, table: str) -> list[int]:
    """Compare `(id, v, s)` of a table with a VARIANT column `v` at every snapshot since it was created, read by
    Spark and by the binary (the variant as a JSON value: ours from Spark's `toJson`, theirs as the binary prints
    it); returns the snapshots compared (at least four)."""
    first = lake.table_info(table).begin_snapshot
    versions = [s.snapshot_id for s in lake.snapshots() if s.snapshot_id >= first]
    assert len(versions) >= 4
    parts = [f"SELECT {v} AS v, list(x) AS rows FROM (SELECT id, v, s FROM lake.{table} AT (VERSION => {v})) x;"
             for v in versions]
    theirs = {r[0]["v"]: r[0]["rows"] or [] for r in run(attach_sql(catalog) + "\n".join(parts))}
    for v in versions:
        ours = [(r.id, None if r.v is None else json.loads(r.v.toJson()), r.s)
                for r in lake.read(table, version=v).collect()]
        assert sorted(ours, key=repr) == sorted(((r["id"], r["v"], r["s"]) for r in theirs[v]), key=repr), v
    return versions
