"""BEGIN ... COMMIT of `lake.sql` as DuckDB runs it: failed statements, several ALTERs and writes after them."""

from __future__ import annotations

import pytest

from spark_ducklake.errors import (
    AlreadyExistsError,
    DuckLakeError,
    NotFoundError,
    SchemaMismatchError,
    TransactionAbortedError,
)
from tests.support.compare import duckdb_rows
from tests.support.reference import attach


def _rows(lake, text: str) -> list[tuple]:
    return sorted(tuple(r) for r in lake.sql(text, dialect="duckdb").collect())


def test_binder_errors_keep_the_transaction_and_stage_nothing(lake, spark):
    lake.sql("CREATE TABLE t (a INT, b VARCHAR); INSERT INTO t VALUES (1, 'x')", dialect="duckdb")
    lake.sql("BEGIN", dialect="duckdb")
    lake.sql("INSERT INTO t VALUES (2, 'y')", dialect="duckdb")
    failing = [("SELECT * FROM nope", NotFoundError), ("INSERT INTO nope VALUES (1)", NotFoundError),
               ("ALTER TABLE t ADD COLUMN a INT", DuckLakeError), ("CREATE TABLE t (a INT)", DuckLakeError),
               ("ALTER TABLE t ALTER a TYPE VARCHAR", SchemaMismatchError),
               ("SELECT nocol FROM t", Exception), ("INSERT INTO t VALUES (1, 'a', 3)", DuckLakeError)]
    for text, error in failing:
        with pytest.raises(error):
            lake.sql(text, dialect="duckdb")
        assert _rows(lake, "SELECT count(*) FROM t") == [(2,)], text  # still open, the failed one staged nothing
    # a statement that fails after staging part of its work leaves none of it
    with pytest.raises(DuckLakeError):
        lake.sql("INSERT INTO t VALUES (3, 'z'); INSERT INTO nope VALUES (1)", dialect="duckdb")
    assert _rows(lake, "SELECT a FROM t") == [(1,), (2,), (3,)]  # the first of the two statements stays
    lake.sql("COMMIT", dialect="duckdb")
    assert _rows(lake, "SELECT a, b FROM t") == [(1, "x"), (2, "y"), (3, "z")]


def test_errors_while_running_abort_the_transaction(lake, spark):
    lake.sql("CREATE TABLE t (a INT NOT NULL); INSERT INTO t VALUES (1)", dialect="duckdb")
    before = lake.current_snapshot()
    lake.sql("BEGIN; INSERT INTO t VALUES (2)", dialect="duckdb")
    with pytest.raises(DuckLakeError, match="NOT NULL"):
        lake.sql("INSERT INTO t VALUES (NULL)", dialect="duckdb")
    with pytest.raises(TransactionAbortedError, match="Current transaction is aborted"):
        lake.sql("SELECT 1", dialect="duckdb")
    with pytest.raises(TransactionAbortedError):
        lake.sql("INSERT INTO t VALUES (3)", dialect="duckdb")
    assert lake.sql("COMMIT", dialect="duckdb")[0].snapshot_id is None  # as DuckDB: commits nothing
    assert lake.current_snapshot() == before
    assert _rows(lake, "SELECT a FROM t") == [(1,)]
    lake.sql("BEGIN", dialect="duckdb")
    with pytest.raises(TransactionAbortedError, match="within a transaction"):
        lake.sql("BEGIN", dialect="duckdb")
    with pytest.raises(TransactionAbortedError):
        lake.sql("SELECT 1", dialect="duckdb")
    lake.sql("ROLLBACK", dialect="duckdb")
    assert _rows(lake, "SELECT 1") == [(1,)]


