"""Catalog round trips of a small write on the Spark path: one short read before the data moves, one commit.

Counted with SQLAlchemy's `begin` / `commit` / `rollback` events on the lake's engine (a read-only connection ends
in a rollback) and `engine_connect` (connections checked out)."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from spark_ducklake import DuckLake
from spark_ducklake.errors import ConflictError
from spark_ducklake.operations import transaction as transaction_module


class Trips:
    """The catalog transactions and connections of the lake's engine while counting."""

    def __init__(self, engine: sa.Engine):
        self.events: list[str] = []
        self.connections = 0
        for name in ("begin", "commit", "rollback"):
            sa.event.listen(engine, name, lambda *_a, _n=name: self.events.append(_n))
        sa.event.listen(engine, "engine_connect", self._connected)

    def _connected(self, _conn) -> None:
        self.connections += 1

    def reset(self) -> None:
        self.events.clear()
        self.connections = 0


@pytest.fixture
def spark_path(monkeypatch):
    """Every write goes to Spark, however small (no in-process pyarrow writer)."""
    monkeypatch.setenv("SPARK_DUCKLAKE_SMALL_DATA_BYTES", "0")


@pytest.mark.lake(data_inlining_row_limit=0)
@pytest.mark.parametrize("catalog", ["sqlite", "postgres"], indirect=True)
def test_a_small_spark_write_is_one_read_and_one_commit(spark_path, catalog, lake, spark, tmp_path):
    frame = spark.range(50).selectExpr("id", "cast(id AS STRING) AS s")
    lake.create_table("t", "id BIGINT, s STRING")
    lake.write(frame, "t")  # the table's record is cached from here on
    # a fresh handle too: the table's record is read in the same round as the snapshot
    fresh = DuckLake.attach(catalog, str(tmp_path / "data"), spark=spark, data_inlining_row_limit=0)
    try:
        for handle in (fresh, lake):
            trips = Trips(handle.engine)
            for mode in ("append", "overwrite"):
                trips.reset()
                handle.write(frame, "t", mode)
                assert trips.events == ["begin", "rollback", "begin", "commit"], (mode, trips.events)
                assert trips.connections == 2
        trips = Trips(lake.engine)  # a table created by the write: the same
        lake.write(frame, "u", mode="error")
        assert trips.events == ["begin", "rollback", "begin", "commit"]
    finally:
        fresh.close()
    assert lake.read("t").count() == 50
    assert lake.read("u").count() == 50
    assert [s.changes for s in lake.snapshots()[-1:]] == [{"tables_created": ["main.u"],
                                                           "tables_inserted_into": ["2"]}]


@pytest.mark.lake(data_inlining_row_limit=0)
def test_the_snapshot_read_before_the_data_moves_is_what_the_commit_checks(spark_path, lake, spark, tmp_path,
                                                                            lake_catalog, monkeypatch):
    """The one read fixes the snapshot the write is based on: a drop committed while its files are written is a
    conflict, and the write's files are gone."""
    lake.create_table("t", "id BIGINT")
    other = DuckLake.attach(lake_catalog, str(tmp_path / "data"))
    staged = transaction_module.stage_write

    def racing(*args, **kwargs):
        result = staged(*args, **kwargs)
        other.drop_table("t")  # commits after the write's read, before its commit
        return result

    monkeypatch.setattr(transaction_module, "stage_write", racing)
    try:
        with pytest.raises(ConflictError):
            lake.write(spark.range(20), "t")
    finally:
        other.close()
    assert lake.tables() == []
    assert list((tmp_path / "data").rglob("*.parquet")) == []


def test_a_transaction_block_reads_its_snapshot_as_it_opens(lake):
    """`with lake.transaction()` keeps the lake as the block opened (only one-operation transactions defer it)."""
    lake.create_table("t", "id BIGINT")
    with lake.transaction() as tx:
        opened = tx.read_snapshot
        lake.create_table("u", "id BIGINT")  # commits on its own while the block is open
        assert tx.read_snapshot == opened
        tx.create_table("v", "id BIGINT")
    assert tx.snapshot_id == opened + 2
