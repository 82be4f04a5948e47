"""Python worker processes on a shared Spark Connect server (docs/deployment.md, "Python worker processes on a shared
Connect server"): Spark 4.3 starts a `pyspark.daemon` per client session and never stops it (SPARK-54055), whether
or not the session added artifacts; on a server configured as the docs advise (`spark.python.use.daemon=false`)
many client sessions using the lake leave a bounded number of Python worker processes."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

from spark_ducklake import DuckLake
from tests.support.connect import client_of, connect_server

SESSIONS = 6


def _python_workers(root: int) -> int:
    """Processes below `root` running Spark's Python daemon or workers."""
    parents, commands = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                parents[int(entry)] = int(fh.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                commands[int(entry)] = fh.read()
        except OSError:
            continue

    def below(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == root:
                return True
        return False

    return sum(1 for pid, cmd in commands.items()
               if (b"pyspark.daemon" in cmd or b"pyspark.worker" in cmd) and below(pid))


@pytest.mark.spark
@pytest.mark.own_session
@pytest.mark.python_workers
@pytest.mark.skipif(not os.path.isdir("/proc"), reason="counts processes through /proc")
def test_many_sessions_leave_few_python_workers(tmp_path):
    def identity(batches):  # pickled by value: the workers cannot import this test module
        yield from batches

    started = []
    counts = []
    with connect_server(tmp_path, conf={"spark.python.use.daemon": "false"}, on_start=started.append) as url:
        root = started[0].pid
        for i in range(SESSIONS):
            with client_of(url) as spark:
                lake = DuckLake.attach(f"sqlite:{tmp_path / f'meta{i}.sqlite'}", str(tmp_path / f"data{i}"),
                                       spark=spark, data_inlining_row_limit=0, small_data_threshold=0)
                lake.create_table("t", "id BIGINT")
                lake.write(pa.table({"id": pa.array(range(10), pa.int64())}), "t")  # ships our zip to the session
                assert lake.read("t").mapInArrow(identity, "id long").count() == 10  # Python on the workers
                lake.close()
            counts.append(_python_workers(root))
    assert max(counts) <= 2, counts  # Spark's default (a daemon per session) reaches 3 per session here
