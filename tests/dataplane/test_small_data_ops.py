"""Small data without Spark, beyond reads and DML: MERGE, merge_adjacent_files and the change feed run in-process
with pyarrow (a large small-data threshold) and give what the Spark path (threshold 0) gives; DuckDB reads what the
in-process path committed."""

from __future__ import annotations

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.errors import InvalidArgumentError
from tests.dataplane.test_small_data import BIG, batch, rows_of, scenario
from tests.operations.test_change_feed import _snapshot_diffs
from tests.support.compare import duckdb_rows
from tests.support.reference import attach

FEEDS = ("table_changes", "table_insertions", "table_deletions")


def no_session(monkeypatch) -> None:
    """Fail the test if anything starts a Spark session."""
    def refuse(*_args, **_kwargs):
        raise AssertionError("a Spark session was started for small data")

    monkeypatch.setattr("spark_ducklake.dataplane.spark.session.get_or_create_spark", refuse)


def open_lake(tmp_path, name: str, threshold: int, spark=None, **options) -> DuckLake:
    return DuckLake.attach(f"sqlite:{tmp_path / name}.sqlite", str(tmp_path / name), spark=spark,
                           small_data_threshold=threshold, **options)


# ------------------------------------------------------------------------------------------ change feed
def test_change_feed_in_process_equals_spark_and_duckdb(tmp_path, spark, reference, monkeypatch):
    """Inserts (files, inlined), delete files, partial delete files, inlined deletes, updates, an ended file and
    schema changes: every feed over several ranges is the same without Spark, on Spark and on DuckDB."""
    with monkeypatch.context() as patch:
        no_session(patch)
        lake = open_lake(tmp_path, "lake", BIG)
        snaps = scenario(lake)
        ranges = [(snaps[0], snaps[-1]), (snaps[0], snaps[3]), (snaps[0], snaps[2]), (snaps[6], snaps[-1])]
        ours = {(fn, r): rows_of(getattr(lake, f"{fn}_arrow")("t", *r)) for fn in FEEDS for r in ranges}
        assert not lake.context.spark_started
        lake.close()
    assert any(row[2] == "update_postimage" for row in ours[("table_changes", ranges[0])])
    on_spark = open_lake(tmp_path, "lake", 0, spark)
    for (fn, r), rows in ours.items():
        assert rows_of(getattr(on_spark, f"{fn}_arrow")("t", *r)) == rows, (fn, r)   # collected from Spark
    assert rows_of(on_spark.table_changes("t", *ranges[0]).toArrow()) == ours[("table_changes", ranges[0])]
    on_spark.close()
    attach(reference, f"sqlite:{tmp_path / 'lake'}.sqlite", str(tmp_path / "lake"))
    # DuckDB 1.5 cannot read `rowid` from files with a list column and embedded row ids (the update's): compared
    # up to the update, as its own feed and as the feed its time travel implies
    assert _snapshot_diffs(reference, *ranges[2]) == ours[("table_changes", ranges[2])]
    for fn in FEEDS:
        head = "snapshot_id, rowid, " if fn != "table_changes" else ""
        duck = duckdb_rows(reference, f"SELECT {head}* FROM ducklake_{fn}('lake', 'main', 't', {snaps[0]}, "
                                      f"{snaps[2]})")
        assert duck == ours[(fn, ranges[2])], fn


def test_large_change_feed_goes_to_spark(lake, spark):
    lake.small_data_threshold = 1
    lake.write(batch(0, 2000), "t", mode="error")
    lake.delete("t", "id < 10")
    rows = lake.table_deletions_arrow("t", 2, lake.current_snapshot())
    assert sorted(rows.column("id").to_pylist()) == list(range(10)) and lake.context.spark_started


