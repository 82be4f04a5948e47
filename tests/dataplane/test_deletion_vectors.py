"""Deletion vectors (Iceberg deletion-vector-v1 blobs in Puffin files), as DuckDB writes them with
`write_deletion_vectors`: the codec against DuckDB's files, and scans of lakes whose deletes are vectors."""

from __future__ import annotations

import glob

import numpy as np
import pyarrow as pa
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.dataplane.arrow import deletion_vectors as dv
from tests.support.reference import attach

pytestmark = pytest.mark.not_on_mysql("the reference fails a second DELETE in a MySQL catalog")


def _duck_lake(reference, catalog: str, data: str) -> None:
    attach(reference, catalog, data, data_inlining_row_limit=0, write_deletion_vectors=True)


def test_codec_reads_duckdb_vectors_and_writes_what_it_reads(tmp_path, reference):
    _duck_lake(reference, f"sqlite:{tmp_path / 'm.sqlite'}", f"{tmp_path}/data/")
    reference.execute("CREATE TABLE lake.t AS SELECT i AS id FROM range(300000) t(i)")
    # sparse positions (array containers), a dense range (bitmap or run containers), more than one 64k bucket
    reference.execute("DELETE FROM lake.t WHERE id % 7 = 0 OR id BETWEEN 1000 AND 90000 OR id > 299990")
    expected = np.array(sorted(r[0] for r in reference.execute(
        "SELECT i FROM range(300000) t(i) WHERE i % 7 = 0 OR i BETWEEN 1000 AND 90000 OR i > 299990").fetchall()))
    (path,) = glob.glob(f"{tmp_path}/data/**/*-delete.puffin", recursive=True)
    raw = open(path, "rb").read()
    (blob,) = dv.read_blobs(raw)
    assert blob.snapshot_id is None and np.array_equal(blob.positions, expected)
    assert np.array_equal(dv.decode_blob(dv.encode_blob(expected)), expected)
    high = np.array([5, 1 << 33, (1 << 33) + 70000])  # positions past 2**32 live in their own bitmap
    assert np.array_equal(dv.decode_blob(dv.encode_blob(high)), high)
    with pytest.raises(dv.CorruptDeletionVector, match="checksum"):
        dv.decode_blob(raw[:-1] + bytes([raw[-1] ^ 1]))
    with pytest.raises(dv.CorruptDeletionVector, match="magic"):
        dv.read_blobs(raw[:4] + b"PAR1" + raw[8:])


def test_puffin_container_keeps_a_vector_per_snapshot():
    blobs = [dv.Blob(3, np.array([0, 4])), dv.Blob(5, np.array([0, 1, 4])), dv.Blob(None, np.array([0, 1, 2, 4]))]
    data, footer = dv.write_puffin(blobs, "s3://b/f.parquet")
    assert data[:4] == dv.PUFFIN_MAGIC and footer > 0
    back = dv.read_blobs(data)
    assert [(b.snapshot_id, b.positions.tolist()) for b in back] == [(3, [0, 4]), (5, [0, 1, 4]), (None, [0, 1, 2, 4])]
    positions, snapshots = dv.attributed_positions(back, begin_snapshot=3, last_snapshot=7)
    assert sorted(zip(positions.tolist(), snapshots.tolist(), strict=True)) == [(0, 3), (1, 5), (2, 7), (4, 3)]


@pytest.mark.every_backend
def test_we_read_duckdb_deletion_vectors_at_every_snapshot(catalog, tmp_path, spark, reference):
    data = f"{tmp_path}/data/"
    _duck_lake(reference, catalog, data)
    reference.execute("CREATE TABLE lake.t AS SELECT i AS id, i * 2 AS v FROM range(1000) t(i)")
    reference.execute("DELETE FROM lake.t WHERE id % 10 = 0")
    snaps = [reference.execute("SELECT max(snapshot_id) FROM lake.snapshots()").fetchone()[0]]
    reference.execute("DELETE FROM lake.t WHERE id < 50")
    snaps.append(reference.execute("SELECT max(snapshot_id) FROM lake.snapshots()").fetchone()[0])
    expected = {s: sorted(r[0] for r in reference.execute(f"SELECT id FROM lake.t AT (VERSION => {s})").fetchall())
                for s in snaps}
    duck_deletions = sorted(reference.execute(f"SELECT id, snapshot_id FROM ducklake_table_deletions('lake', 'main', "
                                              f"'t', {snaps[0]}, {snaps[1]})").fetchall())
    formats = {r[0] for r in reference.execute(
        "SELECT format FROM __ducklake_metadata_lake.ducklake_delete_file").fetchall()}
    reference.execute("DETACH lake")
    assert formats == {"puffin"}

    lake = DuckLake.attach(catalog, data, spark=spark)
    for s in snaps:
        assert sorted(r.id for r in lake.read("t", version=s).collect()) == expected[s]
    deletions = sorted((r.id, r.snapshot_id) for r in lake.table_deletions("t", snaps[0], snaps[1]).collect())
    assert deletions == duck_deletions and len(deletions) == 100 + 45
    # A further delete of ours merges DuckDB's vector into our delete file for that data file.
    lake.table("t").delete("id >= 900")
    ours = sorted(r.id for r in lake.read("t").collect())
    lake.close()
    attach(reference, catalog, data)
    assert sorted(r[0] for r in reference.execute("SELECT id FROM lake.t").fetchall()) == ours
    assert ours == [i for i in range(50, 900) if i % 10]


