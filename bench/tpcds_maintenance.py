"""TPC-DS after its maintenance shape (issue 28, item 3): `tpcds.py --maintenance` as a run.py case."""

from __future__ import annotations

from report import Row
from tpcds import bench_rows as tpcds_rows


def bench_rows(quick: bool) -> list[Row]:
    """5% of store_sales deleted and a batch of returns MERGEd, then the queries as in `tpcds.py`."""
    return tpcds_rows(quick, maintenance=True)