# ------------------------------------------------------------------------------------------ compaction
def compaction_scenario(lake: DuckLake) -> tuple[list[int], list]:
    """One-row files on a plain, a partitioned and a sorted table (two schema versions, files with row ids
    from an update), merged; the snapshots and merge_adjacent_files' rows."""
    snaps = []
    lake.create_table("t", "id BIGINT, name VARCHAR, tags ARRAY<STRING>")
    lake.create_table("p", "id BIGINT, k VARCHAR")
    lake.set_partitioning("p", ["k"])
    lake.create_table("s", "id BIGINT, v DOUBLE")
    lake.set_sorted_by("s", ["v DESC"])
    for i in range(12):
        tags = pa.array([[f"t{i}"] * (i % 3)], pa.list_(pa.string()))
        lake.write(pa.table({"id": pa.array([i], pa.int64()), "name": [f"n{i}"], "tags": tags}), "t")
        lake.write(pa.table({"id": pa.array([i, i + 100], pa.int64()), "k": [f"k{i % 2}", None]}), "p")
        lake.write(pa.table({"id": pa.array([i], pa.int64()), "v": [float((i * 7) % 5)]}), "s")
        if i == 5:
            lake.add_column("t", "extra", "INT", default=3)
        snaps.append(lake.current_snapshot())
    lake.update("s", "id = 1", {"v": "v + 10"})              # a new file carrying its row id; the old one ends
    snaps.append(lake.current_snapshot())
    rows = sorted(lake.merge_adjacent_files())
    snaps.append(lake.current_snapshot())
    return snaps, rows


def test_merge_adjacent_files_in_process_equals_spark(tmp_path, spark, reference, monkeypatch):
    lakes = {"arrow": open_lake(tmp_path, "arrow", BIG, data_inlining_row_limit=0),
             "spark": open_lake(tmp_path, "spark", 0, spark, data_inlining_row_limit=0)}
    with monkeypatch.context() as patch:
        no_session(patch)
        snaps, rows = compaction_scenario(lakes["arrow"])
        assert not lakes["arrow"].context.spark_started
        ours = {t: lakes["arrow"].table_changes_arrow(t, 0, snaps[-1]) for t in ("t", "p", "s")}
        files = {t: len(lakes["arrow"].list_files(t)) for t in ("t", "p", "s")}
    assert compaction_scenario(lakes["spark"]) == (snaps, rows)
    assert {r.table_name for r in rows} == {"t", "p", "s"} and files["t"] == 1 and files["p"] == 3
    for t in ("t", "p", "s"):
        assert len(lakes["spark"].list_files(t)) == files[t], t
        theirs = lakes["spark"].table_changes_arrow(t, 0, snaps[-1])
        assert without_row_ids(theirs) == without_row_ids(ours[t]), t
        for lake, feed in ((lakes["arrow"], ours[t]), (lakes["spark"], theirs)):   # the merge changed nothing
            assert rows_of(lake.table_changes_arrow(t, 0, snaps[-2])) == rows_of(feed), t
    for lake in lakes.values():
        lake.close()
    for name in lakes:
        attach(reference, f"sqlite:{tmp_path / name}.sqlite", str(tmp_path / name), alias=name)
        for t in ("t", "p", "s"):   # DuckDB reads the merged files: rows, row ids, snapshots as before the merge
            # (DuckDB 1.5 cannot read `rowid` from files with a list column and embedded row ids: t without it)
            head = "" if t == "t" else "rowid, "
            at = {s: duckdb_rows(reference, f"SELECT {head}* FROM {name}.{t} AT (VERSION => {s})")
                  for s in (snaps[-3], snaps[-2], snaps[-1])}
            assert at[snaps[-1]] == at[snaps[-2]] and len(at[snaps[-3]]) == len(at[snaps[-2]]), (name, t)
    sorted_v = reference.execute("SELECT v FROM arrow.s").fetchall()
    assert [r[0] for r in sorted_v] == sorted((r[0] for r in sorted_v), reverse=True)   # the sort key kept


