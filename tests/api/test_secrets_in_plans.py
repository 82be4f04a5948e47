"""No catalog password in a Spark option, conf or plan: `read_stream`, `format("ducklake")` reads and writes and the
streaming sink hand Spark's Python processes a reference to the attach string (docs/streaming.md), so neither a
Spark Connect server's event log (its plans' text: `statementText`, `details`), nor `spark.conf`, nor a plan's
string, nor py4j's DEBUG log of a classic session ever holds the password. PostgreSQL here trusts every
connection, so any password attaches."""

from __future__ import annotations

import logging
import os
import pickle
import uuid
from pathlib import Path

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake
from tests.support.connect import client_of, connect_server

PASSWORD = f"s3cretPW{uuid.uuid4().hex[:8]}"
TABLE = "leakcheck_tbl"


def _event_log_text(folder: Path) -> str:
    """Every event log file in `folder` as text, zstd-compressed ones (Spark's default) decompressed."""
    import zstandard

    texts = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if ".zst" in path.name:
            with zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True) as reader:
                data = reader.read()
        texts.append(data.decode("utf-8", "replace"))
    return "\n".join(texts)


def _plan_text(frame) -> str:
    """What Spark shows of a DataFrame's plan: the analyzed/optimized/physical plans on classic, the plan
    message a Connect server logs (its `statementText`) over Spark Connect."""
    if hasattr(frame, "_jdf"):
        return frame._jdf.queryExecution().toString()
    return str(frame._plan.to_proto(frame.sparkSession.client))


def _conf_text(spark) -> str:
    current = spark.conf.getAll
    return str(current() if callable(current) else current)


def _exercise(lake, spark, tmp_path: Path) -> list[str]:
    """read_stream (into memory and through the exactly-once sink), format('ducklake') read and write: the rows
    arrive, and the plans' text comes back."""
    lake.create_table(TABLE, "id BIGINT")
    lake.create_table("leakcheck_copy", "id BIGINT")
    lake.write(pa.table({"id": pa.array([1, 2, 3], pa.int64())}), TABLE)
    stream = lake.read_stream(TABLE)
    plans = [_plan_text(stream)] if hasattr(stream, "_plan") else []
    name = f"leakcheck_{uuid.uuid4().hex[:8]}"
    query = stream.writeStream.format("memory").queryName(name).trigger(availableNow=True).start()
    query.awaitTermination()
    assert sorted(r.id for r in spark.table(name).collect()) == [1, 2, 3]
    copy = lake.write_stream(lake.read_stream(TABLE), "leakcheck_copy", trigger={"availableNow": True},
                             checkpoint_location=str(tmp_path / "checkpoint"))
    copy.awaitTermination()
    assert sorted(lake.read_arrow("leakcheck_copy").column("id").to_pylist()) == [1, 2, 3]
    lake.register(spark)
    frame = spark.read.format("ducklake").option("table", TABLE).load()
    plans.append(_plan_text(frame))
    assert sorted(r.id for r in frame.collect()) == [1, 2, 3]
    spark.createDataFrame([(4,)], "id long").write.format("ducklake").mode("append").option("table", TABLE).save()
    assert sorted(lake.read_arrow(TABLE).column("id").to_pylist()) == [1, 2, 3, 4]
    return plans


@pytest.mark.spark
@pytest.mark.own_session
@pytest.mark.python_workers
def test_connect_event_log_plans_and_confs_hold_no_catalog_password(pg_catalog, tmp_path):
    events = tmp_path / "events"
    events.mkdir()
    catalog = f"{pg_catalog} password={PASSWORD}"
    conf = {"spark.eventLog.enabled": "true", "spark.eventLog.dir": f"file:{events}"}
    with connect_server(tmp_path, conf=conf) as url, client_of(url) as spark:
        lake = DuckLake.attach(catalog, str(tmp_path / "data"), spark=spark, data_inlining_row_limit=0)
        plans = _exercise(lake, spark, tmp_path)
        confs = _conf_text(spark)
        lake.close()
    text = _event_log_text(events)  # complete once the server has stopped
    assert TABLE in text and "statementText" in text  # the log holds the plans and their options...
    assert PASSWORD not in text  # ...but not the password
    assert PASSWORD not in confs
    for plan in plans:
        assert TABLE in plan and PASSWORD not in plan