def test_several_alters_and_writes_after_them_commit_as_duckdb_would(lake, lake_catalog, spark, reference):
    lake.sql("CREATE TABLE t (a INT, b VARCHAR); INSERT INTO t VALUES (1, 'x')", dialect="duckdb")
    before = lake.current_snapshot()
    lake.sql("BEGIN", dialect="duckdb")
    lake.sql("INSERT INTO t VALUES (2, 'y')", dialect="duckdb")
    lake.sql("ALTER TABLE t ADD COLUMN c INT DEFAULT 7", dialect="duckdb")
    lake.sql("INSERT INTO t VALUES (3, 'z', 30)", dialect="duckdb")
    lake.sql("ALTER TABLE t ADD COLUMN d BIGINT", dialect="duckdb")
    lake.sql("ALTER TABLE t RENAME COLUMN c TO cc", dialect="duckdb")
    lake.sql("ALTER TABLE t ALTER a TYPE BIGINT", dialect="duckdb")
    lake.sql("INSERT INTO t VALUES (4, 'w', 40, 400)", dialect="duckdb")
    lake.sql("ALTER TABLE t DROP COLUMN b", dialect="duckdb")
    lake.sql("DELETE FROM t WHERE a = 1", dialect="duckdb")
    expected = [(2, 7, None), (3, 30, None), (4, 40, 400)]
    assert _rows(lake, "SELECT * FROM t") == expected
    lake.sql("COMMIT", dialect="duckdb")
    assert lake.current_snapshot() == before + 1
    assert [c.name for c in lake.table_info("t").columns] == ["a", "cc", "d"]
    assert _rows(lake, "SELECT * FROM t") == expected
    lake.close()
    attach(reference, lake_catalog)
    assert duckdb_rows(reference, "SELECT * FROM lake.t ORDER BY a") == expected
    assert duckdb_rows(reference, "SELECT schema_version FROM lake.snapshots() ORDER BY snapshot_id DESC "
                                  "LIMIT 2") == [(1,), (2,)]  # one schema version for all the ALTERs


def test_tables_created_or_renamed_in_the_transaction_can_be_renamed_and_dropped(lake, lake_catalog, spark,
                                                                                   reference):
    lake.sql("CREATE TABLE t (i INT); INSERT INTO t VALUES (42); CREATE TABLE gone (i INT)", dialect="duckdb")
    before = lake.current_snapshot()
    lake.sql("BEGIN", dialect="duckdb")
    lake.sql("CREATE TABLE local (i INT); INSERT INTO local VALUES (1)", dialect="duckdb")
    lake.sql("ALTER TABLE local RENAME TO local2; INSERT INTO local2 VALUES (2)", dialect="duckdb")
    assert _rows(lake, "SELECT i FROM local2") == [(1,), (2,)]
    lake.sql("CREATE TABLE scratch (i INT); INSERT INTO scratch VALUES (9); DROP TABLE scratch", dialect="duckdb")
    with pytest.raises(NotFoundError):
        lake.sql("SELECT * FROM scratch", dialect="duckdb")
    lake.sql("INSERT INTO t VALUES (1); ALTER TABLE t RENAME TO t2; INSERT INTO t2 VALUES (2)", dialect="duckdb")
    lake.sql("ALTER TABLE t2 RENAME TO t3; INSERT INTO t3 VALUES (3)", dialect="duckdb")
    with pytest.raises(NotFoundError):
        lake.sql("INSERT INTO t2 VALUES (0)", dialect="duckdb")
    lake.sql("DROP TABLE gone; CREATE TABLE gone (j VARCHAR); INSERT INTO gone VALUES ('new')", dialect="duckdb")
    lake.sql("COMMIT", dialect="duckdb")
    assert lake.current_snapshot() == before + 1
    assert sorted(t.name for t in lake.tables()) == ["gone", "local2", "t3"]
    assert _rows(lake, "SELECT i FROM t3") == [(1,), (2,), (3,), (42,)]
    lake.close()
    attach(reference, lake_catalog)
    assert duckdb_rows(reference, "SELECT i FROM lake.local2") == [(1,), (2,)]
    assert duckdb_rows(reference, "SELECT i FROM lake.t3") == [(1,), (2,), (3,), (42,)]
    assert duckdb_rows(reference, "SELECT j FROM lake.gone") == [("new",)]


