"""Encrypted lakes: refused with the reason (docs/types.md), keys never shown, the catalog left as it was."""

from __future__ import annotations

import base64
import glob
import logging

import pyarrow.parquet as pq
import pytest

from spark_ducklake import DuckLake
from spark_ducklake.errors import CatalogError
from tests.support.reference import attach

pytestmark = pytest.mark.not_on_mysql("encrypted lakes are refused on every catalog; MySQL adds nothing here")


def _encrypted_lake(reference, catalog: str, data: str) -> list[str]:
    attach(reference, catalog, data, data_inlining_row_limit=0, encrypted=True)
    reference.execute("CREATE TABLE lake.t AS SELECT i AS id FROM range(10) t(i)")
    reference.execute("DELETE FROM lake.t WHERE id < 3")
    keys = [r[0] for r in reference.execute(
        "SELECT encryption_key FROM __ducklake_metadata_lake.ducklake_data_file UNION ALL "
        "SELECT encryption_key FROM __ducklake_metadata_lake.ducklake_delete_file").fetchall()]
    snapshots = reference.execute("SELECT count(*) FROM lake.snapshots()").fetchone()[0]
    reference.execute("DETACH lake")
    assert all(keys) and snapshots == 3
    return keys


def test_encrypted_lake_is_refused_naming_no_key(catalog, tmp_path, reference, caplog):
    data = f"{tmp_path}/data/"
    keys = _encrypted_lake(reference, catalog, data)
    caplog.set_level(logging.DEBUG)
    with pytest.raises(CatalogError, match="ENCRYPTED") as caught:
        DuckLake.attach(catalog, data)
    shown = f"{caught.value}{caught.value!r}{caplog.text}"
    assert not any(key in shown or base64.b64decode(key).hex() in shown for key in keys)
    attach(reference, catalog, data)  # untouched: DuckDB still reads it, no snapshot added
    assert reference.execute("SELECT count(*) FROM lake.t").fetchone()[0] == 7
    assert reference.execute("SELECT count(*) FROM lake.snapshots()").fetchone()[0] == 3


def test_creating_an_encrypted_lake_is_refused(tmp_path):
    from spark_ducklake.catalog.database import bootstrap

    with pytest.raises(CatalogError, match="encrypted"):
        bootstrap.create_lake(None, f"{tmp_path}/data/", encrypted=True)


def test_why_pyarrow_cannot_read_duckdb_encrypted_files(tmp_path, reference):
    """The reason for the refusal, kept honest: with the right per-file key, Arrow's Parquet decryption (which
    authenticates modules with their AAD, as Parquet modular encryption specifies) rejects DuckDB's files."""
    from pyarrow.parquet.encryption import create_decryption_properties

    data = f"{tmp_path}/data/"
    _encrypted_lake(reference, f"sqlite:{tmp_path / 'm.sqlite'}", data)
    attach(reference, f"sqlite:{tmp_path / 'm.sqlite'}", data)
    path, key = reference.execute("SELECT path, encryption_key FROM __ducklake_metadata_lake.ducklake_data_file"
                                  ).fetchone()
    (full,) = [p for p in glob.glob(f"{data}**/{path}", recursive=True)]
    assert open(full, "rb").read()[-4:] == b"PARE"  # encrypted footer
    with pytest.raises(OSError, match="decryption"):
        pq.read_table(full, decryption_properties=create_decryption_properties(base64.b64decode(key)))
