"""The per-snapshot cache of big tables' file lists (catalog/reads/file_cache.py): a hit only while the files
visible at that snapshot are still the ones the catalog lists, even when maintenance rewrites history."""

from __future__ import annotations

import pyarrow as pa
import pytest
import sqlalchemy as sa

from spark_ducklake.catalog.database.spec_tables import METADATA
from spark_ducklake.catalog.reads.file_cache import FileListCache, fingerprint, load

BIG = 1 << 40  # writes go through the in-process pyarrow path: no Spark


# The 1.0 layout these tests' catalogs have: selecting a whole table names only its columns.
T = METADATA.tables


def _three_files(lake) -> int:
    lake.small_data_threshold = BIG
    lake.create_table("t", "id BIGINT")
    for i in range(3):
        lake.write(pa.table({"id": pa.array([i], pa.int64())}), "t")
    lake.context.file_cache = FileListCache(min_files=1)  # cache even this small table
    return lake.plan_scan("t").snapshot_id


def _ids(plan) -> list[int]:
    return [f.data_file_id for f in plan.files]


@pytest.mark.lake(data_inlining_row_limit=0)
def test_same_snapshot_is_served_from_the_cache_until_the_catalog_changes(lake, catalog):
    snap = _three_files(lake)
    first, again = lake.plan_scan("t", version=snap), lake.plan_scan("t", version=snap)
    assert again.files[0] is first.files[0] and again.files is not first.files  # cached objects, a new list
    assert len(first.files) == 3

    df = T["ducklake_data_file"]
    with lake.context.engine.begin() as conn:  # what expiry or compaction does under an old snapshot
        template = dict(conn.execute(sa.select(df).where(df.c.data_file_id == first.files[0].data_file_id))
                        .one()._mapping)
        conn.execute(df.delete().where(df.c.data_file_id == first.files[0].data_file_id))
    assert _ids(lake.plan_scan("t", version=snap)) == _ids(first)[1:]

    new_id = max(_ids(first)) + 100
    with lake.context.engine.begin() as conn:  # a merged file, visible from an old snapshot on
        conn.execute(df.insert().values({**template, "data_file_id": new_id}))
    assert _ids(lake.plan_scan("t", version=snap)) == [*_ids(first)[1:], new_id]

    dl = T["ducklake_delete_file"]
    with lake.context.engine.begin() as conn:
        conn.execute(dl.insert().values(
            delete_file_id=new_id + 1, table_id=template["table_id"], begin_snapshot=template["begin_snapshot"],
            end_snapshot=None, data_file_id=new_id, path="d.parquet", path_is_relative=True, format="parquet",
            delete_count=1, file_size_bytes=10, footer_size=None, encryption_key=None, partial_max=None))
    planned = lake.plan_scan("t", version=snap)
    assert [f.delete_file.delete_file_id if f.delete_file else None for f in planned.files] == [None, None, new_id + 1]


@pytest.mark.lake(data_inlining_row_limit=0)
def test_small_tables_and_old_entries_are_not_kept(lake):
    lake.small_data_threshold = BIG
    lake.create_table("t", "id BIGINT")
    lake.write(pa.table({"id": pa.array([1], pa.int64())}), "t")
    first = lake.plan_scan("t")
    assert lake.plan_scan("t").files[0] is not first.files[0]  # under MIN_FILES: loaded each time

    cache = lake.context.file_cache = FileListCache(min_files=1, max_entries=2)
    snaps = [lake.write(pa.table({"id": pa.array([i], pa.int64())}), "t") for i in range(3)]
    for snap in snaps:
        lake.plan_scan("t", version=snap)
    assert [key[1] for key in cache._entries] == snaps[1:]
    assert len(lake.plan_scan("t", version=snaps[0]).files) == 2


@pytest.mark.lake(data_inlining_row_limit=0)
def test_compaction_under_a_cached_snapshot_reads_the_merged_file(lake, spark):
    snap = _three_files(lake)
    before = lake.plan_scan("t", version=snap)
    lake.merge_adjacent_files("t")
    after = lake.plan_scan("t", version=snap)
    assert _ids(after) != _ids(before) and len(after.files) == 1
    assert sorted(r["id"] for r in lake.read("t", version=snap).collect()) == [0, 1, 2]


@pytest.mark.lake(data_inlining_row_limit=0)
def test_another_snapshot_starts_from_the_cached_list(lake, catalog):
    """After a commit (or travelling back), only the files whose visibility changed in between are fetched; the
    result is what a load from scratch gives, delete files included, and the cached list is left as it was."""
    from spark_ducklake.catalog.reads import reader

    first = _three_files(lake)
    cached = lake.plan_scan("t", version=first).files
    second = lake.write(pa.table({"id": pa.array([7], pa.int64())}), "t")
    dl = T["ducklake_delete_file"]
    with lake.context.engine.begin() as conn:  # a delete at the second snapshot (a real one needs Spark)
        conn.execute(dl.insert().values(
            delete_file_id=10_000, table_id=cached[1].table_id, begin_snapshot=second, end_snapshot=None,
            data_file_id=cached[1].data_file_id, path="d.parquet", path_is_relative=True, format="parquet",
            delete_count=1, file_size_bytes=10, footer_size=None, encryption_key=None, partial_max=None))

    def scratch(snap):
        with lake.context.connect() as conn:
            info = reader.find_table(conn, snap, lake.context.data_path, "main", "t")
            return reader.data_files(conn, info, snap)

    later = lake.plan_scan("t", version=second).files
    assert later == scratch(second) and len(later) == 4
    assert later[0] is cached[0]  # unchanged files: the cached objects
    assert later[1].delete_file.delete_file_id == 10_000 and cached[1].delete_file is None
    lake.context.file_cache._entries.pop(next(k for k in lake.context.file_cache._entries if k[1] == first))
    back = lake.plan_scan("t", version=first).files  # from the newer list, travelling back
    assert back == scratch(first) and back[0] is later[0]

    lake.add_column("t", "x", "INTEGER")  # other columns: loaded from scratch
    third = lake.plan_scan("t").files
    assert third == scratch(lake.plan_scan("t").snapshot_id) and third[0] is not later[0]


@pytest.mark.lake(data_inlining_row_limit=0)
def test_a_first_load_fingerprints_its_rows_as_the_catalog_aggregate_does(lake):
    """A first scan takes the fingerprint from the rows it loaded (no aggregate query); it must equal the
    aggregate's, or every later scan would reload."""
    lake.small_data_threshold = BIG
    lake.create_table("t", "id BIGINT")
    for i in range(3):
        lake.write(pa.table({"id": pa.array([i, i + 10], pa.int64())}), "t")
    snap = lake.plan_scan("t").snapshot_id
    lake.delete("t", "id = 1")  # half of a file: a delete file
    for version in (snap, lake.plan_scan("t").snapshot_id):  # without and with a delete file
        info = lake.table_info("t", version=version)
        with lake.context.engine.connect() as conn:
            files, loaded = load(conn, info, version)
            assert loaded == fingerprint(conn, info.table_id, version)
        assert len(files) == 3 and any(f.delete_file for f in files) == (version != snap)
    with lake.context.engine.connect() as conn:  # an empty table: (0, None, None, ...) both ways
        lake.create_table("empty", "id BIGINT")
        info = lake.table_info("empty")
        latest = lake.plan_scan("empty").snapshot_id
        assert load(conn, info, latest)[1] == fingerprint(conn, info.table_id, latest)
