"""DuckDB's encrypted Parquet files taken apart and put together with no Spark: where each module of a file sits
and how its Thrift headers read; the AES itself runs on Spark (`dataplane/spark/encrypted/`).

- thrift.py   a Thrift compact-protocol codec: footers decoded, offsets edited, encoded back
- layout.py   an encrypted file's modules and footer, and the plaintext Parquet file they stand for
"""
