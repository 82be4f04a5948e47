"""Encrypted lakes (`ENCRYPTED`: per-file keys in `ducklake_data_file.encryption_key`): what is supported.

DuckDB encrypts every Parquet module with AES-GCM and no additional authenticated data, which Parquet modular
encryption (Arrow C++, parquet-mr) rejects, so such files are decrypted and encrypted by our own route on the
executors (spark/encrypted/; docs/types.md, "Encrypted lakes"). Reads and appends are supported; operations that
would write positional delete files are refused before anything is written. Keys are never logged or shown.
"""

from __future__ import annotations

ENCRYPTED_DELETES = ("this lake is ENCRYPTED: deleting or updating rows of its Parquet files (positional delete "
                     "files) is not supported by spark-ducklake yet; reads and appends are (docs/types.md, "
                     "'Encrypted lakes')")


def is_encrypted(metadata: dict) -> bool:
    """Whether `ducklake_metadata` says the lake encrypts its files."""
    return str(metadata.get("encrypted") or "false").strip().lower() in ("true", "1")