@pytest.mark.every_backend
def test_we_write_deletion_vectors_duckdb_reads_at_every_snapshot(catalog, tmp_path, spark, reference):
    data = f"{tmp_path}/data/"
    lake = DuckLake.attach(catalog, data, spark=spark, data_inlining_row_limit=0)
    lake.write(spark.range(2000).selectExpr("id", "id * 3 AS v").coalesce(1), "t", mode="error")
    lake.set_option("write_deletion_vectors", True)
    table = lake.table("t")
    table.delete("id % 10 = 0")  # a bare vector
    first = lake.current_snapshot()
    table.delete("id < 100 OR id BETWEEN 1000 AND 1500")  # merged with the first: one cumulative blob per snapshot
    second = lake.current_snapshot()
    ours = {s: sorted(r.id for r in lake.read("t", version=s).collect()) for s in (first, second)}
    lake.close()
    expected = {first: [i for i in range(2000) if i % 10],
                second: [i for i in range(100, 2000) if i % 10 and not 1000 <= i <= 1500]}
    assert ours == expected

    attach(reference, catalog, data)
    files = reference.execute("SELECT format, delete_count, end_snapshot IS NULL FROM "
                              "__ducklake_metadata_lake.ducklake_delete_file ORDER BY delete_file_id").fetchall()
    # As DuckDB 1.5.5 does: each vector holds every position deleted so far and ends the one before it.
    assert files == [("puffin", 200, False), ("puffin", 740, True)]
    for s, ids in expected.items():
        assert sorted(r[0] for r in reference.execute(f"SELECT id FROM lake.t AT (VERSION => {s})").fetchall()) == ids
    reference.execute("DELETE FROM lake.t WHERE id >= 1900")  # DuckDB's vector on top of ours
    theirs = sorted(r[0] for r in reference.execute("SELECT id FROM lake.t").fetchall())
    reference.execute("DETACH lake")
    lake = DuckLake.attach(catalog, data, spark=spark)
    assert sorted(r.id for r in lake.read("t").collect()) == theirs == [i for i in expected[second] if i < 1900]
    lake.close()


def _live_delete_files(lake: DuckLake) -> list[tuple]:
    with lake.context.connect() as conn:
        return [tuple(r) for r in conn.exec_driver_sql(
            "SELECT format, delete_count, footer_size > 0, begin_snapshot, partial_max FROM ducklake_delete_file "
            "WHERE end_snapshot IS NULL ORDER BY data_file_id").fetchall()]


def _binary_counts(catalog: str, data: str, versions: list[int]) -> dict[int, int]:
    from tests.support.ref11 import attach_sql, run

    script = attach_sql(catalog, data) + "".join(
        f"SELECT {v} AS v, count(*) AS n FROM lake.t AT (VERSION => {v});" for v in versions)
    return {rows[0]["v"]: rows[0]["n"] for rows in run(script)}