def test_alters_of_a_table_created_in_the_transaction_and_end(lake, lake_catalog, spark, reference):
    lake.sql("BEGIN; CREATE TABLE n (a INT); INSERT INTO n VALUES (1)", dialect="duckdb")
    lake.sql("ALTER TABLE n ADD COLUMN b INT DEFAULT 3; INSERT INTO n VALUES (2, 20)", dialect="duckdb")
    lake.sql("ALTER TABLE n RENAME COLUMN a TO aa", dialect="duckdb")
    assert _rows(lake, "SELECT aa, b FROM n") == [(1, 3), (2, 20)]
    lake.sql("END", dialect="duckdb")  # Postgres' COMMIT, as DuckDB takes it
    assert [c.name for c in lake.table_info("n").columns] == ["aa", "b"]
    assert _rows(lake, "SELECT aa, b FROM n") == [(1, 3), (2, 20)]
    lake.sql("BEGIN; INSERT INTO n VALUES (3, 30); ABORT", dialect="duckdb")
    lake.close()
    attach(reference, lake_catalog)
    assert duckdb_rows(reference, "SELECT aa, b FROM lake.n") == [(1, 3), (2, 20)]


def test_swap_by_renames_local_views_and_rename_then_drop(lake, lake_catalog, spark, reference):
    lake.sql("CREATE TABLE my_table AS SELECT * FROM range(42); CREATE TABLE doomed (i INT)", dialect="duckdb")
    lake.sql("BEGIN; CREATE TABLE my_table_tmp AS SELECT * FROM range(84)", dialect="duckdb")
    lake.sql("ALTER TABLE my_table RENAME TO my_table_backup; ALTER TABLE my_table_tmp RENAME TO my_table",
             dialect="duckdb")  # dbt's swap: the new table takes the old one's name
    lake.sql("CREATE VIEW va AS SELECT 10 AS a; CREATE VIEW vb AS SELECT 20 AS b; DROP VIEW va", dialect="duckdb")
    lake.sql("ALTER TABLE doomed RENAME TO doomed2; DROP TABLE doomed2", dialect="duckdb")
    assert _rows(lake, "SELECT count(*) FROM my_table") == [(84,)]
    assert _rows(lake, "SELECT count(*) FROM my_table_backup") == [(42,)]
    with pytest.raises(NotFoundError):
        lake.sql("SELECT * FROM va", dialect="duckdb")
    lake.sql("COMMIT", dialect="duckdb")
    assert sorted(t.name for t in lake.tables()) == ["my_table", "my_table_backup"]
    assert [v.name for v in lake.views()] == ["vb"]
    lake.close()
    attach(reference, lake_catalog)
    assert duckdb_rows(reference, "SELECT count(*) FROM lake.my_table") == [(84,)]
    assert duckdb_rows(reference, "SELECT count(*) FROM lake.my_table_backup") == [(42,)]
    assert duckdb_rows(reference, "SELECT * FROM lake.vb") == [(20,)]
    assert duckdb_rows(reference, "SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE 'doomed%'") == [(0,)]


def test_local_views_and_schemas_conflict_and_drop_as_in_duckdb(lake, spark):
    lake.sql("BEGIN; CREATE VIEW v1 AS SELECT 42 AS x", dialect="duckdb")
    with pytest.raises(AlreadyExistsError):
        lake.sql("CREATE VIEW v1 AS SELECT 84 AS x", dialect="duckdb")
    lake.sql("CREATE OR REPLACE VIEW v1 AS SELECT 84 AS x; CREATE TABLE t1 (i INT)", dialect="duckdb")
    with pytest.raises(AlreadyExistsError):
        lake.sql("CREATE VIEW t1 AS SELECT 1 AS x", dialect="duckdb")
    lake.sql("CREATE SCHEMA s; CREATE TABLE s.t (i INT); CREATE VIEW s.v AS SELECT 1 AS x; "
             "CREATE MACRO s.add_one(x) AS x + 1", dialect="duckdb")
    with pytest.raises(DuckLakeError, match="entries that depend on it"):
        lake.sql("DROP SCHEMA s", dialect="duckdb")
    lake.sql("DROP SCHEMA s CASCADE", dialect="duckdb")
    assert _rows(lake, "SELECT * FROM v1") == [(84,)]
    lake.sql("COMMIT", dialect="duckdb")
    assert lake.schemas() == ["main"]
    assert [v.name for v in lake.views()] == ["v1"]
    assert [t.name for t in lake.tables()] == ["t1"]


