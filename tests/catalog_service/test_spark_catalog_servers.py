"""Where the catalog plugin runs (issue 30, item 8): the catalog tour (docs/catalog-tour.sql, which the README's
Spark SQL section points to) through a classic session, a Spark Connect server started with the plugin's jar, and
the Spark Thrift Server from the pyspark wheel queried with its beeline; each with spark_catalog_conf's confs only.

The servers are Spark's own, started as a user starts them (spark-submit with `--conf` for each of our confs): no
Python driver process, the plugin starts the catalog service itself. They run in the `servers` lane."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from spark_ducklake import spark_catalog_conf
from spark_ducklake.catalog_service import CATALOG_JAR
from tests.support.connect import client_of, connect_server
from tests.support.thrift import beeline, thrift_server

TOUR = Path(__file__).resolve().parents[2] / "docs" / "catalog-tour.sql"
# The columns and rows of each tour statement that returns rows, in the tour's order.
EXPECTED = [
    (["id", "customer", "amount"], [(1, "c1", 20.0), (3, "c3", 33.0), (4, "c4", 40.0)]),  # after UPDATE/DELETE/MERGE
    (["id", "customer", "amount"], [(1, "c1", 10.0), (2, "c2", 20.0), (3, "c3", 30.0)]),  # VERSION AS OF 3
    (["option_name", "description", "value", "scope", "scope_entry"],
     [("data_inlining_row_limit", "Maximum amount of rows to inline in a single insert", "0", "TABLE",
       "sales.orders")]),
    (["schema_name", "table_name", "files_processed", "files_created"], [("sales", "orders", 2, 1)]),
    (["customer", "n", "total"],
     [("c1", 1, 20.0), ("c3", 1, 33.0), ("c4", 1, 40.0), ("c5", 2, 100.0), ("c7", 2, 140.0)]),
    (["namespace", "tableName", "isTemporary"], [("sales", "orders", False)]),
]


def tour_statements() -> list[str]:
    """The tour's statements, comment lines dropped (each statement ends with `;` at the end of a line)."""
    text = "\n".join(line for line in TOUR.read_text().splitlines() if not line.startswith("--"))
    return [statement.strip().removesuffix(";") for statement in text.split(";\n") if statement.strip()]


def _conf(tmp_path: Path) -> dict[str, str]:
    """The catalog `lake` on a new lake in `tmp_path`, as a server's `--conf`s."""
    if not CATALOG_JAR.is_file():
        assert not os.environ.get("CI"), "CI builds the catalog plugin's jar (scripts/build_jar.sh)"
        pytest.skip("the catalog plugin's jar is not built (scripts/build_jar.sh needs a JDK)")
    return spark_catalog_conf("lake", f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"))


def _with_rows(results: list[tuple[list[str], list[tuple]]]) -> list[tuple[list[str], list[tuple]]]:
    """The results of the statements that return rows (DDL, INSERT, UPDATE, DELETE and MERGE return none)."""
    return [(columns, rows) for columns, rows in results if columns]


@pytest.mark.spark
@pytest.mark.own_session
def test_tour_in_a_classic_session(tmp_path, plugin_session):
    script = """
spark = lake_session(args)
out = []
for statement in args["statements"]:
    frame = spark.sql(statement)
    out.append([frame.columns, [list(r) for r in frame.collect()]])
"""
    args = {"url": f"sqlite:{tmp_path / 'meta.sqlite'}", "data": str(tmp_path / "data"),
            "statements": tour_statements()}
    out = plugin_session.run(script, args)
    assert _with_rows([(columns, [tuple(r) for r in rows]) for columns, rows in out]) == EXPECTED


@pytest.mark.spark
@pytest.mark.own_session
@pytest.mark.servers
def test_tour_through_a_spark_connect_server_started_with_the_jar(tmp_path):
    results = []
    with connect_server(tmp_path, conf=_conf(tmp_path)) as url, client_of(url) as spark:
        for statement in tour_statements():
            frame = spark.sql(statement)
            results.append((frame.columns, [tuple(r) for r in frame.collect()]))
    assert _with_rows(results) == EXPECTED


@pytest.fixture(scope="module")
def thrift_port(tmp_path_factory):
    """One Spark Thrift Server for the module, with the catalog `lake` on a new lake."""
    work = tmp_path_factory.mktemp("thrift")
    with thrift_server(work, conf=_conf(work)) as port:
        yield port


def _tsv(value) -> str:
    """A value as beeline's tsv2 output writes it."""
    if value is None:
        return "NULL"
    return str(value).lower() if isinstance(value, bool) else str(value)


@pytest.mark.spark
@pytest.mark.own_session
@pytest.mark.servers
def test_tour_through_the_thrift_server_with_beeline(thrift_port, tmp_path):
    run = beeline(thrift_port, TOUR)
    assert run.returncode == 0, run.stderr[-4000:]
    lines = run.stdout.splitlines()
    position = 0
    for columns, rows in EXPECTED:  # each result, in order: its header line, then its rows
        block = ["\t".join(columns), *("\t".join(_tsv(v) for v in row) for row in rows)]
        found = next((i for i in range(position, len(lines)) if lines[i:i + len(block)] == block), None)
        assert found is not None, f"{block} not in beeline's output after line {position}:\n{run.stdout}"
        position = found + len(block)

    # An error of the lake reaches beeline as Spark's analysis error, naming the table and the cause; the trace
    # the Thrift Server sends along holds Spark's frames, none of the plugin's, and no Python traceback.
    failing = tmp_path / "failing.sql"
    failing.write_text("SELECT * FROM lake.sales.orders VERSION AS OF 999;\n")
    run = beeline(thrift_port, failing)
    assert run.returncode != 0
    assert "AnalysisException: [DUCKLAKE_NOT_FOUND] sales.orders: snapshot 999 does not exist" in run.stderr
    assert "sparkducklake." not in run.stderr and "Traceback" not in run.stderr
