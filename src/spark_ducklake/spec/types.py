"""DuckLake type strings <-> Arrow types, type promotions, literals in the spec's string encodings.

The mapping (DuckLake -> Arrow type used for inlined rows and small files) is documented in the README's type
table, with the Spark types users see; those, needing pyspark, are in dataplane/spark/types.py. No I/O, no Spark here.
"""

from __future__ import annotations

import datetime as dt
import re
import struct
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pyarrow as pa

from ..errors import SchemaMismatchError
from .model import Column

FIELD_ID_KEY = "parquet.field.id"
DECIMAL_TYPE = re.compile(r"decimal\((\d+),\s*(\d+)\)")

# DuckLake type -> Arrow type; nested and decimal types are handled in to_arrow_type (Spark: dataplane/spark/types.py).
_ARROW_TYPES: dict[str, pa.DataType] = {
    "boolean": pa.bool_(),
    "int8": pa.int8(),
    "int16": pa.int16(),
    "int32": pa.int32(),
    "int64": pa.int64(),
    "uint8": pa.uint8(),
    "uint16": pa.uint16(),
    "uint32": pa.uint32(),
    "float32": pa.float32(),
    "float64": pa.float64(),
    "varchar": pa.string(),
    "json": pa.string(),
    "blob": pa.binary(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us"),
    "timestamptz": pa.timestamp("us", tz="UTC"),
    "timestamp_s": pa.timestamp("us"),
    "timestamp_ms": pa.timestamp("us"),
    "timestamp_ns": pa.timestamp("us"),
    "uuid": pa.string(),
    "time": pa.string(),
    "timetz": pa.string(),
    "interval": pa.string(),
    "geometry": pa.binary(),  # WKB, as in the Parquet GEOMETRY logical type
}
# A variant as Spark's Arrow conversion has it (unshredded value and metadata; the field metadata marks it).
VARIANT_ARROW = pa.struct([pa.field("value", pa.binary(), False),
                           pa.field("metadata", pa.binary(), False, metadata={b"variant": b"true"})])


class GeometryWKB(pa.ExtensionType):  # type: ignore[misc]  # pyarrow ships no type information
    """WKB in GeoArrow's extension type: pyarrow writes it as Parquet's GEOMETRY type, with its statistics."""

    def __init__(self) -> None:
        super().__init__(pa.binary(), "geoarrow.wkb")

    def __arrow_ext_serialize__(self) -> bytes:
        return b"{}"

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> GeometryWKB:
        return cls()


GEOMETRY_WKB = GeometryWKB()
try:
    pa.register_extension_type(GEOMETRY_WKB)
except pa.ArrowKeyError:  # registered already (by another copy of this module, or by geoarrow itself)
    pass
# Types with no string-encoded min/max: their statistics are JSON in `extra_stats` (spec: "Extra Statistics").
EXTRA_STATS_TYPES = {"geometry", "variant"}

# The spec's type promotions (ALTER ... SET TYPE, merge_schema), exactly its table.
PROMOTIONS = {
    "int8": {"int16", "int32", "int64"},
    "int16": {"int32", "int64"},
    "int32": {"int64"},
    "uint8": {"uint16", "uint32", "uint64"},
    "uint16": {"uint32", "uint64"},
    "uint32": {"uint64"},
    "float32": {"float64"},
}
# Data written into a column may also be of these narrower types (cast losslessly on the way in).
_FITS = {"uint8": {"int16", "int32", "int64"}, "uint16": {"int32", "int64"}, "uint32": {"int64"}}


def to_arrow_type(col: Column) -> pa.DataType:
    """The Arrow type of a column (what inlined rows and pyarrow-read files are converted to)."""
    if col.type == "list":
        return pa.list_(to_arrow_field(col.children[0]))
    if col.type == "map":
        return pa.map_(to_arrow_field(col.children[0]).with_nullable(False), to_arrow_field(col.children[1]))
    if col.type == "struct":  # fields always nullable, as in spark.types.to_spark_type
        return pa.struct([to_arrow_field(child).with_nullable(True) for child in col.children])
    match = DECIMAL_TYPE.fullmatch(col.type)
    if match:
        return pa.decimal128(int(match.group(1)), int(match.group(2)))
    if col.type == "uint64":
        return pa.decimal128(20, 0)
    if col.type in ("int128", "uint128"):
        return pa.decimal128(38, 0)
    if col.type in _ARROW_TYPES:
        return _ARROW_TYPES[col.type]
    if col.type == "variant":
        return VARIANT_ARROW
    raise SchemaMismatchError(f"column {col.name!r}: DuckLake type {col.type!r} is not supported by spark-ducklake")


def to_arrow_field(col: Column) -> pa.Field:
    """An Arrow field with PARQUET:field_id metadata."""
    return pa.field(col.name, to_arrow_type(col), nullable=col.nullable,
                    metadata={b"PARQUET:field_id": str(col.column_id).encode()})


def to_arrow_schema(columns: list[Column]) -> pa.Schema:
    """Arrow schema of the table's columns with field ids."""
    return pa.schema([to_arrow_field(col) for col in columns])


def to_parquet_schema(columns: list[Column]) -> pa.Schema:
    """The Arrow schema pyarrow writes the table's Parquet files with: `to_arrow_schema`, every geometry (nested in
    lists, structs and maps too) in GeoArrow's WKB type, so files get Parquet's GEOMETRY type and geospatial
    statistics as DuckDB writes them (binary casts to it)."""
    return pa.schema([_with_geometry(field, col) for field, col in zip(to_arrow_schema(columns), columns,
                                                                          strict=True)])


def _with_geometry(field: pa.Field, col: Column) -> pa.Field:
    t = field.type
    if col.type == "geometry":
        return field.with_type(GEOMETRY_WKB)
    if col.type == "list":
        return field.with_type(pa.list_(_with_geometry(t.value_field, col.children[0])))
    if col.type == "map":
        return field.with_type(pa.map_(_with_geometry(t.key_field, col.children[0]),
                                       _with_geometry(t.item_field, col.children[1])))
    if col.type == "struct":
        return field.with_type(pa.struct([_with_geometry(t.field(i), child) for i, child in enumerate(col.children)]))
    return field


# ----------------------------------------------------------------------------------------- incoming schemas
def columns_from_arrow(schema: pa.Schema, first_id: int = 1) -> list[Column]:
    """New columns from an Arrow schema, ids depth first."""
    counter = iter(range(first_id, 1 << 62))
    return [_from_arrow(f.name, f.type, f.nullable, counter) for f in schema]


def _from_arrow(name: str, dtype: pa.DataType, nullable: bool, counter: Iterator[int]) -> Column:
    col = Column(column_id=next(counter), name=name, type="", nullable=nullable)
    if pa.types.is_map(dtype):
        col.type = "map"
        col.children = [_from_arrow("key", dtype.key_type, False, counter),
                        _from_arrow("value", dtype.item_type, True, counter)]
    elif pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        col.type = "list"
        col.children = [_from_arrow("element", dtype.value_type, True, counter)]
    elif _is_variant(dtype):
        col.type = "variant"
    elif getattr(dtype, "extension_name", None) in ("geoarrow.wkb", "arrow.geometry"):
        col.type = "geometry"
    elif pa.types.is_struct(dtype):
        col.type = "struct"
        col.children = [_from_arrow(f.name, f.type, f.nullable, counter) for f in dtype]
    elif pa.types.is_decimal(dtype):
        col.type = f"decimal({dtype.precision},{dtype.scale})"
    elif pa.types.is_timestamp(dtype):
        col.type = "timestamptz" if dtype.tz else "timestamp"
    elif pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        col.type = "varchar"
    elif pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype):
        col.type = "blob"
    elif getattr(dtype, "extension_name", None) == "arrow.uuid":
        col.type = "uuid"
    elif pa.types.is_time(dtype):
        col.type = "time"
    else:
        simple = {pa.bool_(): "boolean", pa.int8(): "int8", pa.int16(): "int16", pa.int32(): "int32",
                  pa.int64(): "int64", pa.uint8(): "uint8", pa.uint16(): "uint16", pa.uint32(): "uint32",
                  pa.uint64(): "uint64", pa.float32(): "float32", pa.float64(): "float64", pa.date32(): "date"}
        if dtype not in simple:
            raise SchemaMismatchError(f"column {name!r}: Arrow type {dtype} has no DuckLake equivalent here")
        col.type = simple[dtype]
    return col


