"""Resolving the spec's relative paths (data path -> schema -> table -> file) to absolute ones."""

from __future__ import annotations

import os
import re

_URI = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


def is_uri(path: str) -> bool:
    """True for `s3://...`-style paths, which are never touched by os.path."""
    return bool(_URI.match(path))


def absolute_data_path(path: str) -> str:
    """A data path as stored: URIs as given, local paths made absolute; always ends with '/'."""
    if not is_uri(path):
        path = os.path.abspath(path)
    return path if path.endswith("/") else path + "/"


def is_absolute(path: str) -> bool:
    """A URI or an absolute local path."""
    return path.startswith("/") or is_uri(path)


def join(base: str, path: str | None, is_relative: bool | None) -> str:
    """`path` resolved against `base` when relative; `base` itself when there is no path."""
    if path is None:
        return base
    if is_relative is False or (is_relative is None and (is_uri(path) or path.startswith("/"))):
        return path
    return base + path


def relative_to(base: str, path: str) -> tuple[str, bool]:
    """(stored path, path_is_relative) for a file under `base`, as the reference stores them."""
    if path.startswith(base):
        return path[len(base):], True
    return path, False


def dir_name_for(name: str, fallback: str) -> str:
    """The directory a schema/table gets: its name when plain, else its uuid (as the reference does)."""
    return f"{name}/" if re.fullmatch(r"[A-Za-z0-9_\-]+", name) else f"{fallback}/"


def delete_file_format(path: str) -> str:
    """`ducklake_delete_file.format` of a delete file we wrote: `puffin` for deletion vectors, else `parquet`."""
    return "puffin" if path.endswith(".puffin") else "parquet"
