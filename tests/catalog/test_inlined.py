"""Inlined data codecs against what DuckDB's reference stores and reads, on SQLite, DuckDB and PostgreSQL catalogs."""

from __future__ import annotations

import datetime as dt
import math
import re
from decimal import Decimal

import pyarrow as pa
import pytest
import sqlalchemy as sa

from spark_ducklake.catalog.inlined import codec as inlined
from spark_ducklake.catalog.reads import reader
from spark_ducklake.spec.model import Column
from spark_ducklake.spec.types import to_arrow_type
from tests.support.reference import attach, connect

# Every type with an Arrow mapping, nested in nested included. Top-level `st` holds only what the reference
# itself can read back from a SQLite/PostgreSQL catalog (see the module docstring of inlined.py).
DDL = """id INTEGER, b BOOLEAN, i8 TINYINT, i16 SMALLINT, i32 INTEGER, i64 BIGINT, u8 UTINYINT, u16 USMALLINT,
 u32 UINTEGER, u64 UBIGINT, i128 HUGEINT, u128 UHUGEINT, f32 FLOAT, f64 DOUBLE, d41 DECIMAL(4,1),
 d183 DECIMAL(18,3), d3810 DECIMAL(38,10), s VARCHAR, j JSON, bl BLOB, dt DATE, t TIME, ttz TIMETZ, ts TIMESTAMP,
 tstz TIMESTAMPTZ, tss TIMESTAMP_S, tsms TIMESTAMP_MS, tsns TIMESTAMP_NS, iv INTERVAL, u UUID,
 li INTEGER[], ls VARCHAR[], lll INTEGER[][], st STRUCT("a b" INTEGER, s VARCHAR, l DOUBLE[]),
 m MAP(VARCHAR, INTEGER),
 lst STRUCT(x INTEGER, s VARCHAR, d DATE, tz TIMESTAMPTZ, u UUID, iv INTERVAL, t TIME, bl BLOB, f FLOAT,
            dec DECIMAL(9,2), h HUGEINT, ns TIMESTAMP_NS, ttz TIMETZ)[],
 mm MAP(INTEGER, VARCHAR[]), lm MAP(VARCHAR, VARCHAR)[], lb BLOB[],
 stn STRUCT(nest STRUCT(v VARCHAR, n INTEGER[]), m MAP(VARCHAR, INTEGER))"""

TRICKY = ["a", "", " sp ", "NULL", "null", "it's", "''", "x\\", "a\\\\b", "\\'", "c,d", "[x]", "{y}", "k=v",
          "a: b", "new\nline", "\ttab", "ü€😀", '"dq"', "x\"", "Null"]
_LST = ("STRUCT(x INTEGER, s VARCHAR, d DATE, tz TIMESTAMPTZ, u UUID, iv INTERVAL, t TIME, bl BLOB, f FLOAT, "
        "dec DECIMAL(9,2), h HUGEINT, ns TIMESTAMP_NS, ttz TIMETZ)")
_S = ", ".join("'" + s.replace("'", "''") + "'" for s in TRICKY)

