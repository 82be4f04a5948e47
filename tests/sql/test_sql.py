"""`lake.sql`: queries with pruning and time travel, every command kind, transactions, CALL, register()."""

from __future__ import annotations

import pytest

from spark_ducklake import DuckLake
from spark_ducklake.errors import DuckLakeError, UnsupportedSqlError
from spark_ducklake.sql.queries import QueryContext, explain_pruning


@pytest.fixture
def lake(tmp_path, spark):
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"), spark=spark,
                           data_inlining_row_limit=0)
    yield lake
    lake.close()


def _ids(frame, col="id"):
    return sorted(r[col] for r in frame.collect())


def test_queries_joins_ctes_subqueries_and_pruning(lake):
    lake.sql("CREATE SCHEMA s; CREATE TABLE s.orders (id BIGINT, region STRING, amount DOUBLE);"
             "CREATE TABLE customers (id BIGINT, name STRING)")
    lake.sql("ALTER TABLE s.orders SET PARTITIONED BY (region)")
    lake.sql("INSERT INTO s.orders SELECT id, CASE WHEN id < 50 THEN 'eu' ELSE 'us' END, id * 1.0 FROM range(100)")
    lake.sql("INSERT INTO customers VALUES (1, 'a'), (60, 'b'), (7, 'c')")
    total = lake.plan_scan("s.orders").total_files
    assert total >= 2
    frame = lake.sql("SELECT o.id, c.name FROM lake.s.orders o JOIN customers c ON o.id = c.id "
                     "WHERE o.region = 'eu' AND c.name <> 'zz'")
    assert sorted((r.id, r.name) for r in frame.collect()) == [(1, "a"), (7, "c")]
    eu_files = lake.plan_scan("s.orders", where="region = 'eu'").files
    assert 0 < len(eu_files) < total
    assert len(frame.inputFiles()) == len(eu_files) + len(lake.plan_scan("customers").files)
    ctx = QueryContext(lake, "lake", "spark")
    import sqlglot
    pushed = dict(explain_pruning(ctx, sqlglot.parse_one(
        "SELECT * FROM s.orders o LEFT JOIN customers c ON o.id = c.id AND c.name = 'a' "
        "WHERE o.region = 'eu' AND c.name IS NULL", read="spark")))
    assert pushed == {"s.orders": "(region = 'eu')", "main.customers": "(name = 'a')"}  # not the IS NULL
    left = lake.sql("SELECT o.id FROM s.orders o LEFT JOIN customers c ON o.id = c.id "
                    "WHERE c.name IS NULL AND o.id < 10")
    assert _ids(left) == [0, 2, 3, 4, 5, 6, 8, 9]
    cte = lake.sql("WITH big AS (SELECT * FROM s.orders WHERE amount >= 95) "
                   "SELECT id FROM big WHERE id IN (SELECT id + 95 FROM customers WHERE name = 'a')")
    assert _ids(cte) == [96]
    duck = lake.sql("FROM s.orders SELECT count(*) AS n WHERE region = 'us' AND amount::VARCHAR LIKE '9%'",
                    dialect="duckdb")
    assert duck.collect()[0].n == 10  # us rows are ids 50..99: amounts '90.0'..'99.0' match


def test_time_travel_both_syntaxes(lake):
    lake.sql("CREATE TABLE t (id INT)")
    first = lake.sql("INSERT INTO t VALUES (1), (2)")[0].snapshot_id
    lake.sql("INSERT INTO t VALUES (3)")
    assert _ids(lake.sql(f"SELECT * FROM t VERSION AS OF {first}")) == [1, 2]
    assert _ids(lake.sql(f"SELECT * FROM t AT (VERSION => {first})", dialect="duckdb")) == [1, 2]
    assert _ids(lake.sql("SELECT * FROM t")) == [1, 2, 3]
    when = lake.snapshots()[-1].snapshot_time.strftime("%Y-%m-%d %H:%M:%S.%f")
    assert _ids(lake.sql(f"SELECT * FROM t TIMESTAMP AS OF '{when}'")) == [1, 2, 3]
    assert _ids(lake.sql("SELECT * FROM lake.main.t AT (TIMESTAMP => now())", dialect="duckdb")) == [1, 2, 3]