def test_update_and_merge_after_alters_in_the_transaction(lake, lake_catalog, spark, reference):
    lake.sql("CREATE TABLE t (a INT, b VARCHAR); INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'z');"
             "CREATE TABLE u (k INT, x INT, v VARCHAR); INSERT INTO u VALUES (1, 0, 'p'), (2, 0, 'q')",
             dialect="duckdb")
    ids = _rows(lake, "SELECT a, rowid FROM t")
    lake.sql("BEGIN", dialect="duckdb")
    lake.sql("ALTER TABLE t ADD COLUMN c INT DEFAULT 7", dialect="duckdb")
    lake.sql("ALTER TABLE t RENAME COLUMN b TO bb", dialect="duckdb")
    lake.sql("UPDATE t SET c = a * 10, bb = bb || '!' WHERE a >= 2", dialect="duckdb")
    lake.sql("ALTER TABLE u DROP COLUMN x", dialect="duckdb")
    lake.sql("ALTER TABLE u RENAME TO w", dialect="duckdb")  # INSERT VALUES below: w's columns after the ALTERs
    lake.sql("MERGE INTO w USING (SELECT 2 AS k, 'new' AS v UNION ALL SELECT 5, 'five') s ON w.k = s.k "
             "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT VALUES (s.k, s.v)",
             dialect="duckdb")
    expected_t = [(1, "x", 7), (2, "y!", 20), (3, "z!", 30)]
    expected_w = [(1, "p"), (2, "new"), (5, "five")]
    assert _rows(lake, "SELECT * FROM t") == expected_t
    lake.sql("COMMIT", dialect="duckdb")
    assert _rows(lake, "SELECT * FROM t") == expected_t
    assert _rows(lake, "SELECT a, rowid FROM t") == ids  # updated rows keep their row ids
    assert _rows(lake, "SELECT * FROM w") == expected_w
    # rows inserted before an ALTER in the transaction: the UPDATE sees them too, with the altered columns
    lake.sql("BEGIN; INSERT INTO t VALUES (4, 'n', 40); ALTER TABLE t ADD COLUMN d INT", dialect="duckdb")
    assert lake.sql("UPDATE t SET d = a", dialect="duckdb")[0].rows == 4
    assert _rows(lake, "SELECT a, c, d FROM t") == [(1, 7, 1), (2, 20, 2), (3, 30, 3), (4, 40, 4)]
    lake.sql("ROLLBACK", dialect="duckdb")
    lake.close()
    attach(reference, lake_catalog)
    assert duckdb_rows(reference, "SELECT * FROM lake.t ORDER BY a") == expected_t
    assert duckdb_rows(reference, "SELECT * FROM lake.w ORDER BY k") == expected_w


def _count(lake, text: str) -> int:
    return lake.sql(text, dialect="duckdb")[0].rows


