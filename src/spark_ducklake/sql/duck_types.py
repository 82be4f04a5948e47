"""DuckDB column types Spark has no type for (USMALLINT, UHUGEINT, TIME, TIMETZ, TIMESTAMP_NS, INTERVAL, UUID, ...).

DuckLake has them (spec: data_types.md), so `CREATE TABLE` / `ADD COLUMN` in the duckdb dialect give the column its
DuckLake type. Spark sees each as the type dataplane/spark/types.py reads it as (its "stand-in": uint16 -> INT, uint64
-> DECIMAL(20,0), time -> STRING, ...): the column is declared with the stand-in, then its DuckLake type is set.
sqlglot's Spark output cannot be used for these (it writes TIME as TIMESTAMP and UTINYINT as SMALLINT).
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import UnsupportedSqlError

_T = exp.DataType.Type
# sqlglot's DuckDB type -> DuckLake type, for the types Spark lacks (top-level columns).
DUCKLAKE_TYPES = {
    _T.UTINYINT: "uint8", _T.USMALLINT: "uint16", _T.UINT: "uint32", _T.UBIGINT: "uint64",
    _T.INT128: "int128", _T.UINT128: "uint128", _T.TIME: "time", _T.TIMETZ: "timetz",
    _T.TIMESTAMP_S: "timestamp_s", _T.TIMESTAMP_MS: "timestamp_ms", _T.TIMESTAMP_NS: "timestamp_ns",
    _T.INTERVAL: "interval", _T.UUID: "uuid", _T.JSON: "json",
}
# DuckLake type -> the Spark DDL of the type Spark reads it as (dataplane/spark/types.py to_spark_type).
STAND_INS = {
    "uint8": "SMALLINT", "uint16": "INT", "uint32": "BIGINT", "uint64": "DECIMAL(20,0)", "int128": "DECIMAL(38,0)",
    "uint128": "DECIMAL(38,0)", "time": "STRING", "timetz": "STRING", "timestamp_s": "TIMESTAMP_NTZ",
    "timestamp_ms": "TIMESTAMP_NTZ", "timestamp_ns": "TIMESTAMP_NTZ", "interval": "STRING", "uuid": "STRING",
    "json": "STRING",
}


def ducklake_type(dtype: exp.Expr | None) -> str | None:
    """The DuckLake type of a parsed DuckDB column type Spark has no type for, else None."""
    return DUCKLAKE_TYPES.get(dtype.this) if isinstance(dtype, exp.DataType) else None


def with_stand_ins(dtype: exp.DataType) -> exp.DataType:
    """`dtype` (a copy) with every DuckDB-only type, nested ones too, replaced by its Spark stand-in."""
    dtype = dtype.copy()
    for node in list(dtype.find_all(exp.DataType)):
        name = DUCKLAKE_TYPES.get(node.this)
        if name is not None:
            replacement = exp.DataType.build(STAND_INS[name], dialect="spark")
            if node is dtype:
                return replacement
            node.replace(replacement)
    return dtype


def set_types(columns: list, types: dict[str, str]) -> None:
    """Give the named top-level columns (just declared with their stand-ins) their DuckLake types."""
    wanted = {name.lower(): kind for name, kind in types.items()}
    for col in columns:
        if col.name.lower() in wanted:
            col.type = wanted[col.name.lower()]


def cast_default(value, dtype: exp.DataType | None):
    """A literal DEFAULT cast to its column's type as DuckDB casts it where Python would not: an integer to a
    BOOLEAN (`DEFAULT 1` is true), a string to a BLOB (its bytes)."""
    if not isinstance(dtype, exp.DataType) or value is None:
        return value
    if dtype.this == _T.BOOLEAN and isinstance(value, int) and not isinstance(value, bool):
        return value != 0
    if dtype.this in (_T.VARBINARY, _T.BINARY) and isinstance(value, str):
        return value.encode()
    return value


def check_column(col: exp.ColumnDef) -> None:
    """Refuse, with DuckDB's words, a column DuckLake cannot have: a fixed-size array (`INT[3]`, nested too) or a
    collation."""
    kind = col.args.get("kind")
    for node in kind.find_all(exp.DataType) if isinstance(kind, exp.DataType) else ():
        if node.this == _T.ARRAY and node.args.get("values"):
            raise UnsupportedSqlError(f"column {col.name!r}: unsupported type {node.sql(dialect='duckdb')} "
                                      "(DuckLake has no fixed-size arrays; use a list, INT[])")
    if any(isinstance(c.kind, exp.CollateColumnConstraint) for c in col.constraints):
        raise UnsupportedSqlError(f"column {col.name!r}: Collations are not supported in DuckLake")


def arrow_type(kind: str | None):
    """The pyarrow type naming an unsigned DuckLake integer type (`lake` APIs take pyarrow types for them, and
    Spark has none), else None."""
    import pyarrow as pa

    return {"uint8": pa.uint8(), "uint16": pa.uint16(), "uint32": pa.uint32(), "uint64": pa.uint64()}.get(kind)  # type: ignore[arg-type]  # None: None
