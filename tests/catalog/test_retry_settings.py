"""The reference's commit-retry settings, by their names: DuckLake.attach keywords, `SET`/`RESET` in lake.sql, and
the commit loop honouring them (one attempt plus ducklake_max_retry_count retries, waits as the reference's)."""

from __future__ import annotations

import time

import pytest
import sqlalchemy as sa

from spark_ducklake import DuckLake
from spark_ducklake.catalog import commit as commit_module
from spark_ducklake.errors import ConflictError, InvalidArgumentError, UnsupportedSqlError

DEFAULTS = {"ducklake_max_retry_count": 10, "ducklake_retry_wait_ms": 100, "ducklake_retry_backoff": 1.5}


def _lost_races(monkeypatch, failures: int) -> dict:
    """The next `failures` commit attempts lose a race (SQLite's busy error); sleeps are recorded, not slept."""
    seen = {"attempts": 0, "sleeps": []}
    real = commit_module._attempt

    def attempt(*args, **kwargs):
        seen["attempts"] += 1
        if seen["attempts"] <= failures:
            raise sa.exc.OperationalError("INSERT", {}, Exception("database is locked"))
        return real(*args, **kwargs)

    monkeypatch.setattr(commit_module, "_attempt", attempt)
    monkeypatch.setattr(commit_module, "time", _RecordedSleeps(seen["sleeps"]))  # commit.py's sleeps only
    return seen


class _RecordedSleeps:
    """The `time` module as commit.py sees it, its sleeps recorded instead of slept."""

    def __init__(self, sleeps: list):
        self.sleep = sleeps.append

    def __getattr__(self, name):
        return getattr(time, name)


def test_defaults_and_attach_keywords(tmp_path):
    catalog = f"sqlite:{tmp_path / 'meta.sqlite'}"
    lake = DuckLake.attach(catalog, str(tmp_path / "data"))
    assert {name: lake.current_setting(name) for name in DEFAULTS} == DEFAULTS
    lake.close()
    lake = DuckLake.attach(catalog, ducklake_max_retry_count=3, ducklake_retry_wait_ms=7, ducklake_retry_backoff=2)
    assert [lake.current_setting(n) for n in DEFAULTS] == [3, 7, 2.0]
    lake.close()


@pytest.mark.parametrize("keyword, value, message", [
    ("ducklake_max_retry_count", -1, "finite number >= 0"),
    ("ducklake_max_retry_count", 2.5, "whole number"),
    ("ducklake_retry_wait_ms", "soon", "must be a number"),
    ("ducklake_retry_backoff", float("nan"), "finite number"),
    ("ducklake_retry_backoff", True, "must be a number"),
])
def test_bad_values_are_refused(tmp_path, keyword, value, message):
    with pytest.raises(InvalidArgumentError, match=f"{keyword} {message}|{keyword} must be a {message}"):
        DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"), **{keyword: value})
    assert not (tmp_path / "meta.sqlite").exists()


def test_set_and_reset_in_sql(lake):
    lake.sql("SET ducklake_max_retry_count = 5")
    lake.sql("SET GLOBAL ducklake_retry_backoff = 2.5; SET ducklake_retry_wait_ms TO 20", dialect="duckdb")
    assert [lake.current_setting(n) for n in DEFAULTS] == [5, 20, 2.5]
    lake.sql("RESET ducklake_retry_wait_ms", dialect="duckdb")
    assert lake.current_setting("DUCKLAKE_RETRY_WAIT_MS") == 100
    with pytest.raises(UnsupportedSqlError, match="the settings it knows are ducklake_max_retry_count"):
        lake.sql("SET threads = 4")
    with pytest.raises(InvalidArgumentError, match="ducklake_max_retry_count must be a finite number >= 0"):
        lake.sql("SET ducklake_max_retry_count = -2")
    assert lake.current_setting("ducklake_max_retry_count") == 5


def test_commit_retries_as_many_times_as_set(catalog, lake, monkeypatch):
    lake.sql("SET ducklake_max_retry_count = 3; SET ducklake_retry_wait_ms = 40; SET ducklake_retry_backoff = 2")
    seen = _lost_races(monkeypatch, failures=3)
    lake.create_schema("s1")  # three lost races, then the fourth attempt commits
    assert seen["attempts"] == 4
    assert "s1" in lake.schemas()
    # The reference's waits: wait_ms * backoff^i * a random 0.5-1.0, for retries i = 0, 1, 2.
    for i, slept in enumerate(seen["sleeps"]):
        assert 0.040 * 2 ** i * 0.5 <= slept <= 0.040 * 2 ** i
    assert len(seen["sleeps"]) == 3


def test_commit_gives_up_after_max_retry_count(catalog, lake, monkeypatch):
    lake.set_setting("ducklake_max_retry_count", 2)
    before = lake.snapshots()
    seen = _lost_races(monkeypatch, failures=3)
    with pytest.raises(ConflictError, match=r"gave up after 2 retries.*SET ducklake_max_retry_count = 20"):
        lake.create_schema("s2")
    assert seen["attempts"] == 3
    assert lake.snapshots() == before and "s2" not in lake.schemas()


def test_zero_retries_fails_on_the_first_lost_race(lake, monkeypatch):
    lake.sql("SET ducklake_max_retry_count = 0")
    seen = _lost_races(monkeypatch, failures=1)
    with pytest.raises(ConflictError, match="gave up after 0 retries"):
        lake.create_schema("s3")
    assert seen["attempts"] == 1 and seen["sleeps"] == []
