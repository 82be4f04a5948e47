"""DuckDB's keyword list and quoting rule (spec/duckdb_keywords.py) against the installed DuckDB, and where they show:
snapshots() changes and stored macro SQL, written as DuckDB writes them."""

from __future__ import annotations

import pytest

from spark_ducklake.spec.duckdb_keywords import KEYWORDS, optionally_quoted
from spark_ducklake.spec.snapshot_changes import display_changes
from spark_ducklake.sql.macro_ddl import _body_sql


def test_keywords_are_duckdbs():
    duckdb = pytest.importorskip("duckdb")
    assert KEYWORDS == {r[0] for r in duckdb.sql("SELECT keyword_name FROM duckdb_keywords()").fetchall()}


def test_names_quoted_as_duckdb_writes_them():
    assert [optionally_quoted(n) for n in ("t", "MyTable", "simple", "a b", "1x", 'q"t')] == \
        ["t", "MyTable", '"simple"', '"a b"', '"1x"', '"q""t"']
    shown = display_changes('created_scalar_macro:"main"."simple",created_table:"main"."MyTable",'
                            'created_view:"main"."a b"')
    assert shown == {"scalar_macros_created": ['main."simple"'], "tables_created": ["main.MyTable"],
                     "views_created": ['main."a b"']}
    assert _body_sql('SELECT name, b, "MyCol", "select" FROM test_tbl WHERE (id>=a or name=_name)', "table") == \
        'SELECT "name", b, MyCol, "select" FROM test_tbl WHERE ((id >= a) OR ("name" = _name))'
