"""Rows written as a table's data files by Spark, whatever they come as: a Spark DataFrame or Arrow rows (sent to
Spark first). The NOT NULL columns are checked on the executors in the same pass that writes the files, and a NULL
there surfaces as the `ConstraintError` the in-process plane raises (`arrow/conform.py` `not_null_message`)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ...errors import ConstraintError
from ...spec.model import Column, NewDataFile, TableInfo
from ..arrow.conform import not_null_message
from ..arrow.write_options import WriteOptions
from .columns import spark_col
from .conform import conform_spark
from .scan import spark_safe
from .session import arrow_frame
from .write import write_data_files


def write_rows(spark: Any, rows: Any, table: TableInfo, options: WriteOptions, *, keep_ids: bool = False,
               one_file: bool = False) -> list[NewDataFile]:
    """`rows` written as the table's files, nothing committed: a DataFrame conformed to the table, or Arrow rows
    (in one partition with `one_file`: one statement's file, as the reference writes it). With `keep_ids` the
    rows' `rowid` column is kept as their row ids."""
    frame = _frame_of(spark, rows, table, keep_ids=keep_ids, one_file=one_file) if isinstance(rows, pa.Table) \
        else rows
    required = [c for c in table.columns if not c.nullable]
    try:
        return write_data_files(spark, _not_null_guard(frame, table, required), table, options=options,
                                row_ids=keep_ids)
    except Exception as exc:
        # The executors' raise_error: the staged files are gone with the failed job (write_data_files).
        broken = next((m for m in (not_null_message(table, c) for c in required) if m in str(exc)), None)
        if broken is None:
            raise
        raise ConstraintError(broken) from None


def _frame_of(spark: Any, rows: pa.Table, table: TableInfo, *, keep_ids: bool, one_file: bool) -> Any:
    """Arrow rows as a DataFrame for the writer. Rows with ids are an operation's new row versions, already the
    table's Arrow rows (`conform_arrow`); others are the caller's data, fitted to the table by Spark's rules."""
    frame = arrow_frame(spark, spark_safe(rows))
    frame = frame.coalesce(1) if one_file else frame
    return frame if keep_ids else conform_spark(frame, table)


def _not_null_guard(frame: Any, table: TableInfo, required: list[Column]) -> Any:
    """`frame` whose NOT NULL columns fail the Spark job on a NULL (checked on the executors, in the same pass
    that writes the files)."""
    if not required:
        return frame
    # Spark's optimizer folds `IS NULL` of a column its schema says is never NULL to false (NullPropagation), so
    # a guard there checks nothing, yet building it costs py4j calls and a plan analysis on every write (a quarter
    # second on a busy driver): only the columns the frame may hold NULLs in are guarded.
    may_be_null = {f.name: f.nullable for f in frame.schema.fields}
    required = [c for c in required if may_be_null.get(c.name, True)]
    if not required:
        return frame
    from pyspark.sql import functions as F

    return frame.withColumns({
        c.name: F.when(spark_col(c.name).isNull(), F.raise_error(F.lit(not_null_message(table, c))))
        .otherwise(spark_col(c.name)) for c in required})
