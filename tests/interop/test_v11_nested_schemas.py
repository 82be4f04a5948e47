"""Nested schemas of DuckLake 1.1 (`ducklake_schema.parent_schema_id`): `CREATE SCHEMA lake.sales.europe`, tables
of nested schemas by their paths (`sales.europe.orders`), DROP ... CASCADE of a schema tree; 1.0 and '1.1-dev1'
catalogs refuse a nested schema with the reference's words. The offline 1.1 binary has no nested schemas (it makes
`CREATE SCHEMA l.s1.s2` a flat `s2`), so these follow the released docs (docs/catalogs.md, "Nested schemas").

Catalog-only tests first (no Spark); the `spark` ones read and write a nested schema's table on Spark."""

from __future__ import annotations

import shutil
import sqlite3

import pyarrow as pa
import pytest
import sqlalchemy as sa

from spark_ducklake import DuckLake
from spark_ducklake.errors import (
    AlreadyExistsError,
    ConflictError,
    DuckLakeError,
    NotFoundError,
    UnsupportedSqlError,
)
from tests.support.ref11 import attach_sql, require_ref11, run

pytestmark = pytest.mark.latest_default

ORDERS = pa.schema([("order_id", pa.int32()), ("amount", pa.float64())])


def _attach(tmp_path, version: str = "1.1", catalog: str | None = None, name: str = "meta") -> DuckLake:
    catalog = catalog or f"sqlite:{tmp_path / f'{name}.sqlite'}"
    return DuckLake.attach(catalog, str(tmp_path / f"{name}_data"), ducklake_version=version)


def _schema_rows(lake: DuckLake) -> dict[str, tuple]:
    """ducklake_schema's live rows: name -> (schema_id, parent_schema_id, path)."""
    with lake.context.connect() as conn:
        rows = conn.execute(sa.text("SELECT schema_id, schema_name, parent_schema_id, path FROM ducklake_schema "
                                    "WHERE end_snapshot IS NULL ORDER BY schema_id")).all()
    return {name: (sid, parent, path) for sid, name, parent, path in rows}


@pytest.mark.parametrize("catalog", ["sqlite", "postgres"], indirect=True)
def test_create_list_and_resolve_nested_schemas(catalog, tmp_path):
    lake = _attach(tmp_path, catalog=catalog)
    lake.create_schema("sales")
    lake.create_schema("sales.europe")  # the docs' CREATE SCHEMA my_ducklake.sales.europe
    lake.create_schema(("sales", "a.b"))  # a tuple: one name per level, dots and all
    lake.create_schema('"x.y"')  # quoted: one top-level schema named x.y, not x's child y
    assert lake.schemas() == ["main", "sales", "sales.europe", 'sales."a.b"', "x.y"]
    rows = _schema_rows(lake)
    sales_id = rows["sales"][0]
    assert rows["europe"][1] == sales_id and rows["a.b"][1] == sales_id  # schema_name is the last name
    assert rows["sales"][1] is None and rows["x.y"][1] is None and rows["main"][1] is None
    assert rows["sales"][2] == "sales/"
    # the reference names a nested schema's directory by its uuid, beside the top-level ones
    assert rows["europe"][2].endswith("/") and rows["europe"][2] != "europe/" and "sales" not in rows["europe"][2]

    lake.create_table("sales.europe.orders", ORDERS)
    lake.create_table(("sales", "a.b", "t"), "id INT")
    lake.write(pa.table({"order_id": pa.array([1, 2], pa.int32()), "amount": [25.0, 7.5]}), "sales.europe.orders")
    info = lake.table_info("sales.europe.orders")
    assert (info.schema_name, info.name) == ("sales.europe", "orders")
    assert info.path.startswith(str(tmp_path / "meta_data"))
    assert [t.name for t in lake.tables("sales.europe")] == ["orders"]
    assert [t.name for t in lake.tables('sales."a.b"')] == ["t"]
    assert lake.table_info('sales."a.b".t').schema_name == 'sales."a.b"'
    assert lake.tables("sales") == []  # a schema's tables are its own, not its children's
    assert sorted(r["order_id"] for r in lake.read_arrow("sales.europe.orders").to_pylist()) == [1, 2]
    with pytest.raises(NotFoundError, match="'sales.asia'"):
        lake.table_info("sales.asia.orders")

    reopened = _attach(tmp_path, catalog=catalog)  # a new handle reads the tree from the catalog
    assert reopened.schemas() == lake.schemas()
    assert reopened.read_arrow(("sales", "europe", "orders")).num_rows == 2


