"""dbt on lake tables (issue 30, item 8): dbt-spark's session method runs the project tests/dbt_project (a `table`
model and an incremental `merge` model, with the overrides in its macros/) against a lake through the catalog
plugin, three times: on a new lake, after more source rows arrived (the merge updates some rows and inserts others),
and with nothing new; the models' tables are read with DuckLake.read and with DuckDB's ducklake extension, and each
dbt statement is one snapshot of the lake (a merge of no rows none).

dbt runs in a venv of its own (scripts/dbt_venv.sh: dbt-core 1.11 pins protobuf below what pyspark's Connect
client in .venv needs), given by SPARK_DUCKLAKE_DBT_VENV (the `servers` lane builds it) or built in .venv-dbt."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake, spark_catalog_conf
from spark_ducklake.catalog_service import CATALOG_JAR
from tests.support.compare import duckdb_rows
from tests.support.reference import attach, connect

REPO = Path(__file__).resolve().parents[2]
PROJECT = REPO / "tests" / "dbt_project"
# A classic session in dbt's process: nothing of a Connect client the test process may have set must reach it.
CONNECT_VARS = ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE")
DBT_TIMEOUT_S = 600
CUSTOMERS = ["c0", "c1", "c2", "c3", "c4"]

pytestmark = [pytest.mark.spark, pytest.mark.servers, pytest.mark.own_session]


@pytest.fixture(scope="module")
def dbt_venv() -> Path:
    """The dbt venv (SPARK_DUCKLAKE_DBT_VENV or .venv-dbt), made by scripts/dbt_venv.sh unless it is usable."""
    if not CATALOG_JAR.is_file():
        assert not os.environ.get("CI"), "CI builds the catalog plugin's jar (scripts/build_jar.sh)"
        pytest.skip("the catalog plugin's jar is not built (scripts/build_jar.sh needs a JDK)")
    venv = Path(os.environ.get("SPARK_DUCKLAKE_DBT_VENV") or REPO / ".venv-dbt")
    made = subprocess.run(["bash", str(REPO / "scripts" / "dbt_venv.sh"), str(venv)], capture_output=True,
                          text=True, env=os.environ | {"PYTHON": sys.executable}, timeout=900)
    if made.returncode != 0:
        assert not os.environ.get("CI"), f"CI builds the dbt venv (scripts/dbt_venv.sh):\n{made.stderr[-3000:]}"
        pytest.skip(f"the dbt venv cannot be built here (scripts/dbt_venv.sh, needs PyPI): {made.stderr[-500:]}")
    return venv


def orders(ids: range, day: int) -> pa.Table:
    """Source rows: order `id` of customer c<id % 5>, amount id * 10 (+ day), updated on 2026-01-<day>."""
    return pa.table({"id": pa.array(list(ids), pa.int64()),
                     "customer": [CUSTOMERS[i % 5] for i in ids],
                     "amount": [i * 10.0 + day for i in ids],
                     "updated_at": [dt.datetime(2026, 1, day, 0, 0, i % 60) for i in ids]})


def dbt_run(venv: Path, tmp_path: Path, catalog: str, data: str) -> dict[str, str]:
    """`dbt run` of the project in a subprocess; each model's status from dbt's run_results.json."""
    env = {k: v for k, v in os.environ.items() if k not in CONNECT_VARS}
    env |= {"DUCKLAKE_URL": catalog, "DUCKLAKE_DATA_PATH": data, "DUCKLAKE_JAR": str(CATALOG_JAR),
            "DUCKLAKE_PYTHON": str(venv / "bin" / "python"), "DUCKLAKE_DBT_SCHEMA": "analytics"}
    # dbt's target/ and logs/ and Spark's metastore_db/ go to tmp_path, none into the repo's project folder.
    command = [str(venv / "bin" / "dbt"), "run", "--project-dir", str(PROJECT), "--profiles-dir", str(PROJECT),
               "--target-path", str(tmp_path / "target"), "--log-path", str(tmp_path / "logs")]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=DBT_TIMEOUT_S)
    assert done.returncode == 0, f"dbt run failed:\n{done.stdout[-6000:]}\n{done.stderr[-3000:]}"
    results = json.loads((tmp_path / "target" / "run_results.json").read_text())["results"]
    return {r["unique_id"].rsplit(".", 1)[1]: r["status"] for r in results}


def totals(rows: list[tuple]) -> list[tuple]:
    """customer_totals of source rows (id, customer, amount, updated_at): (customer, orders, total)."""
    by = {}
    for _, customer, amount, _ in rows:
        n, total = by.get(customer, (0, 0.0))
        by[customer] = (n + 1, total + amount)
    return sorted((c, n, total) for c, (n, total) in by.items())


def lake_rows(lake: DuckLake, table: str) -> list[tuple]:
    return sorted(tuple(r.values()) for r in lake.read_arrow(table).to_pylist())


def new_changes(lake: DuckLake, after: int) -> list[dict[str, list[str]]]:
    """The changes of each snapshot after `after`, their values' lists sorted (table names, ids)."""
    return [{k: sorted(v) for k, v in s.changes.items()} for s in lake.snapshots() if s.snapshot_id > after]


