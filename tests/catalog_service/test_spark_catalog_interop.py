"""Interop through the Spark catalog plugin (issue 30, item 9): tests/interop/test_interop.py's exchanges with DuckDB's
ducklake extension once more with plain Spark SQL as our side. What DuckDB writes (its own types, inlined and file
inserts and deletes, updates, columns added with defaults, a renamed column's name reused) reads through the
catalog, `VERSION AS OF` every snapshot, as DuckDB reads it; what Spark SQL writes through the catalog (CTAS,
INSERT, DELETE, UPDATE, MERGE, ALTER TABLE, INSERT OVERWRITE) DuckDB reads at every snapshot as the plugin reads
it; and the two take turns writing one table. Each test is one script in the plugin's shared child process
(tests/support/plugin_session.py); rows come back as `spark_rows` gives them there (tests/support/interop_data.py)."""

from __future__ import annotations

import textwrap

import pytest

from spark_ducklake import DuckLake
from tests.support.compare import duckdb_rows
from tests.support.interop_data import (
    FRAME_SQL,
    duckdb_snapshots,
    duckdb_writes_every_kind,
    unpacked_rows,
)
from tests.support.reference import attach, connect

# The `catalog` fixture's SQLite and PostgreSQL cases: a DuckDB-file catalog opens in one process at a time, and the
# child's catalog service holds it open while DuckDB writes; MySQL is tests/catalog/test_mysql_catalog.py's.
pytestmark = [pytest.mark.spark, pytest.mark.own_session,
              pytest.mark.parametrize("catalog", ["sqlite", "postgres"], indirect=True)]

# The snapshots `args["snapshots"]` of lake.main.t, each read VERSION AS OF it: its columns and rows.
READ_SNAPSHOTS = textwrap.dedent("""
    from tests.support.interop_data import packed_rows

    def read_snapshots(spark, snapshots):
        seen = {}
        for snap in snapshots:
            frame = spark.sql(f"SELECT * FROM lake.main.t VERSION AS OF {snap}")
            seen[str(snap)] = [frame.columns, packed_rows(frame)]
        return seen
""")

READ_DUCKDB_HISTORY = READ_SNAPSHOTS + textwrap.dedent("""
    spark = lake_session(args)
    out = {"snapshots": read_snapshots(spark, args["snapshots"]),
           "filtered": packed_rows(spark.sql("SELECT id, s FROM lake.main.t WHERE s = 'reused'"))}
""")


def test_spark_sql_reads_what_duckdb_writes_at_every_snapshot(catalog, tmp_path, plugin_session):
    data = str(tmp_path / "data")
    con = connect()
    attach(con, catalog, data)
    con.execute("SET TimeZone = 'UTC'")
    duckdb_writes_every_kind(con)
    expected = duckdb_snapshots(con)
    filtered = duckdb_rows(con, "SELECT id, s FROM lake.t WHERE s = 'reused'")
    con.close()

    out = plugin_session.run(READ_DUCKDB_HISTORY, {"url": catalog, "data": data, "snapshots": list(expected)})
    for snap, (cols, rows) in expected.items():
        got_cols, got = out["snapshots"][str(snap)]
        assert got_cols == cols, snap
        assert unpacked_rows(got) == rows, f"snapshot {snap}"
    # the renamed column's old name is reused: the filter Spark pushes must resolve by field id
    assert unpacked_rows(out["filtered"]) == filtered and len(filtered) == 300 - 3 - 51 + 4 + 20


