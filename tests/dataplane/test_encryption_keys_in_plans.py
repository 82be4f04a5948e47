"""No data or delete file's AES key in a Spark plan: Spark reads, deletes (which merge a file's old encrypted delete
file) and restamps of an ENCRYPTED lake hand the executors keys wrapped under a per-session key that travels as a
session file artifact (dataplane/spark/encrypted/keys.py), so neither a Spark Connect server's event log (its plans'
text, local relations and pickled functions included) nor a plan's string holds a key, base64 or hex."""

from __future__ import annotations

import base64
import sqlite3
from pathlib import Path

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake
from tests.api.test_secrets_in_plans import _event_log_text
from tests.support.connect import client_of, connect_server

TABLE = "keycheck_tbl"


def _plan_text(frame) -> str:
    if hasattr(frame, "_jdf"):
        return frame._jdf.queryExecution().toString()
    return str(frame._plan.to_proto(frame.sparkSession.client))


def _catalog_keys(catalog_file: Path) -> list[str]:
    with sqlite3.connect(catalog_file) as db:
        rows = db.execute("SELECT encryption_key FROM ducklake_data_file UNION ALL "
                          "SELECT encryption_key FROM ducklake_delete_file").fetchall()
    return [key for (key,) in rows if key]


def _spellings(keys: list[str]) -> list[str]:
    """Each key as the catalog stores it (base64), and its bytes as hex (either case)."""
    raw = [base64.b64decode(key) for key in keys]
    return keys + [r.hex() for r in raw] + [r.hex().upper() for r in raw]


def _exercise(lake) -> list[str]:
    """Write, read, delete twice (the second merges the first's encrypted delete file), read again:
    the rows come out right, and the read plans' text comes back."""
    lake.create_table(TABLE, "id BIGINT, v VARCHAR")
    lake.write(pa.table({"id": pa.array(range(10), pa.int64()), "v": [f"v{i}" for i in range(10)]}), TABLE)
    frame = lake.read(TABLE)
    plans = [_plan_text(frame)]
    assert sorted(r.id for r in frame.collect()) == list(range(10))
    lake.delete(TABLE, "id < 2")
    lake.delete(TABLE, "id = 5")
    frame = lake.read(TABLE)
    plans.append(_plan_text(frame))
    assert sorted(r.id for r in frame.collect()) == [2, 3, 4, 6, 7, 8, 9]
    assert sorted(lake.read_arrow(TABLE, version=2).column("id").to_pylist()) == list(range(10))
    return plans


@pytest.mark.spark
@pytest.mark.own_session
def test_connect_event_log_and_plans_hold_no_encryption_key(tmp_path):
    events = tmp_path / "events"
    events.mkdir()
    catalog_file = tmp_path / "meta.sqlite"
    conf = {"spark.eventLog.enabled": "true", "spark.eventLog.dir": f"file:{events}"}
    with connect_server(tmp_path, conf=conf) as url, client_of(url) as spark:
        lake = DuckLake.attach(f"sqlite:{catalog_file}", str(tmp_path / "data"), spark=spark, encrypted=True,
                               data_inlining_row_limit=0, small_data_threshold=0)
        plans = _exercise(lake)
        lake.close()
    keys = _catalog_keys(catalog_file)
    assert len(keys) >= 3  # the data file and two delete files
    text = _event_log_text(events)  # complete once the server has stopped
    assert "statementText" in text and "LocalRelation" in text.replace("local_relation", "LocalRelation")
    for spelling in _spellings(keys):
        assert spelling not in text
        for plan in plans:
            assert spelling not in plan


def test_plans_hold_no_encryption_key(spark, tmp_path):
    catalog_file = tmp_path / "meta.sqlite"
    lake = DuckLake.attach(f"sqlite:{catalog_file}", str(tmp_path / "data"), spark=spark, encrypted=True,
                           data_inlining_row_limit=0, small_data_threshold=0)
    try:
        plans = _exercise(lake)
        keys = _catalog_keys(catalog_file)
        assert len(keys) >= 3
        for spelling in _spellings(keys):
            for plan in plans:
                assert spelling not in plan
    finally:
        lake.close()


def test_the_restamp_job_pickles_no_encryption_key(spark, monkeypatch):
    # A commit that lands on a later snapshot than it staged an encrypted delete file for re-encrypts that file
    # with its key on Spark: the function the job pickles into its plan holds the key wrapped only.
    from pyspark import cloudpickle

    from spark_ducklake.dataplane.arrow.delete_files import write_delete_file
    from spark_ducklake.dataplane.spark.encrypted import read
    from spark_ducklake.dataplane.spark.encrypted.deletes import restamp_encrypted
    from spark_ducklake.dataplane.spark.encrypted.write import new_key

    class Captured(Exception):
        pass

    handles = []

    def capture(_spark, _jobs, handle, _schema):
        handles.append(handle)
        raise Captured

    monkeypatch.setattr(read, "decrypted_map", capture)
    key = new_key()
    with pytest.raises(Captured):
        restamp_encrypted(spark, "/nowhere/delete.parquet", 1, 2, key, write_delete_file)
    pickled = cloudpickle.dumps(handles[0])
    for spelling in _spellings([key]):
        assert spelling.encode() not in pickled
