"""Hostile inputs get a DuckLakeError naming the cause, never a raw Python, pyarrow or Spark error, and leave the
catalog and the data files as they were (issue 26, items 13 and 14). The in-process cases need no Spark; the
Spark-path ones (a missing file Spark lists, a cast Spark refuses) are in the spark-marked tests at the end."""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa

from spark_ducklake import DuckLake
from spark_ducklake.errors import (
    ConstraintError,
    ConversionError,
    DuckLakeError,
    InvalidArgumentError,
    InvalidNameError,
    SchemaMismatchError,
    StorageError,
)

ROWS = pa.table({"id": pa.array(range(20), pa.int64()), "v": [f"s{i}" for i in range(20)]})  # over the inlining limit
DEEP = "(" * 3000 + "id = 1" + ")" * 3000


def _state(lake: DuckLake) -> tuple:
    """The catalog's rows and the files under the data path: what a refused call must leave as they were."""
    with lake.engine.connect() as conn:
        names = sorted(n for n in sa.inspect(conn).get_table_names() if n.startswith("ducklake_"))
        rows = {n: sorted(map(tuple, conn.execute(sa.text(f'SELECT * FROM "{n}"'))), key=repr) for n in names}
    root = Path(lake.data_path)
    files = sorted(str(p) for p in root.rglob("*") if p.is_file()) if root.is_dir() else []
    return rows, files


def _one_file(lake: DuckLake) -> str:
    return lake.plan_scan("t").files[0].path


def _deleted_file(lake: DuckLake, action):
    """`action` on a table one of whose data files was deleted behind the lake's back."""
    path = _one_file(lake)
    os.remove(path)
    return lambda: action(lake), os.path.basename(path)


def _parquet(tmp_path: Path, name: str, table: pa.Table) -> str:
    path = tmp_path / name
    pq.write_table(table, path)
    return str(path)


def _truncated(tmp_path: Path) -> str:
    good = Path(_parquet(tmp_path, "good.parquet", ROWS))
    bad = tmp_path / "truncated.parquet"
    bad.write_bytes(good.read_bytes()[:-40])
    return str(bad)


def _random_bytes(tmp_path: Path) -> str:
    bad = tmp_path / "random.parquet"
    bad.write_bytes(os.urandom(700))
    return str(bad)


def _nulls_into_not_null(lake: DuckLake, tmp_path: Path):
    lake.create_table("n", "k BIGINT NOT NULL, s VARCHAR")
    path = _parquet(tmp_path, "nulls.parquet", pa.table({"k": pa.array([1, None, 3], pa.int64()), "s": ["a"] * 3}))
    return lambda: lake.add_data_files("n", path)