WRITE_EVERY_KIND = READ_SNAPSHOTS + textwrap.dedent("""
    spark = lake_session(args)
    frame = args["frame"]

    def snapshot():
        return spark.sql("SELECT max(snapshot_id) FROM lake.main.t.snapshots").collect()[0][0]

    spark.sql(f"CREATE TABLE lake.main.t AS SELECT {frame} FROM range(500)")  # files
    first = snapshot()
    spark.sql(f"INSERT INTO lake.main.t SELECT {frame} FROM range(100)")  # files
    spark.sql(f"INSERT INTO lake.main.t SELECT {frame} FROM range(495, 500)")  # 5 rows: inlined
    spark.sql("DELETE FROM lake.main.t WHERE id % 7 = 3 OR id = 496")  # delete files, an inlined delete
    spark.sql("UPDATE lake.main.t SET s = concat(s, '-u'), maybe = NULL, l = array(-1) WHERE id % 50 = 1")
    spark.sql(f"MERGE INTO lake.main.t t USING (SELECT {frame} FROM range(600, 606) UNION ALL "
              f"SELECT {frame} FROM range(10, 12)) s ON t.id = s.id "
              "WHEN MATCHED THEN UPDATE SET s = 'merged', st = named_struct('a', -1, 'b', 'x') "
              "WHEN NOT MATCHED THEN INSERT *")
    spark.sql("ALTER TABLE lake.main.t ADD COLUMN extra INT")
    spark.sql("ALTER TABLE lake.main.t RENAME COLUMN maybe TO maybe_old")
    spark.sql(f"INSERT INTO lake.main.t SELECT {frame}, CAST(id % 5 AS INT) FROM range(700, 720)")
    spark.sql(f"INSERT OVERWRITE lake.main.t SELECT {frame}, 1 FROM range(50)")
    last = snapshot()
    out = {"first": first, "last": last, "snapshots": read_snapshots(spark, range(first, last + 1))}
""")


def test_duckdb_reads_what_spark_sql_writes_at_every_snapshot(catalog, tmp_path, plugin_session):
    data = str(tmp_path / "data")
    DuckLake.attach(catalog, data).close()  # DuckLake 1.0, as DuckDB 1.5.5's extension reads it
    out = plugin_session.run(WRITE_EVERY_KIND, {"url": catalog, "data": data, "frame": FRAME_SQL})

    con = connect()
    attach(con, catalog)
    con.execute("SET TimeZone = 'UTC'")
    expected = duckdb_snapshots(con, "lake.main.t", since=out["first"])
    assert sorted(expected) == list(range(out["first"], out["last"] + 1))
    con.close()
    for snap, (cols, rows) in expected.items():
        got_cols, got = out["snapshots"][str(snap)]
        assert got_cols == cols, snap
        assert unpacked_rows(got) == rows, f"snapshot {snap}"
    sizes = [len(expected[s][1]) for s in sorted(expected)]
    deleted = len([i for i in range(500) if i % 7 == 3 or i == 496]) + len([i for i in range(100) if i % 7 == 3])
    assert sizes[:4] == [500, 600, 605, 605 - deleted - 1], sizes
    assert sizes[-1] == 50


ALTERNATE = textwrap.dedent("""
    from tests.support.interop_data import packed_rows

    spark = lake_session(args)
    if args["turn"] == 1:
        spark.sql("CREATE TABLE lake.main.t AS SELECT * FROM VALUES (1L, 'a'), (2L, 'b'), (3L, 'c') AS v(k, v)")
        spark.sql("INSERT INTO lake.main.t SELECT id, concat('s', id) FROM range(10, 60)")
        out = {}
    else:
        spark.sql("INSERT INTO lake.main.t SELECT id, concat('s', id) FROM range(200, 230)")
        out = {"rows": packed_rows(spark.table("lake.main.t"))}
""")


def test_alternating_writers_spark_sql_and_duckdb(catalog, tmp_path, plugin_session):
    data = str(tmp_path / "data")
    DuckLake.attach(catalog, data).close()
    plugin_session.run(ALTERNATE, {"url": catalog, "data": data, "turn": 1})
    con = connect()
    attach(con, catalog)
    con.execute("INSERT INTO lake.t SELECT i, 'duck' || i FROM range(100, 150) r(i)")
    con.execute("DELETE FROM lake.t WHERE k % 10 = 0")
    con.execute("INSERT INTO lake.t VALUES (999, 'tiny')")
    con.execute("DETACH lake")
    ours = unpacked_rows(plugin_session.run(ALTERNATE, {"url": catalog, "data": data, "turn": 2})["rows"])
    attach(con, catalog)
    assert duckdb_rows(con, "SELECT k, v FROM lake.t") == ours
    assert len(ours) == 3 + 50 + 50 - 10 + 1 + 30
    con.close()