def _is_variant(dtype: pa.DataType) -> bool:
    """Spark's Arrow form of a variant: struct<value, metadata> with the metadata field marked `variant`."""
    if not pa.types.is_struct(dtype) or dtype.num_fields != 2 or dtype.get_field_index("metadata") < 0:
        return False
    return (dtype.field("metadata").metadata or {}).get(b"variant") == b"true"


def can_promote(old: str, new: str) -> bool:
    """Whether a column of DuckLake type `old` may become `new`: the spec's promotion table, nothing else."""
    return old == new or new in PROMOTIONS.get(old, set())


def fits(incoming: str, column: str) -> bool:
    """Whether data of type `incoming` can be written into a `column`-typed column without loss."""
    if can_promote(incoming, column) or column in _FITS.get(incoming, set()):
        return True
    a, b = DECIMAL_TYPE.fullmatch(incoming), DECIMAL_TYPE.fullmatch(column)
    if a and b:
        (p1, s1), (p2, s2) = map(int, a.groups()), map(int, b.groups())
        return s2 >= s1 and p2 - s2 >= p1 - s1
    return False


def promotion_list() -> str:
    """The spec's promotions as text, for error messages."""
    return "; ".join(f"{old} -> {', '.join(sorted(new))}" for old, new in PROMOTIONS.items())


