"""The README's short tour runs as written, top to bottom, on a new lake; then DuckDB reads what it left."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.compare import duckdb_rows, spark_rows
from tests.support.reference import attach

README = Path(__file__).resolve().parents[2] / "README.md"


def tour_code() -> str:
    """The first ```python block under the README's '## A short tour' heading."""
    text = README.read_text()
    section = text.split("## A short tour", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, flags=re.S)
    assert match, "the README's tour has no python block"
    return match.group(1)


def test_readme_tour_runs_as_written(tmp_path, monkeypatch, spark, reference):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "readme_tour"}
    exec(compile(tour_code(), str(README), "exec"), namespace)  # noqa: S102 - the README is ours
    lake = namespace["lake"]
    # The tour's own claims: 1000 written, 10 deleted, 1 merged in, 1 inlined then flushed; 300 events.
    assert lake.read("sales.orders").count() == 1000 - 10 + 1 + 1
    assert lake.read("sales.orders", version=namespace["first"]).count() == 1000
    assert [s.commit_message for s in lake.snapshots() if s.commit_message] == ["events"]
    buckets = {p.name for p in (tmp_path / "tour_data" / "sales" / "events").rglob("bucket=*")}
    assert buckets == {f"bucket={i}" for i in range(4)}, buckets
    # Maintenance beyond the tour: forget the first snapshot and delete what only it needed.
    lake.expire_snapshots(versions=[namespace["first"]])
    lake.cleanup_old_files(cleanup_all=True)
    ours = {t: spark_rows(lake.read(t)) for t in ("sales.orders", "sales.events")}
    lake.close()

    attach(reference, f"sqlite:{tmp_path / 'tour.sqlite'}", str(tmp_path / "tour_data") + "/")
    for table, rows in ours.items():
        assert duckdb_rows(reference, f"SELECT * FROM lake.{table}") == rows
    assert len(ours["sales.orders"]) == 992 and len(ours["sales.events"]) == 300
    assert reference.sql("SELECT count(*) FROM lake.sales.orders WHERE id = 8").fetchone()[0] == 0  # deleted
    assert reference.sql("SELECT amount FROM lake.sales.orders WHERE id = 15").fetchone()[0] == 15 * 1.5 * 2  # c1
    assert reference.sql("SELECT amount FROM lake.sales.orders WHERE id = 20").fetchone()[0] == 1.0  # merged
