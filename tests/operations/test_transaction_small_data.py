"""A transaction on small data stays in-process (issue 26, item 10): a write, a DELETE and an UPDATE that see it, and
another write, staged in one `lake.transaction()` or one `lake.sql` BEGIN ... COMMIT, start no Spark session and
leave the table as the same four statements committed one by one do; DuckDB reads every snapshot as we do."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa

from spark_ducklake import DuckLake
from tests.support.reference import attach

COLUMNS = "id BIGINT NOT NULL, name VARCHAR, amount DOUBLE, d DATE, tiny TINYINT"
NAMES = ("id", "name", "amount", "d", "tiny")
SIZE = 5_000  # rows of the table the statements change (the issue had 20,000: bench/small_data.py)
SMALL = "64MB"  # the default threshold, set explicitly: SPARK_DUCKLAKE_SMALL_DATA_BYTES=0 runs must not change it
DELETE = "id % 10 = 3"
# original rows in the file and inlined ones, and rows the transaction's first write added
UPDATE_WHERE = "id < 1000 OR id >= 100400 OR (id >= 30000 AND id < 30005)"
UPDATE_SET = {"amount": "amount * 2", "name": "upper(name)"}


def batch(start: int, count: int) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "name": [None if i % 11 == 0 else f"n{i % 5}" for i in ids],
        "amount": [i * 1.5 for i in ids],
        "d": [dt.date(2026, 1, 1) + dt.timedelta(days=i % 40) for i in ids],
        "tiny": pa.array([i % 100 for i in ids], pa.int8()),
    })


def values_sql(rows: pa.Table) -> str:
    """The rows as an INSERT's VALUES list of plain literals (lake.sql writes those with pyarrow)."""
    def literal(value) -> str:
        if value is None:
            return "NULL"
        return f"'{value}'" if isinstance(value, str | dt.date) else repr(value)

    return ", ".join("(" + ", ".join(literal(row[n]) for n in NAMES) + ")" for row in rows.to_pylist())


def prepare(lake: DuckLake, size: int, *tables: str) -> None:
    """`size` + 5 rows in each table: a Parquet file and five inlined rows."""
    for table in tables:
        lake.create_table(table, COLUMNS)
        lake.write(batch(0, size), table)
        lake.write(batch(30_000, 5), table)


def changes(target, table: str) -> tuple[int, int]:
    """The four statements on a lake (four commits) or a transaction (one); the rows deleted and updated."""
    target.write(batch(100_000, 500), table)
    deleted = target.delete(table, DELETE)
    updated = target.update(table, UPDATE_WHERE, UPDATE_SET)
    target.write(batch(200_000, 3), table)
    return deleted, updated


def sql_changes(lake: DuckLake, table: str) -> None:
    """The same four statements in one lake.sql BEGIN ... COMMIT."""
    sets = ", ".join(f"{k} = {v}" for k, v in UPDATE_SET.items())
    lake.sql("BEGIN")
    lake.sql(f"INSERT INTO {table} VALUES {values_sql(batch(100_000, 500))}")
    lake.sql(f"DELETE FROM {table} WHERE {DELETE}")
    lake.sql(f"UPDATE {table} SET {sets} WHERE {UPDATE_WHERE}")
    lake.sql(f"INSERT INTO {table} VALUES {values_sql(batch(200_000, 3))}")
    lake.sql("COMMIT")


def forbid_spark(monkeypatch) -> None:
    """Fail the test if anything starts a Spark session."""
    from pyspark.sql import SparkSession

    def refuse(*_args, **_kwargs):
        raise AssertionError("a Spark session was started for a small transaction")

    monkeypatch.setattr("spark_ducklake.operations.context.get_or_create_spark", refuse)
    monkeypatch.setattr("spark_ducklake.dataplane.spark.session.get_or_create_spark", refuse)
    monkeypatch.setattr(SparkSession.Builder, "getOrCreate", refuse)
    monkeypatch.setattr(SparkSession.Builder, "create", refuse)


def rows(lake: DuckLake, table: str, version: int | None = None) -> pa.Table:
    """The table's rows as read_arrow reads them, in id order (ids are unique)."""
    return lake.read_arrow(table, version=version, columns=list(NAMES)).sort_by("id").combine_chunks()


