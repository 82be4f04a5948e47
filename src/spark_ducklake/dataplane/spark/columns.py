"""Spark Column references to DuckLake columns by exact name (dots, spaces and backquotes included)."""

from __future__ import annotations

from ...spec.names import spark_name


def spark_col(name: str, qualifier: str | None = None):
    """A Spark Column referring to the column named exactly `name` (optionally of a DataFrame alias)."""
    # Imported lazily, like pyspark elsewhere in the package: importing this module does not load pyspark.
    from pyspark.sql import functions as F

    return F.col(f"{qualifier}.{spark_name(name)}" if qualifier else spark_name(name))