def test_commands(lake):
    lake.sql("CREATE SCHEMA IF NOT EXISTS s; CREATE SCHEMA IF NOT EXISTS s")
    lake.sql("CREATE TABLE s.t (id INTEGER NOT NULL, name VARCHAR, ts TIMESTAMP)", dialect="duckdb")
    info = lake.table_info("s.t")
    assert [(c.name, c.type) for c in info.columns] == [("id", "int32"), ("name", "varchar"), ("ts", "timestamp")]
    lake.sql("INSERT INTO s.t (name, id) VALUES ('b', 2)")
    lake.sql("INSERT INTO s.t BY NAME SELECT 'c' AS name, 3 AS id", dialect="duckdb")
    lake.sql("INSERT INTO s.t VALUES (1, 'a', TIMESTAMP_NTZ'2026-01-01 00:00:00')")
    assert _ids(lake.read("s.t")) == [1, 2, 3]
    assert lake.sql("UPDATE s.t SET name = upper(name) WHERE id >= 2")[0].rows == 2
    assert lake.sql("DELETE FROM s.t WHERE id = 1")[0].rows == 1
    assert sorted(r.name for r in lake.read("s.t").collect()) == ["B", "C"]
    lake.sql("CREATE TABLE s.src AS SELECT id, 'new' AS name FROM range(2, 6)")
    merged = lake.sql("MERGE INTO s.t USING s.src ON t.id = src.id WHEN MATCHED AND src.id = 3 THEN DELETE "
                      "WHEN MATCHED THEN UPDATE SET name = src.name WHEN NOT MATCHED AND src.id < 5 THEN "
                      "INSERT (id, name) VALUES (src.id, 'ins')")
    assert merged[0].rows == 3 and merged[0].snapshot_id == lake.current_snapshot()
    assert sorted((r.id, r.name) for r in lake.read("s.t").collect()) == [(2, "new"), (4, "ins")]
    lake.sql("MERGE INTO s.t AS x USING (SELECT 4 AS id) AS y ON x.id = y.id "
             "WHEN NOT MATCHED BY SOURCE THEN DELETE")
    assert _ids(lake.read("s.t")) == [4]
    lake.sql("ALTER TABLE s.t ADD COLUMN score BIGINT DEFAULT 7", dialect="duckdb")
    lake.sql("ALTER TABLE s.t RENAME COLUMN name TO label; ALTER TABLE s.t ALTER COLUMN id TYPE BIGINT",
             dialect="duckdb")
    lake.sql("ALTER TABLE s.t DROP COLUMN ts")
    assert [(r.id, r.label, r.score) for r in lake.read("s.t").collect()] == [(4, "ins", 7)]
    lake.sql("ALTER TABLE s.t SET SORTED BY (id DESC)", dialect="duckdb")
    lake.sql("ALTER TABLE s.t RESET SORTED BY", dialect="duckdb")
    lake.sql("INSERT OVERWRITE s.t SELECT 9, 'z', 1")
    assert _ids(lake.read("s.t")) == [9]
    lake.sql("ALTER TABLE s.t RENAME TO u")
    lake.sql("DROP TABLE s.u; DROP TABLE IF EXISTS s.u; DROP SCHEMA s CASCADE")
    assert "s" not in lake.schemas()


def test_transaction_over_several_calls(lake):
    lake.sql("CREATE TABLE t (id BIGINT)")
    before = lake.current_snapshot()
    lake.sql("BEGIN")
    lake.sql("INSERT INTO t VALUES (1)")
    lake.sql("CREATE TABLE u (x STRING); INSERT INTO u VALUES ('a')")
    assert lake.current_snapshot() == before  # nothing committed yet
    assert lake.sql("COMMIT")[0].snapshot_id == before + 1
    assert _ids(lake.read("t")) == [1] and lake.read("u").count() == 1
    lake.sql("BEGIN TRANSACTION; DELETE FROM t", dialect="duckdb")
    lake.sql("ROLLBACK")
    assert lake.current_snapshot() == before + 1 and _ids(lake.read("t")) == [1]
    with pytest.raises(DuckLakeError, match="COMMIT without a transaction"):
        lake.sql("COMMIT")