def _data_path_is_a_file(tmp_path: Path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    other = DuckLake.attach(f"sqlite:{tmp_path / 'other.sqlite'}", str(blocker))
    other.create_table("t", "id BIGINT, v VARCHAR")
    return other, lambda: other.write(ROWS, "t")


def _in_transaction(lake: DuckLake, body, **commit_args):
    def run():
        with lake.transaction(**commit_args) as tx:
            body(tx)
    return run


def _merge(lake: DuckLake, source, condition="target.id = source.id"):
    return lambda: lake.table("t").merge(source, condition).when_matched_update({"v": "source.v"}).execute()


# (id, setup(lake, tmp_path) -> action or (lake to check, action) or (action, word the message names), error class,
#  what the message must name)
CASES = [
    # ---- item 13: pyarrow's OSError / FileNotFoundError on the in-process path
    ("data-file-deleted-read", lambda lake, tmp: _deleted_file(lake, lambda lk: lk.read_arrow("t")), StorageError,
     r"missing.*restore"),
    ("data-file-deleted-delete", lambda lake, tmp: _deleted_file(lake, lambda lk: lk.delete("t", "id = 3")),
     StorageError, r"missing"),
    ("data-file-deleted-update", lambda lake, tmp: _deleted_file(lake, lambda lk: lk.update("t", set={"v": "'x'"})),
     StorageError, r"missing"),
    ("data-file-deleted-merge", lambda lake, tmp: _deleted_file(
        lake, lambda lk: _merge(lk, pa.table({"id": pa.array([1], pa.int64()), "v": ["m"]}))()),
     StorageError, r"missing"),
    ("table-name-300-bytes", lambda lake, tmp: lambda: lake.write(ROWS, "x" * 300), StorageError,
     r"longer than 255 bytes"),
    ("data-path-is-a-file", lambda lake, tmp: _data_path_is_a_file(tmp), StorageError, r"not a directory"),
    # ---- item 13: arguments of the wrong kind
    ("write-none", lambda lake, tmp: lambda: lake.write(None, "t"), InvalidArgumentError, r"NoneType"),
    ("write-str", lambda lake, tmp: lambda: lake.write("id,v\n1,a", "t"), InvalidArgumentError, r"str"),
    ("write-list-of-dicts", lambda lake, tmp: lambda: lake.write([{"id": 1, "v": "a"}], "t"),
     InvalidArgumentError, r"pa\.Table\.from_pylist"),
    ("update-set-list", lambda lake, tmp: lambda: lake.update("t", ["v"]), InvalidArgumentError, r"dict"),
    ("delete-condition-int", lambda lake, tmp: lambda: lake.delete("t", 5), InvalidArgumentError, r"condition"),
    ("merge-source-none", lambda lake, tmp: _merge(lake, None), InvalidArgumentError, r"source"),
    ("merge-condition-int", lambda lake, tmp: _merge(lake, ROWS, 5), InvalidArgumentError, r"condition"),
    ("duplicate-column-arrow", lambda lake, tmp: lambda: lake.write(
        pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=["id", "id"]), "t"), SchemaMismatchError,
     r"'id' more than once"),
    ("duplicate-column-pandas", lambda lake, tmp: lambda: lake.write(
        pd.DataFrame([[1, "a", "b"]], columns=["id", "v", "v"]), "t"), SchemaMismatchError, r"'v' more than once"),
    ("duplicate-column-merge", lambda lake, tmp: _merge(
        lake, pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=["id", "id"])), SchemaMismatchError,
     r"'id' more than once"),
    # ---- item 13: lone surrogates (no UTF-8 form), deep nesting, NUL in SQL
    ("surrogate-table-name", lambda lake, tmp: lambda: lake.create_table("x\udc80", "a INT"), InvalidNameError,
     r"surrogate"),
    ("surrogate-schema-name", lambda lake, tmp: lambda: lake.create_schema("s\ud800"), InvalidNameError,
     r"surrogate"),
    ("surrogate-column-name", lambda lake, tmp: lambda: lake.create_table("y", "`a\udc80` BIGINT"),
     InvalidNameError, r"surrogate"),
    ("surrogate-in-values", lambda lake, tmp: lambda: lake.write(pd.DataFrame({"id": [1], "v": ["a\udc80"]}), "t"),
     InvalidArgumentError, r"surrogate"),
    ("surrogate-in-condition", lambda lake, tmp: lambda: lake.delete("t", "v = 'a\udc80'"), InvalidArgumentError,
     r"surrogate"),
    ("surrogate-commit-message", lambda lake, tmp: lambda: lake.write(ROWS, "t", commit_message="m\udc80"),
     InvalidArgumentError, r"surrogate"),
    ("nested-3000-delete", lambda lake, tmp: lambda: lake.delete("t", DEEP), InvalidArgumentError, r"nested"),
    ("nested-3000-read", lambda lake, tmp: lambda: lake.read_arrow("t", where=DEEP), InvalidArgumentError,
     r"nested"),
    ("nested-3000-sql", lambda lake, tmp: lambda: lake.sql("SELECT * FROM t WHERE " + DEEP), InvalidArgumentError,
     r"nested"),
    ("nul-in-sql", lambda lake, tmp: lambda: lake.sql("DELETE FROM t WHERE v = 'a\0'"), InvalidArgumentError,
     r"NUL"),
    ("nul-in-duckdb-sql", lambda lake, tmp: lambda: lake.sql("SELECT * FROM t WHERE v = 'a\0'", dialect="duckdb"),
     InvalidArgumentError, r"NUL"),
    # ---- item 13: errors raised when a transaction block commits, or inside it
    ("transaction-commit", lambda lake, tmp: _in_transaction(lake, lambda tx: tx.write(ROWS, "t"),
                                                              commit_message="m\udc80"),
     InvalidArgumentError, r"surrogate"),
    ("transaction-write-none", lambda lake, tmp: _in_transaction(lake, lambda tx: tx.write(None, "t")),
     InvalidArgumentError, r"NoneType"),
    ("transaction-missing-file", lambda lake, tmp: _deleted_file(
        lake, lambda lk: _in_transaction(lk, lambda tx: tx.delete("t", "id = 3"))()), StorageError, r"missing"),
    # ---- item 14: misleading messages
    ("add-random-bytes", lambda lake, tmp: lambda: lake.add_data_files("t", _random_bytes(tmp)),
     SchemaMismatchError, r"not a Parquet file"),
    ("add-truncated", lambda lake, tmp: lambda: lake.add_data_files("t", _truncated(tmp)), SchemaMismatchError,
     r"not a Parquet file"),
    ("add-nulls-into-not-null", _nulls_into_not_null, ConstraintError, r"NOT NULL constraint failed: n\.k"),
    ("read-arrow-version-and-timestamp", lambda lake, tmp: lambda: lake.read_arrow(
        "t", version=1, timestamp=dt.datetime.now()), InvalidArgumentError, r"version=? or timestamp"),
    ("to-pandas-version-and-timestamp", lambda lake, tmp: lambda: lake.to_pandas(
        "t", version=1, timestamp=dt.datetime.now()), InvalidArgumentError, r"version=? or timestamp"),
    ("read-version-and-timestamp", lambda lake, tmp: lambda: lake.read(
        "t", version=1, timestamp=dt.datetime.now()), InvalidArgumentError, r"version=? or timestamp"),
    ("plan-scan-version-and-timestamp", lambda lake, tmp: lambda: lake.plan_scan(
        "t", version=1, timestamp=dt.datetime.now()), InvalidArgumentError, r"version=? or timestamp"),
    ("restore-version-and-timestamp", lambda lake, tmp: lambda: lake.restore(
        "t", version=1, timestamp=dt.datetime.now()), InvalidArgumentError, r"version=? or timestamp"),
    ("attach-snapshot-version-and-time", lambda lake, tmp: lambda: DuckLake.attach(
        f"sqlite:{tmp / 'meta.sqlite'}", snapshot_version=1, snapshot_time=dt.datetime.now()), InvalidArgumentError,
     r"snapshot_version or snapshot_time"),
    ("commit-message-int", lambda lake, tmp: lambda: lake.write(ROWS, "t", commit_message=5), InvalidArgumentError,
     r"commit_message must be a string"),
    ("author-int", lambda lake, tmp: lambda: lake.create_schema("s2", author=5), InvalidArgumentError,
     r"author must be a string"),
    ("extra-info-dict", lambda lake, tmp: lambda: lake.delete("t", "id = 1", extra_info={"a": 1}),
     InvalidArgumentError, r"extra_info must be a string"),
    ("transaction-commit-message-int", lambda lake, tmp: _in_transaction(lake, lambda tx: tx.write(ROWS, "t"),
                                                                          commit_message=5),
     InvalidArgumentError, r"commit_message must be a string"),
]


