"""The Spark session spark-ducklake moves data with: the caller's, the active one, or a local one started lazily."""

from __future__ import annotations

import os
import shutil
import sys

from ..errors import SparkUnavailableError

# Runtime SQL confs our scans and writes rely on; set on whatever session we use (works over Spark Connect too).
REQUIRED_CONF = {
    "spark.sql.parquet.fieldId.read.enabled": "true",
    "spark.sql.parquet.fieldId.write.enabled": "true",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.parquet.fieldId.read.ignoreMissing": "true",
}


def get_or_create_spark(spark=None):
    """The given session, else the active one, else a new local session; ensures REQUIRED_CONF."""
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
        for key, value in REQUIRED_CONF.items():
            builder = builder.config(key, value)
        try:
            spark = builder.getOrCreate()
        except Exception as exc:  # noqa: BLE001 - Java missing or broken shows up as many error types
            raise SparkUnavailableError(f"could not start a local Spark session: {exc}") from exc
    for key, value in REQUIRED_CONF.items():
        if spark.conf.get(key, None) != value:
            spark.conf.set(key, value)
    return spark