def test_call_and_table_functions(lake):
    lake.sql("CREATE TABLE t (id BIGINT); INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)")
    lake.sql("CALL lake.set_option('target_file_size', '1MB', table_name => 't')", dialect="duckdb")
    assert [o.value for o in lake.options() if o.option_name == "target_file_size"]
    rows = lake.sql("CALL ducklake_merge_adjacent_files('lake', 't')", dialect="duckdb")
    assert rows and rows[0].files_processed == 2
    assert lake.sql("SELECT count(*) AS n FROM ducklake_list_files('lake', 't')").collect()[0].n == 1
    snaps = lake.sql("SELECT snapshot_id FROM lake.snapshots()", dialect="duckdb")
    assert _ids(snaps, "snapshot_id") == [s.snapshot_id for s in lake.snapshots()]
    assert lake.sql("FROM table_info()", dialect="duckdb").collect()[0].file_count == 1
    changes = lake.sql("SELECT change_type, id FROM lake.table_changes('t', 2, 3)")
    assert sorted((r.change_type, r.id) for r in changes.collect()) == [("insert", 1), ("insert", 2)]
    assert lake.sql("FROM ducklake_settings('lake')", dialect="duckdb").collect()[0].catalog_type == "sqlite"
    expired = lake.sql("CALL ducklake_expire_snapshots('lake', versions => [1], dry_run => true)",
                       dialect="duckdb")
    assert [s.snapshot_id for s in expired] == [1]
    cleaned = lake.sql("CALL ducklake_cleanup_old_files('lake', cleanup_all => true)", dialect="duckdb")
    assert len(cleaned) == 2  # the two files merge_adjacent_files replaced
    with pytest.raises(UnsupportedSqlError, match="ducklake_nope"):
        lake.sql("CALL ducklake_nope('lake')")
    with pytest.raises(UnsupportedSqlError, match="'other' is not this lake"):
        lake.sql("CALL ducklake_flush_inlined_data('other')")


@pytest.mark.parametrize("statement, construct", [
    ("CREATE TEMPORARY VIEW v AS SELECT 1", "CREATE VIEW with TEMPORARY"),
    ("CREATE TEMP MACRO m(a) AS a", "CREATE TEMPORARY MACRO"),
    ("INSERT OR REPLACE INTO t VALUES (1)", "INSERT OR REPLACE"),
    ("UPDATE t SET id = u.id FROM u WHERE t.id = u.id", "UPDATE ... FROM"),
    ("ALTER TABLE t ADD PRIMARY KEY (id)", "ALTER TABLE 'ADD PRIMARY KEY"),
    ("SELECT * FROM other.main.t", "catalog 'other'"),
    ("VACUUM", "VACUUM"),
])
def test_unsupported_constructs_are_named(lake, statement, construct):
    lake.sql("CREATE TABLE t (id BIGINT)")
    with pytest.raises(UnsupportedSqlError, match=construct.replace(".", r"\.").replace("(", r"\(")):
        lake.sql(statement, dialect="duckdb")
    assert lake.tables()[0].name == "t"


def test_register_views_follow_commits(lake, spark, tmp_path):
    lake.sql("CREATE TABLE t (id BIGINT); INSERT INTO t VALUES (1)")
    views = lake.register(spark)
    assert [v.view for v in views] == ["main_t"]
    assert spark.sql("SELECT count(*) AS n FROM main_t").collect()[0].n == 1
    lake.sql("INSERT INTO t VALUES (2)")  # this handle's commits refresh the views
    assert spark.sql("SELECT count(*) AS n FROM main_t").collect()[0].n == 2
    other = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", spark=spark)
    other.write(spark.createDataFrame([(3,)], "id long"), "t")
    assert spark.sql("SELECT count(*) AS n FROM main_t").collect()[0].n == 2  # pinned until re-registered
    lake.register()
    assert spark.sql("SELECT count(*) AS n FROM main_t").collect()[0].n == 3
    other.close()
    spark.catalog.dropTempView("main_t")


def test_reference_reads_what_sql_wrote(catalog, tmp_path, spark, reference):
    from tests.support.reference import attach

    data = str(tmp_path / "data") + "/"
    with DuckLake.attach(catalog, data, spark=spark) as lake:
        lake.sql("CREATE SCHEMA s; CREATE TABLE s.t (id INTEGER, name VARCHAR)", dialect="duckdb")
        lake.sql("BEGIN; INSERT INTO s.t SELECT id, concat('n', id) FROM range(30); COMMIT; "
                 "UPDATE s.t SET name = 'x' WHERE id < 3")
        lake.sql("ALTER TABLE s.t ADD COLUMN flag BOOLEAN DEFAULT true")
    attach(reference, catalog, data)
    rows = reference.execute("SELECT count(*), count(*) FILTER (name = 'x'), bool_and(flag) FROM lake.s.t").fetchall()
    assert rows == [(30, 3, True)]


