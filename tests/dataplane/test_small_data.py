"""Small data without Spark: the same cases through the in-process pyarrow path (a large small-data threshold)
and the Spark path (threshold 0) give the same rows at every snapshot, and DuckDB reads what pyarrow wrote."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.errors import InvalidArgumentError, InvalidExpressionError, SchemaMismatchError
from tests.support.compare import duckdb_rows, normalize
from tests.support.reference import attach

BIG = 1 << 40  # every case of this file fits: the in-process path
COLUMNS = "id BIGINT NOT NULL, name VARCHAR, amount DOUBLE, d DATE, tiny TINYINT, tags ARRAY<STRING>"


def batch(start: int, count: int) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "name": [None if i % 11 == 0 else f"n{i % 5}" for i in ids],
        "amount": [i * 1.5 for i in ids],
        "d": [dt.date(2026, 1, 1) + dt.timedelta(days=i % 40) for i in ids],
        "tiny": pa.array([i % 100 for i in ids], pa.int8()),
        "tags": [[f"t{i % 3}"] * (i % 3) for i in ids],
    })


def scenario(lake: DuckLake) -> list[int]:
    """Writes, deletes, updates and schema changes; the snapshot ids after each step."""
    lake.create_table("t", COLUMNS)
    snaps = [lake.write(batch(0, 2000), "t")]                        # above the inlining limit: Parquet
    snaps.append(_delete(lake, "id BETWEEN 100 AND 119"))            # 20 rows: a delete file
    snaps.append(_delete(lake, "id = 5 OR id = 6"))                  # 2 rows: inlined deletes
    snaps.append(_update(lake, {"amount": "amount * 2", "name": "upper(name)"}, "id < 50"))  # row ids kept
    snaps.append(lake.add_column("t", "extra", "INT", default=7))
    snaps.append(lake.rename_column("t", "amount", "amt"))
    renamed = ["id", "name", "amt", "d", "tiny", "tags"]
    snaps.append(lake.write(batch(5000, 3).rename_columns(renamed).append_column(
        "extra", pa.array([1, 2, 3], pa.int32())), "t"))             # inlined
    snaps.append(lake.write(batch(6000, 500).rename_columns(renamed).to_pandas(), "t"))   # pandas, above the limit
    snaps.append(_update(lake, {"extra": "extra + 1"}, "id >= 5000 AND id < 5003"))  # inlined rows
    snaps.append(_delete(lake, "name = 'n3' AND tiny < 90"))         # a second delete file: partial, merged
    snaps.append(_delete(lake, "id >= 6000"))                        # a whole file: ended
    return snaps


def _delete(lake: DuckLake, condition: str) -> int:
    assert lake.delete("t", condition) > 0
    return lake.current_snapshot()


def _update(lake: DuckLake, values: dict, condition: str) -> int:
    assert lake.update("t", condition, values) > 0
    return lake.current_snapshot()


def rows_of(table: pa.Table) -> list[tuple]:
    names = table.column_names
    return sorted((tuple(normalize(row[n]) for n in names) for row in table.to_pylist()), key=repr)


def no_spark_data_jobs(monkeypatch) -> None:
    """Fail the test if any data moves on Spark (writes, deletes, scans)."""
    def refuse(*_args, **_kwargs):
        raise AssertionError("the in-process path used Spark")

    for target in ("spark_ducklake.dataplane.spark.write.write_data_files",
                   "spark_ducklake.dataplane.spark.deletes.plan_delete",
                   "spark_ducklake.dataplane.spark.deletes.stage_deletes",
                   "spark_ducklake.dataplane.spark.scan.scan_table"):
        monkeypatch.setattr(target, refuse)


# ------------------------------------------------------------------------------------------ without Spark
def test_small_data_never_starts_spark_and_duckdb_reads_it(catalog, tmp_path, monkeypatch, reference):
    """The whole scenario on a lake with no Spark session: nothing may start one; DuckDB agrees on every
    snapshot with read_arrow."""
    def no_session(*_args, **_kwargs):
        raise AssertionError("a Spark session was started for small data")

    monkeypatch.setattr("spark_ducklake.dataplane.spark.session.get_or_create_spark", no_session)
    lake = DuckLake.attach(catalog, str(tmp_path / "data"))
    lake.small_data_threshold = BIG
    snaps = scenario(lake)
    assert not lake.context.spark_started
    ours = {s: rows_of(lake.read_arrow("t", version=s, columns=["id", "name", "d", "tiny", "tags"]))
            for s in snaps if s != snaps[4]}  # the add_column snapshot has the same rows as the one before
    final = rows_of(lake.read_arrow("t"))
    kept = [r["id"] for r in batch(0, 2000).to_pylist() if not 100 <= r["id"] < 120 and r["id"] not in (5, 6)
            and not (r["name"] == "n3" and r["tiny"] < 90 and r["id"] >= 50)]   # ids below 50 became "N3"
    assert sorted(r[0] for r in final) == kept + [5000, 5001, 5002]
    lake.close()
    attach(reference, catalog, str(tmp_path / "data"))
    for snap, rows in ours.items():
        sql = f"SELECT id, name, d, tiny, tags FROM lake.t AT (VERSION => {snap})"
        assert duckdb_rows(reference, sql) == rows, snap
    assert duckdb_rows(reference, "SELECT * FROM lake.t") == final


def test_read_arrow_needs_neither_pyspark_nor_java(tmp_path):
    """read_arrow/to_pandas in a process where pyspark cannot be imported and no Java is found."""
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"))
    lake.small_data_threshold = BIG
    scenario(lake)
    expected = rows_of(lake.read_arrow("t", where="id < 60 AND name IS NOT NULL", columns=["id", "amt", "extra"]))
    lake.close()
    script = f"""
