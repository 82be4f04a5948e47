"""Shipping spark-ducklake to the executors: a zip of the installed package, added once per session as a Python
artifact (`addArtifacts(pyfile=True)`: classic Spark 4 and Spark Connect alike), so executors need nothing of ours.

Why a zip rather than cloudpickle's by-value pickling: executor functions import our modules (`import` statements
in function bodies, dataclasses, module constants); by-value pickling would need every such import rewritten and
would re-send module contents with every task, while a zip on the executors' path makes ordinary imports work.
Modules imported on executors must only need pyarrow, pandas and numpy (tests/deployment/test_user_session.py
checks this).
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
import threading
import weakref
import zipfile
from pathlib import Path

_lock = threading.Lock()
_zip_path: str | None = None
_shipped: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # session -> True once the zip was added


def package_zip() -> str:
    """Path of a zip holding this installed package's .py files (deterministic bytes; name carries their hash)."""
    global _zip_path
    with _lock:
        if _zip_path is not None and os.path.exists(_zip_path):
            return _zip_path
        root = Path(__file__).resolve().parents[2]  # dataplane/spark/shipping.py -> spark_ducklake
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(root.rglob("*.py")):
                if "__pycache__" in path.parts:
                    continue
                info = zipfile.ZipInfo(f"{root.name}/{path.relative_to(root).as_posix()}", (1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, path.read_bytes())
        data = buffer.getvalue()
        folder = Path(tempfile.gettempdir()) / f"spark-ducklake-artifacts-{os.getuid()}"
        folder.mkdir(exist_ok=True)
        # Spark refuses a second artifact of the same name with other bytes: the content hash keeps names unique.
        target = folder / f"spark_ducklake-{hashlib.sha256(data).hexdigest()[:16]}.zip"
        if not target.exists():
            scratch = target.with_suffix(f".{os.getpid()}.tmp")
            scratch.write_bytes(data)
            os.replace(scratch, target)
        _zip_path = str(target)
        return _zip_path


def ship_package(spark) -> None:
    """Add the package zip to `spark`'s Python artifacts unless done already for this session object.
    SPARK_DUCKLAKE_SHIP_PACKAGE=0 turns it off (executors that have the package installed)."""
    if os.environ.get("SPARK_DUCKLAKE_SHIP_PACKAGE", "1") == "0":
        return
    try:
        if _shipped.get(spark):
            return
    except TypeError:  # not weak-referenceable: ship again (idempotent, just slower)
        pass
    spark.addArtifacts(package_zip(), pyfile=True)
    try:
        _shipped[spark] = True
    except TypeError:
        pass
