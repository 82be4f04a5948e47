"""Paths as Spark and pyarrow want them."""

from __future__ import annotations

from urllib.parse import quote

import pyarrow.fs as pafs

_SAFE = "/:@!$&'()*+,;=-._~"


def spark_path(path: str) -> str:
    """A lake path for Spark's readers/writers (s3:// becomes s3a://)."""
    return "s3a://" + path[len("s3://"):] if path.startswith("s3://") else path


def spark_file_uri(path: str) -> str:
    """The form Spark shows in `_metadata.file_path` for a file path."""
    if "://" in path:
        return spark_path(path)
    return "file:" + quote(path, safe=_SAFE)


def filesystem(path: str) -> tuple[pafs.FileSystem, str]:
    """A pyarrow filesystem and the path inside it."""
    if "://" in path:
        return pafs.FileSystem.from_uri(path)
    return pafs.LocalFileSystem(), path