import importlib.abc, json, sys
class NoPyspark(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "pyspark":
            raise ImportError("pyspark is not installed here")
sys.meta_path.insert(0, NoPyspark())
from spark_ducklake import DuckLake
lake = DuckLake.attach({f"sqlite:{tmp_path / 'meta.sqlite'}"!r}, {str(tmp_path / 'data')!r})
table = lake.read_arrow("t", where="id < 60 AND name IS NOT NULL", columns=["id", "amt", "extra"])
frame = lake.to_pandas("t", version=3)
print(json.dumps({{"rows": table.to_pylist(), "pandas": len(frame),
                   "pyspark": sorted(m for m in sys.modules if m.startswith("pyspark"))}}))
"""
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "SPARK_HOME", "SPARK_REMOTE")}
    env["PATH"] = os.path.dirname(sys.executable)  # no java on it
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "src")
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["pyspark"] == []
    assert out["pandas"] == 2000 - 20
    assert rows_of(pa.Table.from_pylist(out["rows"])) == expected


def test_one_pyarrow_write_is_one_file_with_field_ids_and_stats(lake):
    lake.small_data_threshold = BIG
    lake.write(batch(0, 1000), "t", mode="error")
    files = lake.list_files("t")
    assert len(files) == 1 and not lake.context.spark_started
    import pyarrow.parquet as pq

    schema = pq.read_schema(files[0].data_file)
    info = lake.table_info("t")
    assert [int(f.metadata[b"PARQUET:field_id"]) for f in schema] == [c.column_id for c in info.columns]
    plan = lake.plan_scan("t", where="id > 2000")   # min/max stats from the footer prune the file
    assert plan.files == [] and plan.total_files == 1


def test_partitioned_pyarrow_write_matches_duckdb(catalog, tmp_path, reference):
    lake = DuckLake.attach(catalog, str(tmp_path / "data"))
    lake.small_data_threshold = BIG
    lake.create_table("p", "id BIGINT, k VARCHAR, ts TIMESTAMP_NTZ, z TIMESTAMP")
    lake.set_partitioning("p", ["k", "month(ts)", "bucket(4, id)", "hour(z)"])
    data = pa.table({"id": pa.array(range(300), pa.int64()), "k": [None if i % 7 == 0 else f"k{i % 3}"
                                                                   for i in range(300)],
                     "ts": [dt.datetime(2026, 1 + i % 12, 1 + i % 28, i % 24) for i in range(300)],
                     "z": pa.array([dt.datetime(2026, 5, 1, i % 3, tzinfo=dt.timezone.utc) for i in range(300)],
                                   pa.timestamp("us", tz="UTC"))})
    lake.write(data, "p")
    assert not lake.context.spark_started
    ours = rows_of(lake.read_arrow("p"))
    pruned = lake.plan_scan("p", where="k = 'k1'")
    assert 0 < len(pruned.files) < pruned.total_files
    assert rows_of(lake.read_arrow("p", where="k = 'k1'")) == [r for r in ours if r[1] == "k1"]
    paths = sorted(os.path.relpath(f.data_file, str(tmp_path / "data" / "main" / "p")).rsplit("/", 1)[0]
                   for f in lake.list_files("p"))
    lake.close()
    assert paths[0].startswith("k=__HIVE_DEFAULT_PARTITION__/month=") and "bucket=" in paths[0] and "/hour=" in paths[0]
    attach(reference, catalog, str(tmp_path / "data"))
    assert duckdb_rows(reference, "SELECT * FROM lake.p") == ours
    # DuckDB's own partition values for our files: its pruning finds the same rows
    assert duckdb_rows(reference, "SELECT * FROM lake.p WHERE k = 'k1' AND month(ts) = 2") == [
        r for r in ours if r[1] == "k1" and r[2].month == 2]


def test_read_arrow_errors_name_the_problem(lake):
    lake.small_data_threshold = BIG
    lake.write(batch(0, 20), "t", mode="error")
    with pytest.raises(InvalidExpressionError, match="nope"):
        lake.read_arrow("t", where="nope > 1")
    with pytest.raises(InvalidExpressionError, match="without Spark"):
        lake.read_arrow("t", where="pmod(id, 2) = 0")   # outside the subset: lake.read does it
    with pytest.raises(SchemaMismatchError, match="missing"):
        lake.read_arrow("t", columns=["id", "missing"])
    with pytest.raises(InvalidArgumentError, match="small_data_threshold"):
        lake.small_data_threshold = "lots"
    lake.small_data_threshold = "16MB"
    assert lake.small_data_threshold == 16 * 10**6


# ------------------------------------------------------------------------------------------ both paths
def test_both_paths_give_the_same_rows(tmp_path, spark, reference, monkeypatch):
    """The scenario on a lake changed in-process and on one changed on Spark: every snapshot reads the same on
    both, whichever path reads it; DuckDB reads the same from the pyarrow-written lake."""
    lakes = {}
    for name, threshold in (("arrow", BIG), ("spark", 0)):
        lakes[name] = DuckLake.attach(f"sqlite:{tmp_path / name}.sqlite", str(tmp_path / name), spark=spark)
        lakes[name].small_data_threshold = threshold
    with monkeypatch.context() as patch:
        no_spark_data_jobs(patch)
        snaps = scenario(lakes["arrow"])
    assert scenario(lakes["spark"]) == snaps
    for snap in snaps:
        expected = rows_of(lakes["spark"].read_arrow("t", version=snap))
        assert rows_of(lakes["arrow"].read_arrow("t", version=snap)) == expected, snap
    for snap in (snaps[1], snaps[3], snaps[-2]):  # files, deletes, partial delete files, inlined rows
        expected = rows_of(lakes["spark"].read("t", version=snap).toArrow())
        assert rows_of(lakes["arrow"].read("t", version=snap).toArrow()) == expected, snap
        assert rows_of(lakes["arrow"].read_arrow("t", version=snap)) == expected, snap
    written = lakes["arrow"].read_arrow("t")
    assert written.schema == lakes["arrow"].read("t").toArrow().schema  # the types Spark shows
    for lake in lakes.values():
        lake.close()
    attach(reference, f"sqlite:{tmp_path / 'arrow'}.sqlite", str(tmp_path / "arrow"))
    assert duckdb_rows(reference, "SELECT * FROM lake.t") == rows_of(written)


def test_conditions_outside_the_subset_go_to_spark(lake, spark):
    lake.small_data_threshold = BIG
    lake.write(batch(0, 200), "t", mode="error")
    assert lake.delete("t", "pmod(id, 10) = 3") == 20        # pmod: evaluated by Spark, same result
    assert lake.update("t", "id < 20", {"name": "concat(name, '!')"}) == 18
    rows = lake.read_arrow("t", where="id < 20")
    assert sorted(r["name"] for r in rows.to_pylist() if r["name"]) == sorted(
        f"n{i % 5}!" for i in range(1, 20) if i % 11 and i % 10 != 3)
