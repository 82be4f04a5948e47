"""Nested values in DuckDB's text forms, as SQLite and PostgreSQL catalogs hold them in inlined data.

Lists and maps (and everything inside them) use DuckDB's VARCHAR cast rendering: `[1, NULL]`, `{k=1}`, `{'a': 1}`,
strings quoted only when needed with `\\'` and `\\\\` escapes, blobs as `\\xNN` text. A top-level struct (and structs
directly inside it) is written by the reference as a SQL expression instead:
`{'a': 'it''s', 'd': CAST('2024-01-01' AS DATE), 'f': CAST('nan' AS REAL)}`. DuckDB itself cannot read that back for
dates, timestamps, times, uuids, intervals, blobs, non-finite floats, strings with `'` or `\\`, or field names with
`'` (errors or silently altered values); we decode the intended values. What we write is always the cast rendering,
with struct field names in double quotes — a form the reference never writes, so the two styles stay
distinguishable and DuckDB reads our rows exactly.

Inside nested values DuckDB's rendering is ambiguous for JSON: a JSON `null` reads as SQL NULL and a JSON string
loses its quotes (DuckDB reads it so too).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NoReturn

from ...spec.model import Column
from ...spec.types import render_interval
from .text import BIG_INTS, SMALL_INTS, parse_scalar, scalar_text


def readable_back(col: Column, value: Any, *, text_holds_nul: bool = True) -> bool:
    """Whether DuckDB reads the nested value's text back as written: not for a string holding `]` or `}` two or
    more levels deep (its parser matches brackets there without regard to quotes), nor, where the catalog's text
    cannot hold one (`text_holds_nul` false), for a string with a NUL inside."""
    return not _unreadable(col, value, 0, text_holds_nul)


def _unreadable(col: Column, value: Any, depth: int, nul_ok: bool) -> bool:
    if value is None:
        return False
    if col.type == "list":
        return any(_unreadable(col.children[0], v, depth + 1, nul_ok) for v in value)
    if col.type == "struct":
        return any(_unreadable(c, value.get(c.name), depth + 1, nul_ok) for c in col.children)
    if col.type == "map":
        key, item = col.children
        return any(_unreadable(key, k, depth + 1, nul_ok) or _unreadable(item, v, depth + 1, nul_ok)
                   for k, v in value)
    if isinstance(value, str):
        return (depth >= 2 and ("]" in value or "}" in value)) or (not nul_ok and "\0" in value)
    return False


def _sql_interval(text: str) -> str:
    """'12 months 3 days 1500000 microseconds' (the reference's SQL form) in DuckDB's rendering."""
    months, days, micros = (int(x) for x in re.fullmatch(r"(-?\d+) months (-?\d+) days (-?\d+) microseconds",
                                                          text.strip()).groups())  # type: ignore[union-attr]  # the SQL form
    return render_interval(months, days, micros)


def _quote(text: str, mark: str = "'") -> str:
    return mark + text.replace("\\", "\\\\").replace(mark, "\\" + mark) + mark


def render(col: Column, value: Any) -> str:
    """A (nested) value in DuckDB's VARCHAR cast form, as DuckDB parses it back; struct names double-quoted."""
    if value is None:
        return "NULL"
    if col.type == "list":
        return "[" + ", ".join(render(col.children[0], v) for v in value) + "]"
    if col.type == "struct":
        get = value.get if isinstance(value, Mapping) else dict(zip([c.name for c in col.children], value,
                                                                    strict=False)).get
        return "{" + ", ".join(f"{_quote(c.name, chr(34))}: {render(c, get(c.name))}" for c in col.children) + "}"
    if col.type == "map":
        key, item = col.children
        pairs = value.items() if isinstance(value, Mapping) else value
        return "{" + ", ".join(f"{render(key, k)}={render(item, v)}" for k, v in pairs) + "}"
    text = scalar_text(col, value)
    if col.type in ("boolean", "float32", "float64") or col.type in SMALL_INTS | BIG_INTS \
            or col.type.startswith("decimal"):
        return text
    return _quote(text)


_SPACE = " \t\n\r\v\f"


class _NestedReader:
    """Type-directed parser of DuckDB's nested text; `sql_structs` marks the reference's SQL-style structs."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, what: str) -> NoReturn:
        raise ValueError(f"cannot parse inlined value {self.text!r} at {self.pos}: expected {what}")

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in _SPACE:
            self.pos += 1

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            self.fail(repr(char))
        self.pos += 1

    def null(self) -> bool:
        self.skip()
        if self.text[self.pos:self.pos + 4].upper() == "NULL":
            rest = self.text[self.pos + 4:].lstrip(_SPACE)
            if not rest or rest[0] in ",]}=:)":
                self.pos += 4
                return True
        return False

    def value(self, col: Column, sql_style: bool) -> Any:
        if self.null():
            return None
        if col.type == "list":
            return self.items("[", "]", lambda: self.value(col.children[0], False))
        if col.type == "map":
            key, item = col.children

            def pair() -> Any:
                k = self.value(key, False)
                self.expect("=")
                return k, self.value(item, False)
            return self.items("{", "}", pair)
        if col.type == "struct":
            return self.struct(col, sql_style)
        if sql_style:
            return self.sql_scalar(col)
        return self.scalar(col, ",]}=")

    def items(self, open_: str, close: str, item: Any) -> list[Any]:
        self.expect(open_)
        out: list[Any] = []
        if self.peek() == close:
            self.pos += 1
            return out
        while True:
            out.append(item())
            if self.peek() == ",":
                self.pos += 1
                continue
            self.expect(close)
            return out

    def struct(self, col: Column, sql_style: bool) -> dict[Any, Any]:
        by_name = {c.name: c for c in col.children}
        self.expect("{")
        sql_style = sql_style and self.peek() == "'"  # what we write has double-quoted names
        out = {c.name: None for c in col.children}
        if self.peek() == "}":
            self.pos += 1
            return out
        while True:
            name = self.sql_string() if sql_style else self.scalar(None, ":")
            self.expect(":")
            child = by_name.get(name) or next((c for c in col.children if c.name.lower() == str(name).lower()), None)
            if child is None:
                self.fail(f"a field of {[c.name for c in col.children]}")
            out[child.name] = self.value(child, sql_style)
            if self.peek() == ",":
                self.pos += 1
                continue
            self.expect("}")
            return out

    def quoted(self) -> str:
        mark, out = self.text[self.pos], []
        self.pos += 1
        while self.pos < len(self.text) and self.text[self.pos] != mark:
            if self.text[self.pos] == "\\" and self.pos + 1 < len(self.text):
                self.pos += 1
            out.append(self.text[self.pos])
            self.pos += 1
        self.expect(mark)
        return "".join(out)

    def scalar(self, col: Column | None, stops: str) -> Any:
        """A cast-style scalar: quoted with backslash escapes, or bare up to a separator (JSON may nest)."""
        if self.peek() in ("'", '"'):
            text = self.quoted()
        else:
            start, depth = self.pos, 0
            while self.pos < len(self.text):
                ch = self.text[self.pos]
                if depth == 0 and ch in stops:
                    break
                if ch in "[{":
                    depth += 1
                elif ch in "]}":
                    depth -= 1
                elif ch == '"':  # a JSON string inside a bare JSON value
                    self.quoted()
                    continue
                self.pos += 1
            text = self.text[start:self.pos].strip(_SPACE)
        return text if col is None else parse_scalar(col, text)

    def sql_string(self) -> str:
        """'...' with doubled quotes (the reference's SQL literals)."""
        self.expect("'")
        out = []
        while True:
            end = self.text.find("'", self.pos)
            if end < 0:
                self.fail("closing quote")
            out.append(self.text[self.pos:end])
            self.pos = end + 1
            if self.text.startswith("'", self.pos):
                out.append("'")
                self.pos += 1
                continue
            return "".join(out)

    def sql_scalar(self, col: Column) -> Any:
        """A scalar of the reference's SQL-style struct: literal, CONCAT(...chr(0)...) or CAST('..' AS type)."""
        self.skip()
        if self.peek() == "'":
            return parse_scalar(col, self.sql_string())
        if self.text.startswith("CONCAT(", self.pos):
            self.pos += len("CONCAT(")
            parts = []
            while self.peek() != ")":
                parts.append(self.sql_string() if self.peek() == "'" else self.chr_call())
                if self.peek() == ",":
                    self.pos += 1
            self.pos += 1
            return parse_scalar(col, "".join(parts))
        if self.text.startswith("CAST(", self.pos):
            self.pos += len("CAST(")
            text = self.sql_string()
            match = re.compile(r"\s+AS\s+([^)]*)\)").match(self.text, self.pos)
            if not match:
                self.fail("AS <type>)")
            self.pos = match.end()
            return parse_scalar(col, _sql_interval(text) if col.type == "interval" else text)
        return self.scalar(col, ",}")

    def chr_call(self) -> str:
        match = re.compile(r"chr\((\d+)\)").match(self.text, self.pos)
        if not match:
            self.fail("chr(n)")
        self.pos = match.end()
        return chr(int(match.group(1)))


def parse_nested(col: Column, text: str, reference_sql_structs: bool = True) -> Any:
    """DuckDB's text of a nested value -> Python value for Arrow (lists, dicts, lists of (key, value) pairs).

    `reference_sql_structs`: a top-level struct may be the reference's SQL-style rendering (SQLite/PostgreSQL).
    """
    reader = _NestedReader(text)
    value = reader.value(col, reference_sql_structs and col.type == "struct")
    if reader.peek():
        reader.fail("end of value")
    return value
