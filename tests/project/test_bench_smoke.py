"""The benchmark suite's building blocks on tiny sizes: bulk-built catalogs read like real lakes, small commits
against the peers, and the report (Markdown + PNG). No Spark, no numbers asserted."""

from __future__ import annotations

import os
import sys
from datetime import datetime, timezone

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "bench")
sys.path.insert(0, BENCH)

pytestmark = pytest.mark.duckdb_ref


def test_bulk_built_catalog_reads_as_a_lake_for_us_and_duckdb(tmp_path):
    import big_catalog
    import planning

    from spark_ducklake import DuckLake
    from spark_ducklake.duckdb_reference import attach, connect

    big = big_catalog.many_files(f"sqlite:{tmp_path / 'meta.sqlite'}", f"{tmp_path}/data/", 100, 150)
    lake = DuckLake.attach(big.catalog)
    plan = lake.plan_scan("t")
    assert len(plan.files) == 100 and len({f.path for f in plan.files}) == 100
    assert all(os.path.exists(f.path) for f in plan.files)
    assert lake.plan_scan("t", where="id < 0").files == []
    assert len(lake.plan_scan("t", where="id = 5").files) == 100
    assert len(lake.snapshots()) >= 150
    con = connect()
    attach(con, big.catalog)
    assert con.execute("SELECT count(*), sum(id) FROM lake.t").fetchone() == (100 * 100, 100 * 4950)
    con.close()
    rows = planning.measure(big, repeat=1, explicit_files=0, backend="sqlite", spark=False)
    assert {r.case for r in rows} == {"planning"} and all(r.ratio for r in rows)


def test_many_tables_listed_by_us_and_duckdb(tmp_path):
    import big_catalog
    import catalog_load

    big = big_catalog.many_tables(f"sqlite:{tmp_path / 'meta.sqlite'}", f"{tmp_path}/data/", 30, columns=4)
    rows = catalog_load.measure(big, 30, 1, "sqlite")  # asserts both list all 30 tables
    assert rows[0].ours > 0


def test_small_commits_and_report(tmp_path, monkeypatch):
    import report
    import small_commits

    # pyiceberg, deltalake and matplotlib come with the bench extra; the quick run exercises them.
    rows = small_commits.bench_rows(True, commits=20, backends=("sqlite",), peers=("duckdb",))
    assert {r.baseline_name for r in rows} == {"duckdb-ducklake (sqlite)"}
    assert all(r.ours > 0 and r.baseline > 0 for r in rows)
    monkeypatch.setenv("BENCH_RESULTS_DIR", str(tmp_path))
    text = report.markdown(rows, "smoke", datetime.now(timezone.utc), 1.0, {"small_commits": "5. Small commits"},
                           {"planning": "boom"})
    assert "| sqlite median latency vs duckdb-ducklake (sqlite) |" in text
    assert "cores" in text and "pyiceberg" in text


def test_where_we_stand_is_regenerated_from_the_results():
    """docs/benchmarks.md's table is what bench/where_we_stand.py makes of bench/results: rerun it after a bench run."""
    import where_we_stand

    with open(where_we_stand.PAGE) as fh:
        text = fh.read()
    assert where_we_stand.render(text, where_we_stand.table(where_we_stand.load_rows())) == text
    assert "merge-on-read" in text.split(where_we_stand.START, 1)[1]


def test_small_transaction_case_runs_without_spark():
    """bench/small_data.py's transaction row (issue 26, item 10): both sides run in-process, no Spark session."""
    import small_data

    row = small_data.transaction_row(None, 1)
    assert row.case == "small_data" and row.metric.startswith("transaction of 4") and row.ratio > 0


def test_tpcds_data_and_queries_come_from_duckdb(tmp_path):
    """bench/tpcds.py's inputs: dsdgen's tables as Parquet, the 99 queries, and the tables each query reads."""
    import pyarrow.parquet as pq
    import tpcds

    files, queries = tpcds.generate(str(tmp_path), 0.01, ("store", "date_dim"))
    assert sorted(queries) == list(range(1, 100))
    assert pq.read_metadata(files["date_dim"]).num_rows == 73049
    assert tpcds.used_tables(queries, [3]) == ["date_dim", "item", "store_sales"]
    assert tpcds.normalized([(1, 2.001), (0, None)]) == tpcds.normalized([(0, None), (1, 2.0)])
