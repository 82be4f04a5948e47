"""`INSERT ... VALUES` of plain literals through `lake.sql` is a small inlined write: no Spark start (this file's
catalog-only tests run in the Spark-free lane, where starting a session fails), the same rows as the Spark path
(sql/literal_rows.py), and DuckDB reads them."""

from __future__ import annotations

from decimal import Decimal

import pytest

from spark_ducklake.sql import dml
from tests.support.reference import attach

TABLE = "CREATE TABLE t (i INT, d DECIMAL(10,2), s VARCHAR, b BOOLEAN, dt DATE, f DOUBLE, big BIGINT)"
INSERTS = ["INSERT INTO t VALUES (1, 2.5, 'x', true, '2024-01-02', 1.5, -9000000000), "
           "(-2, NULL, NULL, false, NULL, 3, NULL)",
           "INSERT INTO t VALUES (3, 1, 'y', NULL, '2024-02-29', -0.25, 7)"]
ROWS = [(-2, None, None, False, None, 3.0, None),
        (1, Decimal("2.50"), "x", True, "2024-01-02", 1.5, -9000000000),
        (3, Decimal("1.00"), "y", None, "2024-02-29", -0.25, 7)]


def _rows(table) -> list[tuple]:
    return sorted((tuple(str(v) if hasattr(v, "isoformat") else v for v in r.values())
                   for r in table.to_pylist()), key=lambda r: r[0])


@pytest.mark.parametrize("dialect", ["spark", "duckdb"])
def test_literal_rows_are_inlined_without_spark_and_duckdb_reads_them(lake, catalog, reference, dialect):
    lake.sql(TABLE)
    for text in INSERTS:
        (result,) = lake.sql(text, dialect=dialect)
        assert result.rows == (2 if "(-2" in text else 1)
    lake.sql("BEGIN")
    lake.sql("INSERT INTO t VALUES (4, 4, 'z', true, NULL, 4, 4)", dialect=dialect)
    lake.sql("COMMIT")
    assert not lake.context.spark_started
    expected = ROWS + [(4, Decimal("4.00"), "z", True, None, 4.0, 4)]
    assert _rows(lake.read_arrow("t")) == expected
    assert lake.list_files("t") == []  # inlined in the catalog, as the reference inlines small inserts
    attach(reference, catalog, lake.data_path)
    theirs = reference.execute("FROM lake.t ORDER BY i").fetchall()
    assert [tuple(str(v) if hasattr(v, "isoformat") else v for v in r) for r in theirs] == expected


@pytest.mark.parametrize("text", ["INSERT INTO t VALUES (1.5, 1, 'a', true, '2024-01-01', 1, 1)",  # fraction
                                  "INSERT INTO t VALUES (1, 1.234, 'a', true, '2024-01-01', 1, 1)",  # scale
                                  "INSERT INTO t VALUES (1, 1, 'a', true, 'not a date', 1, 1)",
                                  "INSERT INTO t VALUES (1, 1, 'a', true, DATE '2024-01-01', 1e3, 1)",
                                  "INSERT INTO t VALUES (1, 1, 'a', true, '2024-01-01', 1, 9223372036854775808)"])
def test_what_pyarrow_would_convert_differently_is_left_to_spark(text):
    """Values outside the plain subset give no Arrow rows (the statement then runs on Spark, as before)."""
    import sqlglot

    from spark_ducklake.spec.model import Column

    source = sqlglot.parse_one(text).expression
    columns = [Column(column_id=i, name=n, type=t) for i, (n, t) in enumerate(
        [("i", "int32"), ("d", "decimal(10,2)"), ("s", "varchar"), ("b", "boolean"), ("dt", "date"),
         ("f", "float64"), ("big", "int64")])]
    assert dml.literal_rows(source, columns) is None


def test_the_spark_path_gives_the_same_rows(lake, spark, monkeypatch):
    lake.sql(TABLE)
    for text in INSERTS:
        lake.sql(text)
    ours = _rows(lake.read_arrow("t"))
    lake.sql("CREATE TABLE u (i INT, d DECIMAL(10,2), s VARCHAR, b BOOLEAN, dt DATE, f DOUBLE, big BIGINT)")
    monkeypatch.setattr(dml, "literal_rows", lambda *_args: None)
    for text in INSERTS:
        lake.sql(text.replace("INTO t", "INTO u"))
    assert _rows(lake.read_arrow("u")) == ours == ROWS
