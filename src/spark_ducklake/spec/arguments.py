"""Checking the arguments users pass: snapshots (`version=`, `timestamp=`, `snapshot_version=`, `snapshot_time=`),
and the kinds of data, conditions and SET mappings, before any work, so a wrong kind is an InvalidArgumentError
naming it rather than an AttributeError from deep inside."""

from __future__ import annotations

import numbers
import sys
import warnings
from collections import Counter
from datetime import datetime
from typing import Any, Literal

import pyarrow as pa

from ..errors import InvalidArgumentError, NotFoundError, SchemaMismatchError

MAX_SNAPSHOT_ID = 2**63 - 1  # snapshot ids are BIGINT in every catalog database

# The fixed sets of strings some parameters take, for type checkers (the checks at run time stay where they are:
# tests/project/test_typing.py keeps these equal to the tuples they check against).
WriteMode = Literal["append", "overwrite", "error", "errorifexists"]  # lake.write, tx.write (WRITE_MODES)
StreamWriteMode = Literal["append", "overwrite"]  # what a streaming write does with each micro-batch
OutputMode = Literal["append", "complete", "update"]  # Spark's streaming output modes
SqlDialect = Literal["spark", "duckdb"]  # lake.sql (sql/statements.py DIALECTS; views take any sqlglot dialect)


def snapshot_version(value: Any, name: str = "version") -> int | None:
    """An integer snapshot id (None stays None); ids no catalog can hold do not exist."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidArgumentError(f"{name} must be an integer snapshot id, got {type(value).__name__} {value!r}")
    if not 0 <= value <= MAX_SNAPSHOT_ID:  # type: ignore[operator]  # typeshed's Integral has no order
        raise NotFoundError(f"snapshot {value} does not exist (snapshot ids run from 0 to {MAX_SNAPSHOT_ID})")
    return int(value)


def snapshot_time(value: Any, name: str = "timestamp") -> datetime | None:
    """A datetime (naive: UTC), or an ISO 8601 string such as '2026-11-23 10:00:00+00:00' (None stays None)."""
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.strip())
        except ValueError:
            raise InvalidArgumentError(f"{name} {value!r} is not an ISO 8601 date-time such as "
                                       "'2026-11-23 10:00:00+00:00'") from None
    raise InvalidArgumentError(f"{name} must be a datetime or an ISO 8601 string, got {type(value).__name__}")


def one_snapshot(version: object, timestamp: object, names: tuple[str, str] = ("version", "timestamp")) -> None:
    """A read addresses a snapshot by id or by time, not both (the reference: "Either ... not both")."""
    if version is not None and timestamp is not None:
        raise InvalidArgumentError(f"give {names[0]} or {names[1]}, not both (got {names[0]}={version!r}, "
                                   f"{names[1]}={timestamp!r})")


DATA_KINDS = "a pyarrow Table, a pandas DataFrame or a Spark DataFrame"


def _is_class(value: object, module: str, class_name: str) -> bool:
    """Whether `value` is a `class_name` of package `module` (pyspark classic or Connect, pandas), unimported."""
    return any(c.__name__ == class_name and c.__module__.startswith(module) for c in type(value).__mro__)


def check_data(data: Any, what: str = "the data") -> None:
    """`data` is a pyarrow Table, a pandas or a Spark DataFrame, and (Arrow, pandas) names no column twice."""
    if isinstance(data, pa.Table) or _is_class(data, "pandas.", "DataFrame"):
        names = data.column_names if isinstance(data, pa.Table) else [str(c) for c in data.columns]
        twice = [name for name, count in Counter(names).items() if count > 1]
        if twice:
            raise SchemaMismatchError(f"{what} has the column {twice[0]!r} more than once")
        return
    if _is_class(data, "pyspark.", "DataFrame"):
        return
    hint = " (rows as a list of dicts: pa.Table.from_pylist(rows))" if isinstance(data, (list, tuple)) else ""
    raise InvalidArgumentError(f"{what} must be {DATA_KINDS}, got {type(data).__name__}{hint}")


def check_condition(condition: object, what: str = "condition", *, optional: bool = True) -> None:
    """A condition is a SQL string (UTF-8 encodable: py4j fails on a lone surrogate without saying why) or a Spark
    Column (or None when `optional`)."""
    if isinstance(condition, str) and any("\ud800" <= ch <= "\udfff" for ch in condition):
        raise InvalidArgumentError(f"{what} {ascii(condition)[:200]} holds a lone surrogate (half of a UTF-16 pair), "
                                   "which has no UTF-8 form")
    if (condition is None and optional) or isinstance(condition, str) or _is_class(condition, "pyspark.", "Column"):
        return
    raise InvalidArgumentError(f"{what} must be a SQL string or a Spark Column, got {type(condition).__name__} "
                               f"{condition!r}"[:300])


def update_arguments(condition: Any, assignments: Any) -> tuple[Any, Any]:
    """`update(table, condition, set)`'s arguments, also from the old order `update(table, set, condition)`.

    A condition is never a dict, so a dict in its place is the old order: swapped, with a DeprecationWarning
    pointing at the first caller outside this package.
    """
    if not isinstance(condition, dict):
        return condition, assignments
    warnings.warn("update(table, set, condition) is deprecated: pass update(table, condition, set) as "
                  "DuckLakeTable.update does, or name them (condition=..., set=...)", DeprecationWarning,
                  stacklevel=_outside_caller_level())
    return assignments, condition


def _outside_caller_level() -> int:
    """The `stacklevel` of the nearest frame outside spark_ducklake, seen from the caller of this function."""
    frame, level = sys._getframe(2), 2
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith("spark_ducklake."):
        frame, level = frame.f_back, level + 1
    return level


def check_assignments(values: object, what: str = "set") -> None:
    """SET / insert values: a dict of column name -> SQL string or Spark Column."""
    if not isinstance(values, dict):
        raise InvalidArgumentError(f"{what} must be a dict of column name -> SQL string or Spark Column, got "
                                   f"{type(values).__name__} {values!r}"[:300])
    for name, value in values.items():
        if not isinstance(name, str):
            raise InvalidArgumentError(f"{what}: column names are strings, got {name!r}")
        check_condition(value, f"{what}[{name!r}]", optional=False)
