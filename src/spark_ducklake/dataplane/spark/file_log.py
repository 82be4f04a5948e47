"""Scans handed to Spark as a streaming file-sink log (`_spark_metadata/0`), so planning never lists a file.

Spark stats every path it is given; a folder holding a `_spark_metadata` log it plans from the log alone
(MetadataLogFileIndex: files and sizes as logged, nothing listed), read with `recursiveFileLookup`. Classic
sessions write the log to a driver-local temporary folder, removed once the DataFrame is made.

Spark Connect: the server re-analyzes a DataFrame's plan at every action and may run on another machine, so the
log must live where the server reads the data, for as long as any DataFrame over it lives. It is kept next to the
files, named by a digest of the files and sizes it lists: scans of the same files (every read of one snapshot)
share it, no process removes a log another may still use, and a log is never rewritten with other content.
`delete_orphaned_files` removes them once older than its threshold (`SCAN_LOG_PREFIX` folders, hidden from Spark's
and Hadoop's listings). Each also holds a file that is not Parquet, so a read whose log was removed fails loudly
(Spark then lists the folder) instead of silently returning no rows.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import uuid

import pyarrow.fs as pafs

from ..arrow.storage import PLAIN_PATH, filesystem, is_connect, spark_file_uri, spark_path
from . import jvm_index

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
        frame = _read_logged(spark, schema, paths, sizes)  # type: ignore[arg-type]  # all checked not None
        if frame is not None:
            return frame
    if len(paths) > 32 and all("://" not in p for p in paths):
        current = spark.conf.get(_LISTING_THRESHOLD, None)
        if current in (None, "32"):
            spark.conf.set(_LISTING_THRESHOLD, str(_DRIVER_LISTING))
    return spark.read.schema(schema).parquet(*[spark_path(p) for p in paths])


SCAN_LOG_PREFIX = "_spark-ducklake-scan-"  # `_`: hidden from Spark's and Hadoop's listings of the folder


def _read_logged(spark, schema, paths: list[str], sizes: list[int]):
    """The files read through a file-sink log (Spark's MetadataLogFileIndex takes files and sizes from it and never
    lists them; read with recursiveFileLookup, without which files outside the log's folder are silently dropped).
    The log is a driver-local temporary folder, removed as soon as Spark has read it (the index is built when the
    DataFrame is).

    Spark Connect: the server re-analyzes the plan at every action and may not see our disk, so the log sits next
    to the files, named by its content and shared by every scan of the same files (`shared_log_folder`). None when
    that cannot be (the caller hands Spark the paths). Where the session has our JVM index (jvm_index.py), it
    reads the log instead of Spark's index, in a fraction of the time."""
    indexed = jvm_index.reader(spark, schema)  # our index of the log where the session has it (jvm_index.py)

    def spark_index(folder: str):  # made only when needed: a reader costs ~8 Spark calls
        return spark.read.schema(schema).option("recursiveFileLookup", "true").parquet(folder)

    if is_connect(spark):
        folder = shared_log_folder(paths, sizes) if len(paths) >= CONNECT_MIN_FILES else None
        if folder is None:
            return None
        return spark_index(spark_path(folder)) if indexed is None else indexed.load(spark_path(folder))
    folder = tempfile.mkdtemp(prefix=SCAN_LOG_PREFIX)
    try:
        write_file_log(folder, paths, sizes)
        if indexed is not None:
            with contextlib.suppress(Exception):  # noqa: BLE001 - Spark's own index reads the same log
                return indexed.load(folder)
        return spark_index(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def write_file_log(folder: str, paths: list[str], sizes: list[int]) -> None:
    """`folder/_spark_metadata/0` listing the files as a streaming file sink would (`v1`, then a JSON line per
    file: URI, size); local or object storage."""
    # Lines formatted directly (json.dumps of a dict per file took a second for 100k files), without spaces (the
    # log of 100k files is ~19 MB); every field is required. The URI is percent-encoded: json.dumps only quotes it.
    tail = f',"isDir":false,"modificationTime":0,"blockReplication":1,"blockSize":{_BLOCK_SIZE},"action":"add"}}'
    joined = "".join(paths)
    if "://" not in joined and PLAIN_PATH.fullmatch(joined):  # local paths needing no escape: joined by pyarrow
        body = _plain_lines(paths, sizes, tail)
    else:
        body = "\n".join(["v1"] + [f'{{"path":{json.dumps(spark_file_uri(p))},"size":{int(size)}{tail}'
                                   for p, size in zip(paths, sizes, strict=True)]).encode("utf-8")
    fs, inner = filesystem(folder)
    if "://" not in folder:  # object stores have no folders to make (a marker object would be one more request)
        os.makedirs(f"{inner}/_spark_metadata", exist_ok=True)
    with fs.open_output_stream(f"{inner}/_spark_metadata/0") as out:
        out.write(body)


def _plain_lines(paths: list[str], sizes: list[int], tail: str):
    """The log's bytes for local paths that are their own URI and JSON text, each line joined by pyarrow (a
    Python string formatted per file cost 4x the CPU: ~60 ms for 100k files)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(paths) != len(sizes):
        raise ValueError("write_file_log needs one size per path")
    try:
        numbers = pa.array(sizes, pa.int64())
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # e.g. floats
        numbers = pa.array([int(s) for s in sizes], pa.int64())
    text = pa.large_string()
    lines = pc.binary_join_element_wise(pa.scalar('{"path":"file:', text), pa.array(paths, text),
                                        pa.scalar('","size":', text), numbers.cast(text), pa.scalar(tail, text),
                                        pa.scalar("", text))
    one = pa.LargeListArray.from_arrays(pa.array([0, len(lines) + 1], pa.int64()),
                                        pa.concat_arrays([pa.array(["v1"], text), lines]))
    return pc.binary_join(one, pa.scalar("\n", pa.large_string()))[0].as_buffer()


def remove_file_log(folder: str) -> None:
    """Delete a log folder written by write_file_log (best effort: delete_orphaned_files reclaims leftovers)."""
    fs, inner = filesystem(folder)
    with contextlib.suppress(OSError):
        fs.delete_dir(inner)


_BLOCK_SIZE = 128 * 2**20  # splits are sized by spark.sql.files.maxPartitionBytes, not by this


# Fewer files than this are handed to the server as paths: it stats each (on object stores ~3 requests per file),
# which for a few files costs less than checking for a log (1 request) and writing one (2).
CONNECT_MIN_FILES = 32
GUARD_NAME = "log-removed"
GUARD_TEXT = b"spark-ducklake: this scan's _spark_metadata log was removed (delete_orphaned_files); read again\n"


def shared_log_folder(paths: list[str], sizes: list[int]) -> str | None:
    """The folder of a log of these files next to them (written unless there already), or None when the files
    share no folder below a root or it cannot be written (the caller hands the server the paths)."""
    parent = _common_folder(paths)
    if parent is None:
        return None
    digest = hashlib.sha256("\n".join(f"{p}\t{int(s)}" for p, s in zip(paths, sizes, strict=True))
                            .encode("utf-8")).hexdigest()[:40]
    folder = f"{parent}/{SCAN_LOG_PREFIX}{digest}"
    fs, inner = filesystem(folder)
    try:
        if fs.get_file_info(f"{inner}/_spark_metadata/0").type != pafs.FileType.NotFound:
            return folder
        if "://" in folder:  # an object is written whole or not at all: a reader never sees half a log
            _write_guard(fs, inner)
            write_file_log(folder, paths, sizes)
            return folder
        staging = f"{inner}.{uuid.uuid4().hex}.tmp"  # a local folder appears whole, by one rename
        try:
            os.makedirs(staging)
            _write_guard(fs, staging)
            write_file_log(staging, paths, sizes)
            os.rename(staging, inner)
        except OSError:
            if not os.path.exists(f"{inner}/_spark_metadata/0"):  # not another process's identical log
                raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    except OSError:
        return None
    return folder


def _write_guard(fs: pafs.FileSystem, inner: str) -> None:
    with fs.open_output_stream(f"{inner}/{GUARD_NAME}") as out:
        out.write(GUARD_TEXT)


def _common_folder(paths: list[str]) -> str | None:
    """The deepest folder holding every path, None when that is a filesystem or bucket root."""
    first, last = min(paths), max(paths)  # the common prefix of all strings is that of the extremes
    prefix = os.path.commonprefix([first, last])
    folder = prefix[: prefix.rfind("/")] if "/" in prefix else ""
    if "://" in folder:
        _, rest = folder.split("://", 1)
        return folder if "/" in rest.strip("/") else None  # a bucket's root is not a table's folder
    return folder if folder.strip("/") else None
