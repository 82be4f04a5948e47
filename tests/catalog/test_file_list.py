"""Data file lists held as columns (catalog/reads/file_list.py): the same files, fields and order as the row by row
load, whatever the catalog rows hold (NULLs, file_order, absolute paths, separators inside values)."""

from __future__ import annotations

import pyarrow as pa
import pytest
import sqlalchemy as sa

from spark_ducklake.catalog.database.spec_tables import T
from spark_ducklake.catalog.reads import file_list, reader

BIG = 1 << 40  # writes go through the in-process pyarrow path: no Spark


@pytest.fixture(autouse=True)
def aggregated(monkeypatch) -> list:
    """Even these few rows take the aggregated (columnar) fetch where the catalog has one; what each such fetch
    gave (None: it fell back to rows) is recorded."""
    monkeypatch.setattr(file_list, "FEW", 0)
    seen: list = []
    real = file_list._fetch_aggregated

    def spy(*args):
        seen.append(real(*args))
        return seen[-1]

    monkeypatch.setattr(file_list, "_fetch_aggregated", spy)
    return seen


def _both(lake, snap=None):
    """(columnar FileList, row-by-row list) of table t at `snap` (default: the latest)."""
    with lake.context.connect() as conn:
        snap = lake.context.snapshot_id(conn) if snap is None else snap
        info = reader.find_table(conn, snap, lake.context.data_path, "main", "t")
        deletes = reader.delete_files(conn, info, snap)
        return file_list.load(conn, info, snap, deletes), reader.data_files(conn, info, snap)


def _update(lake, file_id: int, **values) -> None:
    df = T["ducklake_data_file"]
    with lake.context.engine.begin() as conn:
        conn.execute(df.update().where(df.c.data_file_id == file_id).values(**values))


@pytest.mark.lake(data_inlining_row_limit=0)
def test_columns_give_the_rows_the_row_load_gives(lake, catalog, aggregated):
    lake.small_data_threshold = BIG
    lake.create_table("t", "id BIGINT")
    columnar, rows = _both(lake)
    assert len(columnar) == 0 and list(columnar) == rows == []
    for i in range(4):
        lake.write(pa.table({"id": pa.array([i, i + 10], pa.int64())}), "t")
    lake.delete("t", "id = 1")  # a delete file
    columnar, rows = _both(lake)
    assert columnar == rows and len(columnar) == 4 and any(f.delete_file for f in columnar)
    assert bool(aggregated) == catalog.startswith(("sqlite", "postgres"))  # the other catalogs: rows
    ids = [f.data_file_id for f in rows]

    # Values a plain write leaves NULL, an absolute path, file_order against id order, a key.
    _update(lake, ids[0], footer_size=None, row_id_start=None, partial_max=7, file_order=2,
            encryption_key="a2V5+/=")
    _update(lake, ids[1], path="/elsewhere/x,y.parquet", path_is_relative=False, file_order=1)
    _update(lake, ids[2], path_is_relative=None, partition_id=3, mapping_id=None)
    columnar, rows = _both(lake)
    assert columnar == rows
    assert [f.data_file_id for f in columnar] == [ids[1], ids[0], ids[2], ids[3]]  # file_order, NULL last
    assert columnar[0].path == "/elsewhere/x,y.parquet" and columnar[1].encryption_key == "a2V5+/="
    assert columnar[1].row_id_start is None and columnar[1].partial_max == 7

    _update(lake, ids[3], path="two\nlines.parquet")  # the separator inside a path: loaded row by row
    aggregated.clear()
    columnar, rows = _both(lake)
    assert all(found is None for found in aggregated)
    assert columnar == rows and columnar[3].path.endswith("two\nlines.parquet")


@pytest.mark.lake(data_inlining_row_limit=0)
def test_objects_are_built_once_and_shared_by_copies_and_subsets(lake):
    lake.small_data_threshold = BIG
    lake.create_table("t", "id BIGINT")
    for i in range(3):
        lake.write(pa.table({"id": pa.array([i], pa.int64())}), "t")
    columnar, _rows = _both(lake)
    twin = columnar.copy()
    first = twin[0]
    assert columnar[0] is first and list(columnar)[0] is first  # built through the copy, seen by the original
    part = columnar.take([2, 0])
    assert part[1] is first and [f.data_file_id for f in part] == [columnar[2].data_file_id, first.data_file_id]
    assert file_list.field_values(columnar, "record_count") == [1, 1, 1] == [f.record_count for f in columnar]
    assert file_list.nulls_in(columnar, "partial_max") == 3 == file_list.nulls_in(list(columnar), "partial_max")
    assert columnar + [] == list(columnar) and "3 files" in repr(columnar)


def test_parse_splits_counts_and_reads_empty_values_as_null():
    parse = file_list.parse_joined
    assert parse("1,,3", ",", pa.int64(), 3).to_pylist() == [1, None, 3]
    assert parse(",,", ",", pa.int64(), 3).to_pylist() == [None, None, None]
    assert parse("", ",", pa.string(), 1).to_pylist() == [None]
    assert parse(",2", ",", pa.int64(), 2).to_pylist() == [None, 2]
    assert parse("a\nb", "\n", pa.string(), 2).to_pylist() == ["a", "b"]
    assert parse("a\nb\nc", "\n", pa.string(), 2) is None  # a separator inside a value: miscounted


def test_fetch_on_an_unknown_condition_matches_nothing(tmp_path):
    from spark_ducklake import DuckLake

    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"))
    try:
        with lake.context.connect() as conn:
            got = file_list.fetch(conn, 12345, sa.true())
        assert got.num_rows == 0 and got.schema == file_list.SCHEMA
    finally:
        lake.close()


@pytest.mark.lake(data_inlining_row_limit=0)
def test_booleans_stored_as_text_fall_back_to_rows(lake, aggregated):
    """SQLite keeps whatever a writer stored: a path_is_relative of 'true' fails the columns' integer parse, and
    the list is then read row by row, with the same files."""
    lake.small_data_threshold = BIG
    lake.create_table("t", "id BIGINT")
    for i in range(2):
        lake.write(pa.table({"id": pa.array([i], pa.int64())}), "t")
    with lake.context.engine.begin() as conn:
        conn.execute(sa.text("UPDATE ducklake_data_file SET path_is_relative = 'true'"))
    columnar, rows = _both(lake)
    assert aggregated == [None] and columnar == rows and len(columnar) == 2
    assert all(f.path.startswith(lake.table_info("t").path) for f in columnar)


def test_sparse_columns_scatter_their_pairs_over_the_rows():
    scatter, ids = file_list._scatter, pa.array([5, 3, 9], pa.int64())
    assert scatter(None, pa.int64(), None, ids).to_pylist() == [None, None, None]  # no row differs
    assert scatter(None, pa.int64(), 1, ids).to_pylist() == [1, 1, 1]
    assert scatter("9,7,5,", pa.int64(), 1, ids).to_pylist() == [None, 1, 7]  # '' is NULL
    assert scatter("3,a2V5+/=", pa.string(), None, ids).to_pylist() == [None, "a2V5+/=", None]
    assert scatter("3,true", pa.int64(), 1, ids) is None  # not a number: read as rows
    assert scatter("3", pa.int64(), None, ids) is None  # not pairs