ROWS = f"""
(1, true, -128, -32768, -2147483648, -9223372036854775808, 255, 65535, 4294967295, 18446744073709551615,
 -99999999999999999999999999999999999999, 99999999999999999999999999999999999999, 'nan'::FLOAT, '-inf'::DOUBLE,
 -999.9, -123456789012345.678, -1234567890123456789012345678.0123456789,
 'a''b"c,d[e]{{f}}=g: h\\i
 new ü', '{{"k": [1, "x, ]"]}}', '\\x00\\xFF''\\x5C abc'::BLOB, '2024-02-29', '23:59:59.999999', '12:34:56+05:30',
 '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05.123456+02', '2024-01-02 03:04:05', '2024-01-02 03:04:05.123',
 '2024-01-02 03:04:05.123456789', INTERVAL '1 year 2 months 3 days 04:05:06.789',
 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
 [1, NULL, -3], [{_S}, NULL], [[1, 2], [], NULL, [NULL]],
 {{'a b': 7, 's': 'plain text', 'l': [1.5::DOUBLE, 'nan', '-inf', NULL]}},
 MAP {{'k': 1, 'x=y': 2, 'NULL': NULL, '': 0, 'a,b': 3, '{{}}': 4, 'it''s': 5}},
 [{{'x': 1, 's': 'o''k\\', 'd': '2024-02-29', 'tz': '2024-01-02 03:04:05.5+01',
   'u': 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
   'iv': INTERVAL '-1 year 3 days -00:00:01.5', 't': '01:02:03.5', 'bl': 'a,''\\x5Cb'::BLOB, 'f': 0.1, 'dec': -12.5,
   'h': -170141183460469231731687303715884105, 'ns': '2024-01-02 03:04:05.123456789',
   'ttz': '01:02:03-07'}}::{_LST}, NULL,
  {{'x': NULL, 's': NULL, 'd': NULL, 'tz': NULL, 'u': NULL, 'iv': NULL, 't': NULL, 'bl': NULL, 'f': 'nan', 'dec': NULL,
   'h': NULL, 'ns': NULL, 'ttz': NULL}}::{_LST}],
 MAP {{1: ['a', 'b c'], 2: NULL, 3: []}}, [MAP {{'a': 'b', 'k=': '=v'}}, MAP {{}}, NULL],
 ['\\x00\\xFF'::BLOB, 'a b,'::BLOB, NULL],
 {{'nest': {{'v': 'w', 'n': [1, NULL]}}, 'm': MAP {{'x': 1}}}}),
({", ".join(["2"] + ["NULL"] * 39)}),
(3, false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -0.0, 1e300, 0.5, 0.001, 0.0000000001, '', 'null', ''::BLOB, '0001-01-01',
 '00:00:00', '00:00:00-12', '1970-01-01', '1970-01-01 00:00:00+00', '1970-01-01', '1970-01-01', '1970-01-01',
 INTERVAL '-1 day -00:00:01', '00000000-0000-0000-0000-000000000000',
 [], [], [], {{'a b': NULL, 's': NULL, 'l': NULL}}, MAP {{}}, [], MAP {{}}, [], [], {{'nest': NULL, 'm': NULL}})
"""


def _engine(catalog: str) -> sa.Engine:
    kind, _, target = catalog.partition(":")
    if kind == "postgres":
        import psycopg

        return sa.create_engine("postgresql+psycopg://", creator=lambda: psycopg.connect(target),
                                poolclass=sa.pool.NullPool)
    return sa.create_engine(f"{kind}:///{target}", poolclass=sa.pool.NullPool)


def _lake(catalog: str, tmp_path, ddl: str, rows: str):
    """A lake whose table `t` (table id 1) got `rows` inlined by DuckDB; returns the DuckDB connection."""
    con = connect()
    attach(con, catalog, str(tmp_path / "data") + "/", data_inlining_row_limit=100)
    con.execute(f"CREATE TABLE lake.t ({ddl})")
    con.execute(f"INSERT INTO lake.t VALUES {rows}")
    assert con.execute("SELECT count(*) FROM glob(?)", [str(tmp_path / "data" / "**")]).fetchone()[0] == 0
    return con


def _columns(engine: sa.Engine) -> list[Column]:
    with engine.connect() as conn:
        return reader.load_columns(conn, [1], 1 << 40)[1]


def _read_ours(engine: sa.Engine, columns: list[Column]) -> pa.Table:
    dialect = engine.dialect.name
    table = inlined.inlined_data_table(sa.MetaData(), dialect, 1, 1, columns)
    with engine.connect() as conn:
        rows = conn.execute(sa.select(*inlined.select_columns(table, columns, dialect))
                            .order_by(table.c[inlined.ROW_ID])).mappings().all()
    return inlined.decode_rows(rows, columns, dialect)


