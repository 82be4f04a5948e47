"""The lake catalog service: what Spark's JVM catalog plugin (jvm/DuckLakeCatalog.java) asks our Python code.

Spark takes a catalog only as a JVM class (`spark.sql.catalog.<name>`), and the DuckLake logic lives here, in
Python, once. The plugin starts this package as a child process (`python -m spark_ducklake.catalog_service`), so
it works where no Python driver runs (the Thrift server, a Spark Connect server), and asks it over HTTP/JSON on
127.0.0.1. The top layer of the package (pyproject.toml's `layers` contract), beside the `spark-ducklake` command.

- __main__.py, server.py  the child process: options in on stdin, port and token out, the HTTP request loop
- service.py         `CatalogService`: every request (the protocol's ops listed there) to its reply; error kinds
- conf.py            `spark_catalog_conf`: the Spark confs a session needs; `attach`: the lake the options describe
- tables.py          table and namespace replies: namespaces, tables, a table's schema, DDL
- scans.py           scan planning replies: the files a scan reads as a file-sink log, rows Spark cannot read
                     alone materialized; scan_files.py: a plan's files (sizes, inlined deletes, what Spark reads)
- scratch.py         the service's scratch files (materialized rows) and where their rows came from
- writes.py          write commits: where Spark's writer stages a statement's files, and their one snapshot
- row_level.py       row-level commits: DELETE / UPDATE / MERGE positions and rows as one snapshot
- procedures.py      `CALL <catalog>.system.<name>(...)`: the procedures and their replies;
                     values.py: procedure arguments in, result rows out
- metadata_tables.py  `<catalog>.<schema>.<table>.<name>` metadata tables (snapshots, files, table_info)
- changes.py         Spark's `CHANGES` clause: the change feed as a Parquet file
- fields.py          a request's fields (names, Spark schemas and types, paths) and UnsupportedRequestError;
                     filters.py: pushed filters as Spark SQL; partitioning.py: Spark transforms and DuckLake keys
"""

from .conf import CATALOG_CLASS, CATALOG_JAR, attach, spark_catalog_conf
from .fields import UnsupportedRequestError
from .filters import overwrite_predicate, pruning_predicate
from .partitioning import partition_keys, spark_partitioning
from .server import TOKEN_HEADER, main, serve
from .service import CatalogService

__all__ = [
    "CATALOG_CLASS",
    "CATALOG_JAR",
    "TOKEN_HEADER",
    "CatalogService",
    "UnsupportedRequestError",
    "attach",
    "main",
    "overwrite_predicate",
    "partition_keys",
    "pruning_predicate",
    "serve",
    "spark_catalog_conf",
    "spark_partitioning",
]
