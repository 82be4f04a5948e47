"""Encrypted lakes (`ENCRYPTED`: per-file keys in `ducklake_data_file.encryption_key`): what is supported.

DuckDB encrypts every Parquet module with AES-GCM and no additional authenticated data, which Parquet modular
encryption (Arrow C++, parquet-mr) rejects, so such files are decrypted and encrypted by our own route on the
executors (spark/encrypted/; docs/types.md, "Encrypted lakes"). Reads, appends, deletes and updates (encrypted
positional delete files) are supported; flushing inlined rows that were deleted while inlined is refused before
anything is committed. Keys are never logged or shown.
"""

from __future__ import annotations

ENCRYPTED_DELETES = ("this lake is ENCRYPTED: flush_inlined_data of inlined rows that were deleted while inlined "
                     "is not supported by spark-ducklake yet (their new files' delete files would need their row "
                     "ids decrypted); inlined deletes of Parquet files flush (docs/types.md, 'Encrypted lakes')")


def is_encrypted(metadata: dict) -> bool:
    """Whether `ducklake_metadata` says the lake encrypts its files."""
    return str(metadata.get("encrypted") or "false").strip().lower() in ("true", "1")
