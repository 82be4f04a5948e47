"""Geometries as WKT text <-> ISO WKB bytes (little endian), the two forms DuckDB's GEOMETRY type takes and shows.

Pure Python, no GEOS: `lake.sql` needs only the text forms (`'POINT (1 2)'::GEOMETRY`, a geometry shown as DuckDB
prints it), not geometric operations, and this module also runs on executors where no extra package is installed.
Z, M and ZM geometries use the ISO type codes (1000 / 2000 / 3000 added); EMPTY points are NaN coordinates, as in
DuckDB. Text is written as DuckDB writes it: `POINT (1 2)`, `LINESTRING Z (5 5 5, 10 10 10)`, `MULTIPOINT (1 2, 3 4)`.
"""

from __future__ import annotations

import math
import re
import struct
from typing import Any

KINDS = ("POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION")
_CODE = {name: code for code, name in enumerate(KINDS, start=1)}
_DIMS = {"": 0, "Z": 1000, "M": 2000, "ZM": 3000}
_TOKEN = re.compile(r"\s*(?:([A-Za-z]+)|([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf))|([(),]))")


class WktError(ValueError):
    """Text that is not WKT, or bytes that are not WKB."""


# ------------------------------------------------------------------------------------------------ WKT -> WKB
def wkt_to_wkb(text: str) -> bytes:
    """The ISO WKB (little endian) of a WKT geometry; WktError names what does not parse."""
    if not isinstance(text, str):
        raise WktError(f"WKT must be text, got {type(text).__name__}")
    parser = _Parser(text)
    out = parser.geometry(None)
    if parser.peek() is not None:
        raise WktError(f"unexpected {parser.peek()!r} after the geometry in WKT {text!r}")
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.text, self.tokens, self.pos = text, [], 0
        index, end = 0, len(text.rstrip())
        while index < end:
            match = _TOKEN.match(text, index)
            if match is None or match.end() == index:
                raise WktError(f"cannot read WKT {text!r} at {text[index:index + 10]!r}")
            self.tokens.append(next(g for g in match.groups() if g is not None))
            index = match.end()

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token.upper() != expected):
            wanted = f"{expected!r}" if expected else "more"
            raise WktError(f"expected {wanted} in WKT {self.text!r}, found {token!r}")
        self.pos += 1
        return token

    def geometry(self, dims: str | None) -> bytes:
        """One tagged geometry; `dims` is the collection's dimension ('' / Z / M / ZM) or None at the top."""
        word = self.take().upper()
        kind, _, suffix = next(((k, k, word[len(k):]) for k in sorted(KINDS, key=len, reverse=True)
                                if word.startswith(k)), (None, None, None))
        if kind is None or suffix not in _DIMS:
            raise WktError(f"unknown geometry type {word!r} in WKT {self.text!r}")
        if not suffix and (self.peek() or "").upper() in ("Z", "M", "ZM"):
            suffix = self.take().upper()
        if (self.peek() or "").upper() == "EMPTY":
            self.take()
            return self._empty(kind, suffix or dims or "")
        self.take("(")
        body = self._body(kind, suffix or dims)
        return body

    def _empty(self, kind: str, dims: str) -> bytes:
        head = _header(kind, dims)
        if kind == "POINT":  # an empty point is NaN coordinates, as DuckDB writes it
            return head + struct.pack("<" + "d" * _width(dims), *([math.nan] * _width(dims)))
        return head + struct.pack("<I", 0)

    def _coords(self, dims: str | None) -> tuple[list[float], str]:
        """One coordinate tuple: two values unless the text named Z, M or ZM (DuckDB reads `POINT (1 2 3)` as an
        error, not as a Z point)."""
        values = []
        while self.peek() not in (",", ")", None):
            try:
                values.append(float(self.take()))
            except ValueError:
                raise WktError(f"not a number: {self.tokens[self.pos - 1]!r} in WKT {self.text!r}") from None
        dims = dims or ""
        if len(values) != _width(dims):
            raise WktError(f"a coordinate has {len(values)} values, expected {_width(dims)} in WKT {self.text!r}")
        return values, dims

    def _sequence(self, dims: str | None) -> tuple[list[list[float]], str | None]:
        """`x y, x y, ...)` (the opening parenthesis taken): the coordinates and their dimension."""
        points = []
        while True:
            values, dims = self._coords(dims)
            points.append(values)
            if self.take() == ")":
                return points, dims

    def _body(self, kind: str, dims: str | None) -> bytes:
        if kind == "POINT":
            (values,), dims = self._sequence(dims)
            return _header(kind, dims) + struct.pack("<" + "d" * len(values), *values)
        if kind == "LINESTRING":
            points, dims = self._sequence(dims)
            return _header(kind, dims) + _points(points)
        if kind == "POLYGON":
            rings, dims = self._rings(dims)
            return _header(kind, dims) + struct.pack("<I", len(rings)) + b"".join(rings)
        parts: list[bytes] = []
        child = {"MULTIPOINT": "POINT", "MULTILINESTRING": "LINESTRING", "MULTIPOLYGON": "POLYGON"}.get(kind)
        while True:
            if kind == "GEOMETRYCOLLECTION":
                part = self.geometry(dims)
                dims = dims if dims is not None else _dims_of(part)
            elif (self.peek() or "").upper() == "EMPTY":
                self.take()
                part = self._empty(child, dims or "")  # type: ignore[arg-type]  # a MULTI kind: child is set
            elif child == "POINT" and self.peek() != "(":  # MULTIPOINT (1 2, 3 4): points without parentheses
                values, dims = self._coords(dims)
                part = _header("POINT", dims) + struct.pack("<" + "d" * len(values), *values)
            else:
                self.take("(")
                part = self._body(child, dims)  # type: ignore[arg-type]  # a MULTI kind: child is set
                dims = _dims_of(part)
            parts.append(part)
            if self.take() == ")":
                break
        dims = dims or ""
        return _header(kind, dims) + struct.pack("<I", len(parts)) + b"".join(parts)

    def _rings(self, dims: str | None) -> tuple[list[bytes], str | None]:
        rings = []
        while True:
            if (self.peek() or "").upper() == "EMPTY":
                self.take()
                rings.append(struct.pack("<I", 0))
            else:
                self.take("(")
                points, dims = self._sequence(dims)
                rings.append(_points(points))
            if self.take() == ")":
                return rings, dims