@pytest.mark.python_workers
def test_plans_confs_and_py4j_log_hold_no_catalog_password(spark, pg_catalog, tmp_path, caplog):
    catalog = f"{pg_catalog} password={PASSWORD}"
    lake = DuckLake.attach(catalog, str(tmp_path / "data"), spark=spark, data_inlining_row_limit=0)
    try:
        with caplog.at_level(logging.DEBUG, logger="py4j"):
            plans = _exercise(lake, spark, tmp_path)
        if hasattr(spark, "_jsc"):  # classic: py4j logged the commands it sent to the JVM
            assert "Command to send" in caplog.text
        assert PASSWORD not in caplog.text
        assert PASSWORD not in _conf_text(spark)
        for plan in plans:  # a classic plan names no options at all
            assert "ducklake" in plan and PASSWORD not in plan
    finally:
        lake.close()


def test_stream_reader_and_sink_pickles_hold_no_catalog_password(pg_catalog, tmp_path):
    # What Spark pickles to its Python workers and executors (the source's settings, the foreachBatch function)
    # names a reference only; the reference resolves to the attach string in this process.
    from spark_ducklake.operations.streaming.sink import stream_writer
    from spark_ducklake.operations.streaming.source import StreamOptions

    lake = DuckLake.attach(f"{pg_catalog} password={PASSWORD}", str(tmp_path / "data"))
    try:
        lake.create_table(TABLE, "id BIGINT")
        from spark_ducklake.operations.datasource import stream_options

        options = stream_options(lake.context, TABLE)
        assert PASSWORD not in str(options)
        settings = StreamOptions.parse(options)
        assert PASSWORD.encode() not in pickle.dumps(settings)
        assert settings.attach_string().endswith(f"password={PASSWORD}")
        ref = Path(options["catalog_file"])
        assert oct(ref.stat().st_mode & 0o777) == "0o600" and oct(ref.parent.stat().st_mode & 0o777) == "0o700"
        writer = stream_writer(lake.context, TABLE, query_id="q")
        assert PASSWORD.encode() not in pickle.dumps(writer)
    finally:
        lake.close()


def test_file_catalogs_and_passwordless_servers_pass_the_string_itself(pg_catalog, tmp_path):
    # Nothing secret to hide: the attach string travels as before (a remote Connect server needs no file of ours).
    from spark_ducklake.operations.datasource import stream_options

    for catalog in (f"sqlite:{tmp_path / 'meta.sqlite'}", pg_catalog):
        lake = DuckLake.attach(catalog, str(tmp_path / "data"))
        try:
            lake.create_table(TABLE, "id BIGINT", if_not_exists=True)
            options = stream_options(lake.context, TABLE)
            assert "catalog_file" not in options and options["catalog"].startswith(catalog.split(":")[0])
        finally:
            lake.close()


def test_a_password_given_as_an_option_still_attaches_with_a_warning(pg_catalog, tmp_path, monkeypatch):
    from spark_ducklake.operations.streaming.source import StreamOptions

    with pytest.warns(UserWarning, match="catalog_file"):
        settings = StreamOptions.parse({"catalog_url": f"{pg_catalog} password={PASSWORD}", "table": TABLE})
    assert PASSWORD.encode() not in pickle.dumps(settings)  # kept out of what Spark pickles onwards
    assert settings.attach_string().endswith(f"password={PASSWORD}")
    monkeypatch.setenv("LEAKCHECK_CATALOG", f"{pg_catalog} password={PASSWORD}")
    settings = StreamOptions.parse({"catalog_env": "LEAKCHECK_CATALOG", "table": TABLE})
    assert settings.attach_string() == os.environ["LEAKCHECK_CATALOG"]
    with pytest.raises(ValueError, match="LEAKCHECK_MISSING"):
        StreamOptions.parse({"catalog_env": "LEAKCHECK_MISSING", "table": TABLE}).attach_string()
