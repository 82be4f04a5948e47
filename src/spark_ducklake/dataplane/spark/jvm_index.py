"""The optional JVM file index: a scan's file-sink log read by our own small index (jvm/DuckLakeFileList.java)
instead of Spark's MetadataLogFileIndex, whose parse costs ~9 us per file (0.9 s at 100k files).

Used when the jar was built (scripts/build_jar.sh; shipped in the wheel) and the session resolves the class: the
jar is added once per session (`ADD JAR` on classic sessions, once per thread since it sets that thread's class
loader; an artifact over Spark Connect) and checked by a probe. Anything failing leaves the session on Spark's own
index, silently. SPARK_DUCKLAKE_JVM_INDEX=0 turns it off.
"""

from __future__ import annotations

import os
import threading
import weakref
from pathlib import Path

from ..arrow.storage import is_connect

JAR = Path(__file__).parent / "jvm" / "spark-ducklake-index.jar"
SOURCE = "sparkducklake.DuckLakeFileList"
_BROKEN = "broken"
_sessions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # session -> threads ready, or _BROKEN
_lock = threading.Lock()


def enabled() -> bool:
    """Whether scans may use the JVM index (the jar exists and SPARK_DUCKLAKE_JVM_INDEX is not 0/false/off)."""
    return os.environ.get("SPARK_DUCKLAKE_JVM_INDEX", "1").lower() not in ("0", "false", "off") and JAR.is_file()


def reader(spark, schema):
    """`spark.read` of our file index with `schema` (load it with the log's folder), or None when the session
    cannot use it."""
    if not enabled() or not _ready(spark):
        return None
    return spark.read.format(SOURCE).schema(schema)


def _ready(spark) -> bool:
    """Whether SOURCE resolves in `spark` (and this thread, on classic sessions), adding the jar at first use."""
    key = 0 if is_connect(spark) else threading.get_ident()
    with _lock:
        state = _sessions.setdefault(spark, set())
        if state == _BROKEN or key in state:
            return state != _BROKEN
        try:
            if not _resolves(spark):
                if is_connect(spark):
                    spark.addArtifacts(str(JAR))
                else:
                    spark.sql(f"ADD JAR '{JAR}'".replace("\\", "\\\\"))
                if not _resolves(spark):
                    raise RuntimeError("not resolved")
        except Exception:  # noqa: BLE001 - any failure (other Spark version, no jar support) keeps Spark's index
            _sessions[spark] = _BROKEN
            return False
        state.add(key)
        return True


def _resolves(spark) -> bool:
    """A probe: the index of no files analyzed (one round trip over Spark Connect)."""
    try:
        spark.read.format(SOURCE).schema("probe int").load().schema  # noqa: B018 - forces analysis
    except Exception:  # noqa: BLE001 - DATA_SOURCE_NOT_FOUND, among others
        return False
    return True