@pytest.mark.lake(data_inlining_row_limit=10)
def test_several_row_changes_of_a_table_see_each_other(lake, lake_catalog, spark, reference):
    lake.sql("CREATE TABLE t AS SELECT i AS id FROM range(100) r(i); CREATE TABLE s (c INT, v VARCHAR);"
             "INSERT INTO s VALUES (1, 'a'), (2, 'b'), (3, 'c')", dialect="duckdb")  # t: a file, s: inlined rows
    ids = dict(_rows(lake, "SELECT id, rowid FROM t"))
    before = lake.current_snapshot()
    lake.sql("BEGIN", dialect="duckdb")
    assert _count(lake, "DELETE FROM t WHERE id % 8 = 0") == 13
    assert _count(lake, "DELETE FROM t WHERE id % 4 = 0") == 12  # only the rows the first delete left
    assert _count(lake, "UPDATE t SET id = id + 1000 WHERE id < 10") == 7
    assert _count(lake, "UPDATE t SET id = id + 1000 WHERE id > 1000 AND id < 1005") == 3  # sees the first
    assert _count(lake, "DELETE FROM t WHERE id = 2002") == 1
    assert _rows(lake, "SELECT count(*), sum(id) FROM t") == [(74, 3750 + 7 * 1000 + 3 * 1000 - 2002)]
    lake.sql("INSERT INTO s VALUES (4, 'd'), (5, 'e')", dialect="duckdb")
    assert _count(lake, "UPDATE s SET v = v || '!' WHERE c IN (2, 4)") == 2  # a committed and a staged row
    # rows not committed yet have no snapshot, as DuckDB shows them
    assert _rows(lake, "SELECT c, snapshot_id FROM s WHERE c <= 2") == [(1, before), (2, None)]
    assert _count(lake, "DELETE FROM s WHERE c >= 3") == 3
    assert _count(lake, "UPDATE s SET v = upper(v)") == 2
    lake.sql("CREATE TABLE n (id INT, name VARCHAR); INSERT INTO n VALUES (1, 'Bob'), (2, 'Eve')", dialect="duckdb")
    assert _count(lake, "UPDATE n SET name = 'Alice' WHERE id = 1") == 1
    assert _count(lake, "DELETE FROM n WHERE id = 2") == 1
    expected_s, expected_n = [(1, "A"), (2, "B!")], [(1, "Alice")]
    assert _rows(lake, "SELECT * FROM s") == expected_s
    assert _rows(lake, "SELECT * FROM n") == expected_n
    lake.sql("COMMIT", dialect="duckdb")
    assert lake.current_snapshot() == before + 1
    expected_t = _rows(lake, "SELECT id, rowid FROM t")
    assert len(expected_t) == 74
    assert {rowid for _id, rowid in expected_t} <= set(ids.values())  # updated rows keep their row ids
    assert dict((rowid, i) for i, rowid in expected_t)[ids[1]] == 2001
    files = lake.list_files("t")  # one data file in-process, several on Spark (the Connect lane)
    assert files and all(f.delete_file is not None for f in files)  # one delete file each for all the changes
    assert _rows(lake, "SELECT * FROM s") == expected_s
    lake.close()
    attach(reference, lake_catalog)
    assert duckdb_rows(reference, "SELECT id, rowid FROM lake.t") == sorted(expected_t, key=repr)
    assert duckdb_rows(reference, "SELECT * FROM lake.s ORDER BY c") == expected_s
    assert duckdb_rows(reference, "SELECT * FROM lake.n") == expected_n


@pytest.mark.lake(data_inlining_row_limit=10)
def test_flush_inlined_data_inside_a_transaction(lake, lake_catalog, spark, reference):
    lake.sql("CREATE TABLE t (i INT); INSERT INTO t VALUES (3), (1); INSERT INTO t VALUES (2)", dialect="duckdb")
    lake.sql("BEGIN; CALL ducklake_flush_inlined_data('lake')", dialect="duckdb")
    assert _rows(lake, "SELECT count(*) FROM t") == [(3,)]
    lake.sql("ROLLBACK", dialect="duckdb")
    assert lake.list_files("t") == []  # rolled back: still inlined
    lake.sql("BEGIN; ALTER TABLE t SET SORTED BY (i DESC)", dialect="duckdb")
    flushed = lake.sql("CALL ducklake_flush_inlined_data('lake', table_name => 't')", dialect="duckdb")
    assert [(r.table_name, r.rows_flushed) for r in flushed] == [("t", 3)]
    lake.sql("COMMIT", dialect="duckdb")
    assert len(lake.list_files("t")) == 1
    assert [r.i for r in lake.sql("SELECT i FROM t", dialect="duckdb").collect()] == [3, 2, 1]  # sorted as set
    lake.close()
    attach(reference, lake_catalog)
    assert reference.execute("SELECT i FROM lake.t").fetchall() == [(3,), (2,), (1,)]  # in file order


