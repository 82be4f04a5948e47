"""Encrypted lakes (`ENCRYPTED`: per-file keys in `ducklake_data_file.encryption_key`), refused with the reason.

Measured with DuckDB 1.5.5, pyarrow 26 and Spark 4.3 (docs/types.md, "Encrypted lakes"): DuckDB encrypts every
Parquet module with AES-GCM and no additional authenticated data, while Parquet modular encryption (Arrow C++,
parquet-mr) authenticates each module with its AAD. Neither pyarrow nor Spark's reader can decrypt DuckDB's files
with the right key ("Failed decryption finalization"), so a lake DuckDB encrypted cannot be read here; and writing
plaintext files into it would break its promise. The keys are never read, logged or shown.
"""

from __future__ import annotations

from ..errors import CatalogError

MESSAGE = ("this lake is ENCRYPTED: spark-ducklake cannot read or write encrypted lakes (DuckDB encrypts Parquet "
           "modules with AES-GCM without the AAD that Arrow's and Spark's Parquet readers require, so its files "
           "cannot be decrypted here; see docs/types.md)")


def is_encrypted(metadata: dict) -> bool:
    """Whether `ducklake_metadata` says the lake encrypts its files."""
    return str(metadata.get("encrypted") or "false").strip().lower() in ("true", "1")


def check_not_encrypted(metadata: dict) -> None:
    """CatalogError (naming no key) for an encrypted lake."""
    if is_encrypted(metadata):
        raise CatalogError(MESSAGE)
