"""spark-ducklake: the DuckLake 1.0 lakehouse format for Apache Spark."""

__version__ = "0.1.0"

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


def __getattr__(name: str):
    # DuckLake is imported on first use so `import spark_ducklake.catalog...` stays light.
    if name == "DuckLake":
        from .lake import DuckLake

        return DuckLake
    raise AttributeError(name)


__all__ = [
    "AlreadyExistsError",
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
]