def _comparable_type(col: Column) -> str:
    """DuckDB type whose Arrow form is `to_arrow_type(col)` (string-mapped types as VARCHAR)."""
    if col.type == "list":
        return _comparable_type(col.children[0]) + "[]"
    if col.type == "map":
        return f"MAP({_comparable_type(col.children[0])}, {_comparable_type(col.children[1])})"
    if col.type == "struct":
        return "STRUCT(" + ", ".join(f'"{c.name}" {_comparable_type(c)}' for c in col.children) + ")"
    return {"uuid": "VARCHAR", "time": "VARCHAR", "timetz": "VARCHAR", "interval": "VARCHAR", "json": "VARCHAR",
            "uint64": "DECIMAL(20,0)", "int128": "DECIMAL(38,0)", "uint128": "DECIMAL(38,0)",
            "timestamp_s": "TIMESTAMP", "timestamp_ms": "TIMESTAMP", "timestamp_ns": "TIMESTAMP"}.get(
        col.type, inlined.duckdb_type_name(col))


def _duckdb_select(con, columns: list[Column]) -> pa.Table:
    exprs = ", ".join(f'CAST("{c.name}" AS {_comparable_type(c)}) AS "{c.name}"' for c in columns)
    got = con.execute(f"SELECT {exprs} FROM lake.t ORDER BY id").to_arrow_table()
    return got.cast(pa.schema([pa.field(c.name, to_arrow_type(c)) for c in columns]))


def _plain(value):
    """Python values with NaN made comparable and timestamps in UTC."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.timezone.utc)
    return value


def _assert_same(ours: pa.Table, theirs: pa.Table) -> None:
    assert ours.schema.names == theirs.schema.names
    for name in ours.schema.names:
        assert ours.column(name).type == theirs.column(name).type, name
        assert _plain(ours.column(name).to_pylist()) == _plain(theirs.column(name).to_pylist()), name


def _detach(con) -> None:
    con.execute("DETACH lake")


# --------------------------------------------------------------------------------------------- both directions
@pytest.mark.not_on_mysql("the reference cannot create nested columns in a MySQL catalog (inlined table fails)")
def test_reference_rows_decode_to_duckdb_select(catalog, tmp_path):
    """Forward: rows DuckDB inlined, decoded by us, equal DuckDB's own SELECT."""
    con = _lake(catalog, tmp_path, DDL, ROWS)
    _detach(con)  # a DuckDB catalog file can be open in one place only
    engine = _engine(catalog)
    columns = _columns(engine)
    ours = _read_ours(engine, columns)
    engine.dispose()
    attach(con, catalog, str(tmp_path / "data") + "/")
    _assert_same(ours, _duckdb_select(con, columns))
    assert ours.column("tsns")[0].as_py() == dt.datetime(2024, 1, 2, 3, 4, 5, 123456)  # truncated to micros
    con.close()


REVERSE_STRUCT = 'sx STRUCT(s VARCHAR, d DATE, f DOUBLE, bl BLOB, "q\'x" INTEGER, iv INTERVAL, tz TIMESTAMPTZ)'


