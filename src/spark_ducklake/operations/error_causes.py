"""Raw driver and Spark errors turned into DuckLakeError subclasses whose one-line message names the cause.

Catalog driver errors are re-raised without their chain: a driver's message or SQLAlchemy's wrapper may echo the
connection string, so only a redacted first line survives. Spark errors keep their chain (the Java trace helps,
and Spark never sees the catalog string).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

import sqlalchemy as sa

from ..errors import (
    CatalogDatabaseError,
    DuckLakeError,
    InvalidArgumentError,
    SparkJobError,
    SparkUnavailableError,
    StorageError,
)
from ..spark.paths import s3_endpoint
from ..spark.workers import configured_python, lacking_message

if TYPE_CHECKING:
    from ..catalog.database.connection import CatalogLocation

_DRIVER_MODULES = ("sqlite3", "psycopg", "pymysql", "duckdb", "_duckdb")
_MAX_NAME_BYTES = 255  # the longest file or directory name of common file systems (ext4, xfs, apfs, ntfs)
_STORAGE_CAUSES = (
    (re.compile(r"No space left on device|Disk quota exceeded", re.I), "the disk under the data path is full"),
    (re.compile(r"File name too long", re.I), "a file or directory name is too long for the file system"),
    (re.compile(r"Read-only file system", re.I), "the data path is on a read-only file system"),
    (re.compile(r"Permission denied|AccessDenied|Access Denied|Operation not permitted", re.I),
     "no permission to write under the data path"),
    (re.compile(r"ParentNotDirectoryException|Parent path is not a directory|Not a directory", re.I),
     "a parent of the data path is a file, not a directory"),
    (re.compile(r"Mkdirs failed to create", re.I), "a directory under the data path cannot be created"),
)
_LONG_NAME = re.compile(rf"/([^/\s:\\]{{{_MAX_NAME_BYTES + 1},}})")  # a path segment
# pyarrow's S3 errors: "When uploading object with key 'k' in bucket 'b': AWS Error NETWORK_CONNECTION during
# PutObject operation: curlCode: 7, Couldn't connect to server" (also inside a Python worker's trace).
_S3_ERROR = re.compile(r"(?:key '(?P<key>[^']*)' in bucket|bucket) '(?P<bucket>[^']+)'[^\n]*?: AWS Error "
                       r"(?P<kind>\w+) during (?P<call>\w+) operation: (?P<detail>[^;\n]*)")
_UNREACHABLE = ("NETWORK_CONNECTION", "REQUEST_TIMEOUT", "SERVICE_UNAVAILABLE", "SLOW_DOWN", "INTERNAL_FAILURE")
_WORKER_MODULE = re.compile(r"No module named '(pyarrow|pandas|numpy)'")


def first_line(text: str) -> str:
    """The first non-empty line of a message."""
    return next((line.strip() for line in str(text).splitlines() if line.strip()), "")


def is_driver_error(exc: BaseException) -> bool:
    """An error of the catalog database or its driver (wrapped by SQLAlchemy or raw)."""
    if isinstance(exc, sa.exc.DBAPIError):
        return True
    return type(exc).__module__.split(".")[0] in _DRIVER_MODULES


def catalog_failure(exc: BaseException, location: CatalogLocation) -> str:
    """The driver's own first line (password masked), without SQLAlchemy's statement and parameters."""
    orig = exc.orig if isinstance(exc, sa.exc.DBAPIError) and exc.orig is not None else exc
    return location.redact(first_line(str(orig)) or type(orig).__name__)


def _spark_error(exc: BaseException) -> bool:
    module = type(exc).__module__
    return module.startswith("py4j") or module.startswith("pyspark.errors")


def root_cause(text: str) -> str:
    """The innermost `Caused by:` line of a Java trace (else its first line), without the `Caused by:`."""
    lines = [line.strip() for line in text.splitlines()]
    causes = [line[len("Caused by:"):].strip() for line in lines if line.startswith("Caused by:")]
    if causes:
        return causes[-1]
    head = [line.lstrip(": ") for line in lines if line and not line.startswith(("at ", "..."))]
    return head[1] if len(head) > 1 and head[0].startswith("An error occurred while calling") else first_line(text)


def storage_cause(text: str) -> str | None:
    """What is wrong with the data path, when a Spark or file system error says so."""
    long_name = _LONG_NAME.search(text)
    if long_name:
        return (f"a file or directory name is longer than {_MAX_NAME_BYTES} bytes "
                f"({long_name.group(1)[:40]}...); use a shorter schema or table name")
    for pattern, cause in _STORAGE_CAUSES:
        if pattern.search(text):
            return cause
    return None


def s3_failure(text: str) -> StorageError | None:
    """A StorageError naming the store's endpoint, the object and the cause, when `text` holds an S3 error."""
    found = _S3_ERROR.search(text)
    if found is None:
        return None
    bucket, kind = found.group("bucket"), found.group("kind")
    where = f"s3://{bucket}/{found.group('key') or ''}"
    detail = found.group("detail").strip()
    if kind in _UNREACHABLE:
        return StorageError(f"the object store at {s3_endpoint(bucket)} cannot be reached ({detail}) for {where}: "
                            "is it up? (S3 timeouts: SPARK_DUCKLAKE_S3_* in docs/object-storage.md)")
    return StorageError(f"the object store at {s3_endpoint(bucket)} refused {found.group('call')} on {where}: "
                        f"{kind} ({detail})")


def translate(exc: BaseException, location: CatalogLocation) -> DuckLakeError | None:
    """The DuckLakeError to raise instead of `exc`, or None to let `exc` through."""
    if isinstance(exc, DuckLakeError):
        return None
    if is_driver_error(exc):
        return CatalogDatabaseError(f"catalog database {location.describe()} failed: "
                                    f"{catalog_failure(exc, location)}")
    if isinstance(exc, OverflowError):
        return InvalidArgumentError(f"a number is too large for the catalog: {first_line(str(exc))}")
    if isinstance(exc, OSError) or _spark_error(exc):
        s3 = s3_failure(str(exc))
        if s3 is not None:
            return s3
    if _spark_error(exc):
        text = str(exc)
        missing = _WORKER_MODULE.search(text)
        if missing:  # the workers' check (spark/workers.py) was skipped or the job ran elsewhere
            return SparkUnavailableError(lacking_message(configured_python(), [missing.group(1)]))
        cause = storage_cause(text)
        if cause is not None:
            return StorageError(f"cannot write the lake's files: {cause} ({root_cause(text)[:300]})")
        if type(exc).__module__.startswith("py4j"):
            return SparkJobError(f"Spark job failed: {root_cause(text)[:500]}")
    return None


def translated(method):
    """Wrap a DuckLake method so raw driver/Spark errors surface as DuckLakeErrors naming the cause."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - translated below or re-raised unchanged
            error = translate(exc, self.location)
            if error is None:
                raise
            if not is_driver_error(exc):
                raise error from exc
        raise error from None  # outside the handler: no __context__ whose text could echo the connection string

    return wrapper


def translate_methods(cls):
    """Class decorator: every public plain method of `cls` goes through `translated`."""
    for name, value in list(vars(cls).items()):
        if not name.startswith("_") and callable(value) and not isinstance(value, (classmethod, staticmethod,
                                                                                   property, type)):
            setattr(cls, name, translated(value))
    return cls
