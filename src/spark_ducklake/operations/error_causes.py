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

from ..dataplane.arrow.storage import s3_endpoint
from ..dataplane.spark.workers import configured_python, lacking_message
from ..errors import (
    CatalogDatabaseError,
    ConversionError,
    DuckLakeError,
    InvalidArgumentError,
    InvalidExpressionError,
    SparkJobError,
    SparkUnavailableError,
    StorageError,
)

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
# A file that is gone: pyarrow's "Failed to open local file '<path>'", Spark's PATH_NOT_FOUND ("Path does not
# exist: <uri>."), FAILED_READ_FILE.FILE_NOT_EXIST ("reading file <uri>. File does not exist") and Java's
# FileNotFoundException ("File <uri> does not exist").
_MISSING_FILE = re.compile(r"PATH_NOT_FOUND|FILE_NOT_EXIST|FileNotFoundException|No such file or directory")
_MISSING_PATH = re.compile(r"(?:Path does not exist: |reading file |File |local file ')(\S+?)"
                           r"(?:'|\.? SQLSTATE|\.?$|\. | does not exist)", re.M)
# Spark's conditions for a value that does not convert or compute (DuckDB's Conversion / Out of Range errors)
_CONVERSION = re.compile(r"^(CAST_|DIVIDE_BY_ZERO|ARITHMETIC_OVERFLOW|NUMERIC_|INVALID_INLINE_TABLE"
                         r"|DATETIME_|INVALID_FRACTION|CANNOT_PARSE)")
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


def missing_file(text: str) -> StorageError | None:
    """A StorageError naming the file, when `text` says a file is not there (one of the lake's data files
    deleted or moved behind its back, most likely), with the way out."""
    if not _MISSING_FILE.search(text):
        return None
    found = _MISSING_PATH.search(text)
    path = found.group(1) if found else root_cause(text)[:300]
    return StorageError(f"a file the lake needs is missing: {path} (deleted or moved outside the lake?); put it "
                        "back (e.g. from a backup), or restore the table to a snapshot from before the file was "
                        "written (lake.restore)")


def _condition(exc: BaseException) -> str:
    """Spark's error condition (e.g. CAST_INVALID_INPUT), or ''."""
    getter = getattr(exc, "getCondition", None) or getattr(exc, "getErrorClass", None)
    try:
        return (getter() if getter is not None else None) or ""
    except Exception:  # noqa: BLE001 - an error without a condition (py4j's own)
        return ""


def spark_failure(exc: BaseException, text: str) -> DuckLakeError | None:
    """What a pyspark error (classic or Connect) means for the caller: a missing file, a value that does not
    convert, SQL Spark cannot parse or resolve; None for other failures."""
    missing = missing_file(text)
    if missing is not None:
        return missing
    condition = _condition(exc)
    message = first_line(text)[:500]
    if _CONVERSION.match(condition):
        return ConversionError(f"a value does not convert or compute: {message}")
    if type(exc).__name__ in ("ParseException", "AnalysisException"):  # Spark's parser and binder
        return InvalidExpressionError(f"Spark refused the SQL: {message}")
    return None


def _unencodable(exc: UnicodeError) -> str:
    """The characters a UnicodeEncodeError could not encode, escaped."""
    bad = exc.object[exc.start:exc.end] if isinstance(exc, UnicodeEncodeError) else ""
    return ascii(bad)


def translate(exc: BaseException, location: CatalogLocation) -> DuckLakeError | None:
    """The DuckLakeError to raise instead of `exc`, or None to let `exc` through."""
    if isinstance(exc, DuckLakeError):
        return None
    if is_driver_error(exc):
        return CatalogDatabaseError(f"catalog database {location.describe()} failed: "
                                    f"{catalog_failure(exc, location)}")
    if isinstance(exc, OverflowError):
        return InvalidArgumentError(f"a number is too large for the catalog: {first_line(str(exc))}")
    if isinstance(exc, RecursionError):  # sqlglot's parser recurses once per level of nesting
        return InvalidArgumentError("an expression or value is nested too deeply (thousands of levels of "
                                    "parentheses or nested types): simplify it")
    if isinstance(exc, UnicodeEncodeError) and "surrogate" in str(exc):
        return InvalidArgumentError(f"a string holds a lone surrogate {_unencodable(exc)} (half of a UTF-16 pair), "
                                    "which has no UTF-8 form: fix how the text was decoded")
    if isinstance(exc, OSError) or _spark_error(exc):
        s3 = s3_failure(str(exc))
        if s3 is not None:
            return s3
    if _spark_error(exc):
        text = str(exc)
        missing = _WORKER_MODULE.search(text)
        if missing:  # the workers' check (dataplane/spark/workers.py) was skipped or the job ran elsewhere
            return SparkUnavailableError(lacking_message(configured_python(), [missing.group(1)]))
        cause = storage_cause(text)
        if cause is not None:
            return StorageError(f"cannot write the lake's files: {cause} ({root_cause(text)[:300]})")
        known = spark_failure(exc, text)
        if known is not None:
            return known
        return SparkJobError(f"Spark job failed: {root_cause(text)[:500]}")
    if isinstance(exc, OSError):  # pyarrow's file system (in-process reads and writes, cleanup)
        return file_failure(exc)
    return None


def file_failure(exc: OSError) -> StorageError:
    """A StorageError for a file system error of pyarrow or Python: a missing file, else what is wrong with the
    data path."""
    text = str(exc)
    missing = missing_file(text) if isinstance(exc, FileNotFoundError) else None
    if missing is not None:
        return missing
    cause = storage_cause(text)
    if cause is not None:
        return StorageError(f"cannot write the lake's files: {cause} ({first_line(text)[:300]})")
    return StorageError(f"file system error: {first_line(text)[:500]}")


def call_translated(location: CatalogLocation, function, *args, **kwargs):
    """`function(*args, **kwargs)`, raw driver/Spark/file errors raised as DuckLakeErrors naming the cause."""
    try:
        return function(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - translated below or re-raised unchanged
        error = translate(exc, location)
        if error is None:
            raise
        if not is_driver_error(exc):
            raise error from exc
    raise error from None  # outside the handler: no __context__ whose text could echo the connection string


def translated(method):
    """Wrap a method of the public API so raw driver/Spark errors surface as DuckLakeErrors naming the cause; the
    object has a `location` (DuckLake) or a `ctx` (Transaction, MergeBuilder, SchemaUpdate: what the facade hands
    out, whose methods users call too)."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        location = self.ctx.location if hasattr(self, "ctx") else self.location
        return call_translated(location, method, self, *args, **kwargs)

    return wrapper


def translate_methods(cls):
    """Class decorator: every public plain method of `cls` goes through `translated`."""
    for name, value in list(vars(cls).items()):
        if not name.startswith("_") and callable(value) and not isinstance(value, (classmethod, staticmethod,
                                                                                   property, type)):
            setattr(cls, name, translated(value))
    return cls
