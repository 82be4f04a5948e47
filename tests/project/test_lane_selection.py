"""The lanes' `-m` expressions (scripts/test.sh): a Spark-free lane forbids starting Spark (tests/conftest.py), so
an expression is Spark-free only when no test marked `spark` passes it, whatever that test's other marks."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import selects_no_spark

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "test.sh"


def _free(expression: str) -> bool:
    return selects_no_spark(SimpleNamespace(getoption=lambda *_: expression))


@pytest.mark.parametrize(("expression", "free"), [
    ("not spark and not cluster and not s3", True),
    ("(spark or s3) and not spark", True),
    ("spark and python_workers and not own_session", False),  # only a test with both marks and not the third
    ("spark and not python_workers", False),
    ("s3", False),
])
def test_an_expression_is_spark_free_only_when_no_spark_test_passes(expression, free, monkeypatch):
    monkeypatch.delenv("SPARK_DUCKLAKE_TEST_NO_SPARK", raising=False)
    assert _free(expression) is free


def test_only_the_catalog_lane_is_spark_free(monkeypatch):
    monkeypatch.delenv("SPARK_DUCKLAKE_TEST_NO_SPARK", raising=False)
    expressions = re.findall(r'-m "([^"]+)"', SCRIPT.read_text())
    assert len(expressions) >= 5
    assert [e for e in expressions if _free(e)] == ["not spark and not cluster and not s3"]
