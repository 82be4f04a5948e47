"""Whether Spark's Python workers can run our Arrow jobs: checked once per session, before the first job that needs
them, so a worker Python without pyarrow (a venv not activated: PYSPARK_PYTHON unset means `python3` from PATH) is
one clear line instead of a PythonException inside a JVM trace after the job started."""

from __future__ import annotations

import os
import threading
import weakref

from ...errors import SparkUnavailableError

_lock = threading.Lock()
_verdicts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # session -> None (fine) or the error text
_unkeyed: dict[int, str | None] = {}  # sessions that are not weak-referenceable, by id


def lacking_message(python: str, missing: list[str] | tuple[str, ...]) -> str:
    """The one-line error for workers whose Python lacks `missing`."""
    return (f"Spark's Python workers ({python}) lack {', '.join(missing)}: set PYSPARK_PYTHON to a Python with "
            "pyspark[sql]'s dependencies")


def configured_python(spark=None) -> str:
    """The workers' Python as configured on this side (when the workers cannot be asked)."""
    conf = None
    if spark is not None:
        try:
            conf = spark.conf.get("spark.pyspark.python", None)
        except Exception:  # noqa: BLE001 - a Connect server may refuse to show a static conf
            conf = None
    return conf or os.environ.get("PYSPARK_PYTHON") or "python3 from the workers' PATH"


def _ask(spark) -> str | None:
    from pyspark.sql.functions import udf

    def probe(_value):
        # Runs on a worker, pickled by value (a nested function): it imports nothing of ours (the workers may not
        # have the package yet) and needs no pyarrow (a plain pickled UDF).
        import importlib
        import sys

        missing = []
        for name in ("pyarrow", "pandas", "numpy"):
            try:
                importlib.import_module(name)
            except ImportError:
                missing.append(name)
        return sys.executable + "\t" + ",".join(missing)

    checker = udf(probe, "string", useArrow=False)
    verdict = spark.range(1).select(checker("id").alias("verdict")).collect()[0]["verdict"]
    python, _, missing = verdict.partition("\t")
    return lacking_message(python, missing.split(",")) if missing else None


def require_python_workers(spark) -> None:
    """Raise SparkUnavailableError when `spark`'s Python workers cannot run Arrow jobs (a tiny job asks them once
    per session; the verdict is kept). SPARK_DUCKLAKE_CHECK_WORKERS=0 skips the check."""
    if os.environ.get("SPARK_DUCKLAKE_CHECK_WORKERS", "1") == "0":
        return
    with _lock:
        try:
            known, verdict = spark in _verdicts, _verdicts.get(spark)
        except TypeError:
            known, verdict = id(spark) in _unkeyed, _unkeyed.get(id(spark))
    if not known:
        verdict = _ask(spark)
        with _lock:
            try:
                _verdicts[spark] = verdict
            except TypeError:
                _unkeyed[id(spark)] = verdict
    if verdict is not None:
        raise SparkUnavailableError(verdict)
