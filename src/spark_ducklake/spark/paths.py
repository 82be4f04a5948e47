"""Paths as Spark and pyarrow want them."""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import tempfile
from urllib.parse import quote

import pyarrow.fs as pafs

_SAFE = "/:@!$&'()*+,;=-._~"


def spark_path(path: str) -> str:
    """A lake path for Spark's readers/writers (s3:// becomes s3a://)."""
    return "s3a://" + path[len("s3://"):] if path.startswith("s3://") else path


def spark_file_uri(path: str) -> str:
    """The form Spark shows in `_metadata.file_path` for a file path (a URI: percent-encoded key)."""
    if "://" in path:
        scheme, _, rest = spark_path(path).partition("://")
        bucket, slash, key = rest.partition("/")
        return f"{scheme}://{bucket}{slash}{quote(key, safe=_SAFE)}"
    return "file:" + quote(path, safe=_SAFE)


# Object stores whose paths are `scheme://bucket/key`: one filesystem per bucket and process (creating one may
# cost requests, e.g. resolving the bucket's region), keys taken verbatim (no percent-decoding: the reference
# writes `%2F` in hive directory names literally).
_BUCKET_SCHEMES = ("s3", "gs", "gcs")


def filesystem(path: str) -> tuple[pafs.FileSystem, str]:
    """A pyarrow filesystem and the path inside it. Object stores use the standard credential chains (for S3:
    AWS_* variables including AWS_ENDPOINT_URL, ~/.aws profiles, instance roles); nothing is read from or
    written to the catalog."""
    if "://" not in path:
        return pafs.LocalFileSystem(), path
    scheme, rest = path.split("://", 1)
    if scheme in _BUCKET_SCHEMES:
        bucket = rest.split("/", 1)[0]
        return _bucket_filesystem(scheme, bucket), rest.rstrip("/") or bucket
    return pafs.FileSystem.from_uri(path)


@functools.lru_cache(maxsize=64)
def _bucket_filesystem(scheme: str, bucket: str) -> pafs.FileSystem:
    # S3: a file written is one PutObject (not create + part + complete multipart upload: 3 requests); errors such
    # as a missing bucket then surface when the file is closed, which every writer of ours does before returning.
    query = "?allow_delayed_open=true" if scheme == "s3" else ""
    return pafs.FileSystem.from_uri(f"{scheme}://{bucket}/{query}")[0]


def writes_in_place(path: str) -> bool:
    """True where data files are written under their final names (object stores: a rename there is a copy)."""
    return "://" in path and not path.startswith("file:")


# Spark lists the paths handed to a file source with a Spark job of up to 10,000 tasks once there are more than
# this conf says (default 32): 40 s for 10k local files on 2 cores, against 1 s when the driver lists them itself.
_LISTING_THRESHOLD = "spark.sql.sources.parallelPartitionDiscovery.threshold"
_DRIVER_LISTING = 1_000_000


def read_parquet(spark, schema, paths: list[str], sizes: list[int | None] | None = None):
    """`spark.read.schema(schema).parquet(*paths)` for lake files. Object-store files with known `sizes` (the
    catalog's file_size_bytes) are handed over in a file-sink log, so planning makes no request per file (Spark
    would HEAD and LIST each one); local files are listed on the driver (the session's listing threshold is
    raised once, when it is Spark's default)."""
    if sizes is not None and paths and _listed_by_log(spark, paths, sizes):
        return spark.read.schema(schema).option("recursiveFileLookup", "true").parquet(_file_log(paths, sizes))
    if len(paths) > 32 and all("://" not in p for p in paths):
        current = spark.conf.get(_LISTING_THRESHOLD, None)
        if current in (None, "32"):
            spark.conf.set(_LISTING_THRESHOLD, str(_DRIVER_LISTING))
    return spark.read.schema(schema).parquet(*[spark_path(p) for p in paths])


def _listed_by_log(spark, paths: list[str], sizes: list[int | None]) -> bool:
    """Object-store files, every size known, and a classic session (the log is a folder on the driver's disk,
    which a Spark Connect server cannot see)."""
    return (all(writes_in_place(p) for p in paths) and all(s is not None for s in sizes)
            and "connect" not in type(spark).__module__)


_LOG_ROOT: list[str] = []


def _file_log(paths: list[str], sizes: list[int]) -> str:
    """A driver-local folder whose `_spark_metadata/0` lists the files as a streaming file sink would: Spark's
    MetadataLogFileIndex then takes the files and sizes from it without touching the store. (Read with
    recursiveFileLookup: without it, files outside the folder are silently dropped.)"""
    if not _LOG_ROOT:
        _LOG_ROOT.append(tempfile.mkdtemp(prefix="spark-ducklake-scans-"))
        atexit.register(shutil.rmtree, _LOG_ROOT[0], True)
    folder = tempfile.mkdtemp(dir=_LOG_ROOT[0])
    os.mkdir(os.path.join(folder, "_spark_metadata"))
    lines = ["v1"] + [json.dumps({"path": spark_file_uri(p), "size": size, "isDir": False, "modificationTime": 0,
                                  "blockReplication": 1, "blockSize": _BLOCK_SIZE, "action": "add"})
                      for p, size in zip(paths, sizes, strict=True)]
    with open(os.path.join(folder, "_spark_metadata", "0"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
    return folder


_BLOCK_SIZE = 128 * 2**20  # splits are sized by spark.sql.files.maxPartitionBytes, not by this
