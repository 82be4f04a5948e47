"""Reading encrypted Parquet files (DuckDB's, and ours: encrypted/write.py) on Spark: executors split files into
modules, Spark's `aes_decrypt` (AES-GCM, no additional authenticated data: what DuckDB writes) decrypts them,
executors reassemble the plaintext file in memory and read it with pyarrow. Nothing plaintext touches storage.

Keys travel wrapped (keys.py) as column data of a small job DataFrame, which a plan carries; only the tasks unwrap
them, with the session secret they read from a session file artifact (never logged). Once the jobs are
spread over tasks, the three steps are narrow: one task splits, decrypts and reads its files in order.
"""

from __future__ import annotations

import pyarrow as pa

from ....spec.internal_columns import ROW_ID_COLUMN, SNAPSHOT_ID_COLUMN
from ....spec.model import Column, DataFile
from ...arrow.crypto.layout import plaintext_file, split
from ...arrow.scan_columns import FILE, PATH, POS, ScanColumns
from ...arrow.storage import filesystem, spark_file_uri
from .. import types as spark_types
from ..arrow_files import arrow_rows
from ..shipping import ship_package
from ..workers import require_python_workers
from .keys import unwrap_key, wrap_keys

_JOB, _KEY, _OFFSET, _LAST, _BLOB = "_dl_job", "_dl_key", "_dl_offset", "_dl_last", "_dl_blob"
FOOTER = -1  # the _dl_offset of a file's footer module


def _module_rows(artifact: str, batches):
    """(job, key, module offset, last?, nonce+ciphertext+tag) per module of each job's file; the footer last. The
    jobs' keys come wrapped under the session secret in `artifact` (keys.py)."""
    for batch in batches:
        for job, path, wrapped in zip(*(batch.column(i).to_pylist() for i in range(3)), strict=True):
            key = unwrap_key(artifact, wrapped)
            fs, inner = filesystem(path)
            with fs.open_input_file(inner) as fh:
                data = fh.read()
            try:
                modules, _crypto, footer = split(data)
            except ValueError as e:
                raise ValueError(f"{path}: {e}") from None
            offsets = [start for start, _blob in modules] + [FOOTER]
            yield pa.record_batch({
                _JOB: pa.array([job] * len(offsets), pa.int64()), _KEY: pa.array([key] * len(offsets), pa.string()),
                _OFFSET: pa.array(offsets, pa.int64()), _LAST: pa.array([False] * len(modules) + [True]),
                _BLOB: pa.array([blob for _start, blob in modules] + [footer], pa.binary())})


def _plain_files(batches):
    """(job, plaintext Parquet bytes) per file, from its decrypted modules arriving in order."""
    starts: list[int] = []
    plains: list[bytes] = []
    for batch in batches:
        for job, offset, last, plain in zip(*(batch.column(i).to_pylist() for i in range(4)), strict=True):
            if not last:
                starts.append(offset)
                plains.append(plain)
                continue
            yield job, plaintext_file(starts, plains, plain)
            starts, plains = [], []


def decrypted_map(spark, jobs: list[tuple[str, str]], handle, schema):
    """A DataFrame of `schema`: `handle(job index, pyarrow Table of the decrypted file)` yields its batches, for
    each (path, base64 key) in `jobs`. `handle` runs on executors (it must be picklable, pyarrow-only)."""
    from functools import partial

    from pyspark.sql import functions as F

    ship_package(spark)
    require_python_workers(spark)
    artifact, wrapped = wrap_keys(spark, [k for _p, k in jobs])
    table = pa.table({_JOB: pa.array(range(len(jobs)), pa.int64()), "_dl_path": [p for p, _k in jobs],
                      _KEY: pa.array(wrapped, pa.string())})
    modules = (spark.createDataFrame(table).repartition(max(1, min(len(jobs), 64)))
               .mapInArrow(partial(_module_rows, artifact),
                           f"{_JOB} long, {_KEY} string, {_OFFSET} long, {_LAST} boolean, {_BLOB} binary"))
    plain = modules.select(_JOB, _OFFSET, _LAST, F.aes_decrypt(F.col(_BLOB), F.unbase64(F.col(_KEY)),
                                                                F.lit("GCM"), F.lit("DEFAULT")).alias(_BLOB))

    def read(batches):
        import pyarrow.parquet as pq

        for job, data in _plain_files(batches):
            yield from handle(job, pq.read_table(pa.BufferReader(data)))

    return plain.mapInArrow(read, schema)


