"""DuckDB SQL forms `lake.sql(dialect="duckdb")` accepts because the reference's tests use them (found by the
conformance runner, docs/sql.md "Conformance"): range()/generate_series() tables, a struct per VALUES row,
INSERT's row count, COMMENT ... IS NULL, struct evolution by ALTER COLUMN ... TYPE and struct-field paths."""

from __future__ import annotations

import pytest

from spark_ducklake import DuckLake
from spark_ducklake.errors import SchemaMismatchError


@pytest.fixture
def lake(tmp_path, spark):
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"), spark=spark)
    yield lake
    lake.close()


def _rows(frame):
    return [tuple(r) for r in frame.collect()]


def test_range_and_generate_series_keep_duckdbs_names_and_bounds(lake):
    sql = lambda text: lake.sql(text, dialect="duckdb", catalog_name="dl")  # noqa: E731
    assert _rows(sql("SELECT i FROM range(3) t(i) ORDER BY i")) == [(0,), (1,), (2,)]
    assert _rows(sql("SELECT * FROM range(2, 10, 3)")) == [(2,), (5,), (8,)]
    assert sql("FROM generate_series(1, 3)").columns == ["generate_series"]
    assert _rows(sql("SELECT generate_series FROM generate_series(3, 1, -1)")) == [(3,), (2,), (1,)]
    sql("CREATE TABLE dl.t AS FROM range(1000) t(i)")
    inserted = sql("INSERT INTO dl.t SELECT i + 1000 FROM range(5) r(i)")
    assert inserted[0].rows == 5  # INSERT returns its row count, as DuckDB's does
    assert _rows(sql("SELECT count(*), max(i) FROM dl.t")) == [(1005, 1004)]
    # range()'s own column compared: sqlglot reads `range <` as a RANGE<...> type unless told DuckDB has none
    assert sql("INSERT INTO dl.t SELECT range FROM range(100) WHERE range < 0")[0].rows == 0
    assert _rows(sql("SELECT range FROM range(5) WHERE range >= 3 AND range < 4")) == [(3,)]


def test_a_struct_per_values_row_and_struct_evolution(lake):
    sql = lambda text: lake.sql(text, dialect="duckdb", catalog_name="dl")  # noqa: E731
    sql("CREATE TABLE dl.s(col1 STRUCT(i INT, j INT))")
    assert sql("INSERT INTO dl.s VALUES ({'i': 1, 'j': 2}), ({'i': 3, 'j': NULL})")[0].rows == 2
    sql("ALTER TABLE dl.s ALTER COLUMN col1 SET DATA TYPE STRUCT(i BIGINT, k VARCHAR)")  # j dropped, k added
    assert [f.name for f in sql("FROM dl.s").schema["col1"].dataType.fields] == ["i", "k"]
    sql("INSERT INTO dl.s VALUES ({'i': 10000000000, 'k': 'x'})")
    assert sorted(_rows(sql("SELECT col1.i, col1.k FROM dl.s"))) == [
        (1, None), (3, None), (10000000000, "x")]
    sql("ALTER TABLE dl.s ADD COLUMN col1.z INTEGER")
    sql("ALTER TABLE dl.s RENAME COLUMN col1.z TO zz")
    sql("ALTER TABLE dl.s DROP COLUMN col1.k")
    assert [f.name for f in sql("FROM dl.s").schema["col1"].dataType.fields] == ["i", "zz"]
    sql("ALTER TABLE dl.s ALTER COLUMN col1.zz SET DATA TYPE BIGINT")
    sql("ALTER TABLE dl.s ALTER COLUMN col1.zz SET DATA TYPE BIGINT")  # the same type: nothing to do
    assert sql("FROM dl.s").schema["col1"].dataType.fields[1].dataType.simpleString() == "bigint"
    with pytest.raises(SchemaMismatchError, match="cannot change"):
        sql("ALTER TABLE dl.s ALTER COLUMN col1 SET DATA TYPE INTEGER")


def test_comment_is_null_clears_the_comment(lake):
    sql = lambda text: lake.sql(text, dialect="duckdb", catalog_name="dl")  # noqa: E731
    sql("CREATE TABLE dl.c(a INT)")
    sql("COMMENT ON TABLE dl.c IS 'hello'")
    sql("COMMENT ON COLUMN dl.c.a IS 'col'")
    assert lake.tags("c")["comment"] == "hello" and lake.tags("c", column="a")["comment"] == "col"
    sql("COMMENT ON TABLE dl.c IS NULL")
    sql("COMMENT ON COLUMN dl.c.a IS NULL")
    assert lake.tags("c").get("comment") is None and lake.tags("c", column="a").get("comment") is None
