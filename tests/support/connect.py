"""A Spark Connect server for tests: started once from pyspark's own jars, stopped at the end."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def connect_server(log_dir: Path, *, cores: int = 2, memory: str = "3g"):
    """Yield an `sc://` URL of a fresh local Spark Connect server."""
    import pyspark

    home = Path(pyspark.__file__).parent
    port = _free_port()
    env = dict(os.environ, SPARK_HOME=str(home), PYSPARK_PYTHON=sys.executable)
    env.pop("SPARK_REMOTE", None)
    log = open(log_dir / "spark-connect.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [str(home / "bin" / "spark-submit"), "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
         "--master", f"local[{cores}]", "--conf", f"spark.connect.grpc.binding.port={port}",
         "--conf", "spark.ui.enabled=false", "--conf", f"spark.driver.memory={memory}",
         "--conf", "spark.sql.session.timeZone=UTC", "--conf", "spark.sql.shuffle.partitions=4",
         "spark-internal"],
        stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
    )
    try:
        deadline = time.time() + 120
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"Spark Connect server exited; see {log_dir / 'spark-connect.log'}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.time() > deadline:
                    raise RuntimeError("Spark Connect server did not start within 120 s") from None
                time.sleep(0.5)
        yield f"sc://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