def test_several_row_changes_commit_on_postgres(lake, pg_catalog, spark, reference):
    lake.sql("CREATE TABLE t AS SELECT i AS id FROM range(20) r(i)", dialect="duckdb")
    lake.sql("BEGIN; INSERT INTO t VALUES (100), (101)", dialect="duckdb")
    assert _count(lake, "UPDATE t SET id = id + 1000 WHERE id < 2 OR id = 100") == 3
    assert _count(lake, "DELETE FROM t WHERE id >= 1000 AND id < 1100") == 2
    assert _count(lake, "DELETE FROM t WHERE id < 10") == 8
    lake.sql("COMMIT", dialect="duckdb")
    expected = [(i,) for i in [*range(10, 20), 101, 1100]]
    assert _rows(lake, "SELECT id FROM t") == expected
    lake.close()
    attach(reference, pg_catalog)
    assert duckdb_rows(reference, "SELECT id FROM lake.t") == sorted(expected, key=repr)


def test_names_dropped_in_a_transaction_are_free_in_it(lake, spark, reference, lake_catalog, tmp_path):
    """DROP VIEW / DROP SCHEMA ... CASCADE then CREATE under the same names, in one transaction (DuckDB's
    transaction-local catalog): the new objects are what the transaction and, after COMMIT, DuckDB see."""
    sql = lambda text: lake.sql(text, dialect="duckdb")  # noqa: E731
    sql("CREATE VIEW v1 AS SELECT 42 AS x; CREATE SCHEMA s1; CREATE TABLE s1.tbl (a INTEGER); "
        "INSERT INTO s1.tbl VALUES (42)")
    sql("BEGIN; DROP VIEW v1")
    with pytest.raises(NotFoundError):
        sql("FROM v1")
    sql("CREATE VIEW v1 AS SELECT 84 AS x")
    assert _rows(lake, "FROM v1") == [(84,)]
    sql("DROP SCHEMA s1 CASCADE; CREATE SCHEMA s1; CREATE TABLE s1.tbl (a DATE)")
    sql("INSERT INTO s1.tbl VALUES (DATE '1992-01-01')")
    assert [str(r[0]) for r in _rows(lake, "FROM s1.tbl")] == ["1992-01-01"]
    sql("COMMIT")
    assert _rows(lake, "FROM v1") == [(84,)]
    attach(reference, lake_catalog, str(tmp_path / "data"), read_only=True)
    assert duckdb_rows(reference, "SELECT * FROM lake.v1") == [(84,)]
    assert [str(r[0]) for r in duckdb_rows(reference, "SELECT a FROM lake.s1.tbl")] == ["1992-01-01"]


def test_set_not_null_sees_the_transactions_own_rows(lake, spark):
    sql = lambda text: lake.sql(text, dialect="duckdb")  # noqa: E731
    sql("CREATE TABLE t (i INTEGER); INSERT INTO t VALUES (NULL), (1)")
    sql("BEGIN; DELETE FROM t WHERE i IS NULL; ALTER TABLE t ALTER i SET NOT NULL; COMMIT")  # its delete counts
    with pytest.raises(DuckLakeError, match="NOT NULL constraint failed"):
        sql("INSERT INTO t VALUES (NULL)")
    sql("CREATE TABLE u (i INTEGER)")
    sql("BEGIN; INSERT INTO u VALUES (NULL)")
    with pytest.raises(SchemaMismatchError, match="NULL"):  # its own insert counts too
        sql("ALTER TABLE u ALTER i SET NOT NULL")
    sql("ROLLBACK")
    sql("BEGIN; INSERT INTO u VALUES (1); ALTER TABLE u ALTER i SET NOT NULL; COMMIT")
    assert lake.table_info("u").columns[0].nullable is False
