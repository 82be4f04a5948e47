"""A smoke tour over the embedded default (SQLite catalog + local folder) for a plain `pip install spark-ducklake`:
a write, a delete, a merge, a bucket-partitioned write and a read of a uuid column (pyarrow executor path).
Run by CI in a fresh venv that has the wheel and nothing else; exits non-zero on any wrong result."""

from __future__ import annotations

import sys
import tempfile
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import SparkSession

from spark_ducklake import DuckLake


def check(label: str, got, want) -> None:
    """Fail loudly when a step's result is not the expected one."""
    if got != want:
        sys.exit(f"smoke: {label}: got {got!r}, want {want!r}")
    print(f"smoke: {label}: ok")


def main() -> None:
    """Run every step on a new lake in a temporary folder."""
    root = Path(tempfile.mkdtemp(prefix="ducklake-smoke-"))
    spark = SparkSession.builder.master("local[2]").getOrCreate()  # a user's session: Spark's defaults
    lake = DuckLake.attach(f"sqlite:{root / 'meta.sqlite'}", str(root / "data"), spark=spark)
    check("a new lake is DuckLake 1.1, as DuckDB 2.0 creates it", lake.option("version"), "1.1")
    lake.create_table("orders", "id BIGINT NOT NULL, customer VARCHAR, amount DOUBLE")
    lake.write(spark.createDataFrame([(i, f"c{i % 5}", float(i)) for i in range(100)], "id long, customer string, "
                                     "amount double"), "orders")
    check("rows written", lake.read("orders").count(), 100)
    check("rows deleted", lake.table("orders").delete("id < 20"), 20)
    updates = spark.createDataFrame([(50, "new", 1.0), (500, "x", 2.0)], "id long, customer string, amount double")
    result = (lake.table("orders").merge(updates, "target.id = source.id")
              .when_matched_update_all().when_not_matched_insert_all().execute())
    check("merge (inserted, updated)", (result.inserted, result.updated), (1, 1))
    check("rows after merge", lake.read("orders").count(), 81)

    lake.create_table("events", "id BIGINT, kind VARCHAR")
    lake.set_partitioning("events", ["bucket(4, kind)"])
    lake.write(spark.createDataFrame([(i, f"k{i % 9}") for i in range(200)], "id long, kind string"), "events")
    check("bucketed rows", lake.read("events", where="kind = 'k3'").count(), 22)
    check("bucket files have a partition", all(f.data_file.count("kind=") or "bucket" in f.data_file
                                               for f in lake.list_files("events")), True)

    ids = [uuid.uuid4() for _ in range(30)]
    source = root / "uuids.parquet"
    pq.write_table(pa.table({"id": pa.array(range(30), pa.int64()),
                             "u": pa.array([u.bytes for u in ids], pa.uuid())}), source)
    lake.create_table("tokens", pa.schema([("id", pa.int64()), ("u", pa.uuid())]))  # DuckDB types from Arrow
    lake.add_data_files("tokens", str(source))
    got = sorted(r.u for r in lake.read("tokens").collect())
    check("uuid column read", got, sorted(str(u) for u in ids))
    lake.close()
    spark.stop()  # before the caller removes the venv the JVM loads its jars from
    print("smoke: all steps passed")


if __name__ == "__main__":
    main()
