"""spark-ducklake: the DuckLake 1.0 lakehouse format for Apache Spark."""

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
    # DuckLake is imported on first use so `import spark_ducklake.catalog...` stays light.
    if name == "DuckLake":
        from .lake import DuckLake

        return DuckLake
    if name == "CommitProperties":
        from .spec.commit_properties import CommitProperties

        return CommitProperties
    if name == "spark_catalog_conf":
        from .catalog_service import spark_catalog_conf

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