# ------------------------------------------------------------------------------------------ MERGE
def merge_scenario(lake: DuckLake) -> tuple[list[int], list]:
    """MERGEs of pyarrow and pandas sources with every clause kind into a table of files and inlined rows; the
    snapshots and the MergeResults."""
    lake.create_table("t", "id BIGINT NOT NULL, name VARCHAR, amount DOUBLE, d DATE, tiny TINYINT, tags "
                           "ARRAY<STRING>")
    snaps, results = [lake.write(batch(0, 300), "t")], []
    snaps.append(lake.write(batch(1000, 3), "t"))                       # inlined rows
    table = lake.table("t")

    def run(builder) -> None:
        results.append(builder.execute())
        snaps.append(lake.current_snapshot())

    source = batch(290, 20).set_column(2, "amount", pa.array([float(-i) for i in range(20)]))
    run(table.merge(source, "target.id = source.id")
        .when_matched_delete("source.amount < -15")
        .when_matched_update({"amount": "target.amount + source.amount", "name": "upper(source.name)"},
                             "source.tiny % 2 = 0")
        .when_not_matched_insert_all("source.id < 305")
        .when_not_matched_by_source_update({"tiny": "target.tiny + 1"}, "target.id < 5")
        .when_not_matched_by_source_delete("target.id BETWEEN 10 AND 12"))
    pandas_source = batch(1000, 6).to_pandas()
    run(table.merge(pandas_source, "t.id = s.id AND s.tiny > 0", target_alias="t", source_alias="s")
        .when_matched_update_all()
        .when_not_matched_insert({"id": "s.id", "name": "'new'", "amount": "s.amount * 2"}))
    other = batch(100, 40).select(["id", "d", "tags"]).rename_columns(["key", "d2", "tags2"])
    run(table.merge(other, "id = key")                                  # unqualified: each on one side only
        .when_matched_update({"d": "d2", "tags": "tags2"}, "amount > 160"))
    run(table.merge(batch(5000, 2), "target.id = source.id").when_matched_delete())   # nothing matches
    return snaps, results


def without_row_ids(feed: pa.Table) -> list[tuple]:
    """A feed's rows without `rowid`: which ids a write hands out depends on how many files it writes (Spark may
    write several). Updates are still pairs of one row id (update_preimage / update_postimage)."""
    return sorted(((r[0], *r[2:]) for r in rows_of(feed)), key=repr)


def test_merge_in_process_equals_spark(tmp_path, spark, reference, monkeypatch):
    lakes = {"arrow": open_lake(tmp_path, "arrow", BIG), "spark": open_lake(tmp_path, "spark", 0, spark)}
    with monkeypatch.context() as patch:
        no_session(patch)
        snaps, results = merge_scenario(lakes["arrow"])
        assert not lakes["arrow"].context.spark_started
        ours = {s: rows_of(lakes["arrow"].read_arrow("t", version=s)) for s in snaps}
        feed = without_row_ids(lakes["arrow"].table_changes_arrow("t", snaps[1] + 1, snaps[-1]))
    assert [(r.inserted, r.updated, r.deleted) for r in results] == [(5, 10, 3), (4, 2, 0), (0, 33, 0),
                                                                     (0, 0, 0)]
    assert merge_scenario(lakes["spark"]) == (snaps, results)
    for snap in snaps:
        assert rows_of(lakes["spark"].read_arrow("t", version=snap)) == ours[snap], snap
    assert without_row_ids(lakes["spark"].table_changes_arrow("t", snaps[1] + 1, snaps[-1])) == feed
    for lake in lakes.values():
        lake.close()
    attach(reference, f"sqlite:{tmp_path / 'arrow'}.sqlite", str(tmp_path / "arrow"))
    assert duckdb_rows(reference, "SELECT * FROM lake.t") == ours[snaps[-1]]


def test_merge_errors_and_fallback_match_spark(tmp_path, spark, monkeypatch):
    lake = open_lake(tmp_path, "lake", BIG)
    lake.write(batch(0, 50), "t", mode="error")
    twice = pa.concat_tables([batch(3, 1), batch(3, 1)])
    with monkeypatch.context() as patch:
        no_session(patch)                                   # duplicate matches in-process follow DuckDB, as Spark
        lake.table("t").merge(twice, "target.id = source.id").when_matched_delete().execute()
        lake.write(batch(4, 1), "t")                                     # id 4 twice in the target
        lake.table("t").merge(batch(4, 1), "target.id = source.id").when_matched_delete().execute()
        ids = lake.read_arrow("t").column("id").to_pylist()
        assert 3 not in ids and 4 not in ids and len(ids) == 48
    lake.context.use_spark(spark)
    # outside the in-process subset (no equality, pmod): Spark merges the pyarrow source, same rules
    result = (lake.table("t").merge(batch(40, 20), "pmod(target.id, 1000) = pmod(source.id, 1000)")
              .when_matched_update({"name": "'m'"}).when_not_matched_insert_all().execute())
    assert (result.updated, result.inserted) == (10, 10) and lake.context.spark_started
    rows = lake.read_arrow("t", where="id >= 40")
    assert sorted(rows.column("name").to_pylist(), key=repr) == sorted(
        ["m"] * 10 + [r["name"] for r in batch(50, 10).to_pylist()], key=repr)
    lake.close()


