"""Comments and tags: COMMENT ON and the lake API write the reference's rows; DuckDB reads them back."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from spark_ducklake import DuckLake
from spark_ducklake.catalog.database.spec_tables import T
from spark_ducklake.errors import InvalidArgumentError, NotFoundError
from tests.support.reference import attach

pytestmark = pytest.mark.not_on_mysql("not run through MySQL catalogs yet (docs/sql.md)")


@pytest.fixture
def where(catalog, tmp_path):
    """(catalog, data path) of a fresh lake on each catalog backend the reference shares with us."""
    return catalog, str(tmp_path / "data") + "/"


def _tag_rows(lake):
    """Both tag tables, ids and snapshots as the reference would have written them."""
    with lake.engine.connect() as conn:
        tag, col = T["ducklake_tag"], T["ducklake_column_tag"]
        objects = [tuple(r) for r in conn.execute(sa.select(tag).order_by(tag.c.begin_snapshot, tag.c.object_id))]
        columns = [tuple(r) for r in conn.execute(sa.select(col).order_by(col.c.begin_snapshot, col.c.column_id))]
    return objects, columns


def test_comments_as_the_reference_writes_them(where, lake, spark, reference):
    catalog, data = where
    lake.sql("CREATE TABLE t (a INT, b STRING); CREATE VIEW v AS SELECT a FROM t")  # snapshots 1, 2
    lake.sql("COMMENT ON TABLE lake.t IS 'my table'")                                # 3
    lake.sql("COMMENT ON COLUMN lake.t.a IS 'col a'")                                 # 4
    lake.sql("COMMENT ON VIEW v IS 'my view'")                                        # 5
    lake.set_comment("t", "my table2")                                                # 6
    lake.set_comment("t", None, column="b")                                           # 7
    lake.set_tag("main.t", "owner", "ops")                                            # 8
    with pytest.raises(InvalidArgumentError, match="only 'comment' tags on columns"):
        lake.set_tag("t", "owner", "ops", column="a")
    objects, columns = _tag_rows(lake)
    assert objects == [(1, 3, 6, "comment", "my table"), (2, 5, None, "comment", "my view"),
                       (1, 6, None, "comment", "my table2"), (1, 8, None, "owner", "ops")]
    assert columns == [(1, 1, 4, None, "comment", "col a"), (1, 2, 7, None, "comment", None)]
    assert [s.changes for s in lake.snapshots()[3:]] == [
        {"tables_altered": ["1"]}, {"tables_altered": ["1"]}, {"views_altered": ["2"]},
        {"tables_altered": ["1"]}, {"tables_altered": ["1"]}, {"tables_altered": ["1"]}]
    assert [s.schema_version for s in lake.snapshots()[2:]] == list(range(2, 9))
    assert lake.tags("t") == {"comment": "my table2", "owner": "ops"}
    assert lake.tags("t", version=4) == {"comment": "my table"}
    assert lake.tags("t", column="A") == {"comment": "col a"}
    assert lake.views()[0].comment == "my view" and lake.tags("v") == {"comment": "my view"}
    with pytest.raises(NotFoundError):
        lake.set_comment("t", "x", column="nope")
    with pytest.raises(NotFoundError):
        lake.sql("COMMENT ON VIEW t IS 'x'")
    lake.close()
    attach(reference, catalog, data)
    assert reference.execute("SELECT table_name, comment, tags FROM duckdb_tables() WHERE database_name = 'lake'"
                             ).fetchall() == [("t", "my table2", {"owner": "ops"})]
    assert reference.execute("SELECT column_name, comment FROM duckdb_columns() WHERE database_name = 'lake' "
                             "AND table_name = 't' ORDER BY column_index").fetchall() == [("a", "col a"), ("b", None)]
    assert reference.execute("SELECT view_name, comment FROM duckdb_views() WHERE database_name = 'lake'"
                             ).fetchall() == [("v", "my view")]


def test_reference_comments_are_read_and_dropped_with_the_view(tmp_path, spark, reference):
    catalog, data = f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data") + "/"
    attach(reference, catalog, data)
    reference.execute("CREATE TABLE lake.t (a INT); CREATE VIEW lake.v AS SELECT 1 AS one")
    reference.execute("COMMENT ON COLUMN lake.t.a IS 'from duckdb'; COMMENT ON VIEW lake.v IS 'dv'")
    reference.execute("DETACH lake")
    lake = DuckLake.attach(catalog, data, spark=spark)
    assert lake.tags("t", column="a") == {"comment": "from duckdb"}
    assert lake.tags("v") == {"comment": "dv"}
    lake.sql("BEGIN; COMMENT ON TABLE t IS 'in a transaction'; DROP VIEW v; COMMIT")
    assert lake.tags("t") == {"comment": "in a transaction"}
    with lake.engine.connect() as conn:
        tag = T["ducklake_tag"]
        live = conn.execute(sa.select(tag.c.object_id).where(tag.c.end_snapshot.is_(None))).scalars().all()
    assert live == [1]  # the view's comment ended with it
    attach(reference, catalog, data)
    assert reference.execute("SELECT comment FROM duckdb_tables() WHERE database_name = 'lake'").fetchall() == [
        ("in a transaction",)]
    lake.close()


def test_column_comments_end_with_the_column_and_follow_columns_added_in_a_transaction(lake):
    col = T["ducklake_column_tag"]

    def live():
        with lake.engine.connect() as conn:
            return sorted(conn.execute(sa.select(col.c.column_id, col.c.value).where(
                col.c.end_snapshot.is_(None))).all())

    lake.sql("CREATE TABLE t (a INT, b INT)")
    lake.sql("COMMENT ON COLUMN t.b IS 'drop me'", dialect="duckdb")
    lake.sql("ALTER TABLE t DROP COLUMN b", dialect="duckdb")
    assert live() == []  # a dropped column's comment ends with it
    # added, commented and dropped in one transaction: no tag left behind
    lake.sql("BEGIN; ALTER TABLE t ADD COLUMN c INT; COMMENT ON COLUMN t.c IS 'never'; "
             "ALTER TABLE t DROP COLUMN c; COMMIT", dialect="duckdb")
    assert live() == []
    # added and commented in one transaction: the comment is on the new column
    lake.sql("BEGIN; ALTER TABLE t ADD COLUMN d INT; COMMENT ON COLUMN t.d IS 'new'; COMMIT", dialect="duckdb")
    assert lake.tags("t", column="d") == {"comment": "new"} and [v for _, v in live()] == ["new"]
    # commented then dropped in one transaction after another ALTER of the table
    lake.sql("BEGIN; ALTER TABLE t ADD COLUMN e INT; COMMENT ON COLUMN t.d IS 'gone'; "
             "ALTER TABLE t DROP COLUMN d; COMMIT", dialect="duckdb")
    assert live() == []
