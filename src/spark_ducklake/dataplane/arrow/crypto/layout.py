"""The layout of an encrypted Parquet file as DuckDB writes it, and the plaintext file it stands for.

An encrypted file is `PARE`, then modules back to back (each `[4-byte little-endian length][12-byte nonce]
[ciphertext][16-byte GCM tag]`: page headers, pages, dictionary pages), then the footer: a plaintext
FileCryptoMetaData struct followed by the encrypted FileMetaData module, its length and `PARE`. A module minus
its length prefix is exactly what Spark's `aes_decrypt(..., 'GCM')` takes and `aes_encrypt` returns. Footer
offsets (a column chunk's pages, a row group's start) name module starts in the encrypted file; the plaintext
twin lays the decrypted modules out back to back after `PAR1` with those offsets moved. Pure Python: executors.
"""

from __future__ import annotations

import struct
from bisect import bisect_right

from . import thrift

ENCRYPTED_MAGIC = b"PARE"
PLAIN_MAGIC = b"PAR1"
OVERHEAD = 4 + 12 + 16  # length prefix, nonce, tag


def split(data: bytes) -> tuple[list[tuple[int, bytes]], bytes, bytes]:
    """(module start offset, nonce+ciphertext+tag) per data module, the FileCryptoMetaData bytes and the encrypted
    footer module (nonce+ciphertext+tag) of an encrypted file; ValueError for anything else."""
    if len(data) < 12 or data[:4] != ENCRYPTED_MAGIC or data[-4:] != ENCRYPTED_MAGIC:
        raise ValueError("not a Parquet file with an encrypted footer (no PARE magic)")
    footer_len = struct.unpack_from("<I", data, len(data) - 8)[0]
    footer_start = len(data) - 8 - footer_len
    if footer_start < 4:
        raise ValueError("encrypted Parquet footer length is out of range")
    modules, pos = [], 4
    while pos < footer_start:
        n = struct.unpack_from("<I", data, pos)[0]
        if n < OVERHEAD - 4 or pos + 4 + n > footer_start:
            raise ValueError(f"encrypted Parquet module at offset {pos} has a bad length {n}")
        modules.append((pos, bytes(data[pos + 4:pos + 4 + n])))
        pos += 4 + n
    _crypto, after = thrift.decode(data, footer_start)
    n = struct.unpack_from("<I", data, after)[0]
    if after + 4 + n != len(data) - 8:
        raise ValueError("encrypted Parquet footer module does not fill the footer")
    return modules, bytes(data[footer_start:after]), bytes(data[after + 4:after + 4 + n])


class _OffsetMap:
    """Module start offsets in one layout -> the same modules' offsets in another (and the end of the last one)."""

    def __init__(self, src: list[int], dst: list[int]):
        self.src, self.dst = src, dst

    def __call__(self, offset: int) -> int:
        i = bisect_right(self.src, offset) - 1
        if i < 0 or self.src[i] != offset:
            raise ValueError(f"footer offset {offset} is not the start of a module")
        return self.dst[i]

    def span(self, start: int, size: int) -> int:
        """The size in the other layout of the range [start, start + size)."""
        return self(start + size) - self(start)


def _starts(sizes: list[int], first: int, overhead: int) -> list[int]:
    """Offsets of modules of the given sizes laid out from `first`, each `overhead` bytes bigger; then the end."""
    out, pos = [], first
    for size in sizes:
        out.append(pos)
        pos += size + overhead
    return out + [pos]


def plaintext_file(starts: list[int], plains: list[bytes], footer: bytes) -> bytes:
    """The plain Parquet file of decrypted modules (in file order, `starts` their encrypted offsets) and the
    decrypted FileMetaData, its offsets and sizes moved to the plaintext layout."""
    enc_end = starts[-1] + len(plains[-1]) + OVERHEAD if starts else 4
    moved = _OffsetMap(list(starts) + [enc_end], _starts([len(p) for p in plains], len(PLAIN_MAGIC), 0))
    meta, _end = thrift.decode(footer)
    meta.drop(8, 9)  # encryption_algorithm, footer_signing_key_metadata: a plaintext footer has neither
    _move_footer(meta, moved)
    body = thrift.encode(meta)
    return b"".join([PLAIN_MAGIC, *plains, body, struct.pack("<I", len(body)), PLAIN_MAGIC])