# ------------------------------------------------------------------------------------------ the threshold
def test_threshold_is_an_attach_keyword_and_a_context_field(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_DUCKLAKE_SMALL_DATA_BYTES", "2MB")
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    with pytest.raises(InvalidArgumentError, match="small_data_threshold must be a number of bytes"):
        DuckLake.attach(catalog, str(tmp_path / "data"), small_data_threshold="lots")
    assert not (tmp_path / "meta.sqlite").exists()                      # refused before the catalog is made
    lake = DuckLake.attach(catalog, str(tmp_path / "data"), small_data_threshold="1MB")
    assert lake.small_data_threshold == lake.context.small_data_threshold == 10**6
    lake.small_data_threshold = 0
    assert lake.context.small_data_threshold == 0
    lake.close()
    other = DuckLake.attach(catalog)
    assert other.context.small_data_threshold is None and other.small_data_threshold == 2 * 10**6   # the env's
    other.close()


def test_in_process_merge_of_files_conflicts_like_spark(tmp_path, monkeypatch):
    """A delete committed while pyarrow writes the merged file: the merge fails and leaves no file behind."""
    from spark_ducklake.dataplane.arrow import local_compaction
    from spark_ducklake.errors import ConflictError
    from tests.support.races import commit_meanwhile

    no_session(monkeypatch)
    lake = open_lake(tmp_path, "lake", BIG, data_inlining_row_limit=0)
    lake.create_table("t", "id BIGINT")
    for i in range(3):
        lake.write(pa.table({"id": pa.array([i], pa.int64())}), "t")
    other = open_lake(tmp_path, "lake", BIG)
    original = commit_meanwhile(monkeypatch, local_compaction, "merge_units", lambda: other.delete("t", "id = 0"))
    files = {f.path for f in lake.plan_scan("t").files}
    with pytest.raises(ConflictError, match="compact"):
        lake.merge_adjacent_files("t")
    assert {str(p) for p in (tmp_path / "lake" / "main" / "t").glob("*.parquet")} == files
    monkeypatch.setattr(local_compaction, "merge_units", original)
    assert sum(r.files_processed for r in lake.merge_adjacent_files("t")) == 2   # the file with a delete stays
    assert sorted(lake.read_arrow("t").column("id").to_pylist()) == [1, 2]
    assert not lake.context.spark_started and not other.context.spark_started


# ------------------------------------------------------------------------------------------ update's arguments
def test_update_takes_condition_then_set_and_the_old_order_warns(tmp_path, monkeypatch):
    """`lake.update`, `tx.update` and `DuckLakeTable.update` all take (condition, set) as delta-spark does; the old
    `lake.update(table, set, condition)` still updates the same rows, with a DeprecationWarning at the caller."""
    no_session(monkeypatch)
    lake = open_lake(tmp_path, "lake", BIG)
    lake.create_table("t", "id BIGINT, v VARCHAR")
    lake.write(pa.table({"id": pa.array(range(10), pa.int64()), "v": ["a"] * 10}), "t")
    assert lake.update("t", "id < 2", {"v": "'new'"}) == 2
    assert lake.update("t", condition="id = 2", set={"v": "'kw'"}) == 1
    assert lake.table("t").update("id = 3", {"v": "'handle'"}) == 1
    with lake.transaction() as tx:
        assert tx.update("t", "id = 4", {"v": "'tx'"}) == 1
    with pytest.warns(DeprecationWarning, match=r"update\(table, condition, set\)") as warned:
        assert lake.update("t", {"v": "'old'"}, "id = 5") == 1
    assert warned[0].filename == __file__  # points at the caller, not at our code
    with pytest.warns(DeprecationWarning), lake.transaction() as tx:
        assert tx.update("t", {"v": "'old tx'"}, "id = 6") == 1
    rows = dict(lake.read_arrow("t").sort_by("id").to_pylist()[i].values() for i in range(7))
    assert rows == {0: "new", 1: "new", 2: "kw", 3: "handle", 4: "tx", 5: "old", 6: "old tx"}
