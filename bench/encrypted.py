"""Reading and writing an ENCRYPTED lake vs the same data in a plain lake (both created by DuckDB), in one run.

    .venv/bin/python bench/encrypted.py [--rows 2000000] [--repeat 3] [--quick]

DuckDB writes one table twice (flat columns: bigint, varchar, decimal, date, double; plus, with `--nested`, a
list and a struct), once into an `ENCRYPTED` lake and once into a plain one. Each repetition reads the whole
table through `lake.read(...)` into Spark's `noop` sink: the plain lake on Spark's native Parquet reader, the
encrypted one split into modules, decrypted by `aes_decrypt` and read by pyarrow on the executors
(dataplane/spark/encrypted/). Then each repetition appends the same rows (a checkpointed DataFrame) to each lake with
`lake.write`: Spark's Parquet writer for the plain lake, pyarrow in memory plus `aes_encrypt` for the encrypted
one. Prints the median seconds of each and their ratios. `--quick`: 200,000 rows, 1 repetition.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

from common import paired

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))


def build(root: str, rows: int, nested: bool) -> None:
    """The same table in an encrypted lake (root/enc) and a plain one (root/plain), written by DuckDB."""
    from spark_ducklake.duckdb_reference import attach, connect

    extra = ", [i, i + 1] AS l, {'a': i, 'b': 'x' || i} AS st" if nested else ""
    con = connect()
    for name, encrypted in (("enc", True), ("plain", False)):
        attach(con, f"sqlite:{root}/{name}.sqlite", f"{root}/{name}/", alias=name, data_inlining_row_limit=0,
               encrypted=encrypted)
        con.execute(f"CREATE TABLE {name}.t AS SELECT i AS id, 'name-' || (i % 1000) AS s, "
                    f"(i % 100000) / 100::DECIMAL(18, 2) AS amount, DATE '2020-01-01' + (i % 3650)::INT AS day, "
                    f"i * 0.25 AS x{extra} FROM range({rows}) t(i)")
        con.execute(f"DETACH {name}")
    con.close()


def main() -> None:
    """Build both lakes, time full reads of each, print medians and the ratio."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--nested", action="store_true")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.rows, args.repeat = 200_000, 1
    from spark_ducklake import DuckLake
    from spark_ducklake.dataplane.spark.session import get_or_create_spark

    spark = get_or_create_spark()
    with tempfile.TemporaryDirectory() as root:
        build(root, args.rows, args.nested)
        enc = DuckLake.attach(f"sqlite:{root}/enc.sqlite", read_only=True, spark=spark)
        plain = DuckLake.attach(f"sqlite:{root}/plain.sqlite", read_only=True, spark=spark)
        sizes = {name: sum(f.stat().st_size for f in os.scandir(f"{root}/{name}/main/t")) for name in ("enc", "plain")}
        enc_s, plain_s = paired(lambda: enc.read("t").write.format("noop").mode("overwrite").save(),
                                lambda: plain.read("t").write.format("noop").mode("overwrite").save(), args.repeat)
        print(f"rows={args.rows} nested={args.nested} bytes enc={sizes['enc']} plain={sizes['plain']}")
        print(f"read encrypted: {enc_s:.2f} s  plain: {plain_s:.2f} s  ratio: {enc_s / plain_s:.2f}x")
        enc.close()
        plain.close()
        enc = DuckLake.attach(f"sqlite:{root}/enc.sqlite", spark=spark)
        plain = DuckLake.attach(f"sqlite:{root}/plain.sqlite", spark=spark)
        source = plain.read("t").localCheckpoint()  # the same rows for both writers, computed once
        source.count()
        enc_w, plain_w = paired(lambda: enc.write(source, "t"), lambda: plain.write(source, "t"), args.repeat)
        print(f"write encrypted: {enc_w:.2f} s  plain: {plain_w:.2f} s  ratio: {enc_w / plain_w:.2f}x")


if __name__ == "__main__":
    main()