def test_profile_carries_every_catalog_conf():
    """profiles.yml lists spark_catalog_conf's keys by hand (dbt renders it, no Python runs): none missing."""
    text = (PROJECT / "profiles.yml").read_text()
    assert re.search(r"^ +method: session$", text, re.M)
    keys = set(re.findall(r"^ +(spark\.[\w.]+):", text, re.M))
    if not CATALOG_JAR.is_file():
        assert not os.environ.get("CI"), "CI builds the catalog plugin's jar (scripts/build_jar.sh)"
        pytest.skip("the catalog plugin's jar is not built (scripts/build_jar.sh needs a JDK)")
    assert set(spark_catalog_conf("lake", "sqlite:x", "d")) | {"spark.sql.defaultCatalog"} <= keys


def test_dbt_table_and_incremental_merge_models_on_lake_tables(tmp_path, dbt_venv):
    catalog, data = f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data")
    lake = DuckLake.attach(catalog, data)  # DuckLake 1.0, as DuckDB 1.5.5's extension reads it
    lake.create_schema("raw")
    first = orders(range(1, 31), day=1)
    lake.write(first, "raw.orders", mode="error")
    before = lake.current_snapshot()

    assert dbt_run(dbt_venv, tmp_path, catalog, data) == {"customer_totals": "success", "orders_latest": "success"}
    source = sorted(tuple(r.values()) for r in first.to_pylist())
    assert lake_rows(lake, "analytics.customer_totals") == totals(source)
    assert lake_rows(lake, "analytics.orders_latest") == source
    # One snapshot per dbt statement: the schema, each model's CREATE TABLE ... AS SELECT (few rows: inlined).
    assert new_changes(lake, before) == [
        {"schemas_created": ["analytics"]},
        {"tables_created": ["analytics.customer_totals"], "inlined_insert": [
            str(lake.table_info("analytics.customer_totals").table_id)]},
        {"tables_created": ["analytics.orders_latest"], "tables_inserted_into": [
            str(lake.table_info("analytics.orders_latest").table_id)]}]

    # Orders 1-5 change (a later updated_at), 31-40 are new: the merge updates five rows and inserts ten.
    second = orders(range(1, 6), day=2)
    lake.write(pa.concat_tables([second, orders(range(31, 41), day=2)]), "raw.orders")
    before = lake.current_snapshot()
    old_totals_id = lake.table_info("analytics.customer_totals").table_id

    assert dbt_run(dbt_venv, tmp_path, catalog, data) == {"customer_totals": "success", "orders_latest": "success"}
    all_source = sorted(tuple(r.values()) for r in lake.read_arrow("raw.orders").to_pylist())
    latest = {row[0]: row for row in sorted(all_source, key=lambda row: row[3])}  # each order's newest version
    expected_latest = sorted(latest.values())
    assert len(expected_latest) == 40
    assert lake_rows(lake, "analytics.customer_totals") == totals(all_source)
    assert lake_rows(lake, "analytics.orders_latest") == expected_latest
    latest_id = lake.table_info("analytics.orders_latest").table_id
    changes = new_changes(lake, before)
    # The table model: CREATE OR REPLACE TABLE ... AS SELECT (macros/lake_table.sql), one snapshot.
    assert changes[0] == {"tables_dropped": [str(old_totals_id)], "tables_created": ["analytics.customer_totals"],
                          "inlined_insert": [str(lake.table_info("analytics.customer_totals").table_id)]}
    # The incremental model: MERGE INTO, one snapshot deleting the five old versions (inlined deletes) and
    # inserting fifteen rows (the ten new ones and the five new versions, which keep their row ids): more than
    # the inlining limit (10) together, so written as files.
    assert changes[1:] == [{"inlined_delete": [str(latest_id)], "tables_inserted_into": [str(latest_id)]}], changes

    # Nothing new in the source: the table is rebuilt (one snapshot), the merge of no rows writes none.
    before = lake.current_snapshot()
    assert dbt_run(dbt_venv, tmp_path, catalog, data) == {"customer_totals": "success", "orders_latest": "success"}
    assert [sorted(c) for c in new_changes(lake, before)] == [["inlined_insert", "tables_created", "tables_dropped"]]
    assert lake_rows(lake, "analytics.orders_latest") == expected_latest
    lake.close()

    con = connect()
    attach(con, catalog)
    con.execute("SET TimeZone = 'UTC'")
    assert duckdb_rows(con, "SELECT * FROM lake.analytics.orders_latest") == sorted(expected_latest, key=repr)
    assert duckdb_rows(con, "SELECT * FROM lake.analytics.customer_totals") == sorted(totals(all_source), key=repr)
    con.close()