def _python_rows(columns: list[Column]) -> pa.Table:
    """Values written by us: everything tricky, top-level struct included."""
    by = {c.name: c for c in columns}
    row1 = {
        "id": 1, "b": True, "i8": -128, "i16": -32768, "i32": -(2**31), "i64": -(2**63), "u8": 255, "u16": 65535,
        "u32": 2**32 - 1, "u64": Decimal(2**64 - 1), "i128": Decimal(-(10**38) + 1), "u128": Decimal(10**38 - 1),
        "f32": float("nan"), "f64": float("-inf"), "d41": Decimal("-999.9"), "d183": Decimal("-123456789012345.678"),
        "d3810": Decimal("-1234567890123456789012345678.0123456789"), "s": "a'b\"c,d[e]{f}=g: h\\i\n new ü",
        "j": '{"k": [1, "x, ]"]}', "bl": b"\x00\xff'\\ abc", "dt": dt.date(2024, 2, 29), "t": "23:59:59.999999",
        "ttz": "12:34:56+05:30", "ts": dt.datetime(2024, 1, 2, 3, 4, 5, 123456),
        "tstz": dt.datetime(2024, 1, 2, 1, 4, 5, 123456, tzinfo=dt.timezone.utc),
        "tss": dt.datetime(2024, 1, 2, 3, 4, 5), "tsms": dt.datetime(2024, 1, 2, 3, 4, 5, 123000),
        "tsns": dt.datetime(2024, 1, 2, 3, 4, 5, 123456), "iv": "1 year 2 months 3 days 04:05:06.789",
        "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        "li": [1, None, -3], "ls": TRICKY + [None], "lll": [[1, 2], [], None, [None]],
        "st": {"a b": 7, "s": "it's \\ 'x'", "l": [1.5, float("nan"), None]},
        "m": [("k", 1), ("x=y", 2), ("NULL", None), ("", 0), ("it's", 5), ("\\", 6)],
        "lst": [{"x": 1, "s": "o'k\\", "d": dt.date(2024, 2, 29),
                 "tz": dt.datetime(2024, 1, 2, 2, 4, 5, 500000, tzinfo=dt.timezone.utc),
                 "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "iv": "-1 year 3 days -00:00:01.5", "t": "01:02:03.5",
                 "bl": b"a,'\\b\x00", "f": 0.1, "dec": Decimal("-12.50"), "h": Decimal(-(10**37)),
                 "ns": dt.datetime(2024, 1, 2, 3, 4, 5, 123456), "ttz": "01:02:03-07"}, None],
        "mm": [(1, ["a", "b c", "'"]), (2, None), (3, [])], "lm": [[("a", "b"), ("k=", "=v")], [], None],
        "lb": [b"\x00\xff", b"a b,", b"", None], "stn": {"nest": {"v": "w'\\", "n": [1, None]}, "m": [("x", 1)]},
        "sx": {"s": "it's a \\ test, {x}", "d": dt.date(2024, 2, 29), "f": float("nan"), "bl": b"\x00'",
               "q'x": 3, "iv": "1 month", "tz": dt.datetime(2024, 1, 2, tzinfo=dt.timezone.utc)},
    }
    row2 = {"id": 2}
    row3 = {"id": 3, "s": "", "j": "null", "bl": b"", "f64": -0.0, "li": [], "ls": [""], "m": [],
            "st": {"a b": None, "s": None, "l": None}, "sx": {"s": "", "d": None, "f": None, "bl": b"", "q'x": None,
                                                             "iv": None, "tz": None}}
    rows = [row1, row2, row3]
    return pa.table({name: pa.array([r.get(name) for r in rows], type=to_arrow_type(col))
                     for name, col in by.items()})


@pytest.mark.not_on_mysql("the reference cannot create nested columns in a MySQL catalog (inlined table fails)")
def test_our_rows_read_by_duckdb(catalog, tmp_path):
    """Reverse: rows we encode into the reference's inlined table read back in DuckDB as the same values."""
    con = _lake(catalog, tmp_path, DDL + ", " + REVERSE_STRUCT, "(1" + ", NULL" * 40 + "), (2" + ", NULL" * 40
                + "), (3" + ", NULL" * 40 + ")")
    _detach(con)
    engine = _engine(catalog)
    columns = _columns(engine)
    data = _python_rows(columns)
    encoded = inlined.encode_rows(data, columns, engine.dialect.name)
    table = inlined.inlined_data_table(sa.MetaData(), engine.dialect.name, 1, 1, columns)
    with engine.begin() as conn:
        for row_id, values in enumerate(encoded):
            conn.execute(table.update().where(table.c[inlined.ROW_ID] == row_id).values(**values))
    ours = _read_ours(engine, columns)
    engine.dispose()
    _assert_same(ours, data)
    attach(con, catalog, str(tmp_path / "data") + "/")
    _assert_same(_duckdb_select(con, columns), data)
    con.close()


