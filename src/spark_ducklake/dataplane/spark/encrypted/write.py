"""Writing encrypted data files as DuckDB does: pyarrow writes each file into executor memory, the file is cut
into Parquet modules (layout.plain_modules), Spark's `aes_encrypt(..., 'GCM')` encrypts each with a fresh random
nonce, and the same task assembles and stores the encrypted file. Plaintext never touches storage.

Each file gets its own random AES-128 key, made on the executor and carried only as column data; it comes back
to the driver with the file's description, for the catalog's `encryption_key` (base64, as DuckDB stores it).
"""

from __future__ import annotations

import base64
import io
import os
import pickle

import pyarrow as pa

from ...arrow.crypto.layout import encrypted_file, plain_modules
from ...arrow.storage import filesystem

MODULES = "_dl_path string, _dl_key string, _dl_last boolean, _dl_blob binary, _dl_info binary"
_STORED = "info binary"
KEY_BYTES = 16  # AES-128, as DuckDB's keys


def new_key() -> str:
    """A fresh random AES-128 key, base64 as the catalog stores it."""
    return base64.b64encode(os.urandom(KEY_BYTES)).decode()


class KeptBuffer(io.BytesIO):
    """An in-memory file whose bytes outlive close() (pyarrow's ParquetWriter closes its sink)."""

    kept = b""

    def close(self) -> None:
        """Keep the bytes, then close."""
        self.kept = self.getvalue()
        super().close()


def module_batch(path: str, data: bytes, info, key: str | None = None) -> pa.RecordBatch:
    """One written plain file as rows of `MODULES`: its modules, then its footer with the pickled `info`; encrypted
    with `key` (base64) when given, else with a fresh one."""
    modules, footer = plain_modules(data)
    key = key or new_key()
    n = len(modules) + 1
    return pa.record_batch({
        "_dl_path": pa.array([path] * n, pa.string()), "_dl_key": pa.array([key] * n, pa.string()),
        "_dl_last": pa.array([False] * len(modules) + [True]), "_dl_blob": pa.array(modules + [footer], pa.binary()),
        "_dl_info": pa.array([None] * len(modules) + [pickle.dumps(info)], pa.binary())})


def _store(batches):
    """Encrypted modules of each file, in order, assembled and written; (info, size, footer size, key) pickled
    per file."""
    blobs: list[bytes] = []
    for batch in batches:
        columns = [batch.column(i).to_pylist() for i in range(5)]
        for path, key, last, blob, info in zip(*columns, strict=True):
            if not last:
                blobs.append(blob)
                continue
            data, footer_size = encrypted_file(blobs, blob)
            blobs = []
            fs, inner = filesystem(path)
            with fs.open_output_stream(inner) as out:
                out.write(data)
            yield pa.record_batch({"info": [pickle.dumps((pickle.loads(info), len(data), footer_size, key))]})


def encrypt_and_store(modules) -> list:
    """Encrypt and store the files a `MODULES` DataFrame describes; returns what each file's info held, with the
    NewDataFile's sizes and key set (one Spark job; a failed task leaves at most unreferenced files)."""
    from dataclasses import replace

    return [(group, replace(described, file_size_bytes=size, footer_size=footer_size, encryption_key=key))
            for (group, described), size, footer_size, key in encrypt_and_store_files(modules)]


def encrypt_and_store_files(modules) -> list[tuple]:
    """Encrypt and store the files a `MODULES` DataFrame describes: (info, file size, footer size, base64 key)
    per file (one Spark job)."""
    from pyspark.sql import functions as F

    encrypted = modules.select("_dl_path", "_dl_key", "_dl_last", F.aes_encrypt(
        F.col("_dl_blob"), F.unbase64(F.col("_dl_key")), F.lit("GCM"), F.lit("DEFAULT")).alias("_dl_blob"),
        "_dl_info")
    return [pickle.loads(row["info"]) for row in encrypted.mapInArrow(_store, _STORED).collect()]
