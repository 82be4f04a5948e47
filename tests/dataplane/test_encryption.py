"""Encrypted lakes: DuckDB's ENCRYPTED lakes read at every snapshot (deletes, updates, a later column, deletion
vectors); our appends and compactions encrypted so DuckDB reads them; our deletes, updates, merges and flushed
inlined deletes write encrypted delete files DuckDB reads; lakes we create encrypted round-trip with DuckDB
(flushed rows deleted while inlined, a restamped delete file, deletion vectors); the change feed decrypts; keys
never shown; the Thrift codec and module layout checked against DuckDB's files. The round trips run on SQLite,
DuckDB and PostgreSQL catalogs."""

from __future__ import annotations

import base64
import glob
import logging
import struct

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.dataplane.arrow.crypto import layout, thrift
from spark_ducklake.errors import CatalogError
from tests.support.reference import attach

KEYS_SQL = ("SELECT encryption_key FROM __ducklake_metadata_lake.ducklake_data_file UNION ALL "
            "SELECT encryption_key FROM __ducklake_metadata_lake.ducklake_delete_file")


# The catalogs issue 17 asks for (MySQL: the reference fails UPDATE/DELETE there; test_mysql_catalog.py): the
# every-snapshot read runs on all three; each longer round trip on two of them, every catalog in two of those
# (a round trip takes a minute on the CI machine, and the catalog holds only the keys' text).
ROUND_TRIP = pytest.mark.parametrize("catalog", ["sqlite", "duckdb", "postgres"], indirect=True)


def round_trip(*backends: str):
    return pytest.mark.parametrize("catalog", list(backends), indirect=True)


def _encrypted_lake(reference, catalog: str, data: str, *, vectors: bool = False) -> tuple[list[str], int]:
    """A DuckDB-written encrypted lake with inserts, deletes, an update and a column added (`vectors`: then a
    delete written as deletion vectors, plaintext puffin files with a key recorded): (keys, last snapshot)."""
    attach(reference, catalog, data, data_inlining_row_limit=0, encrypted=True)
    reference.execute("CREATE TABLE lake.t AS SELECT i AS id, 'v' || i AS s, (i * 1.5)::DECIMAL(10, 2) AS d, "
                      "DATE '2020-01-01' + i::INT AS day, [i, i + 1] AS l, {'a': i, 'b': 'x' || i} AS st "
                      "FROM range(2000) t(i)")
    reference.execute("DELETE FROM lake.t WHERE id < 300 OR id % 7 = 0")
    reference.execute("INSERT INTO lake.t SELECT i, NULL, 1.25, NULL, NULL, NULL FROM range(5000, 5100) t(i)")
    reference.execute("UPDATE lake.t SET s = 'updated' WHERE id % 10 = 1")
    reference.execute("BEGIN")  # one snapshot: a column added, rows written with it
    reference.execute("ALTER TABLE lake.t ADD COLUMN extra INTEGER DEFAULT 42")
    reference.execute("INSERT INTO lake.t SELECT i, 'late', 2.5, DATE '2021-01-01', [i], {'a': 1, 'b': 'y'}, i "
                      "FROM range(9000, 9050) t(i)")
    reference.execute("COMMIT")
    reference.execute("DELETE FROM lake.t WHERE id % 5 = 0")
    if vectors:
        reference.execute("CALL lake.set_option('write_deletion_vectors', true)")
        reference.execute("DELETE FROM lake.t WHERE id % 9 = 4")
    keys = [r[0] for r in reference.execute(KEYS_SQL).fetchall()]
    last = reference.execute("SELECT max(snapshot_id) FROM lake.snapshots()").fetchone()[0]
    assert all(keys) and len(keys) >= 6
    return keys, last