def _width(dims: str) -> int:
    return 2 + len(dims)


def _header(kind: str, dims: str | None) -> bytes:
    return struct.pack("<BI", 1, _CODE[kind] + _DIMS[dims or ""])


def _dims_of(wkb: bytes) -> str:
    code = struct.unpack_from("<I", wkb, 1)[0]
    return {0: "", 1: "Z", 2: "M", 3: "ZM"}[code // 1000]


def _points(points: list[list[float]]) -> bytes:
    flat = [v for p in points for v in p]
    return struct.pack("<I", len(points)) + struct.pack("<" + "d" * len(flat), *flat)


# ------------------------------------------------------------------------------------------------ WKB -> WKT
def wkb_to_wkt(data: bytes) -> str:
    """DuckDB's text of a WKB geometry (ISO or EWKB-style Z/M flags, either byte order)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise WktError(f"WKB must be bytes, got {type(data).__name__}")
    reader = _Reader(bytes(data))
    text = reader.geometry()
    if reader.pos != len(reader.data):
        raise WktError(f"{len(reader.data) - reader.pos} bytes left after the WKB geometry")
    return text


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos, self.order = data, 0, "<"

    def unpack(self, fmt: str) -> tuple[Any, ...]:
        size = struct.calcsize(self.order + fmt)
        if self.pos + size > len(self.data):
            raise WktError("WKB ends inside a geometry")
        values = struct.unpack_from(self.order + fmt, self.data, self.pos)
        self.pos += size
        return values

    def geometry(self) -> str:
        (order,) = struct.unpack_from("<B", self.data, self.pos) if self.pos < len(self.data) else (None,)
        if order not in (0, 1):
            raise WktError(f"not WKB: byte order {order!r}")
        self.pos += 1
        self.order = "<" if order == 1 else ">"
        (code,) = self.unpack("I")
        z, m = bool(code & 0x80000000), bool(code & 0x40000000)  # EWKB flags
        code &= 0x0FFFFFFF
        base, iso = code % 1000, code // 1000
        z, m = z or iso in (1, 3), m or iso in (2, 3)
        if not 1 <= base <= len(KINDS):
            raise WktError(f"not WKB: geometry type {code}")
        kind, dims = KINDS[base - 1], ("Z" if z else "") + ("M" if m else "")
        body = self._body(kind, 2 + z + m)
        return f"{kind}{' ' + dims if dims else ''} {body}"

    def _coords(self, width: int) -> str:
        return " ".join(_number(v) for v in self.unpack("d" * width))

    def _body(self, kind: str, width: int) -> str:
        if kind == "POINT":
            values = self.unpack("d" * width)
            if all(math.isnan(v) for v in values):
                return "EMPTY"
            return "(" + " ".join(_number(v) for v in values) + ")"
        (count,) = self.unpack("I")
        if count == 0:
            return "EMPTY"
        if kind == "LINESTRING":
            return "(" + ", ".join(self._coords(width) for _ in range(count)) + ")"
        if kind == "POLYGON":
            rings = []
            for _ in range(count):
                (points,) = self.unpack("I")
                rings.append("(" + ", ".join(self._coords(width) for _ in range(points)) + ")" if points else "EMPTY")
            return "(" + ", ".join(rings) + ")"
        parts = []
        for _ in range(count):
            order = self.order
            if kind == "GEOMETRYCOLLECTION":
                parts.append(self.geometry())
            else:  # a multi geometry's parts are shown without their type word
                text = self.geometry()
                body = text.split(" ", 1)[1].lstrip("ZM ") if " " in text else text
                if kind == "MULTIPOINT" and body.startswith("("):
                    body = body[1:-1]  # MULTIPOINT (1 2, 3 4), as DuckDB writes it
                parts.append(body)
            self.order = order
        return "(" + ", ".join(parts) + ")"


def _number(value: float) -> str:
    """A coordinate as DuckDB prints it: the shortest text that reads back, no trailing `.0`."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text
