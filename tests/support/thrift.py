"""The Spark Thrift Server from pyspark's own jars (HiveThriftServer2, started with spark-submit: the wheel has no
sbin/start-thriftserver.sh) and its beeline client, for tests: one server on 127.0.0.1, stopped by its PID."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.connect import free_port

THRIFT_SERVER_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
START_TIMEOUT_S = 180
PROGRESS = re.compile(r"(\rnull *)+")
# Variables that would make a Spark process started here a Connect client or point it at another Spark.
CLIENT_VARS = ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE")


def spark_home() -> Path:
    """The pyspark wheel's folder: its bin/spark-submit, bin/beeline and jars/ are the Spark used here."""
    import pyspark

    return Path(pyspark.__file__).parent


def _env() -> dict[str, str]:
    if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
        raise RuntimeError("the Spark Thrift Server and beeline need Java: no `java` on PATH and no JAVA_HOME")
    env = {k: v for k, v in os.environ.items() if k not in CLIENT_VARS}
    env["SPARK_HOME"] = str(spark_home())
    return env


def _stop(proc: subprocess.Popen) -> None:
    """End the server's process group (spark-submit, its JVM, and the catalog service the plugin started)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@contextmanager
def thrift_server(work_dir: Path, *, conf: dict[str, str] | None = None, cores: int = 2,
                  memory: str = "2g") -> Iterator[int]:
    """Yield the port of a fresh Spark Thrift Server on 127.0.0.1 with `conf` added to its confs; its log is
    `work_dir`/thrift-server.log and its warehouse and Derby files stay in `work_dir`."""
    env = _env()
    port = free_port()
    log_path = work_dir / "thrift-server.log"
    command = [
        str(spark_home() / "bin" / "spark-submit"), "--class", THRIFT_SERVER_CLASS,
        "--master", f"local[{cores}]", "--conf", "spark.ui.enabled=false", "--conf", f"spark.driver.memory={memory}",
        # No Hive metastore: the server's own tables would be in memory; the lake's are in the lake catalog.
        "--conf", "spark.sql.catalogImplementation=in-memory",
        "--conf", f"spark.sql.warehouse.dir={work_dir / 'warehouse'}",
        "--conf", "spark.sql.session.timeZone=UTC", "--conf", "spark.sql.shuffle.partitions=4",
        *[arg for key, value in (conf or {}).items() for arg in ("--conf", f"{key}={value}")],
        "--hiveconf", "hive.server2.thrift.bind.host=127.0.0.1", "--hiveconf", f"hive.server2.thrift.port={port}",
        "spark-internal",
    ]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=work_dir,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the Spark Thrift Server exited with {proc.returncode}; see {log_path}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the Spark Thrift Server did not listen on port {port} within "
                                       f"{START_TIMEOUT_S} s; see {log_path}") from None
                time.sleep(0.5)
        yield port
    finally:
        _stop(proc)


def beeline(port: int, sql_file: Path, *, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """Run `sql_file` with the wheel's beeline against the server on `port`: each query's rows as tab-separated
    lines under a header line (stdout), errors on stderr; it stops at the first failing statement."""
    run = subprocess.run(
        [str(spark_home() / "bin" / "beeline"), "-u", f"jdbc:hive2://127.0.0.1:{port}/", "--silent=true",
         "--outputformat=tsv2", "-f", str(sql_file)],
        capture_output=True, env=_env(), timeout=timeout, check=False,
    )
    return subprocess.CompletedProcess(run.args, run.returncode, _shown(run.stdout), _shown(run.stderr))


def _shown(output: bytes) -> str:
    """beeline's output without the progress line it draws and erases with carriage returns (Spark's Thrift Server
    reports no progress, so the line reads `null`): the rows alone, one per line."""
    return PROGRESS.sub("", output.decode(errors="replace"))