# ------------------------------------------------------------------------------------- the reference's SQL structs
NASTY_STRUCT = ("st STRUCT(s VARCHAR, d DATE, ts TIMESTAMP, tz TIMESTAMPTZ, u UUID, iv INTERVAL, t TIME, bl BLOB, "
                "f FLOAT, db DOUBLE, b BOOLEAN, h HUGEINT, j JSON, \"q'x\" INTEGER, nest STRUCT(v VARCHAR, w DATE), "
                "l VARCHAR[])")
NASTY_VALUE = ("{'s': 'it''s a \\ test, {x}', 'd': DATE '2024-02-29', 'ts': TIMESTAMP '2024-01-02 03:04:05.5', "
               "'tz': TIMESTAMPTZ '2024-01-02 03:04:05+02', 'u': 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', "
               "'iv': INTERVAL '1 year 3 days 00:00:01.5', 't': TIME '01:02:03.5', 'bl': '\\x00''x'::BLOB, "
               "'f': 'nan'::FLOAT, 'db': '-inf'::DOUBLE, 'b': true, 'h': -1234567890123456789012345, "
               "'j': '{\"a\": \"b, c\"}', 'q''x': 1, 'nest': {'v': 'o''k', 'w': DATE '2000-01-01'}, "
               "'l': ['a''b', NULL]}")


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_reference_sql_style_structs_decoded(kind, tmp_path, request):
    """Top-level structs the reference writes as SQL text (which it cannot read back itself) decode exactly."""
    catalog = request.getfixturevalue("pg_catalog") if kind == "postgres" else f"sqlite:{tmp_path / 'm.sqlite'}"
    con = _lake(catalog, tmp_path, "id INTEGER, " + NASTY_STRUCT, f"(1, {NASTY_VALUE}), (2, NULL)")
    engine = _engine(catalog)
    with engine.connect() as conn:
        raw = conn.execute(sa.text("SELECT st FROM ducklake_inlined_data_1_1 ORDER BY row_id")).scalar()
    assert "CAST(" in raw and "'it''s" in raw  # the SQL form, not the cast form
    columns = _columns(engine)
    ours = _read_ours(engine, columns)
    engine.dispose()
    expected = con.execute(f"SELECT CAST(x AS {_comparable_type(columns[1])}) AS st FROM "
                           f"(VALUES (CAST({NASTY_VALUE} AS {NASTY_STRUCT[3:]})), (NULL)) v(x)").to_arrow_table()
    _assert_same(ours.select(["st"]), expected.cast(pa.schema([pa.field("st", to_arrow_type(columns[1]))])))
    con.close()


# --------------------------------------------------------------------------------------------- text renderings
def _col(type_: str, *children: Column, name: str = "c") -> Column:
    return Column(column_id=1, name=name, type=type_, children=list(children))


STRINGS = TRICKY + ["\x01", "a\x0bb", "\xa0x", "x\u3000", "[a b", "a ] b", "{'k': 1}", "NULLX", " NULL"]


def test_parser_reads_duckdb_renderings_of_strings():
    """DuckDB's VARCHAR rendering of lists, structs and maps of strings parses back to the same strings."""
    con = connect()
    lst = _col("list", _col("varchar", name="element"))
    st = _col("struct", _col("varchar", name="k"), _col("varchar", name="it's, \"x\""))
    mp = _col("map", _col("varchar", name="key"), _col("varchar", name="value"))
    for s in STRINGS:
        text_l, text_s, text_m = con.execute(
            "SELECT [?, NULL]::VARCHAR, {'k': ?, 'it''s, \"x\"': NULL}::VARCHAR, map([?], [?])::VARCHAR",
            [s, s, s, s]).fetchone()
        assert inlined.parse_nested(lst, text_l, reference_sql_structs=False) == [s, None], text_l
        assert inlined.parse_nested(st, text_s, reference_sql_structs=False) == {"k": s, "it's, \"x\"": None}
        assert inlined.parse_nested(mp, text_m) == [(s, s)], text_m


