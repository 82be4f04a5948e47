"""Errors a user meets are DuckLakeErrors naming the cause in one line, and leave the catalog as it was:
broken catalog files, impossible snapshot arguments, a full or refusing catalog database, data paths Spark
cannot write, and attaching a lake with another data path (the reference's OVERRIDE_DATA_PATH)."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import sqlite3
import subprocess
import uuid

import pyarrow as pa
import pytest
import sqlalchemy as sa

from spark_ducklake import DuckLake
from spark_ducklake.errors import (
    CatalogDatabaseError,
    CatalogError,
    DuckLakeError,
    InvalidArgumentError,
    NotFoundError,
    StorageError,
)


def _dump(lake: DuckLake) -> dict[str, list[tuple]]:
    with lake.engine.connect() as conn:
        names = [n for n in sa.inspect(conn).get_table_names() if n.startswith("ducklake_")]
        return {n: sorted(map(tuple, conn.execute(sa.text(f'SELECT * FROM "{n}"'))), key=repr) for n in names}


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert isinstance(exc, DuckLakeError) and "\n" not in text
    return text


def test_files_that_are_not_catalogs(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("these are my notes, not a database\n" * 50)
    corrupt = tmp_path / "meta.sqlite"
    DuckLake.attach(f"sqlite:{corrupt}", str(tmp_path / "data")).close()
    raw = bytearray(corrupt.read_bytes())
    raw[:16] = b"garbage garbage!"  # the SQLite header
    corrupt.write_bytes(bytes(raw))
    for path in (notes, corrupt):
        before = path.read_bytes()
        for catalog in (str(path), f"sqlite:{path}"):
            for kwargs in ({}, {"read_only": True}, {"create_if_missing": False}):
                with pytest.raises(CatalogError) as info:
                    DuckLake.attach(catalog, **kwargs)
                assert "not a database" in _one_line(info.value) and str(path) in str(info.value)
        assert path.read_bytes() == before


def test_snapshot_arguments_are_checked(lake, lake_catalog):
    lake.write(pa.table({"id": pa.array([1, 2], pa.int64())}), "t", mode="error")
    first = lake.current_snapshot()
    first_time = lake.snapshots()[-1].snapshot_time
    lake.write(pa.table({"id": pa.array([3], pa.int64())}), "t")
    before = _dump(lake)
    for version in (10**30, -1, 2**63):
        with pytest.raises(NotFoundError, match=f"snapshot {version} does not exist"):
            lake.plan_scan("t", version=version)
        with pytest.raises(NotFoundError):
            lake.read("t", version=version)  # fails before Spark is needed
        with pytest.raises(NotFoundError):
            lake.list_files("t", snapshot_version=version)
        with pytest.raises(NotFoundError):
            DuckLake.attach(lake_catalog, snapshot_version=version)
    for bad in ("1", 1.0, True):
        with pytest.raises(InvalidArgumentError, match="must be an integer snapshot id"):
            lake.tables(version=bad)
    # ISO strings are timestamps too; other types and unparsable strings say what they expected.
    iso = (first_time + dt.timedelta(microseconds=1)).isoformat()
    assert lake.plan_scan("t", timestamp=iso).snapshot_id == first
    assert lake.plan_scan("t", timestamp=first_time + dt.timedelta(microseconds=1)).snapshot_id == first
    pinned = DuckLake.attach(lake_catalog, snapshot_time=iso)
    assert pinned.current_snapshot() == first
    pinned.close()
    for bad in (12345, dt.date(2026, 1, 1), b"2026-01-01"):
        with pytest.raises(InvalidArgumentError, match="must be a datetime or an ISO 8601 string"):
            lake.plan_scan("t", timestamp=bad)
    with pytest.raises(InvalidArgumentError, match="'yesterday' is not an ISO 8601"):
        lake.plan_scan("t", timestamp="yesterday")
    assert _dump(lake) == before


def test_full_sqlite_catalog(lake, tmp_path):
    path = tmp_path / "meta.sqlite"  # the `lake` fixture's catalog file
    lake.create_table("t", "id BIGINT, s STRING")
    before = _dump(lake)
    pages = sqlite3.connect(path).execute("PRAGMA page_count").fetchone()[0]

    @sa.event.listens_for(lake.engine, "connect")
    def _cap(dbapi_conn, _record):  # the file may not grow: SQLite answers SQLITE_FULL, as on a full disk
        dbapi_conn.execute(f"PRAGMA max_page_count = {pages}")

    with pytest.raises(CatalogDatabaseError) as info:
        lake.write(pa.table({"id": pa.array(range(9), pa.int64()), "s": ["x" * 5000] * 9}), "t")
    assert "database or disk is full" in _one_line(info.value)
    assert info.value.__context__ is None and info.value.__cause__ is None
    sa.event.remove(lake.engine, "connect", _cap)
    assert _dump(lake) == before


def test_nul_byte_on_postgres(pg_catalog, lake):
    lake.create_table("t", "id BIGINT")
    before = _dump(lake)
    with pytest.raises(CatalogDatabaseError, match="NUL") as info:
        lake.write(pa.table({"id": pa.array([1], pa.int64())}), "t", commit_message="bad\x00message")
    _one_line(info.value)
    assert _dump(lake) == before


def test_data_paths_spark_cannot_write(tmp_path, spark):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(blocker / "data"), spark=spark,
                           data_inlining_row_limit=0)
    lake.create_table("t", "id BIGINT")
    lake.create_table("n" * 300, "id BIGINT")  # the catalog takes it; the file system will not
    before = _dump(lake)
    with pytest.raises(StorageError, match="not a directory") as info:
        lake.write(spark.range(5), "t")
    assert str(blocker) in _one_line(info.value)
    lake.close()

    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"), spark=spark,
                           data_inlining_row_limit=0, override_data_path=True)
    with pytest.raises(StorageError, match="longer than 255 bytes") as info:
        lake.write(spark.range(5), "n" * 300)
    _one_line(info.value)
    assert _dump(lake) == before
    lake.close()


@pytest.fixture
def tiny_disk(tmp_path):
    """A 2 MB tmpfs (needs root and the mount capability, else the test is skipped)."""
    mount_point = tmp_path / "tiny"
    mount_point.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("a full disk is simulated with a tmpfs mount, which needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount_point)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    yield mount_point
    subprocess.run(["umount", "-l", str(mount_point)], check=False)


def test_full_data_disk(tmp_path, tiny_disk, spark):
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tiny_disk / "data"), spark=spark,
                           data_inlining_row_limit=0)
    lake.create_table("t", "id BIGINT, u STRING")
    before = _dump(lake)
    with pytest.raises(StorageError, match="disk under the data path is full") as info:
        lake.write(spark.range(100_000).selectExpr("id", "uuid() AS u"), "t")
    _one_line(info.value)
    assert _dump(lake) == before
    lake.close()


def test_attaching_with_another_data_path(tmp_path):
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    data = tmp_path / "data"
    DuckLake.attach(catalog, str(data)).close()
    # Spellings of the same path are the same path (we store it absolute).
    for same in (str(data), str(data) + "/", f"{data}/../data", os.path.relpath(data)):
        lake = DuckLake.attach(catalog, same)
        assert lake.data_path == f"{data}/"
        lake.close()
    other = str(tmp_path / "elsewhere")
    with pytest.raises(CatalogError) as info:
        DuckLake.attach(catalog, other)
    assert other in _one_line(info.value) and f"{data}/" in str(info.value)
    assert "override_data_path" in str(info.value)
    lake = DuckLake.attach(catalog, other, override_data_path=True)
    assert lake.data_path == f"{other}/"
    assert lake.settings()[0].data_path == f"{other}/"
    lake.close()
    with DuckLake.attach(catalog) as lake:  # the catalog keeps its own
        assert lake.data_path == f"{data}/"


def test_reference_agrees_on_data_path_overrides(tmp_path, reference):
    """The reference refuses another DATA_PATH without OVERRIDE_DATA_PATH, and keeps the stored one after it."""
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    DuckLake.attach(catalog, str(tmp_path / "data")).close()
    name = f"l{uuid.uuid4().hex[:6]}"
    with pytest.raises(Exception, match="does not match existing data path"):
        reference.execute(f"ATTACH 'ducklake:{catalog}' AS {name} (DATA_PATH '{tmp_path / 'elsewhere'}')")
    reference.execute(f"ATTACH 'ducklake:{catalog}' AS {name} "
                      f"(DATA_PATH '{tmp_path / 'elsewhere'}', OVERRIDE_DATA_PATH true)")
    reference.execute(f"DETACH {name}")
    with DuckLake.attach(catalog) as lake:
        assert lake.data_path == f"{tmp_path / 'data'}/"