def read_encrypted_files(spark, files: list[DataFile], present: list[Column], internal: dict[int, str],
                         extra: ScanColumns, *, name_map=None):
    """The rows of encrypted data files under the present columns (internal names), like the scan's other
    readers: `_ducklake_internal_snapshot_id` / `_ducklake_internal_row_id` and positions as `extra` asks."""
    from pyspark.sql import types as T
    from pyspark.sql.pandas.types import to_arrow_type

    fields = [T.StructField(internal[c.column_id], spark_types.to_spark_type(c), True) for c in present]
    fields += [T.StructField(SNAPSHOT_ID_COLUMN, T.LongType(), True), T.StructField(ROW_ID_COLUMN, T.LongType(), True),
               T.StructField(PATH, T.StringType(), True), T.StructField(POS, T.LongType(), True)]
    schema = T.StructType(fields)
    arrow_schema = pa.schema([pa.field(f.name, to_arrow_type(f.dataType, timezone="UTC")) for f in schema.fields])
    wanted = [(c, internal[c.column_id]) for c in present]
    names = {m.column_id: m.source for m in name_map} if name_map is not None else None
    paths = [f.path for f in files]
    hive = [f.hive_values if name_map is not None else None for f in files]

    def handle(job, table):
        yield from arrow_rows(table, paths[job], wanted, arrow_schema, names, hive[job], vectorized=True)

    frame = decrypted_map(spark, [(f.path, f.encryption_key) for f in files], handle, schema)  # type: ignore[misc]  # encrypted: keyed
    drop = [n for n, keep in ((SNAPSHOT_ID_COLUMN, extra.snapshots), (ROW_ID_COLUMN, extra.lineage),
                              (PATH, extra.positions), (POS, extra.positions)) if not keep]
    return frame.drop(*drop)


def encrypted_delete_positions(spark, delete_files: list[tuple[str, int, int, str]]):
    """(`_dl_file`, `_dl_pos`, `_dl_deleted`) of every position in encrypted positional delete files, given as
    (path, data file id, begin snapshot, base64 key): `_dl_deleted` as `scan.delete_file_positions` defines it."""
    ids = [fid for _p, fid, _b, _k in delete_files]
    begins = [begin for _p, _f, begin, _k in delete_files]
    schema = f"{FILE} long, {POS} long, _dl_deleted long"

    def handle(job, table):
        n = table.num_rows
        pos = table.column("pos").cast(pa.int64())
        if SNAPSHOT_ID_COLUMN in table.column_names:
            deleted = table.column(SNAPSHOT_ID_COLUMN).cast(pa.int64()).fill_null(begins[job])
        else:
            deleted = pa.array([begins[job]] * n, pa.int64())
        yield from pa.table({FILE: pa.array([ids[job]] * n, pa.int64()), POS: pos, "_dl_deleted": deleted}
                            ).to_batches(max_chunksize=65536)

    return decrypted_map(spark, [(p, k) for p, _f, _b, k in delete_files], handle, schema)


def encrypted_lineage(spark, files: list[tuple[str, str]]):
    """(`_dl_uri`, `_dl_pos`, `_dl_rid`, `_dl_begin`) of every row of encrypted files given as (path, base64 key):
    its file's URI (as `_metadata.file_path`), position, `_ducklake_internal_row_id` and `_snapshot_id`."""
    uris = [spark_file_uri(p) for p, _k in files]
    schema = f"_dl_uri string, {POS} long, _dl_rid long, _dl_begin long"

    def handle(job, table):
        n = table.num_rows

        def internal(name):
            return table.column(name).cast(pa.int64()) if name in table.column_names else pa.nulls(n, pa.int64())

        yield from pa.table({"_dl_uri": pa.array([uris[job]] * n, pa.string()), POS: pa.array(range(n), pa.int64()),
                             "_dl_rid": internal(ROW_ID_COLUMN), "_dl_begin": internal(SNAPSHOT_ID_COLUMN)}
                            ).to_batches(max_chunksize=65536)

    return decrypted_map(spark, files, handle, schema)
