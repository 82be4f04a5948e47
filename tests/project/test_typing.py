"""The package's typing: the `Literal` types of string parameters name exactly the values the run-time checks
accept, and the wheel's py.typed marker is in the package (scripts/wheel_smoke.sh checks the built wheel)."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

import spark_ducklake
from spark_ducklake.operations.streaming.sink import StreamBatchWriter
from spark_ducklake.operations.transaction import WRITE_MODES
from spark_ducklake.spec.arguments import OutputMode, SqlDialect, StreamWriteMode, WriteMode
from spark_ducklake.sql.statements import DIALECTS


def test_literal_types_match_the_checked_values():
    assert get_args(WriteMode) == WRITE_MODES
    assert get_args(SqlDialect) == DIALECTS
    assert set(get_args(StreamWriteMode)) <= set(WRITE_MODES)
    assert get_args(OutputMode) == ("append", "complete", "update")  # Spark's DataStreamWriter.outputMode


@pytest.mark.parametrize("mode", ["error", "errorifexists", "complete"])
def test_the_sink_refuses_modes_outside_stream_write_mode(tmp_path, mode):
    """The streaming writer refuses every mode StreamWriteMode leaves out (operations/streaming/sink.py)."""
    with pytest.raises(ValueError, match="'append' or 'overwrite'"):
        StreamBatchWriter(catalog=None, data_path=str(tmp_path), table="t", query_id="q", mode=mode)


def test_py_typed_ships_in_the_package():
    assert (Path(spark_ducklake.__file__).parent / "py.typed").is_file()
