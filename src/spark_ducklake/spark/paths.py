"""Paths as Spark and pyarrow want them."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import tempfile
from urllib.parse import quote

import pyarrow.fs as pafs

_SAFE = "/:@!$&'()*+,;=-._~"
# Paths of only these characters are their own percent-encoding (`quote` keeps letters, digits and _SAFE) and
# JSON text; local ones (no `://`) then have `file:` + path as URI.
_PLAIN = re.compile(r"[A-Za-z0-9/:@!$&'()*+,;=._~-]*")


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
    """`spark.read.schema(schema).parquet(*paths)` for lake files. Files with known `sizes` (the catalog's
    file_size_bytes) are handed over in a file-sink log, so planning makes no filesystem request per file: Spark
    stats every path it is given (19 s for 100k local files; a HEAD, a HEAD and a LIST per file on s3a). Without
    sizes, local files are listed on the driver (the session's listing threshold is raised once, when it is
    Spark's default)."""
    if sizes is not None and paths and all(s is not None for s in sizes):
        frame = _read_logged(spark, schema, paths, sizes)
        if frame is not None:
            return frame
    if len(paths) > 32 and all("://" not in p for p in paths):
        current = spark.conf.get(_LISTING_THRESHOLD, None)
        if current in (None, "32"):
            spark.conf.set(_LISTING_THRESHOLD, str(_DRIVER_LISTING))
    return spark.read.schema(schema).parquet(*[spark_path(p) for p in paths])


def is_connect(spark) -> bool:
    """Whether `spark` is a Spark Connect session (its driver is a server that may not see our disk)."""
    return "connect" in type(spark).__module__


SCAN_LOG_PREFIX = "_spark-ducklake-scan-"  # `_`: hidden from Spark's and Hadoop's listings of the folder


def _read_logged(spark, schema, paths: list[str], sizes: list[int]):
    """The files read through a file-sink log (Spark's MetadataLogFileIndex takes files and sizes from it and never
    lists them; read with recursiveFileLookup, without which files outside the log's folder are silently dropped).
    The log is a driver-local temporary folder, removed as soon as Spark has read it (the index is built when the
    DataFrame is).

    None on Spark Connect (the caller hands Spark the paths): the server re-analyzes the plan at every action and
    may not see our disk, so a log would have to sit next to the data for as long as any DataFrame lives; written
    there, it showed in the lake's folders and removing it early gave wrong row ids."""
    if is_connect(spark):
        return None
    reader = spark.read.schema(schema).option("recursiveFileLookup", "true")
    folder = tempfile.mkdtemp(prefix=SCAN_LOG_PREFIX)
    try:
        write_file_log(folder, paths, sizes)
        return reader.parquet(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def write_file_log(folder: str, paths: list[str], sizes: list[int]) -> None:
    """`folder/_spark_metadata/0` listing the files as a streaming file sink would (`v1`, then a JSON line per
    file: URI, size); local or object storage."""
    # Lines formatted directly (json.dumps of a dict per file took a second for 100k files), without spaces (the
    # log of 100k files is ~19 MB); every field is required. The URI is percent-encoded: json.dumps only quotes it.
    tail = f',"isDir":false,"modificationTime":0,"blockReplication":1,"blockSize":{_BLOCK_SIZE},"action":"add"}}'
    joined = "".join(paths)
    if "://" not in joined and _PLAIN.fullmatch(joined):  # local paths needing no escape: 2.5x less CPU
        body = "\n".join(["v1"] + [f'{{"path":"file:{p}","size":{int(size)}{tail}'
                                   for p, size in zip(paths, sizes, strict=True)])
    else:
        body = "\n".join(["v1"] + [f'{{"path":{json.dumps(spark_file_uri(p))},"size":{int(size)}{tail}'
                                   for p, size in zip(paths, sizes, strict=True)])
    fs, inner = filesystem(folder)
    if "://" not in folder:  # object stores have no folders to make (a marker object would be one more request)
        os.makedirs(f"{inner}/_spark_metadata", exist_ok=True)
    with fs.open_output_stream(f"{inner}/_spark_metadata/0") as out:
        out.write(body.encode("utf-8"))


def remove_file_log(folder: str) -> None:
    """Delete a log folder written by write_file_log (best effort: delete_orphaned_files reclaims leftovers)."""
    fs, inner = filesystem(folder)
    with contextlib.suppress(OSError):
        fs.delete_dir(inner)


_BLOCK_SIZE = 128 * 2**20  # splits are sized by spark.sql.files.maxPartitionBytes, not by this
