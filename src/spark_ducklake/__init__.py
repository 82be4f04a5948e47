"""spark-ducklake: the DuckLake 1.0 lakehouse format for Apache Spark.

The layers, top down (docs/architecture.md; pyproject.toml's `layers` contract):

- cli.py, catalog_service/    the `spark-ducklake` command; what Spark's JVM catalog plugin asks our Python code
- demo.py                     the README's main job; terminal.py: rich renderings for the CLI and the demo
- duckdb_reference.py         opening a lake with DuckDB's reference `ducklake` extension
- lake.py                     `DuckLake`, the handle on one lake; table.py: `DuckLakeTable`, a table's handle
- sql/                        `lake.sql()`: statements parsed with sqlglot, run on the public API
- operations/                 one user-level action each, orchestrating a Spark job (or pyarrow) and one commit
- dataplane/                   the data plane: pyarrow (in-process and in Spark tasks), and Spark plans
- catalog/                    the catalog: DuckLake metadata in a SQL database, pure Python
- spec/                       the DuckLake spec as plain Python: data model, types, names
- errors.py, version.py       the exceptions we raise; the package version
"""

from .errors import (
    AlreadyExistsError,
    CatalogError,
    ConflictError,
    DuckLakeError,
    NotFoundError,
    ReadOnlyError,
    SchemaMismatchError,
    SparkUnavailableError,
    UnsupportedVersionError,
)
from .version import __version__


def __getattr__(name: str):
    # Every module of the package (executors' too) imports this one first: it loads errors and version only.
    if name == "DuckLake":
        from .lake import DuckLake  # lazy: the facade loads everything but pyspark

        return DuckLake
    if name == "CommitProperties":
        from .spec.commit_properties import CommitProperties  # lazy: this package loads errors and version only

        return CommitProperties
    if name == "spark_catalog_conf":
        from .catalog_service import spark_catalog_conf  # lazy: the top layer, loading the facade

        return spark_catalog_conf
    raise AttributeError(name)


__all__ = [
    "AlreadyExistsError",
    "CommitProperties",
    "CatalogError",
    "ConflictError",
    "DuckLake",
    "DuckLakeError",
    "NotFoundError",
    "ReadOnlyError",
    "SchemaMismatchError",
    "SparkUnavailableError",
    "UnsupportedVersionError",
    "__version__",
    "spark_catalog_conf",
]