def test_renderer_is_parsed_by_duckdb():
    """What we render DuckDB casts back to the same values (strings, blobs, names needing quotes)."""
    con = connect()
    strings = _col("list", _col("varchar", name="element"))
    col = _col("struct", _col("varchar", name="it's \"q\" \\"),
               _col("list", _col("blob", name="element"), name="b"),
               _col("map", _col("varchar", name="key"), _col("float64", name="value"), name="m"))
    blobs = [bytes(range(256)), b"", b"a,b]", b"NULL", b" x ", b"}{"]
    value = {"it's \"q\" \\": "x'\\y", "b": blobs + [None],
             "m": [(s, 1.5) for s in STRINGS if "]" not in s and "}" not in s] + [("nan", float("nan"))]}
    for column, data in ((strings, STRINGS + [None]), (col, value)):
        text = inlined.render(column, data)
        got = con.execute(f"SELECT CAST(? AS {inlined.duckdb_type_name(column)})", [text]).fetchone()[0]
        if column is col:
            got["m"] = list(got["m"].items())
        assert _plain(got) == _plain(data)
        assert _plain(inlined.parse_nested(column, text)) == _plain(data)


def test_values_duckdb_cannot_read_back_are_not_inlined():
    """`]`/`}` in strings two levels deep break DuckDB's parser of nested text: such rows go to Parquet."""
    con = connect()
    nested = _col("list", _col("list", _col("varchar", name="element"), name="element"))
    text = inlined.render(nested, [["a]b"]])
    assert con.execute("SELECT TRY_CAST(? AS VARCHAR[][])", [text]).fetchone()[0] != [["a]b"]]
    good, bad = pa.table({"c": [[["a[b", "{"]]]}), pa.table({"c": [[["a]b"]]]})
    assert inlined.inlinable([nested], "sqlite", good) and inlined.inlinable([nested], "duckdb", bad)
    assert not inlined.inlinable([nested], "sqlite", bad) and not inlined.inlinable([nested], "postgresql", bad)


def test_scalar_text_edges():
    """Float32 shortest text, time zones with seconds, BC dates rejected loudly."""
    f32 = _col("float32")
    assert inlined.scalar_text(f32, pa.array([0.1], pa.float32()).to_pylist()[0]) == "0.1"
    tz = _col("timestamptz")
    assert inlined.parse_scalar(tz, "1850-01-01 00:00:00+00:53:28") == dt.datetime(
        1849, 12, 31, 23, 6, 32, tzinfo=dt.timezone.utc)
    with pytest.raises(ValueError, match="outside"):
        inlined.parse_scalar(_col("date"), "0044-03-15 (BC)")
    assert re.fullmatch(r"ducklake_inlined_data_3_7", inlined.inlined_table_name(3, 7))
    assert inlined.inlined_delete_table_name(3) == "ducklake_inlined_delete_3"