def test_queries_inside_begin_see_the_transactions_own_changes(catalog, tmp_path, spark, reference):
    from tests.support.reference import attach

    data = str(tmp_path / "data") + "/"
    lake, other = (DuckLake.attach(catalog, data, spark=spark) for _ in range(2))
    try:
        lake.sql("CREATE TABLE t (id BIGINT, s STRING); INSERT INTO t SELECT id, 'p' FROM range(100)")
        lake.sql("CREATE TABLE d (id BIGINT); INSERT INTO d SELECT id FROM range(50)")
        lake.sql("BEGIN")
        lake.sql("INSERT INTO t VALUES (1000, 'inlined'), (1001, 'inlined')")  # inlined rows
        lake.sql("INSERT INTO t SELECT id + 2000, 'file' FROM range(40)")     # a staged Parquet file
        lake.sql("DELETE FROM d WHERE id < 10; CREATE TABLE n (x INT); INSERT INTO n VALUES (1), (2)")
        lake.sql("CREATE VIEW v AS SELECT s, count(*) AS c FROM t GROUP BY s")
        assert lake.sql("SELECT count(*) AS c FROM t").collect()[0].c == 142
        assert _ids(lake.sql("SELECT id FROM t WHERE s = 'inlined'")) == [1000, 1001]
        assert lake.sql("SELECT min(id) AS m, count(*) AS c FROM d").collect()[0] == (10, 40)
        assert sorted(tuple(r) for r in lake.sql("SELECT * FROM v").collect()) == [("file", 40), ("inlined", 2),
                                                                               ("p", 100)]
        assert _ids(lake.sql("FROM n", dialect="duckdb"), "x") == [1, 2]
        # other handles (and readers) see none of it until COMMIT
        assert other.read("t").count() == 100 and other.read("d").count() == 50
        assert other.views() == [] and "n" not in [t.name for t in other.tables()]
        assert lake.sql("COMMIT")[0].snapshot_id is not None
        assert other.read("t").count() == 142 and other.read("d").count() == 40

        lake.sql("BEGIN; INSERT INTO t VALUES (5000, 'gone'); UPDATE d SET id = id + 100 WHERE id >= 45")
        assert lake.sql("SELECT count(*) AS c FROM t WHERE id = 5000").collect()[0].c == 1
        assert _ids(lake.sql("SELECT id FROM d WHERE id >= 40")) == [40, 41, 42, 43, 44, 145, 146, 147, 148, 149]
        lake.sql("ROLLBACK")
        assert lake.sql("SELECT count(*) AS c FROM t WHERE id = 5000").collect()[0].c == 0
        assert _ids(lake.sql("SELECT id FROM d WHERE id >= 40")) == list(range(40, 50))
    finally:
        lake.close()
        other.close()
    attach(reference, catalog, data)
    assert reference.execute("SELECT count(*) FROM lake.t").fetchall() == [(142,)]
    assert reference.execute("SELECT count(*), min(id) FROM lake.d").fetchall() == [(40, 10)]
    assert reference.execute("SELECT * FROM lake.v ORDER BY s").fetchall() == [("file", 40), ("inlined", 2),
                                                                              ("p", 100)]
    assert reference.execute("SELECT sum(x) FROM lake.n").fetchall() == [(3,)]


def test_options_the_reference_refuses_as_null(lake):
    lake.sql("CREATE TABLE t (id INT)")
    for call, message in (
            ("CALL ducklake_expire_snapshots('lake', dry_run => NULL, versions => [1])", "dry_run option must be"),
            ("CALL ducklake_expire_snapshots('lake', older_than => NULL)", "older_than option must be a non-null"),
            ("CALL ducklake_merge_adjacent_files('lake', 't', max_compacted_files => NULL)", "non-null integer"),
            ("CALL ducklake_rewrite_data_files('lake', 't', max_compacted_files => NULL)", "non-null integer")):
        with pytest.raises(DuckLakeError, match=message):
            lake.sql(call, dialect="duckdb")
