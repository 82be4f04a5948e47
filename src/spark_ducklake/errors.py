"""Exceptions raised by spark-ducklake; every one names what is wrong."""


class DuckLakeError(Exception):
    """Base class of all spark-ducklake errors."""


class CatalogError(DuckLakeError):
    """The catalog string, database or its contents are not usable."""


class UnsupportedVersionError(CatalogError):
    """The catalog was written with a DuckLake spec version we do not support."""


class NotFoundError(DuckLakeError):
    """A schema, table or snapshot does not exist."""


class AlreadyExistsError(DuckLakeError):
    """A schema or table with that name already exists."""


class SchemaMismatchError(DuckLakeError):
    """A DataFrame's columns do not fit the table's columns."""


class ConflictError(DuckLakeError):
    """Another writer committed a change that logically conflicts with ours."""


class ReadOnlyError(DuckLakeError):
    """A write was attempted on a lake attached read-only or at a past snapshot."""


class SparkUnavailableError(DuckLakeError):
    """Spark (or Java) is needed to move data but cannot be started."""