def _plain(value):
    """Spark Rows and DuckDB dicts alike: nested dicts/lists of plain values."""
    if hasattr(value, "asDict"):
        return {k: _plain(v) for k, v in value.asDict().items()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


@ROUND_TRIP
@pytest.mark.every_backend
def test_duckdb_encrypted_lake_reads_at_every_snapshot(tmp_path, catalog, reference, spark):
    data = f"{tmp_path}/data/"
    _keys, last = _encrypted_lake(reference, catalog, data, vectors=True)
    assert reference.execute("SELECT count(*) FROM __ducklake_metadata_lake.ducklake_delete_file "
                             "WHERE format = 'puffin' AND encryption_key IS NOT NULL").fetchone()[0] > 0
    # Fully sorted: DuckDB's deletion-vector rewrite (snapshot `last`) drops its older delete files from the catalog,
    # so earlier snapshots hold both versions of updated rows (in DuckDB too), which tie on id.
    def ordered(rows):
        return sorted(rows, key=lambda r: (r["id"], repr(r)))

    expected = {version: ordered(_rows_at(reference, version)) for version in range(2, last + 1)}
    with_extra = reference.execute("SELECT count(*) FROM lake.t WHERE extra = 42").fetchone()[0]
    reference.execute("DETACH lake")  # a DuckDB catalog file is locked while attached
    lake = DuckLake.attach(catalog, data, read_only=True, spark=spark)
    try:
        for version, rows in expected.items():
            got = ordered(_plain(r) for r in lake.read("t", version=version).collect())
            assert got == rows, f"snapshot {version}"
        assert lake.read("t", where="extra = 42").count() == with_extra
        # No AES in-process: read_arrow has Spark decrypt, and returns what lake.read(...).toArrow() does.
        arrow = lake.read_arrow("t", columns=["id", "s"], where="id > 1000")
        assert arrow.column_names == ["id", "s"]
        assert sorted(arrow.to_pylist(), key=lambda r: r["id"]) == [
            {"id": r["id"], "s": r["s"]} for r in expected[last] if r["id"] > 1000]
    finally:
        lake.close()


def test_we_write_encrypted_files_duckdb_reads_and_keys_never_shown(tmp_path, reference, spark, caplog):
    catalog, data = f"sqlite:{tmp_path / 'm.sqlite'}", f"{tmp_path}/data/"
    _encrypted_lake(reference, catalog, data)
    reference.execute("DETACH lake")
    caplog.set_level(logging.DEBUG, logger="spark_ducklake")
    lake = DuckLake.attach(catalog, data, spark=spark)
    try:
        rows = spark.sql("SELECT id + 20000 AS id, concat('w', id) AS s, CAST(id AS DECIMAL(10, 2)) AS d, "
                         "date_add(DATE'2022-01-01', CAST(id AS INT)) AS day, array(id) AS l, "
                         "named_struct('a', id, 'b', 'z') AS st, CAST(id AS INT) AS extra FROM range(3000)")
        lake.write(rows, "t")
        lake.write(rows.selectExpr("id + 10000 AS id", "s", "d", "day", "l", "st", "extra"), "t")
        lake.merge_adjacent_files("t")  # reads encrypted files (ours and DuckDB's), writes an encrypted one
        # format("ducklake") tasks cannot run Spark's AES: refused by name on the driver, before any task runs.
        lake.register(spark)
        for attempt in (lambda: spark.read.format("ducklake").option("table", "t").load().collect(),
                        lambda: rows.limit(5).write.format("ducklake").mode("append").option("table", "t").save()):
            with pytest.raises(Exception, match="cannot (read|write to) table main.t of an ENCRYPTED lake"):
                attempt()
        ours = sorted((_plain(r) for r in lake.read("t").collect()), key=lambda r: r["id"])
        plan = lake.context.plan_scan("t")
        frame = lake.read("t")
        shown = f"{caplog.text}{plan!r}{plan.files!r}"
        shown += frame._jdf.queryExecution().toString() if hasattr(frame, "_jdf") else ""
    finally:
        lake.close()
    attach(reference, catalog, data)
    rel = reference.execute("SELECT * FROM lake.t ORDER BY id")
    names = [d[0] for d in rel.description]
    assert [dict(zip(names, map(_plain, row), strict=True)) for row in rel.fetchall()] == ours
    assert len([r for r in ours if r["id"] >= 20000]) == 6000
    files = reference.execute("SELECT path, encryption_key, file_size_bytes, footer_size "
                              "FROM __ducklake_metadata_lake.ducklake_data_file").fetchall()
    for path, key, size, footer in files:
        (full,) = glob.glob(f"{data}**/{path}", recursive=True)
        raw = open(full, "rb").read()
        assert key and len(base64.b64decode(key)) == 16 and raw[:4] == raw[-4:] == b"PARE"
        assert len(raw) == size and struct.unpack("<I", raw[-8:-4])[0] == footer
    keys = [r[0] for r in reference.execute(KEYS_SQL).fetchall()]
    assert not any(key in shown or base64.b64decode(key).hex() in shown for key in keys)


FEED = ["snapshot_id", "rowid", "change_type", "id", "s"]


def _rows_at(reference, version: int) -> list[dict]:
    rel = reference.execute(f"SELECT * FROM lake.t AT (VERSION => {version}) ORDER BY id")
    names = [d[0] for d in rel.description]
    return [dict(zip(names, map(_plain, row), strict=True)) for row in rel.fetchall()]


@round_trip("sqlite", "postgres")
@pytest.mark.every_backend
def test_our_deletes_and_updates_write_encrypted_delete_files_duckdb_reads(tmp_path, catalog, reference, spark):
    data = f"{tmp_path}/data/"
    _keys, first = _encrypted_lake(reference, catalog, data)
    reference.execute("DETACH lake")
    lake = DuckLake.attach(catalog, data, spark=spark)
    try:
        # Files with a DuckDB delete file get a partial one merging it in; untouched files get a plain one.
        assert lake.delete("t", "id % 3 = 0 OR id >= 9040") > 0
        assert lake.delete("t", "id % 11 = 0") > 0  # our own encrypted delete files merged into new ones
        deleted = lake.current_snapshot()
        # The change feed decrypts DuckDB's and our data and delete files alike (on Spark, also for the arrow form).
        feed = sorted(tuple(r) for r in lake.table_changes("t", 2, deleted).select(*FEED).collect())
        arrow = lake.table_changes_arrow("t", 2, deleted).select(FEED).to_pylist()
        assert sorted(tuple(r.values()) for r in arrow) == feed
        assert lake.update("t", "id % 4 = 2", {"s": "'ours'"}) > 0
        source = spark.sql("SELECT id, 'merged' AS s FROM range(1500, 1600)")
        merged = (lake.table("t").merge(source, "target.id = source.id").when_matched_delete("source.id % 2 = 0")
                  .when_matched_update({"s": "source.s"}).execute())
        assert merged.deleted > 0 and merged.updated > 0
        assert lake.delete("t", "id % 13 = 0") > 0
        last = lake.current_snapshot()
        ours = {v: sorted((_plain(r) for r in lake.read("t", version=v).collect()), key=lambda r: r["id"])
                for v in range(first, last + 1)}
    finally:
        lake.close()
    attach(reference, catalog, data)
    for version, rows in ours.items():
        assert _rows_at(reference, version) == rows, f"snapshot {version}"
    # (Not compared past our UPDATE: DuckDB 1.5.5's table_changes fails on a lake after our updates, plain lakes
    # too: "schema mismatch in glob: column 2147483540".)
    assert feed == sorted(reference.execute(f"SELECT {', '.join(FEED)} FROM lake.table_changes('t', 2, {deleted})"
                                            ).fetchall())
    assert {r[2] for r in feed} == {"insert", "delete", "update_preimage", "update_postimage"}
    assert not [r for r in ours[last] if r["id"] % 3 == 0 or r["id"] % 11 == 0 or r["id"] % 13 == 0
                or r["id"] >= 9040]
    assert {r["s"] for r in ours[last] if r["id"] % 4 == 2} == {"ours"}
    assert {(r["id"] % 2, r["s"]) for r in ours[last] if 1500 <= r["id"] < 1600} == {(1, "merged")}
    written = reference.execute("SELECT path, encryption_key, file_size_bytes, footer_size FROM "
                                "__ducklake_metadata_lake.ducklake_delete_file WHERE end_snapshot IS NULL").fetchall()
    assert len(written) >= 2
    for path, key, size, footer in written:
        (full,) = glob.glob(f"{data}**/{path}", recursive=True)
        raw = open(full, "rb").read()
        assert key and len(base64.b64decode(key)) == 16 and raw[:4] == raw[-4:] == b"PARE"
        assert len(raw) == size and struct.unpack("<I", raw[-8:-4])[0] == footer


def test_flushing_inlined_deletes_writes_encrypted_delete_files_duckdb_reads(tmp_path, reference, spark):
    catalog, data = f"sqlite:{tmp_path / 'm.sqlite'}", f"{tmp_path}/data/"
    attach(reference, catalog, data, data_inlining_row_limit=10, encrypted=True)
    reference.execute("CREATE TABLE lake.t AS SELECT i AS id, 'v' || i AS s FROM range(500) t(i)")
    reference.execute("DELETE FROM lake.t WHERE id < 100")  # an encrypted delete file of DuckDB's
    reference.execute("DETACH lake")
    lake = DuckLake.attach(catalog, data, spark=spark)
    try:
        assert lake.delete("t", "id IN (100, 200, 300)") == 3  # inlined deletes of a Parquet file
        assert lake.delete("t", "id IN (401, 402)") == 2
        inlined = lake.current_snapshot()
        lake.flush_inlined_data(table_name="t")  # merged with DuckDB's delete file into an encrypted partial one
        ours = {v: sorted(tuple(r) for r in lake.read("t", version=v).collect()) for v in (inlined, inlined + 1)}
    finally:
        lake.close()
    attach(reference, catalog, data)
    for version, rows in ours.items():
        assert sorted(reference.execute(f"SELECT * FROM lake.t AT (VERSION => {version})").fetchall()) == rows
    assert ours[inlined] == ours[inlined + 1] and len(ours[inlined]) == 395
    (key, path, partial_max), = reference.execute(
        "SELECT encryption_key, path, partial_max FROM __ducklake_metadata_lake.ducklake_delete_file "
        "WHERE end_snapshot IS NULL").fetchall()
    assert partial_max == inlined  # written by the flush: it holds the inlined deletes
    (full,) = glob.glob(f"{data}**/{path}", recursive=True)
    assert key and open(full, "rb").read()[-4:] == b"PARE"
    changes = reference.execute(f"SELECT id FROM lake.table_deletions('t', {inlined - 1}, {inlined + 1})").fetchall()
    assert sorted(r[0] for r in changes) == [100, 200, 300, 401, 402]


def test_encrypted_attach_option_creates_and_must_match(tmp_path):
    """encrypted=True (the reference's ENCRYPTED) creates an encrypted lake; an explicit value must match an
    existing lake's, with the reference's error; None takes the lake's."""
    catalog, data = f"sqlite:{tmp_path / 'm.sqlite'}", f"{tmp_path}/data/"
    DuckLake.attach(catalog, data, encrypted=True).close()
    with pytest.raises(CatalogError, match="the database is encrypted but we requested an unencrypted"):
        DuckLake.attach(catalog, encrypted=False)
    with DuckLake.attach(catalog) as lake:
        assert lake.option("encrypted") == "true"
    plain = f"sqlite:{tmp_path / 'p.sqlite'}"
    DuckLake.attach(plain, data).close()
    with pytest.raises(CatalogError, match="the database is not encrypted but we requested an encrypted"):
        DuckLake.attach(plain, encrypted=True)


def _rows(reference, sql: str) -> list[tuple]:
    return sorted(tuple(_plain(v) for v in row) for row in reference.execute(sql).fetchall())


@round_trip("duckdb", "postgres")
@pytest.mark.every_backend
def test_we_create_an_encrypted_lake_duckdb_reads_and_writes(tmp_path, catalog, reference, spark, caplog):
    """A lake created with encrypted=True: appends (partitioned: no key=value directories, as the reference),
    flushed inlined rows deleted while inlined, a partial delete file restamped after another commit took its
    snapshot, deletion vectors (plaintext, as the reference writes them); DuckDB reads every snapshot, then writes
    encrypted files and delete files we read."""
    data = f"{tmp_path}/data/"
    caplog.set_level(logging.DEBUG, logger="spark_ducklake")
    lake = DuckLake.attach(catalog, data, encrypted=True, data_inlining_row_limit=10, spark=spark)
    try:
        lake.write(spark.sql("SELECT id, concat('v', id) AS s, id % 3 AS p FROM range(3000)"), "t", mode="error")
        lake.set_partitioning("t", ["p"])
        lake.write(spark.sql("SELECT id + 3000 AS id, 'w' AS s, id % 3 AS p FROM range(600)"), "t")
        lake.write(pa.table({"id": pa.array([9000, 9001, 9002, 9003], pa.int64()), "s": ["i"] * 4,
                             "p": pa.array([0, 1, 2, 0], pa.int64())}), "t")  # inlined
        assert lake.delete("t", "id IN (9001, 9003)") == 2  # deleted while inlined
        checked = [lake.current_snapshot()]
        lake.flush_inlined_data(table_name="t")  # encrypted file + encrypted partial delete file
        assert lake.delete("t", "id % 7 = 0") > 10  # encrypted delete files
        checked.append(lake.current_snapshot())
        with lake.transaction() as tx:
            tx.delete("t", "id % 11 = 0")  # partial files, stamped with the snapshot it expects
            other = DuckLake.attach(catalog, spark=spark)
            other.write(pa.table({"x": pa.array([1], pa.int64())}), "u", mode="error")  # takes that snapshot
            other.close()
        lake.set_option("write_deletion_vectors", True)
        assert lake.delete("t", "id % 13 = 0") > 10  # plaintext deletion vectors, old encrypted positions merged
        last = lake.current_snapshot()
        checked += [last - 2, last - 1, last]  # table u's snapshot, the restamped delete, the vectors
        ours = {v: sorted(tuple(r) for r in lake.read("t", version=v).select("id", "s", "p").collect())
                for v in checked}
        plan = lake.context.plan_scan("t")
        shown = f"{caplog.text}{plan!r}{plan.files!r}"
    finally:
        lake.close()
    attach(reference, catalog, data)
    for version, rows in ours.items():
        assert _rows(reference, f"SELECT id, s, p FROM lake.t AT (VERSION => {version})") == rows, version
    final = ours[last]
    assert not [r for r in final if r[0] % 7 == 0 or r[0] % 11 == 0 or r[0] % 13 == 0 or r[0] in (9001, 9003)]
    assert 9000 in {r[0] for r in final} and 9002 not in {r[0] for r in final}  # (9002 % 7 == 0)
    files = reference.execute("SELECT path, encryption_key FROM __ducklake_metadata_lake.ducklake_data_file "
                              "UNION ALL SELECT path, encryption_key FROM __ducklake_metadata_lake."
                              "ducklake_delete_file WHERE format = 'parquet'").fetchall()
    for path, key in files:
        assert "=" not in path  # no key=value directories on encrypted lakes, as the reference
        (full,) = glob.glob(f"{data}**/{path}", recursive=True)
        assert key and open(full, "rb").read()[-4:] == b"PARE", path
    assert not any(key in shown or base64.b64decode(key).hex() in shown for _p, key in files)
    assert reference.execute("SELECT count(*) FROM __ducklake_metadata_lake.ducklake_delete_file "
                             "WHERE format = 'puffin' AND end_snapshot IS NULL").fetchone()[0] > 0
    # DuckDB writes to the lake we created; we read what it wrote.
    reference.execute("INSERT INTO lake.t SELECT i, 'duck', i % 3 FROM range(20000, 20500) t(i)")
    reference.execute("DELETE FROM lake.t WHERE id % 17 = 0")
    expected = _rows(reference, "SELECT id, s, p FROM lake.t")
    reference.execute("DETACH lake")
    with DuckLake.attach(catalog, data, spark=spark) as lake:
        assert sorted(tuple(r) for r in lake.read("t").select("id", "s", "p").collect()) == expected


def test_footer_codec_and_module_layout_match_duckdb_files(tmp_path, reference):
    """DuckDB's encrypted files split into modules that fill the file; the decoded FileCryptoMetaData says
    AES_GCM_V1 without an AAD prefix; the Thrift codec re-encodes structs byte for byte."""
    data = f"{tmp_path}/data/"
    _encrypted_lake(reference, f"sqlite:{tmp_path / 'm.sqlite'}", data)
    for path in glob.glob(f"{data}**/*.parquet", recursive=True):
        raw = open(path, "rb").read()
        modules, crypto, footer = layout.split(raw)
        sizes = sum(4 + len(blob) for _start, blob in modules)
        assert modules[0][0] == 4 and 4 + sizes + len(crypto) + 4 + len(footer) + 8 == len(raw)
        decoded, end = thrift.decode(crypto)
        assert end == len(crypto) and thrift.encode(decoded) == crypto
        algorithm = decoded.get(1)
        assert algorithm.get(1) is not None and algorithm.get(1).get(1) is None  # AES_GCM_V1, no aad_prefix
    with pytest.raises(ValueError, match="PARE"):
        layout.split(b"PAR1" + b"\0" * 8 + b"PAR1")
    bad = b"PARE" + struct.pack("<I", 10_000) + b"\0" * 40 + struct.pack("<I", 30) + b"PARE"
    with pytest.raises(ValueError, match="bad length"):
        layout.split(bad)


def test_module_layout_round_trips_a_pyarrow_file(tmp_path):
    """Offsets and sizes survive plain -> encrypted layout -> plain: modules 'sealed' with a fake nonce and tag of
    the real sizes (the arithmetic is what is checked; Spark's AES-GCM does the sealing for real)."""
    import pyarrow as pa

    table = pa.table({"id": pa.array(range(50_000), pa.int64()), "s": [f"v{i % 37}" for i in range(50_000)],
                      "l": [[i, None] for i in range(50_000)]})
    pq.write_table(table, tmp_path / "p.parquet", row_group_size=20_000, data_page_size=4096)
    modules, footer = layout.plain_modules((tmp_path / "p.parquet").read_bytes())
    assert len(modules) > 12 and len(modules) % 2 == 0  # a header and a page each

    def seal(blob: bytes) -> bytes:
        return b"n" * 12 + blob + b"t" * 16

    sealed, footer_size = layout.encrypted_file([seal(m) for m in modules], seal(footer))
    assert sealed[-8:-4] == struct.pack("<I", footer_size)
    starts, _crypto, sealed_footer = layout.split(sealed)
    plain = layout.plaintext_file([s for s, _b in starts], [b[12:-16] for _s, b in starts], sealed_footer[12:-16])
    assert pq.read_table(pa.BufferReader(plain)).equals(table)


def test_why_pyarrow_cannot_read_duckdb_encrypted_files(tmp_path, reference):
    """Why dataplane/spark/encrypted/ exists: with the right per-file key, Arrow's Parquet decryption (which
    authenticates modules with their AAD, as Parquet modular encryption specifies) rejects DuckDB's files."""
    from pyarrow.parquet.encryption import create_decryption_properties

    data = f"{tmp_path}/data/"
    _encrypted_lake(reference, f"sqlite:{tmp_path / 'm.sqlite'}", data)
    path, key = reference.execute("SELECT path, encryption_key FROM __ducklake_metadata_lake.ducklake_data_file"
                                  ).fetchone()
    (full,) = [p for p in glob.glob(f"{data}**/{path}", recursive=True)]
    assert open(full, "rb").read()[-4:] == b"PARE"  # encrypted footer
    with pytest.raises(OSError, match="decryption"):
        pq.read_table(full, decryption_properties=create_decryption_properties(base64.b64decode(key)))


@round_trip("sqlite", "duckdb")
@pytest.mark.every_backend
def test_variant_columns_in_an_encrypted_lake_round_trip_with_duckdb(tmp_path, catalog, reference, spark):
    """Variants are written unshredded by the encrypting pyarrow writer, with Parquet's VARIANT type put in the
    footer before encryption: DuckDB decrypts and reads them (rowid and table_changes too); we read them back,
    and DuckDB's own encrypted variant files, which are shredded (spec/variant_unshred.py)."""
    data = f"{tmp_path}/data/"
    lake = DuckLake.attach(catalog, data, encrypted=True, data_inlining_row_limit=0, spark=spark)
    try:
        lake.create_table("t", "id INT, v VARIANT")
        lake.write(spark.range(3).selectExpr("CAST(id AS INT) AS id", "parse_json(concat('{\"a\": ', id, '}')) AS v"),
                   "t")
        lake.update("t", "id = 1", {"v": "parse_json('[1, \"x\"]')"})
        ours = sorted((r.id, r.v.toJson()) for r in lake.read("t").collect())
    finally:
        lake.close()
    assert ours == [(0, '{"a":0}'), (1, '[1,"x"]'), (2, '{"a":2}')]
    attach(reference, catalog, data)
    assert reference.execute("SELECT rowid, id, v FROM lake.t ORDER BY rowid").fetchall() == [
        (0, 0, {"a": 0}), (1, 1, [1, "x"]), (2, 2, {"a": 2})]
    (last,) = reference.execute("SELECT max(snapshot_id) FROM lake.snapshots()").fetchone()
    assert reference.execute(f"SELECT count(*) FROM lake.table_changes('t', 0, {last})").fetchone()[0] == 5
    paths = [r[0] for r in reference.execute("SELECT path FROM __ducklake_metadata_lake.ducklake_data_file"
                                             ).fetchall()]
    assert all(open(full, "rb").read()[-4:] == b"PARE" for p in paths for full in glob.glob(f"{data}**/{p}",
                                                                                           recursive=True))
    reference.execute("INSERT INTO lake.t VALUES (3, 42::VARIANT), (4, {'k': [1, 2], 'm': 'x'}::VARIANT)")  # shredded
    reference.execute("DETACH lake")
    with DuckLake.attach(catalog, data, spark=spark) as lake:
        got = sorted((r.id, r.v.toJson()) for r in lake.read("t").collect())
    assert got == [*ours, (3, "42"), (4, '{"k":[1,2],"m":"x"}')]