# ----------------------------------------------------------------------------------------- literals
def parse_literal(type_str: str, text: str | None) -> Any:
    """A default or statistics string (spec encoding) as a Python value of the column's Spark/Arrow type."""
    if text is None or text == "NULL":
        return None
    if type_str in EXTRA_STATS_TYPES:
        raise ValueError(f"a {type_str} has no string-encoded literal")
    if type_str.startswith(("int", "uint")):
        return int(text)
    if type_str in ("float32", "float64"):
        return float(text)
    if type_str.startswith("decimal"):
        return Decimal(text)
    if type_str == "boolean":
        return text.lower() in ("1", "true", "t")
    if type_str == "date":
        return dt.date.fromisoformat(text)
    if type_str in ("timestamp", "timestamp_s", "timestamp_ms", "timestamp_ns"):
        return _parse_timestamp(text, aware=False)
    if type_str == "timestamptz":
        return _parse_timestamp(text, aware=True)
    if type_str == "blob":
        return _parse_blob(text)
    return text


def _parse_timestamp(text: str, *, aware: bool) -> dt.datetime:
    text = text.strip().replace("T", " ")
    match = re.fullmatch(r"(.*?\d\d:\d\d:\d\d)(\.\d+)?([+-]\d\d(?::?\d\d)?|Z)?", text)
    if not match:
        raise ValueError(f"not a timestamp: {text!r}")
    base, frac, zone = match.groups()
    base = re.sub(r"^\d{1,3}(?=-)", lambda m: m.group(0).zfill(4), base)  # older stats wrote year 1 as '1'
    micros = int((frac or ".0")[1:7].ljust(6, "0"))
    value = dt.datetime.fromisoformat(base).replace(microsecond=micros)
    if zone:
        if zone == "Z":
            offset = dt.timedelta(0)
        else:
            digits = zone[1:].replace(":", "")
            offset = dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))
            offset = -offset if zone[0] == "-" else offset
        value = value.replace(tzinfo=dt.timezone(offset))
    if aware:
        return (value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)).astimezone(dt.timezone.utc)
    return value.replace(tzinfo=None)


def _parse_blob(text: str) -> bytes:
    if "\\x" in text:  # DuckDB's escaped form, e.g. \x01\x02abc
        out, i = bytearray(), 0
        while i < len(text):
            if text.startswith("\\x", i):
                out.append(int(text[i + 2:i + 4], 16))
                i += 4
            else:
                out.append(ord(text[i]))
                i += 1
        return bytes(out)
    return bytes.fromhex(text)


