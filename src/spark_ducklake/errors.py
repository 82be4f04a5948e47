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


class InvalidNameError(DuckLakeError):
    """A schema, table or column name DuckDB cannot use (empty, holding NUL) or a table name that does not parse."""


class ConstraintError(DuckLakeError):
    """Data breaks a column constraint (NOT NULL), as the reference's `NOT NULL constraint failed: t.k`."""


class InvalidExpressionError(DuckLakeError):
    """A SQL condition or assignment string is malformed or not allowed (several statements, subqueries)."""


class CatalogDatabaseError(CatalogError):
    """The catalog database failed a statement (corrupt or full file, a value it cannot store); nothing committed."""


class StorageError(DuckLakeError):
    """Files under the data path could not be written or read (permissions, full disk, a name too long)."""


class SparkJobError(DuckLakeError):
    """A Spark job moving the lake's data failed; the message carries its root cause."""


class ConversionError(DuckLakeError):
    """A value cannot take the type it must have or cannot be computed (the string 'abc' into a BIGINT column, a
    division by zero), as DuckDB's Conversion and Out of Range errors; nothing was changed."""


class InvalidArgumentError(DuckLakeError, ValueError):
    """An argument has the wrong type or an impossible value."""


class UnsupportedSqlError(DuckLakeError):
    """A SQL statement or construct `lake.sql` does not run (named in the message); nothing was changed."""


class ExternalReadError(UnsupportedSqlError):
    """`lake.sql` (or a lake view) would read something other than the lake's tables: a file-reading table function
    (`read_parquet`, `read_csv`, `read_files`, ...), a path (``parquet.`/path` ``, `FROM 'file.parquet'`), another
    table function, or Java reflection; refused before anything ran."""


class TransactionAbortedError(DuckLakeError):
    """A statement failed inside BEGIN ... COMMIT in a way that aborts the transaction: only ROLLBACK (or COMMIT,
    which then commits nothing) is accepted until it ends, as DuckDB's "Current transaction is aborted"."""