@pytest.mark.not_on_mysql("the reference cannot create nested columns in a MySQL catalog (inlined table fails)")
def test_column_types_match_the_reference(catalog, tmp_path):
    """Our table definitions create the same column types the reference creates, in each catalog."""
    con = _lake(catalog, tmp_path, DDL, "(1" + ", NULL" * 39 + ")")
    con.execute("CREATE TABLE lake.p AS SELECT range AS a FROM range(200)")
    con.execute("DELETE FROM lake.p WHERE a < 2")  # an inlined delete of Parquet rows
    con.close()
    engine = _engine(catalog)
    columns = _columns(engine)
    dialect = engine.dialect.name
    md = sa.MetaData()
    ours = inlined.inlined_data_table(md, dialect, 1, 99, columns)
    ours_del = inlined.inlined_delete_table(md, dialect, 99)
    with engine.begin() as conn:
        md.create_all(conn)
        inspector = sa.inspect(conn)

        def types(name: str) -> list[str]:
            if dialect == "duckdb":  # duckdb_engine's inspector queries pg_catalog tables DuckDB lacks
                return list(conn.execute(sa.text("SELECT data_type FROM information_schema.columns WHERE "
                                                 "table_name = :n ORDER BY ordinal_position"), {"n": name}).scalars())
            return [str(c["type"]).upper() for c in inspector.get_columns(name)]

        assert types(ours.name) == types("ducklake_inlined_data_1_1")
        assert types(ours_del.name) == types(inlined.inlined_delete_table_name(2))
    engine.dispose()


def test_user_columns_named_like_the_system_columns_of_a_10_catalog(tmp_path):
    """On a 1.0 catalog the inlined tables' system columns are row_id, begin_snapshot, end_snapshot: as the
    reference does, a column of such a name is refused while inlining is on (CREATE, ADD, RENAME) and allowed with
    data_inlining_row_limit 0, and inlining cannot be turned on again for that table (test/sql/data_inlining/
    inlining_reserved_column_names.test). Its small writes go to Parquet, which DuckDB 1.5.5 reads."""
    from spark_ducklake import DuckLake
    from spark_ducklake.errors import InvalidNameError

    catalog, data = f"sqlite:{tmp_path / 'meta.sqlite'}", str(tmp_path / "data")
    lake = DuckLake.attach(catalog, data, ducklake_version="1.0")
    try:
        with pytest.raises(InvalidNameError, match='Column name "Row_Id" is reserved by DuckLake for internal use '
                                                   "when data inlining is enabled"):
            lake.create_table("t", "Row_Id INT, x INT")
        lake.create_table("u", "i INT")
        with pytest.raises(InvalidNameError, match="reserved"):
            lake.sql("ALTER TABLE u ADD COLUMN begin_snapshot INT", dialect="duckdb")
        with pytest.raises(InvalidNameError, match="reserved"):
            lake.sql("ALTER TABLE u RENAME COLUMN i TO END_SNAPSHOT", dialect="duckdb")
        lake.set_option("data_inlining_row_limit", 0)
        lake.create_table("t", "Row_Id INT, x INT")
        with pytest.raises(InvalidNameError, match='Cannot enable data inlining for table "t". Column "Row_Id"'):
            lake.set_option("data_inlining_row_limit", 10, table_name="t")
        with pytest.raises(InvalidNameError, match='table "t"'):
            lake.set_option("data_inlining_row_limit", 10)
        lake.set_option("data_inlining_row_limit", 10, table_name="u")  # u has no such column
        lake.set_option("data_inlining_row_limit", 0, table_name="t")
        lake.set_option("data_inlining_row_limit", 10)  # t keeps its own 0
        lake.write(pa.table({"Row_Id": pa.array([1, 2], pa.int32()), "x": pa.array([10, 20], pa.int32())}), "t")
        lake.delete("t", "x = 10")
        assert lake.read_arrow("t").to_pylist() == [{"Row_Id": 2, "x": 20}]
        assert len(lake.list_files("t")) == 1
    finally:
        lake.close()
    # an attach without inlining (no option says otherwise) allows the names too
    with DuckLake.attach(f"sqlite:{tmp_path / 'off.sqlite'}", str(tmp_path / "off"), ducklake_version="1.0",
                         data_inlining_row_limit=0) as off:
        off.create_table("v", "row_id INT")
    con = connect()
    attach(con, catalog, data)
    assert con.execute("SELECT * FROM lake.t").fetchall() == [(2, 20)]
    con.close()