def test_parent_must_exist_and_names_are_unique_per_parent(tmp_path):
    lake = _attach(tmp_path)
    with pytest.raises(NotFoundError, match="'sales'"):
        lake.create_schema("sales.europe")
    lake.create_schema("sales")
    lake.create_schema("hr")
    lake.create_schema("sales.europe")
    lake.create_schema("hr.europe")  # the same name under another parent
    lake.create_schema("europe")  # and at the top level
    with pytest.raises(AlreadyExistsError, match="sales.Europe"):
        lake.create_schema("sales.Europe")  # names are case-insensitive, as in DuckDB
    assert lake.create_schema("sales.Europe", if_not_exists=True) is None
    lake.create_schema('"a.b"')
    lake.create_schema("a")
    before = lake.current_snapshot()
    with pytest.raises(AlreadyExistsError, match="'a.b'"):  # the path a.b would go by the top-level a.b's name
        lake.create_schema("a.b")
    assert lake.current_snapshot() == before
    assert sorted(lake.schemas()) == ["a", "a.b", "europe", "hr", "hr.europe", "main", "sales", "sales.europe"]


def test_drop_schema_with_nested_schemas(tmp_path):
    lake = _attach(tmp_path)
    lake.create_schema("sales")
    lake.create_schema("sales.europe")
    lake.create_schema("sales.europe.north")
    lake.create_table("sales.europe.north.orders", ORDERS)
    lake.write(pa.table({"order_id": pa.array([1], pa.int32()), "amount": [1.0]}), "sales.europe.north.orders")
    lake.sql("CREATE VIEW sales.europe.v AS SELECT 1 AS one", dialect="duckdb")
    lake.sql("CREATE MACRO lake.sales.europe.m(x) AS x + 1", dialect="duckdb")
    assert [v.name for v in lake.views("sales.europe")] == ["v"]
    assert [(m.schema_name, m.macro_name) for m in lake.macros()] == [("sales.europe", "m")]
    full = lake.current_snapshot()
    before = lake.current_snapshot()
    with pytest.raises(DuckLakeError, match="schema sales.europe"):  # it has a nested schema: CASCADE only
        lake.drop_schema("sales")
    assert lake.current_snapshot() == before
    lake.drop_schema("sales.europe.north", cascade=True)  # a leaf with its table
    assert lake.schemas() == ["main", "sales", "sales.europe"]
    lake.create_schema("sales.europe.north")  # the name is free again
    lake.drop_schema("sales", cascade=True)  # the whole tree, its views too
    assert lake.schemas() == ["main"] and lake.tables() == [] and lake.views() == [] and lake.macros() == []
    assert _schema_rows(lake).keys() == {"main"}
    # time travel still sees the tree as it was
    assert [t.qualified_name for t in lake.tables(version=full)] == ["sales.europe.north.orders"]
    assert lake.read_arrow("sales.europe.north.orders", version=full).num_rows == 1
    lake.create_schema("sales")
    assert lake.schemas() == ["main", "sales"]  # the old children do not come back with a new parent of the name


