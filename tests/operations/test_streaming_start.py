"""write_stream starts a query again when a Spark Connect server's Python worker for the foreachBatch function did
not connect back within Spark's fixed 10 s (a busy server), and only then (docs/streaming.md)."""

from __future__ import annotations

import logging

import pytest

from spark_ducklake.operations.streaming.sink import START_ATTEMPTS, WORKER_TIMEOUT, start_query


class FlakyStream:
    """A DataStreamWriter whose first `failures` starts fail with `error`."""

    def __init__(self, failures: int, error: str = f"SparkException: {WORKER_TIMEOUT}."):
        self.failures, self.error, self.starts = failures, error, 0

    def start(self):
        self.starts += 1
        if self.starts <= self.failures:
            raise RuntimeError(self.error)
        return "query"


def test_a_worker_that_did_not_connect_back_is_started_again(caplog):
    stream = FlakyStream(failures=START_ATTEMPTS - 1)
    with caplog.at_level(logging.WARNING):
        assert start_query(stream) == "query"
    assert stream.starts == START_ATTEMPTS
    assert caplog.text.count("did not connect back in time") == START_ATTEMPTS - 1


def test_the_last_attempts_error_is_raised():
    stream = FlakyStream(failures=START_ATTEMPTS)
    with pytest.raises(RuntimeError, match=WORKER_TIMEOUT):
        start_query(stream)
    assert stream.starts == START_ATTEMPTS


def test_other_errors_are_not_retried():
    stream = FlakyStream(failures=1, error="[STREAMING_QUERY_ALREADY_EXISTS] a query with this name is running")
    with pytest.raises(RuntimeError, match="ALREADY_EXISTS"):
        start_query(stream)
    assert stream.starts == 1
