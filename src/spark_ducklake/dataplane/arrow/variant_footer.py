"""Parquet's VARIANT logical type on the variant columns pyarrow writes (write_in_place.py's writers).

pyarrow has no VARIANT type: it writes a variant column as the plain group `struct<value, metadata>` (Spark's
Arrow form, unshredded). DuckDB reads such a group as a STRUCT turned into a variant object, not as the variant
it encodes (it detects variants by shape only under an internal setting of its delta extension), so the group
needs the annotation. The footer is the last thing a writer puts in a file: `AnnotatingSink` holds it back,
adds `logicalType = VARIANT(1)` (as DuckDB and Spark write it) to the groups carrying a variant column's field
id, and writes it on. Offsets stay valid, as nothing before the footer moves. Pure Python: runs on executors.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import BinaryIO

from ...spec.model import Column
from .crypto import thrift

_MAGIC = b"PAR1"
# SchemaElement field ids: num_children, field_id, logicalType; LogicalType union: VARIANT {1: i8 version}
_NUM_CHILDREN, _FIELD_ID, _LOGICAL_TYPE, _VARIANT = 5, 9, 10, 16
_VARIANT_TYPE = thrift.Struct([(_VARIANT, thrift.STRUCT, thrift.Struct([(1, thrift.BYTE, 1)]))])


def annotate_variants(tail: bytes, field_ids: set[int]) -> bytes:
    """The end of a Parquet file (`tail`: whatever precedes the footer, the footer, its length, `PAR1`) with the
    variant groups of `field_ids` annotated VARIANT."""
    if len(tail) < 8 or tail[-4:] != _MAGIC:
        raise ValueError("not the end of a plain Parquet file (no PAR1 magic)")
    length = struct.unpack_from("<I", tail, len(tail) - 8)[0]
    start = len(tail) - 8 - length
    if start < 0:
        raise ValueError("the Parquet footer was not held back whole")
    meta, _end = thrift.decode(tail, start)
    for element in meta.get(2).items:  # FileMetaData.schema: the flattened SchemaElements
        if element.get(_FIELD_ID) in field_ids and element.get(_NUM_CHILDREN) and element.get(_LOGICAL_TYPE) is None:
            element.fields = sorted([*element.fields, (_LOGICAL_TYPE, thrift.STRUCT, _VARIANT_TYPE)],
                                    key=lambda f: f[0])
    body = thrift.encode(meta)
    return tail[:start] + body + struct.pack("<I", len(body)) + _MAGIC


class AnnotatingSink:
    """A writable file for pyarrow's ParquetWriter over `stream`: bytes written after `hold()` (the footer, as
    the writer closes) are annotated by `annotate_variants` and passed on at `close()`, which closes `stream`.
    pyarrow buffers a Python sink, so the held bytes may start with the last pages: `footer_size` tells the
    footer's length once closed."""

    def __init__(self, stream: BinaryIO, field_ids: set[int]) -> None:
        self.stream, self.field_ids = stream, field_ids
        self._held: bytearray | None = None
        self._end: int | None = None  # the file's size once closed
        self.footer_size: int | None = None
        self.closed = False

    def hold(self) -> None:
        """Hold back what is written from now on (call just before closing the Parquet writer)."""
        self._held = bytearray()

    def write(self, data: bytes | bytearray | memoryview) -> int:
        """Pass bytes on, or hold them after `hold()`."""
        if self._held is not None:
            self._held += data
        else:
            self.stream.write(data)
        return len(data)

    def tell(self) -> int:
        """The position in the file as written so far (held bytes included; the final size once closed)."""
        if self._end is not None:
            return self._end
        return self.stream.tell() + (len(self._held) if self._held is not None else 0)

    def flush(self) -> None:
        """Nothing to flush before close: held bytes must stay held."""

    def writable(self) -> bool:
        """A sink."""
        return True

    def close(self) -> None:
        """Annotate and pass on the held footer, then close the stream (idempotent)."""
        if self.closed:
            return
        if self._held:
            tail = annotate_variants(bytes(self._held), self.field_ids)
            self.footer_size = struct.unpack_from("<I", tail, len(tail) - 8)[0]
            self.stream.write(tail)
        self._end = self.stream.tell()
        self.stream.close()
        self.closed = True


def variant_ids(columns: Iterable[Column]) -> set[int]:
    """The field ids of a table's variant columns, at any depth."""
    return {part.column_id for top in columns for part in top.walk() if part.type == "variant"}