@pytest.mark.spark
def test_11_vector_over_a_delete_file_keeps_a_blob_per_snapshot(tmp_path, spark):
    """1.1 catalogs: a delete of a file that has a delete file writes a partial Puffin container (one cumulative
    blob per snapshot, footer_size > 0, begin at the oldest deletion, partial_max the newest) in place of the old
    file, as the 1.1 reference does (test/sql/delete/deletion_vector.test); 1.0 keeps one bare blob (above)."""
    catalog, data = f"sqlite:{tmp_path / 'm.sqlite'}", f"{tmp_path}/data/"
    lake = DuckLake.attach(catalog, data, spark=spark, ducklake_version="1.1-dev1", data_inlining_row_limit=0,
                           write_deletion_vectors=True)
    lake.write(spark.range(1000).coalesce(1), "t", mode="error")
    lake.write(spark.range(15000, 16000).coalesce(1), "t")
    created = lake.current_snapshot()
    lake.delete("t", "id % 2 = 0")
    evens = lake.current_snapshot()
    lake.delete("t", "id < 100")
    last = lake.current_snapshot()
    assert _live_delete_files(lake) == [("puffin", 550, True, evens, last), ("puffin", 500, False, evens, None)]
    counts = {v: lake.read("t", version=v).count() for v in (created, evens, last)}
    assert counts == {created: 2000, evens: 1000, last: 950}
    (container,) = [p for p in glob.glob(f"{data}**/*-delete.puffin", recursive=True)
                    if len(dv.read_blobs(open(p, "rb").read())) > 1]
    blobs = dv.read_blobs(open(container, "rb").read())
    assert [(b.snapshot_id, b.positions.size) for b in blobs] == [(evens, 500), (last, 550)]
    lake.close()
    assert _binary_counts(catalog, data, [created, evens, last]) == counts


@pytest.mark.spark
def test_11_flush_writes_inlined_file_deletes_as_vectors(tmp_path, spark):
    """1.1 catalogs with write_deletion_vectors: flushing inlined deletes of a file writes a Puffin container (the
    1.1 reference; test/sql/delete/deletion_vector_inlined_flush.test), and a later flush merges into it."""
    catalog, data = f"sqlite:{tmp_path / 'm.sqlite'}", f"{tmp_path}/data/"
    lake = DuckLake.attach(catalog, data, spark=spark, ducklake_version="1.1-dev1", data_inlining_row_limit=10,
                           write_deletion_vectors=True)
    lake.write(spark.range(100).coalesce(1), "t", mode="error")
    created = lake.current_snapshot()
    lake.delete("t", "id = 0")
    lake.delete("t", "id = 1")
    assert not glob.glob(f"{data}**/*-delete.*", recursive=True)
    lake.flush_inlined_data()
    first = lake.current_snapshot()
    (live,) = _live_delete_files(lake)
    assert live[:3] == ("puffin", 2, True)
    lake.delete("t", "id = 2")
    lake.flush_inlined_data()
    second = lake.current_snapshot()
    (live,) = _live_delete_files(lake)
    assert live[:3] == ("puffin", 3, True)
    counts = {v: lake.read("t", version=v).count() for v in (created, first, second)}
    assert counts == {created: 100, first: 98, second: 97}
    lake.close()
    assert _binary_counts(catalog, data, [created, first, second]) == counts


@pytest.mark.spark
def test_11_vector_container_restamped_when_another_commit_takes_its_snapshot(tmp_path, spark):
    """A partial Puffin container names the snapshot its commit expects; when another commit takes that id first,
    its blob is restamped (the referenced data file kept), so time travel to the other commit still sees the rows."""
    catalog, data = f"sqlite:{tmp_path / 'm.sqlite'}", f"{tmp_path}/data/"
    lake = DuckLake.attach(catalog, data, spark=spark, ducklake_version="1.1-dev1", data_inlining_row_limit=0,
                           write_deletion_vectors=True)
    lake.write(spark.range(100).coalesce(1), "t", mode="error")
    lake.delete("t", "id < 10")
    first = lake.plan_scan("t").files[0]
    with lake.transaction() as tx:
        tx.delete("t", "id BETWEEN 50 AND 59")
        other = DuckLake.attach(catalog, data, ducklake_version="1.1-dev1")
        taken = other.write(pa.table({"x": pa.array([1], pa.int64())}), "u", mode="error")
        other.close()
    deleted_at = lake.current_snapshot()
    assert deleted_at == taken + 1
    delete_file = lake.plan_scan("t").files[0].delete_file
    assert (delete_file.begin_snapshot, delete_file.partial_max, delete_file.delete_count) == (
        first.delete_file.begin_snapshot, deleted_at, 20)
    raw = open(delete_file.path, "rb").read()
    assert [(b.snapshot_id, b.positions.size) for b in dv.read_blobs(raw)] == [
        (first.delete_file.begin_snapshot, 10), (deleted_at, 20)]
    assert dv.referenced_data_file(raw) == first.path
    counts = {v: lake.read("t", version=v).count() for v in (taken, deleted_at)}
    assert counts == {taken: 90, deleted_at: 80}
    lake.close()
    assert _binary_counts(catalog, data, [taken, deleted_at]) == counts
