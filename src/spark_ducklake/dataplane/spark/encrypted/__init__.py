"""Encrypted lakes (`ENCRYPTED`): DuckDB's AES-GCM Parquet files read and written on Spark without
Parquet modular encryption.

(The files' layout and Thrift codec, which need no Spark, are in `dataplane/arrow/crypto/`.)

- read.py     executors split files, Spark's aes_decrypt decrypts modules, pyarrow reads the reassembled file
- write.py    pyarrow writes files in executor memory, Spark's aes_encrypt encrypts their modules, tasks store them
- deletes.py  encrypted delete files: written, merged with old ones, restamped for a later snapshot (same key)
- keys.py     file keys wrapped under a per-session secret shipped as a file artifact: no key in any plan
"""
