"""Encrypted lakes (`ENCRYPTED`: per-file keys in `ducklake_data_file.encryption_key`): what is supported.

DuckDB encrypts every Parquet module with AES-GCM and no additional authenticated data, which Parquet modular
encryption (Arrow C++, parquet-mr) rejects, so such files are decrypted and encrypted by our own route on the
executors (dataplane/spark/encrypted/; docs/types.md, "Encrypted lakes"): Spark's `aes_decrypt` / `aes_encrypt`.
Creating encrypted lakes, reads, appends, deletes, updates, merges, compaction and flushes are supported; deletion
vectors stay plaintext, as the reference writes them. What has no Spark job to run in (the Python Data Source API's
tasks) is refused by name. Keys are never logged or shown.
"""

from __future__ import annotations

from typing import Any

DATA_SOURCE_REFUSED = ("format('ducklake') cannot {verb} table {table} of an ENCRYPTED lake: its files are "
                       "decrypted and encrypted by Spark's aes_decrypt/aes_encrypt in DataFrame jobs, which the "
                       "tasks of Spark's Python Data Source API cannot run (and pyarrow's Parquet decryption "
                       "rejects DuckDB's AES-GCM modules); use lake.{method} instead (docs/types.md, "
                       "'Encrypted lakes')")


def is_encrypted(metadata: dict[Any, Any]) -> bool:
    """Whether `ducklake_metadata` says the lake encrypts its files."""
    return str(metadata.get("encrypted") or "false").strip().lower() in ("true", "1")
