"""Paths as Spark and pyarrow want them."""

from __future__ import annotations

import functools
import os
import re
from urllib.parse import quote

import pyarrow.fs as pafs

from ...errors import InvalidArgumentError

_SAFE = "/:@!$&'()*+,;=-._~"
# Paths of only these characters are their own percent-encoding (`quote` keeps letters, digits and _SAFE) and
# JSON text; local ones (no `://`) then have `file:` + path as URI.
PLAIN_PATH = re.compile(r"[A-Za-z0-9/:@!$&'()*+,;=._~-]*")


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


# S3 requests give up instead of hanging on a store that stopped answering (pyarrow's default has no bound). The
# request timeout is curl's "under 1 byte/s for that long": a long upload or download that moves data is never cut.
# Read from the environment when a bucket's filesystem is made, so Spark's Python workers (which inherit it, or get
# spark.executorEnv.*) use the same values (docs/object-storage.md).
S3_SETTINGS = (("SPARK_DUCKLAKE_S3_CONNECT_TIMEOUT", 5.0), ("SPARK_DUCKLAKE_S3_REQUEST_TIMEOUT", 10.0),
               ("SPARK_DUCKLAKE_S3_MAX_ATTEMPTS", 3))
_endpoints: dict[str, str] = {}  # bucket -> the endpoint its S3 filesystem talks to (named in errors)


def filesystem(path: str) -> tuple[pafs.FileSystem, str]:
    """A pyarrow filesystem and the path inside it. Object stores use the standard credential chains (for S3:
    AWS_* variables including AWS_ENDPOINT_URL, ~/.aws profiles, instance roles); nothing is read from or
    written to the catalog."""
    if "://" not in path:
        return pafs.LocalFileSystem(), path
    scheme, rest = path.split("://", 1)
    if scheme in _BUCKET_SCHEMES:
        bucket = rest.split("/", 1)[0]
        return _bucket_filesystem(scheme, bucket, s3_settings()), rest.rstrip("/") or bucket
    return pafs.FileSystem.from_uri(path)



def delete_paths(paths: list[str], *, directories: bool = False) -> None:
    """Best-effort removal of files (or directories) nobody may ever see."""
    for path in paths:
        fs, inner = filesystem(path)
        try:
            fs.delete_dir(inner) if directories else fs.delete_file(inner)
        except (OSError, FileNotFoundError):
            pass


def s3_settings() -> tuple[float, float, int]:
    """The S3 connect timeout (s), request timeout (s) and attempts per request, from the environment."""
    values = []
    for name, default in S3_SETTINGS:
        text = os.environ.get(name, "").strip()
        try:
            value = type(default)(text) if text else default
        except ValueError:
            value = -1
        if not value > 0:
            raise InvalidArgumentError(f"{name}={text!r}: expected a positive number (default {default})")
        values.append(value)
    return values[0], values[1], int(values[2])  # the third is parsed as an int already


def s3_endpoint(bucket: str) -> str:
    """The endpoint this process reaches `bucket` at: the S3-compatible server's URL, else AWS S3."""
    return _endpoints.get(bucket) or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get(
        "AWS_ENDPOINT_URL") or "AWS S3"


@functools.lru_cache(maxsize=64)
def _bucket_filesystem(scheme: str, bucket: str, settings: tuple[float, float, int]) -> pafs.FileSystem:
    # S3: a file written is one PutObject (not create + part + complete multipart upload: 3 requests); errors such
    # as a missing bucket then surface when the file is closed, which every writer of ours does before returning.
    query = "?allow_delayed_open=true" if scheme == "s3" else ""
    fs = pafs.FileSystem.from_uri(f"{scheme}://{bucket}/{query}")[0]
    if not isinstance(fs, pafs.S3FileSystem):
        return fs
    # from_uri resolves what a URI cannot say (AWS_ENDPOINT_URL, the bucket's region); its options, as pickling
    # hands them over, are kept and the timeouts added (a URI cannot carry them).
    options = fs.__reduce__()[1][0]
    connect, request, attempts = settings
    options.update(connect_timeout=connect, request_timeout=request,
                   retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=attempts))
    _endpoints[bucket] = options.get("endpoint_override") or ""
    return pafs.S3FileSystem(**options)


def writes_in_place(path: str) -> bool:
    """True where data files are written under their final names (object stores: a rename there is a copy)."""
    return "://" in path and not path.startswith("file:")


def is_connect(spark: object) -> bool:
    """Whether `spark` is a Spark Connect session (its driver is a server that may not see our disk)."""
    return "connect" in type(spark).__module__
