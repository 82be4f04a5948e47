"""Values rendered as DuckDB's sqllogictest renders them, and results compared as it compares them.

NULL, true/false, integers, doubles (shortest repr, `inf`, `nan`), decimals with their scale, dates, timestamps
(trailing zero fractions dropped; `+00` for time zone aware ones, read in UTC), lists `[1, 2]`, structs
`{'a': 1}`, maps `{k=v}`, geometries as WKT (quoted when nested, as DuckDB does), variants as the value they
hold, and an empty string as `(empty)`. Nested strings are quoted only when DuckDB quotes them.
"""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import math
import re

_HASH = re.compile(r"^(\d+) values hashing to ([0-9a-f]{32})$")


def render_value(value, type_name: str = "", top: bool = True) -> str:
    """One value as DuckDB's test runner prints it; `type_name` is Spark's simple type name of its column."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _double(value)
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, dt.datetime):
        return _timestamp(value, aware=type_name.startswith("timestamp") and "ntz" not in type_name)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return _interval(value)
    if type(value).__name__ == "VariantVal":  # DuckDB prints a variant as the value it holds; objects as structs
        return _variant(value.toPython(), top)
    if type(value).__name__ == "Geometry" and hasattr(value, "getBytes"):  # Spark GEOMETRY: DuckDB prints WKT
        from spark_ducklake.spec.wkt import wkb_to_wkt

        text = wkb_to_wkt(bytes(value.getBytes()))
        return text if top else f"'{text}'"
    if isinstance(value, (bytes, bytearray)):
        return "".join(chr(b) if 32 <= b < 127 and b != 92 else f"\\x{b:02X}" for b in value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{render_value(k, '', False)}={render_value(v, '', False)}"
                               for k, v in value.items()) + "}"
    if hasattr(value, "asDict"):  # a pyspark Row: a struct
        items = value.asDict(recursive=False)
        return "{" + ", ".join(f"'{k}': {render_value(v, '', False)}" for k, v in items.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(render_value(v, "", False) for v in value) + "]"
    text = str(value).replace("\x00", "\\0")  # DuckDB's runner prints a NUL character as \0
    if top and text == "":
        return "(empty)"
    if not top and isinstance(value, str) and _needs_quotes(text):
        return "'" + text.replace("'", "\\'") + "'"
    return text


_SPECIAL = set("'\"(),:=[]{}")


def _needs_quotes(text: str) -> bool:
    """Whether DuckDB quotes a string inside a list, struct or map: empty, `NULL`, spaces at an end, or one of the
    characters that delimit nested values (measured on DuckDB 1.5.5: `['main."simple"']`, `[a b]`)."""
    return (text == "" or text.lower() == "null" or text != text.strip(" ")
            or any(ch in _SPECIAL for ch in text))


def _variant(value, top: bool) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"'{k}': {_variant(v, False)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_variant(v, False) for v in value) + "]"
    return render_value(value, "", top)


def _double(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)  # the shortest text that reads back as the same double, as DuckDB prints


def _timestamp(value: dt.datetime, aware: bool) -> str:
    if value.tzinfo is not None:
        value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    if value.microsecond:
        text += ("." + f"{value.microsecond:06d}").rstrip("0")
    if value.year < 1000:
        text = f"{value.year:04d}" + text[text.index("-"):]
    return text + ("+00" if aware else "")


def _interval(value: dt.timedelta) -> str:
    days, seconds, micros = value.days, value.seconds, value.microseconds
    parts = []
    if days:
        parts.append(f"{days} day" + ("s" if abs(days) != 1 else ""))
    if seconds or micros or not parts:
        hours, rest = divmod(seconds, 3600)
        minutes, secs = divmod(rest, 60)
        clock = f"{hours:02d}:{minutes:02d}:{secs:02d}"
        if micros:
            clock += f".{micros:06d}"
        parts.append(clock)
    return " ".join(parts)


def render_rows(rows: list, types: list[str]) -> list[str]:
    """Every value of the rows, row by row, rendered."""
    return [render_value(v, types[i]) for row in rows for i, v in enumerate(row)]


def sort_values(values: list[str], columns: int, mode: str) -> list[str]:
    """Values in the order a sort mode compares them: nosort as is, rowsort by rows, valuesort each value."""
    if mode == "valuesort":
        return sorted(values)
    if mode == "rowsort" and columns and len(values) % columns == 0:
        rows = [values[i:i + columns] for i in range(0, len(values), columns)]
        return [v for row in sorted(rows) for v in row]
    return values


def result_hash(values: list[str]) -> str:
    """`N values hashing to <md5>` of the values, each followed by a newline."""
    digest = hashlib.md5("".join(v + "\n" for v in values).encode()).hexdigest()  # noqa: S324 - the format's hash
    return f"{len(values)} values hashing to {digest}"


def compare(actual: list[str], columns: int, kinds: list[str], expected: list[str], mode: str,
            labels: dict[str, str] | None = None, label: str | None = None) -> str | None:
    """None when `actual` (rendered values, row by row) matches the expected lines; else what differs."""
    actual = sort_values(actual, columns, mode)
    is_hash = len(expected) == 1 and _HASH.match(expected[0]) is not None
    if is_hash or label is not None:  # as DuckDB's runner: a label or a hash compares hashes only
        got = result_hash(actual)
        if is_hash and got != expected[0]:
            return f"hash differs: got {got}"
        if label is not None and labels is not None:
            if label in labels and labels[label] != got:
                return f"result differs from label {label}'s"
            labels.setdefault(label, got)
        return None
    if not expected and not actual:
        return None
    rows = len(actual) // columns if columns else 0
    if columns > 1 and (len(expected) == rows or all("\t" in e for e in expected)):
        wanted = [v for line in expected for v in line.split("\t")]
    else:
        wanted = list(expected)
    if len(wanted) != len(actual):
        return f"{len(actual) // max(columns, 1)} row(s) of {columns} column(s), expected {len(wanted)} value(s)"
    for index, (got, want) in enumerate(zip(actual, wanted, strict=True)):
        if not values_equal(got, want, kinds[index % columns] if columns else "other"):
            return f"row {index // columns + 1} column {index % columns + 1}: got {got!r}, expected {want!r}"
    return None


def values_equal(got: str, want: str, kind: str = "other") -> bool:
    """Equal as text; in a numeric column also by value (doubles approximately), in a boolean one true/1 and
    false/0 are alike. `kind` is "numeric", "boolean" or "other"."""
    if got == want:
        return True
    if kind == "numeric" and got != "NULL" and want != "NULL":
        try:
            a, b = float(got), float(want)
        except ValueError:
            return False
        return a == b or math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-12)
    if kind != "boolean":
        return False
    truth = {"true": "1", "false": "0", "1": "1", "0": "0"}
    return got.lower() in truth and want.lower() in truth and truth[got.lower()] == truth[want.lower()]
