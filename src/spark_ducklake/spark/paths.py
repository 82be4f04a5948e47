"""Paths as Spark and pyarrow want them."""

from __future__ import annotations

import functools
import re
from urllib.parse import quote

import pyarrow.fs as pafs

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


def is_connect(spark) -> bool:
    """Whether `spark` is a Spark Connect session (its driver is a server that may not see our disk)."""
    return "connect" in type(spark).__module__