def history(lake: DuckLake, first: int, tables: tuple[str, ...]) -> dict:
    """Every table at every snapshot from `first` on, as read_arrow reads it."""
    return {(t, s): rows(lake, t, s) for s in range(first, lake.current_snapshot() + 1) for t in tables}


def duckdb_reads(reference, catalog: str, data: str, ours: dict) -> dict:
    """DuckDB reads every (table, snapshot) of `ours` as we do (the lake closed first: a DuckDB catalog file is
    opened by one process); returns DuckDB's final rows with their row ids, by table."""
    attach(reference, catalog, data)
    select = ", ".join(NAMES)
    for (table, snap), expected in ours.items():
        theirs = reference.execute(f"SELECT {select} FROM lake.{table} AT (VERSION => {snap}) ORDER BY id")
        assert theirs.to_arrow_table().cast(expected.schema).equals(expected), (table, snap)
    tables = sorted({t for t, _ in ours})
    final = {t: reference.execute(f"SELECT rowid, {select} FROM lake.{t} ORDER BY id").fetchall() for t in tables}
    reference.execute("DETACH lake")
    return final


def same_rows_and_ids(one: list[tuple], other: list[tuple], size: int) -> None:
    """The same rows (as DuckDB reads them, row id first, in id order); the rows that existed before the four
    statements keep the same row ids (an update keeps them; new rows get theirs at COMMIT)."""
    assert [r[1:] for r in one] == [r[1:] for r in other]
    old = [r for r in one if r[1] < 100_000]
    assert old == [r for r in other if r[1] < 100_000] and len(old) == size + 5 - size // 10 - 1


def test_python_transaction_stays_in_process(catalog, tmp_path, monkeypatch, reference):
    data = str(tmp_path / "data")
    lake = DuckLake.attach(catalog, data, small_data_threshold=SMALL)
    prepare(lake, SIZE, "a", "b")
    first = lake.current_snapshot()
    with monkeypatch.context() as patch:
        forbid_spark(patch)
        committed = changes(lake, "a")
        before = lake.current_snapshot()
        with lake.transaction() as tx:
            staged = changes(tx, "b")
        assert not lake.context.spark_started
    assert lake.current_snapshot() == before + 1  # one snapshot
    assert staged == committed == (551, 994)
    assert rows(lake, "a").equals(rows(lake, "b"))
    ours = history(lake, first, ("a", "b"))
    lake.close()
    final = duckdb_reads(reference, catalog, data, ours)
    same_rows_and_ids(final["a"], final["b"], SIZE)


def test_sql_transaction_stays_in_process(catalog, tmp_path, monkeypatch, reference):
    data = str(tmp_path / "data")
    lake = DuckLake.attach(catalog, data, small_data_threshold=SMALL)
    prepare(lake, SIZE, "a", "b")
    first = lake.current_snapshot()
    with monkeypatch.context() as patch:
        forbid_spark(patch)
        changes(lake, "a")
        before = lake.current_snapshot()
        sql_changes(lake, "b")
        assert not lake.context.spark_started
    assert lake.current_snapshot() == before + 1
    assert rows(lake, "a").equals(rows(lake, "b"))
    ours = history(lake, first, ("a", "b"))
    lake.close()
    final = duckdb_reads(reference, catalog, data, ours)
    same_rows_and_ids(final["a"], final["b"], SIZE)


def test_in_process_transaction_equals_spark(tmp_path, spark, reference):
    """The same transaction with everything on Spark (threshold 0) commits the same rows, the same row ids for
    the rows that existed before, and the same number of deleted and updated rows."""
    final, counts = {}, {}
    for name, threshold in (("arrow", SMALL), ("spark", 0)):
        catalog, data = f"sqlite:{tmp_path / name}.sqlite", str(tmp_path / name)
        lake = DuckLake.attach(catalog, data, spark=spark, small_data_threshold=threshold)
        prepare(lake, 2_000, "b")
        first = lake.current_snapshot()
        with lake.transaction() as tx:
            counts[name] = changes(tx, "b")
        ours = history(lake, first, ("b",))
        lake.close()
        final[name] = duckdb_reads(reference, catalog, data, ours)["b"]
    assert counts["arrow"] == counts["spark"] == (251, 994)
    same_rows_and_ids(final["spark"], final["arrow"], 2_000)