def test_sql_ddl_in_both_dialects(tmp_path):
    lake = _attach(tmp_path)
    lake.sql("CREATE SCHEMA lake.sales", dialect="duckdb")
    lake.sql("CREATE SCHEMA lake.sales.europe", dialect="duckdb")
    lake.sql("CREATE SCHEMA IF NOT EXISTS sales.europe", dialect="duckdb")
    lake.sql("CREATE SCHEMA sales.`a.b`", dialect="spark")
    lake.sql('CREATE SCHEMA lake."x.y"', dialect="duckdb")
    assert lake.schemas() == ["main", "sales", "sales.europe", 'sales."a.b"', "x.y"]
    lake.sql("CREATE TABLE lake.sales.europe.orders (order_id INTEGER, amount DECIMAL(10, 2))", dialect="duckdb")
    lake.sql("CREATE TABLE sales.europe.returns (id INT)", dialect="spark")
    assert [t.qualified_name for t in lake.tables("sales.europe")] == ["sales.europe.orders", "sales.europe.returns"]
    with pytest.raises(UnsupportedSqlError, match="'nope' in 'nope.europe.t' is not this lake.*nor is 'nope.europe'"):
        lake.sql("CREATE TABLE nope.europe.t (id INT)", dialect="duckdb")
    with pytest.raises(DuckLakeError, match="not empty"):
        lake.sql("DROP SCHEMA lake.sales", dialect="duckdb")
    lake.sql("DROP SCHEMA sales.`a.b`", dialect="spark")
    lake.sql("BEGIN")
    lake.sql("CREATE SCHEMA sales.asia", dialect="duckdb")
    lake.sql("CREATE TABLE sales.asia.t (id INT)", dialect="duckdb")
    lake.sql("COMMIT")
    assert "sales.asia" in lake.schemas() and lake.table_info("sales.asia.t").schema_name == "sales.asia"
    lake.sql("DROP SCHEMA IF EXISTS lake.sales CASCADE", dialect="duckdb")
    assert lake.schemas() == ["main", "x.y"]


@pytest.mark.parametrize("version", ["1.0", "1.1-dev1"])
def test_catalogs_without_parent_schemas_refuse_nested_schemas(tmp_path, version):
    lake = _attach(tmp_path, version)
    lake.create_schema("a")
    before = lake.current_snapshot()
    words = "DuckLake 1.0 does not support nested schemas" if version == "1.0" else "1.1-dev1"
    for action in (lambda: lake.create_schema(("a", "b")),
                   lambda: lake.sql("CREATE SCHEMA lake.a.b", dialect="duckdb")):
        with pytest.raises(DuckLakeError, match=words) as info:
            action()
        assert ("automatic_migration=True" if version == "1.0" else "AUTOMATIC_MIGRATION") in str(info.value)
    with pytest.raises(UnsupportedSqlError, match="'a' is not this lake.*not support nested schemas"):
        lake.sql("CREATE SCHEMA a.b", dialect="duckdb")  # before 1.1 this named catalog a
    assert lake.current_snapshot() == before
    lake.create_schema("x.y")  # as before 1.1: a string is one schema name here
    assert lake.schemas() == ["main", "a", "x.y"]
    lake.create_table("x.y.t", "id INT")  # and three parts find it
    assert lake.table_info('"x.y".t').schema_name == "x.y"


def test_migrated_catalog_takes_nested_schemas(tmp_path):
    old = _attach(tmp_path, "1.0")
    old.create_schema("sales")
    old.create_table("sales.t", "id INT")
    old.close()
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "meta_data"),
                           automatic_migration=True, ducklake_version="1.1")
    lake.create_schema("sales.europe")
    assert lake.schemas() == ["main", "sales", "sales.europe"]
    assert _schema_rows(lake)["sales"][1] is None  # rows from before the migration are top level


