"""A small Thrift compact-protocol codec: structs decoded to editable field lists and encoded back byte-exact.

Parquet's footer (FileMetaData) and page headers are compact-protocol structs. Decrypting or encrypting a file
means moving its modules, so the footer's offsets change: this decodes any struct generically (no schema), lets
the caller edit fields by id, and writes it again. Pure Python over bytes: it runs on executors.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

STOP, TRUE, FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(13)

# A decoded value: bool, int, float, bytes, Container or Struct by its wire type (None: a struct's boolean field,
# its value in the type). Decoding has no schema, so only the caller knows which (FileMetaData's field 2 is a list
# of structs, ...): values are `Any` to it.
Value = Any


@dataclass
class Struct:
    """A decoded struct: (field id, compact type, value) in wire order; booleans carry their value in the type."""

    fields: list[tuple[int, int, Value]] = field(default_factory=list)

    def get(self, fid: int, default: Value = None) -> Value:
        """The value of field `fid`, or `default`."""
        for f, _t, v in self.fields:
            if f == fid:
                return v
        return default

    def set(self, fid: int, value: Value) -> None:
        """Replace field `fid`'s value (the field must exist)."""
        self.fields = [(f, t, value if f == fid else v) for f, t, v in self.fields]

    def drop(self, *fids: int) -> None:
        """Remove the given fields."""
        self.fields = [(f, t, v) for f, t, v in self.fields if f not in fids]


@dataclass
class Container:
    """A decoded list, set or map: its element type(s) and items (maps: (key, value) pairs)."""

    kind: int
    elem: int
    items: list[Value]  # maps: (key, value) tuples
    value_type: int = 0


class _Reader:
    def __init__(self, data: bytes, pos: int = 0):
        self.data, self.pos = data, pos

    def byte(self) -> int:
        b = self.data[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def value(self, t: int) -> Value:
        if t in (TRUE, FALSE):  # inside containers a boolean is one byte
            return self.byte() == TRUE
        if t == BYTE:
            return struct.unpack("<b", bytes([self.byte()]))[0]
        if t in (I16, I32, I64):
            return self.zigzag()
        if t == DOUBLE:
            self.pos += 8
            return struct.unpack("<d", self.data[self.pos - 8:self.pos])[0]
        if t == BINARY:
            n = self.varint()
            self.pos += n
            return bytes(self.data[self.pos - n:self.pos])
        if t in (LIST, SET):
            head = self.byte()
            size, elem = head >> 4, head & 0x0F
            if size == 15:
                size = self.varint()
            return Container(t, elem, [self.value(elem) for _ in range(size)])
        if t == MAP:
            size = self.varint()
            if not size:
                return Container(MAP, 0, [], 0)
            kinds = self.byte()
            k, v = kinds >> 4, kinds & 0x0F
            return Container(MAP, k, [(self.value(k), self.value(v)) for _ in range(size)], v)
        if t == STRUCT:
            return self.struct()
        raise ValueError(f"not a Thrift compact type: {t}")

    def struct(self) -> Struct:
        out, last = Struct(), 0
        while True:
            head = self.byte()
            t = head & 0x0F
            if t == STOP:
                return out
            delta = head >> 4
            fid = last + delta if delta else self.zigzag()
            out.fields.append((fid, t, None if t in (TRUE, FALSE) else self.value(t)))
            last = fid


def decode(data: bytes, pos: int = 0) -> tuple[Struct, int]:
    """The struct starting at `pos`, and the position just after it."""
    reader = _Reader(data, pos)
    return reader.struct(), reader.pos


def _varint(n: int, out: bytearray) -> None:
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _zigzag(n: int, out: bytearray) -> None:
    _varint((n << 1) ^ (n >> 63), out)


def _value(t: int, v: Value, out: bytearray) -> None:
    if t in (TRUE, FALSE):
        out.append(TRUE if v else FALSE)
    elif t == BYTE:
        out += struct.pack("<b", v)
    elif t in (I16, I32, I64):
        _zigzag(v, out)
    elif t == DOUBLE:
        out += struct.pack("<d", v)
    elif t == BINARY:
        _varint(len(v), out)
        out += v
    elif t in (LIST, SET):
        n = len(v.items)
        out.append((min(n, 15) << 4) | v.elem)
        if n >= 15:
            _varint(n, out)
        for item in v.items:
            _value(v.elem, item, out)
    elif t == MAP:
        _varint(len(v.items), out)
        if v.items:
            out.append((v.elem << 4) | v.value_type)
            for k, val in v.items:
                _value(v.elem, k, out)
                _value(v.value_type, val, out)
    elif t == STRUCT:
        _struct(v, out)
    else:
        raise ValueError(f"not a Thrift compact type: {t}")


def _struct(s: Struct, out: bytearray) -> None:
    last = 0
    for fid, t, v in s.fields:
        if 0 < fid - last <= 15:
            out.append(((fid - last) << 4) | t)
        else:
            out.append(t)
            _zigzag(fid, out)
        if t not in (TRUE, FALSE):
            _value(t, v, out)
        last = fid
    out.append(STOP)


def encode(s: Struct) -> bytes:
    """The compact-protocol bytes of a struct."""
    out = bytearray()
    _struct(s, out)
    return bytes(out)
