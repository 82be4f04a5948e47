"""The Spark session spark-ducklake moves data with: the caller's, the active one, or a local one started lazily."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from ...errors import SparkUnavailableError
from ..arrow.storage import is_connect
from .shipping import ship_package

# Runtime SQL confs our scans and writes rely on; set on whatever session we use (works over Spark Connect too).
REQUIRED_CONF = {
    "spark.sql.parquet.fieldId.read.enabled": "true",
    "spark.sql.parquet.fieldId.write.enabled": "true",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.parquet.fieldId.read.ignoreMissing": "true",
}

# Sessions we start log errors only and draw no stage progress bars: their WARN lines and bars would otherwise run
# through the demo's and the user's terminal output.
QUIET_LOG4J = Path(__file__).with_name("log4j2-quiet.properties")


def get_or_create_spark(spark=None):
    """The given session, else the active one, else a new local session; prepared for our jobs (`prepare`)."""
    from pyspark.sql import SparkSession

    if spark is None:
        spark = SparkSession.getActiveSession()
    if spark is None and os.environ.get("SPARK_REMOTE"):  # Spark Connect: the server owns static confs
        spark = SparkSession.builder.remote(os.environ["SPARK_REMOTE"]).getOrCreate()
    if spark is None:
        if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
            raise SparkUnavailableError(
                "moving data needs Spark, and Spark needs Java 17+: install a JDK or set JAVA_HOME "
                "(catalog operations work without it), or set SPARK_REMOTE to use a Spark Connect server"
            )
        # Python workers must see the same packages (pyarrow) as the driver.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = (
            SparkSession.builder.master(os.environ.get("SPARK_DUCKLAKE_MASTER", "local[*]"))
            .appName("spark-ducklake")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", os.environ.get("SPARK_DUCKLAKE_SHUFFLE_PARTITIONS", "8"))
            .config("spark.driver.memory", os.environ.get("SPARK_DUCKLAKE_DRIVER_MEMORY", "4g"))
            .config("spark.sql.session.timeZone", "UTC")
        )
        for key, value in quiet_console_conf().items():
            builder = builder.config(key, value)
        for key, value in REQUIRED_CONF.items():
            builder = builder.config(key, value)
        try:
            spark = builder.getOrCreate()
        except Exception as exc:  # noqa: BLE001 - Java missing or broken shows up as many error types
            raise SparkUnavailableError(f"could not start a local Spark session: {exc}") from exc
    prepare(spark)
    return spark


def quiet_console_conf() -> dict[str, str]:
    """Confs that keep a session we start off the console (no progress bars, errors-only logging), unless
    SPARK_DUCKLAKE_SPARK_LOG=default asks for Spark's own console output."""
    if os.environ.get("SPARK_DUCKLAKE_SPARK_LOG", "quiet").lower() == "default":
        return {}
    return {"spark.ui.showConsoleProgress": "false",
            "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={QUIET_LOG4J.as_uri()}"}


def prepare(spark):
    """Make `spark` fit for our next job and return it: REQUIRED_CONF verified and set where the user changed it,
    and the package shipped to the executors (once per session)."""
    if is_connect(spark):  # one RPC for all confs
        current = spark.conf.getAll
        current = current() if callable(current) else current  # a method in some pyspark versions
    else:  # py4j walks getAll's map a call per entry (30 ms per write): ask for the keys instead
        current = {key: spark.conf.get(key, None) for key in REQUIRED_CONF}  # "" fails typed confs
    for key, value in REQUIRED_CONF.items():
        if str(current.get(key, "")).lower() != value.lower():
            spark.conf.set(key, value)
    ship_package(spark)
    return spark


_CACHED_PARTITIONING = "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning"


def cached(spark, frame):
    """`frame.cache()`, letting adaptive execution coalesce the cached plan's shuffle partitions. Spark keeps a
    cached join at `spark.sql.shuffle.partitions` tasks otherwise: 200 on a user's session, where a 3-row MERGE
    then took 40 s. The conf is read when the cache entry is made, so it is set for that call only."""
    before = spark.conf.get(_CACHED_PARTITIONING, None)
    if before == "true":
        return frame.cache()
    spark.conf.set(_CACHED_PARTITIONING, "true")
    try:
        return frame.cache()
    finally:
        if before is None:
            spark.conf.unset(_CACHED_PARTITIONING)
        else:
            spark.conf.set(_CACHED_PARTITIONING, before)


def arrow_frame(spark, data):
    """A Spark DataFrame of a pyarrow Table with the schema given explicitly: empty tables work over Spark Connect
    too, and timestamps without a zone stay TIMESTAMP_NTZ (Spark's own inference makes them TIMESTAMP)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return spark.createDataFrame(data, schema=from_arrow_schema(data.schema, prefer_timestamp_ntz=True))