@pytest.fixture
def filled(lake):
    """The lake with table t (id BIGINT, v VARCHAR): one Parquet file written in-process and one inlined row."""
    lake.create_table("t", "id BIGINT, v VARCHAR")
    lake.write(ROWS, "t")
    lake.write(pa.table({"id": pa.array([100], pa.int64()), "v": ["inlined"]}), "t")
    return lake


@pytest.mark.parametrize(("setup", "error", "named"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_hostile_input_is_refused_naming_the_cause(filled, tmp_path, setup, error, named):
    made = setup(filled, tmp_path)
    checked, word = filled, None
    if isinstance(made, tuple) and isinstance(made[0], DuckLake):
        checked, action = made
    elif isinstance(made, tuple):
        action, word = made
    else:
        action = made
    before = _state(checked)
    with pytest.raises(DuckLakeError) as info:
        action()
    message = str(info.value)
    assert isinstance(info.value, error), f"{type(info.value).__name__}: {message}"
    assert "\n" not in message and len(message) < 1200, message
    assert re.search(named, message), message
    if word is not None:
        assert word in message  # the missing file, by name
    assert _state(checked) == before


def test_quoted_column_names_take_doubled_quotes(lake):
    """`"a""b"` in a DDL column list is the column a"b (DuckDB's identifier quoting), not an empty name."""
    lake.create_table("q", '"a""b" INT, "c d" VARCHAR, `e``f` BIGINT')
    assert [c.name for c in lake.table_info("q").columns] == ['a"b', "c d", "e`f"]
    lake.write(pa.table({'a"b': pa.array([1], pa.int32()), "c d": ["x"], "e`f": pa.array([2], pa.int64())}), "q")
    assert lake.read_arrow("q").to_pylist() == [{'a"b': 1, "c d": "x", "e`f": 2}]


def test_add_data_files_takes_not_null_columns_without_nulls(lake, tmp_path):
    lake.create_table("n", "k BIGINT NOT NULL, s VARCHAR")
    path = _parquet(tmp_path, "ok.parquet", pa.table({"k": pa.array([1, 2], pa.int64()), "s": [None, "b"]}))
    assert lake.add_data_files("n", path) == [path]
    assert lake.read_arrow("n").num_rows == 2


@pytest.mark.parametrize("text", [
    "[PATH_NOT_FOUND] Path does not exist: file:/lake/main/t/f1.parquet. SQLSTATE: 42K03",
    "[FAILED_READ_FILE.FILE_NOT_EXIST] Encountered error while reading file file:/lake/main/t/f1.parquet. File does "
    "not exist. It is possible the underlying files have been updated.",
    "py4j.protocol.Py4JJavaError: An error occurred while calling o1.count.\n: java.io.FileNotFoundException: File "
    "file:/lake/main/t/f1.parquet does not exist",
])
def test_spark_missing_file_errors_name_the_file(text):
    """The three ways Spark reports a data file that is gone (listing over Connect, reading, py4j's trace)."""
    from spark_ducklake.operations.error_causes import missing_file

    error = missing_file(text)
    assert isinstance(error, StorageError) and "file:/lake/main/t/f1.parquet " in str(error), str(error)


# ----------------------------------------------------------------------------------------- the Spark path
@pytest.mark.lake(data_inlining_row_limit=0)
def test_spark_path_errors_are_translated(lake, spark, tmp_path):
    lake.create_table("t", "id BIGINT, v VARCHAR")
    lake.write(spark.range(30).selectExpr("id", "CAST(id AS STRING) AS v"), "t")
    lake.write(spark.range(30, 60).selectExpr("id", "CAST(id AS STRING) AS v"), "t")
    lake.small_data_threshold = 0  # every call below moves its data on Spark
    before = _state(lake)
    for action, error, named in [
        (lambda: lake.update("t", set={"id": "'abc'"}), ConversionError, r"'abc'.*BIGINT"),
        (lambda: lake.sql("INSERT INTO t VALUES ('abc', 'x')"), ConversionError, r"abc.*BIGINT"),
        (lambda: lake.sql("INSERT INTO t VALUES ('abc', 'x')", dialect="duckdb"), ConversionError, r"abc.*BIGINT"),
        (lambda: lake.sql("SELECT * FROM t AT (VERSION => 1/0)", dialect="duckdb"), ConversionError,
         r"(?i)division by zero"),
        (lambda: lake.sql("SELECT 1\0"), InvalidArgumentError, r"NUL"),
        (lambda: lake.delete("t", "v = 'a\udc80'"), InvalidArgumentError, r"surrogate"),  # py4j / Connect's proto
    ]:
        with pytest.raises(error) as info:
            action()
        print(type(info.value).__name__, info.value)
        assert "\n" not in str(info.value) and re.search(named, str(info.value)), str(info.value)
    assert _state(lake) == before
    gone = _one_file(lake)
    os.remove(gone)
    before = _state(lake)
    for action in (lambda: lake.delete("t", "id = 3"), lambda: lake.update("t", "id < 40", {"v": "'x'"}),
                   lambda: lake.merge_adjacent_files("t")):
        with pytest.raises(StorageError) as info:
            action()
        print(type(info.value).__name__, info.value)
        assert os.path.basename(gone) in str(info.value) and "missing" in str(info.value), str(info.value)
    assert _state(lake) == before
