"""The data of the interop tests, shared by the Python API's (tests/interop/test_interop.py) and the Spark catalog
plugin's (tests/catalog_service/test_spark_catalog_interop.py): a 17-column frame of Spark's types, DuckDB's inserts
of its own types, and rows passed from the plugin's child process to the test as they were read there."""

from __future__ import annotations

import base64
import pickle

from tests.support.compare import duckdb_rows, duckdb_select, spark_rows

# The 17 columns, as Spark SQL expressions over `range(n)`'s `id`: every Spark type we write, nested ones, a
# column with NULLs. Each expression stands alone (no lateral aliases), so it is a CTAS's or INSERT's SELECT list.
FRAME_EXPRESSIONS = (
    "id",
    "CAST(id AS INT) AS i",
    "concat('row-', CAST(id AS STRING)) AS s",
    "date_add(DATE'2024-01-01', CAST(id AS INT)) AS d",
    "CAST(timestamp_seconds(1700000000 + id) AS TIMESTAMP_NTZ) AS ts",
    "timestamp_seconds(1700000000 + id * 7) AS tstz",
    "CAST(id / 3 AS DOUBLE) AS f",
    "CAST(id / 7 AS FLOAT) AS r",
    "CAST(id / 100 AS DECIMAL(12,2)) AS dec",
    "id % 2 = 0 AS b",
    "encode(concat('row-', CAST(id AS STRING)), 'utf-8') AS bin",
    "CAST(id % 100 AS TINYINT) AS small",
    "CAST(id % 1000 AS SMALLINT) AS short",
    "array(CAST(id AS INT), CAST(id AS INT) + 1) AS l",
    "named_struct('a', CAST(id AS INT), 'b', concat('row-', CAST(id AS STRING))) AS st",
    "map(concat('row-', CAST(id AS STRING)), CAST(id / 3 AS DOUBLE)) AS m",
    "CASE WHEN id % 3 = 0 THEN NULL ELSE concat('row-', CAST(id AS STRING)) END AS maybe",
)
FRAME_SQL = ", ".join(FRAME_EXPRESSIONS)
COLUMNS = "id, i, s, d, ts, tstz, f, r, dec, b, bin, small, short, l, st, m, maybe"


def spark_frame(spark, n: int):
    """The 17-column frame of ids 0..n-1."""
    return spark.range(n).selectExpr(*FRAME_EXPRESSIONS)


# DuckDB's types, those Spark has no type of its own for among them (uuid, time, timestamp_ns, ubigint, json):
# they read as docs/types.md maps them.
DUCK_TYPES = (
    "id BIGINT, i INTEGER, s VARCHAR, d DATE, ts TIMESTAMP, tstz TIMESTAMPTZ, f DOUBLE, r FLOAT, "
    "dec DECIMAL(12,2), b BOOLEAN, bin BLOB, small TINYINT, short SMALLINT, l INTEGER[], "
    "st STRUCT(a INTEGER, b VARCHAR), m MAP(VARCHAR, DOUBLE), u UUID, t TIME, ns TIMESTAMP_NS, "
    "big UBIGINT, j JSON, nested STRUCT(x INTEGER[], y STRUCT(z VARCHAR))[]"
)


def duck_insert(con, n: int, start: int = 0, extra: str = "") -> None:
    """Insert rows start..start+n-1 of DUCK_TYPES into `lake.t` (`extra`: more SELECT items, for added columns)."""
    con.execute(
        "INSERT INTO lake.t SELECT i::BIGINT, i, 'row-' || i, DATE '2024-01-01' + i::INT, "
        "TIMESTAMP '2024-01-01' + to_seconds(i), TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_seconds(i * 7), "
        "i / 3, (i / 7)::FLOAT, (i / 100)::DECIMAL(12,2), i % 2 = 0, ('row-' || i)::BLOB, (i % 100)::TINYINT, "
        "(i % 1000)::SMALLINT, [i::INT, i::INT + 1], {'a': i::INT, 'b': 'row-' || i}, MAP {'row-' || i: i / 3}, "
        "('00000000-0000-0000-0000-' || lpad(i::VARCHAR, 12, '0'))::UUID, TIME '10:00:00' + to_seconds(i), "
        "TIMESTAMP_NS '2024-01-01 00:00:00.123456789' + to_seconds(i), (i * 1000)::UBIGINT, "
        "('{\"k\": ' || i || '}')::JSON, [{'x': [i::INT], 'y': {'z': 'n' || i}}] "
        f"{extra} FROM range({start}, {start + n}) r(i)"
    )


def duckdb_writes_every_kind(con) -> None:
    """DuckDB's history of `lake.t` (DUCK_TYPES): a Parquet insert, an inlined one, an inlined delete, a delete
    file, an update, a delete of an inlined row, a column added with a default, rows with it, an update of it, a
    rename and the old name reused by a new column with a default. `lake` is attached, the time zone UTC."""
    con.execute(f"CREATE TABLE lake.t ({DUCK_TYPES})")
    duck_insert(con, 300)                     # Parquet
    duck_insert(con, 5, start=1000)           # inlined
    con.execute("DELETE FROM lake.t WHERE id < 3")                    # inlined delete
    con.execute("DELETE FROM lake.t WHERE id BETWEEN 100 AND 150")    # delete file
    con.execute("UPDATE lake.t SET s = 'changed' WHERE id = 200")     # delete + insert, row lineage
    con.execute("DELETE FROM lake.t WHERE id = 1001")                 # delete of an inlined row
    con.execute("ALTER TABLE lake.t ADD COLUMN extra INTEGER DEFAULT 42")
    duck_insert(con, 20, start=2000, extra=", i::INT % 5")
    con.execute("UPDATE lake.t SET extra = 7 WHERE id = 2005")
    con.execute("ALTER TABLE lake.t RENAME COLUMN s TO s_old")
    con.execute("ALTER TABLE lake.t ADD COLUMN s VARCHAR DEFAULT 'reused'")


def duckdb_snapshots(con, relation: str = "lake.t", since: int = 1) -> dict[int, tuple[list[str], list[tuple]]]:
    """{snapshot id: (column names, rows as `duckdb_rows` gives them)} of `relation` at each of the lake's
    snapshots from `since` on, read by DuckDB, the types we show as text cast to it (`duckdb_select`)."""
    snapshots = [r[0] for r in con.execute("SELECT snapshot_id FROM lake.snapshots()").fetchall()]
    expected = {}
    for snap in (s for s in snapshots if s >= since):
        at = f"{relation} AT (VERSION => {snap})"
        cols = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {at}").fetchall()]
        expected[snap] = (cols, duckdb_rows(con, duckdb_select(con, at)))
    return expected


def packed_rows(df) -> str:
    """A DataFrame's rows as `spark_rows` gives them, as text a plugin script can return in its JSON answer."""
    return base64.b64encode(pickle.dumps(spark_rows(df))).decode("ascii")


def unpacked_rows(text: str) -> list[tuple]:
    """The rows `packed_rows` packed (our own child process's answer, never outside input)."""
    return pickle.loads(base64.b64decode(text))  # noqa: S301 - written by the test's own child process
