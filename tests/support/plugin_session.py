"""One child Python holding a classic Spark session for the catalog plugin's tests, shared by them all.

Catalog confs cannot reach a session already running in the test process (it may be a Connect client, and the
plugin must start its own service), so the plugin's tests run their Spark SQL in a child process; starting one
JVM per test cost 30-60 s each in CI. The child starts once (with the plugin's jar on its classpath) and runs
each test's script in a fresh `spark.newSession()`: its own SQL conf and catalog manager, so the script's
`spark.sql.catalog.lake...` options make a new catalog instance (and the plugin a new service, one per set of
options). A script sees `args` (the test's JSON arguments), `plugin_session(conf)` (that new session with
`conf` set), `lake_session(args)` (one on the lake args["url"]/args["data"]) and `recorder(spark, out)` (a
`run(key, query)` keeping each query's rows or error), and leaves its answer in `out`; an exception in it fails
the test with the child's traceback.

Protocol: one JSON line per request on the child's stdin (`{"script", "args"}`), one JSON line per answer on the
child's protocol pipe (`{"out"}` or `{"error"}`); the child's own stdout and stderr (Spark's logs) go to a file."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
# Connect-mode variables a Connect client in the test process leaves behind would make the child's builder a
# Connect client: the child's session is classic.
CONNECT_VARS = ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE")
TIMEOUT_S = 900

CHILD = r'''
import json, os, sys, traceback

protocol = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)  # print() and the JVM's stdout land in the log, not in the answers
sys.stdout = os.fdopen(1, "w", buffering=1)

from pyspark.sql import SparkSession
from spark_ducklake.catalog_service import CATALOG_JAR

root = (SparkSession.builder.master("local[2]").config("spark.jars", str(CATALOG_JAR))
        .config("spark.ui.enabled", "false").getOrCreate())


def plugin_session(conf):
    """A new session (own SQL conf, own catalogs) with `conf` set: the jar must be the one the JVM started with."""
    conf = dict(conf)
    jar = conf.pop("spark.jars", None)
    started = root.sparkContext.getConf().get("spark.jars", "")
    if jar is not None and jar not in started.split(","):
        raise RuntimeError(f"the plugin session started with spark.jars={started!r}, the test needs {jar!r}")
    session = root.newSession()
    for key, value in conf.items():
        session.conf.set(key, value)
    return session


def lake_session(args):
    """A plugin session on the lake at args["url"] (catalog) and args["data"], in UTC, two shuffle partitions."""
    from spark_ducklake import spark_catalog_conf

    return plugin_session(spark_catalog_conf("lake", args["url"], args["data"])
                          | {"spark.sql.session.timeZone": "UTC", "spark.sql.shuffle.partitions": "2"})


def recorder(spark, out, row=lambda r: r.asDict()):
    """`run(key, query)`: out[key] = the query's rows, or 'ERROR <type> <the message's first two lines>'."""
    def run(key, query):
        try:
            out[key] = [row(r) for r in spark.sql(query).collect()]
        except Exception as e:  # noqa: BLE001 - the message is what is checked
            out[key] = f"ERROR {type(e).__name__} " + " ".join(str(e).splitlines()[:2])
    return run


for line in sys.stdin:
    request = json.loads(line)
    scope = {"args": request["args"], "plugin_session": plugin_session, "lake_session": lake_session,
             "recorder": recorder}
    try:
        exec(compile(request["script"], "<test script>", "exec"), scope)
        answer = {"out": json.loads(json.dumps(scope["out"], default=str))}
    except BaseException:  # noqa: BLE001 - the test reports it
        answer = {"error": traceback.format_exc()}
    protocol.write(json.dumps(answer) + "\n")
    protocol.flush()
'''


class PluginSession:
    """The child process, started on the first `run` (a run whose tests all skip starts no JVM)."""

    def __init__(self, log: Path):
        self.log = log
        self.child: subprocess.Popen | None = None
        self.answers: queue.Queue[str | None] = queue.Queue()

    def _start(self) -> subprocess.Popen:
        env = {k: v for k, v in os.environ.items() if k not in CONNECT_VARS}
        self.answers = queue.Queue()  # a new one: nothing a previous child said is read as this one's answer
        with open(self.log, "ab") as log:
            child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=log, text=True, env=env, cwd=REPO)
        threading.Thread(target=self._read, args=(child, self.answers), daemon=True).start()
        return child

    @staticmethod
    def _read(child: subprocess.Popen, answers: queue.Queue[str | None]) -> None:
        for line in child.stdout:
            answers.put(line)
        answers.put(None)  # the child ended

    def _log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""

    def run(self, script: str, args: dict[str, Any]) -> dict[str, Any]:
        """`out` of `script` run in the child with `args`; an AssertionError with the child's traceback if the
        script raised, or with its log's tail if the child died or took longer than TIMEOUT_S."""
        if self.child is None or self.child.poll() is not None:
            self.child = self._start()
        try:
            self.child.stdin.write(json.dumps({"script": script, "args": args}) + "\n")
            self.child.stdin.flush()
        except BrokenPipeError:
            self.child = None
            raise AssertionError(f"the plugin session's process ended:\n{self._log_tail()}") from None
        try:
            line = self.answers.get(timeout=TIMEOUT_S)
        except queue.Empty:
            self.close()
            raise AssertionError(f"the plugin session gave no answer in {TIMEOUT_S} s:\n{self._log_tail()}") from None
        if line is None:
            self.child = None
            raise AssertionError(f"the plugin session's process ended:\n{self._log_tail()}")
        answer = json.loads(line)
        if "error" in answer:
            raise AssertionError(f"the test's script failed in the plugin session:\n{answer['error']}")
        return answer["out"]

    def close(self) -> None:
        """End the child (closing its stdin ends its loop, then Spark and the plugin's services)."""
        if self.child is None:
            return
        child, self.child = self.child, None
        child.stdin.close()
        try:
            child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