def test_reference_binary_reads_the_rest_of_the_catalog(tmp_path):
    """The offline binary ('1.1-dev1' layout, no nested schemas) opens a 1.1 catalog holding nested schemas; it does
    not read parent_schema_id, so it sees each schema by its own name (a nested schema as a top-level one), and
    reads the tables as we wrote them."""
    require_ref11()
    lake = _attach(tmp_path)
    lake.create_table("t", "id INT")
    lake.write(pa.table({"id": pa.array([1, 2, 3], pa.int32())}), "t")
    lake.create_schema("sales")
    lake.create_schema("sales.europe")
    lake.create_table("sales.europe.orders", ORDERS)
    lake.write(pa.table({"order_id": pa.array([7], pa.int32()), "amount": [1.5]}), "sales.europe.orders")
    lake.close()
    copy = tmp_path / "copy.sqlite"  # the binary refuses the released '1.1' by name: show it a '1.1-dev1' copy
    shutil.copy(tmp_path / "meta.sqlite", copy)
    with sqlite3.connect(copy) as con:
        con.execute("UPDATE ducklake_metadata SET value = '1.1-dev1' WHERE key = 'version'")
    results = run(attach_sql(f"sqlite:{copy}", str(tmp_path / "meta_data")) +
                  "SELECT sum(id)::INT AS s FROM lake.main.t;"
                  "SELECT schema_name FROM duckdb_schemas() WHERE database_name = 'lake' ORDER BY 1;"
                  "SELECT order_id FROM lake.europe.orders;")
    assert results[0] == [{"s": 6}]
    assert [r["schema_name"] for r in results[1]] == ["europe", "main", "sales"]
    assert results[2] == [{"order_id": 7}]


@pytest.mark.python_workers  # the stream between two nested schemas' tables
def test_spark_reads_and_writes_a_nested_schema_table(tmp_path, spark):
    lake = DuckLake.attach(f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data"), ducklake_version="1.1",
                           spark=spark, small_data_threshold=0)
    lake.sql("CREATE SCHEMA lake.sales", dialect="duckdb")
    lake.sql("CREATE SCHEMA lake.sales.europe", dialect="duckdb")
    lake.create_table("sales.europe.orders", "order_id INT, amount DOUBLE")
    lake.write(spark.createDataFrame([(1, 25.0), (2, 7.5)], "order_id INT, amount DOUBLE"), "sales.europe.orders")
    assert sorted(tuple(r) for r in lake.read("sales.europe.orders").collect()) == [(1, 25.0), (2, 7.5)]
    lake.sql("INSERT INTO sales.europe.orders VALUES (3, 1.0)", dialect="duckdb")
    for query, dialect in [("SELECT sum(amount) AS s FROM lake.sales.europe.orders", "duckdb"),
                           ("SELECT sum(amount) AS s FROM sales.europe.orders", "spark")]:
        assert lake.sql(query, dialect=dialect).collect()[0].s == 33.5
    views = {v.view: v.table for v in lake.register(spark)}
    assert views["sales_europe_orders"] == "sales.europe.orders"
    assert spark.sql("SELECT count(*) AS n FROM sales_europe_orders").collect()[0].n == 3
    frame = (spark.read.format("ducklake").option("catalog", f"sqlite:{tmp_path / 'meta.sqlite'}")
             .option("data_path", str(tmp_path / "data")).option("table", "sales.europe.orders").load())
    assert frame.count() == 3
    # a stream from one nested schema's table into another's
    lake.write_stream(lake.read_stream("sales.europe.orders"), ("sales", "europe", "copy"),
                      checkpoint_location=str(tmp_path / "checkpoint"), trigger={"availableNow": True}
                      ).awaitTermination()
    assert sorted(r.order_id for r in lake.read("sales.europe.copy").collect()) == [1, 2, 3]


def test_concurrent_drop_of_a_parent_conflicts(tmp_path):
    lake = _attach(tmp_path)
    other = _attach(tmp_path)  # a second writer on the same catalog
    lake.create_schema("sales")
    lake.create_schema("sales.europe")
    for stage, what in [(lambda tx: tx.create_table("sales.europe.t", "id INT"), "its schema was dropped"),
                        (lambda tx: tx.create_schema("sales.asia"), "its parent schema was dropped")]:
        with pytest.raises(ConflictError, match=what):
            with lake.transaction() as tx:
                stage(tx)
                other.drop_schema("sales", cascade=True)  # commits while tx is open
        assert lake.schemas() == ["main"]
        lake.create_schema("sales")
        lake.create_schema("sales.europe")
    with other.transaction() as tx:  # the other way round: CASCADE drops the tree as it is when it commits
        tx.drop_schema("sales", cascade=True)
        lake.create_schema("sales.asia")
    assert lake.schemas() == ["main"]