def plain_modules(data: bytes) -> tuple[list[bytes], bytes]:
    """A plain Parquet file (no page indexes or bloom filters) as its modules in file order (each page header,
    each page) and its FileMetaData with offsets and sizes moved to where `encrypted_file` puts the modules."""
    if len(data) < 12 or data[:4] != PLAIN_MAGIC or data[-4:] != PLAIN_MAGIC:
        raise ValueError("not a plain Parquet file (no PAR1 magic)")
    footer_len = struct.unpack_from("<I", data, len(data) - 8)[0]
    footer_start = len(data) - 8 - footer_len
    meta, _end = thrift.decode(data, footer_start)
    modules, starts, pos = [], [], len(PLAIN_MAGIC)
    for group in (meta.get(4).items if meta.get(4) else ()):
        for chunk in group.get(1).items:
            md = chunk.get(3)
            start = _chunk_start(md)
            if start != pos:
                raise ValueError(f"column chunk at {start} does not follow the previous one (at {pos})")
            end = start + md.get(7)
            while pos < end:
                header, after = thrift.decode(data, pos)
                page_end = after + header.get(3)
                starts += [pos, after]
                modules += [bytes(data[pos:after]), bytes(data[after:page_end])]
                pos = page_end
    if pos != footer_start:
        raise ValueError("the file holds bytes outside its column chunks (page indexes or bloom filters)")
    moved = _OffsetMap(starts + [pos], _starts([len(m) for m in modules], len(ENCRYPTED_MAGIC), OVERHEAD))
    _move_footer(meta, moved)
    return modules, thrift.encode(meta)


# FileCryptoMetaData {1: EncryptionAlgorithm {1: AesGcmV1 {}}}: AES-GCM for every module, no AAD prefix (DuckDB's).
CRYPTO_METADATA = bytes([0x1C, 0x1C, 0x00, 0x00, 0x00])


def encrypted_file(blobs: list[bytes], footer: bytes) -> tuple[bytes, int]:
    """The encrypted file of `plain_modules`' modules and footer, each encrypted (nonce+ciphertext+tag), and the
    size of its footer section (FileCryptoMetaData and the footer module), as the catalog's footer_size."""
    parts = [ENCRYPTED_MAGIC]
    for blob in blobs:
        parts += [struct.pack("<I", len(blob)), blob]
    tail = CRYPTO_METADATA + struct.pack("<I", len(footer)) + footer
    parts += [tail, struct.pack("<I", len(tail)), ENCRYPTED_MAGIC]
    return b"".join(parts), len(tail)


def _move_footer(meta: thrift.Struct, moved: _OffsetMap) -> None:
    for group in (meta.get(4).items if meta.get(4) else ()):
        chunks = group.get(1).items
        first = _chunk_start(chunks[0].get(3)) if chunks else None
        for chunk in chunks:
            _move_chunk(chunk, moved)
        if group.get(5) is not None and first is not None:
            group.set(5, moved(first))
        if group.get(6) is not None:
            group.set(6, sum(c.get(3).get(7) for c in chunks))


def _chunk_start(md: thrift.Struct) -> int:
    dictionary = md.get(11)
    return dictionary if dictionary is not None and dictionary > 0 else md.get(9)


def _move_chunk(chunk: thrift.Struct, moved: _OffsetMap) -> None:
    # Page indexes and bloom filters are left out (optional; their offsets would need modules of their own).
    chunk.drop(4, 5, 6, 7, 8, 9)
    md = chunk.get(3)
    start = _chunk_start(md)
    md.set(7, moved.span(start, md.get(7)))
    for fid in (9, 10, 11):
        value = md.get(fid)
        if value is not None and value > 0:
            md.set(fid, moved(value))
    md.drop(14, 15)
    if chunk.get(2):
        chunk.set(2, moved(start))