def float_text(type_str: str, value: float) -> str:
    """A float as DuckDB writes it: nan, inf, -inf, or the shortest text that reads back as the same value."""
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    if type_str == "float32":  # the fewest digits that read back as the same float32, in repr's layout
        for digits in range(1, 10):
            text = f"{value:.{digits}g}"
            if struct.unpack("f", struct.pack("f", float(text)))[0] == value:
                return repr(float(text))
    return repr(float(value))


def format_literal(type_str: str, value: Any) -> str | None:
    """A Python value in the spec's string encoding (stats, defaults)."""
    if value is None:
        return None
    if type_str == "boolean":
        return "1" if value else "0"
    if type_str in ("float32", "float64"):
        return float_text(type_str, value)
    if type_str.startswith("decimal"):
        scale = int(DECIMAL_TYPE.fullmatch(type_str).group(2))  # type: ignore[union-attr]  # a decimal(p,s) type string
        return f"{Decimal(value):.{scale}f}"
    if type_str == "blob":
        return bytes(value).hex().upper()
    if isinstance(value, dt.datetime):
        if type_str == "timestamptz":
            value = value.astimezone(dt.timezone.utc) if value.tzinfo else value
            return _format_ts(value.replace(tzinfo=None)) + "+00"
        return _format_ts(value.replace(tzinfo=None))
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def _format_ts(value: dt.datetime) -> str:
    # Not strftime: its %Y gives '1' for year 1; DuckDB writes 4-digit years and no trailing fraction zeros.
    text = f"{value.year:04d}-{value.month:02d}-{value.day:02d} {value:%H:%M:%S}"
    if value.microsecond:
        text += f".{value.microsecond:06d}".rstrip("0")
    return text


def render_interval(months: int, days: int, micros: int) -> str:
    """DuckDB's text form of an interval: '1 year 2 months 3 days 04:05:06.5'."""
    parts = []
    years, months = divmod(months, 12) if months >= 0 else (-(-months // 12), -(-months % 12))
    for amount, unit in ((years, "year"), (months, "month"), (days, "day")):
        if amount:
            parts.append(f"{amount} {unit}{'s' if abs(amount) != 1 else ''}")
    if micros or not parts:
        sign = "-" if micros < 0 else ""
        seconds, frac = divmod(abs(micros), 1_000_000)
        hours, rest = divmod(seconds, 3600)
        minutes, secs = divmod(rest, 60)
        text = f"{sign}{hours:02d}:{minutes:02d}:{secs:02d}"
        if frac:
            text += f".{frac:06d}".rstrip("0")
        parts.append(text)
    return " ".join(parts)


def parse_pg_interval(text: str) -> str:
    """PostgreSQL's interval text ('1 year 2 mons 3 days 04:05:06.5') in DuckDB's rendering."""
    months = days = micros = 0
    for amount, unit in re.findall(r"(-?\d+) (year|mon|day)s?", text):
        amount = int(amount)
        if unit == "year":
            months += 12 * amount
        elif unit == "mon":
            months += amount
        else:
            days += amount
    clock = re.search(r"(-?)(\d+):(\d\d):(\d\d)(?:\.(\d+))?", text)
    if clock:
        sign, h, m, sec, frac = clock.groups()
        value = ((int(h) * 60 + int(m)) * 60 + int(sec)) * 1_000_000 + int((frac or "0").ljust(6, "0")[:6])
        micros = -value if sign else value
    return render_interval(months, days, micros)


def convert_nested(col: Column, value: Any, leaf: Callable[[Column, Any], Any]) -> Any:
    """Apply `leaf(col, value)` to every scalar of a (possibly nested) value; maps become (key, value) pairs."""
    if value is None:
        return None
    if col.type == "list":
        return [convert_nested(col.children[0], v, leaf) for v in value]
    if col.type == "struct":
        if isinstance(value, dict):
            return {c.name: convert_nested(c, value.get(c.name), leaf) for c in col.children}
        return {c.name: convert_nested(c, v, leaf) for c, v in zip(col.children, value, strict=False)}
    if col.type == "map":
        pairs = value.items() if isinstance(value, dict) else value
        key, item = col.children
        return [(convert_nested(key, k, leaf), convert_nested(item, v, leaf)) for k, v in pairs]
    return leaf(col, value)
