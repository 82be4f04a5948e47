"""A Spark Connect server for tests: started once from pyspark's own jars, stopped at the end."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 free right now (a server started next binds it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def connect_server(log_dir: Path, *, cores: int = 2, memory: str = "3g", conf: dict[str, str] | None = None,
                   on_start=None):
    """Yield an `sc://` URL of a fresh local Spark Connect server; `conf` adds server confs, `on_start(process)`
    sees the spark-submit process (whose descendants are the server's JVM and Python workers)."""
    import pyspark

    home = Path(pyspark.__file__).parent
    port = free_port()
    env = dict(os.environ, SPARK_HOME=str(home), PYSPARK_PYTHON=sys.executable)
    env.pop("SPARK_REMOTE", None)
    log = open(log_dir / "spark-connect.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [str(home / "bin" / "spark-submit"), "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
         "--master", f"local[{cores}]", "--conf", f"spark.connect.grpc.binding.port={port}",
         "--conf", "spark.ui.enabled=false", "--conf", f"spark.driver.memory={memory}",
         "--conf", "spark.sql.session.timeZone=UTC", "--conf", "spark.sql.shuffle.partitions=4",
         *[arg for key, value in (conf or {}).items() for arg in ("--conf", f"{key}={value}")],
         "spark-internal"],
        stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
    )
    if on_start is not None:
        on_start(proc)
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


@contextmanager
def client_of(url: str):
    """A Spark Connect session of its own on `url`, stopped afterwards. Making it flips pyspark into Connect mode
    for the whole process (SPARK_CONNECT_MODE_ENABLED): that is undone, so the run's classic session stays usable."""
    from pyspark.sql import SparkSession

    names = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE")
    saved = {name: os.environ.get(name) for name in names}
    session = SparkSession.builder.remote(url).create()
    try:
        yield session
    finally:
        session.stop()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
