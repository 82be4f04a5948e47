"""`DuckLakeTable`: a table handle with row-level operations, named after delta-spark's DeltaTable."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .operations.merge import MergeBuilder

if TYPE_CHECKING:
    from .lake import DuckLake


class DuckLakeTable:
    """One table of a lake; every method that changes it commits one snapshot."""

    def __init__(self, lake: DuckLake, name: str | tuple[str, str]):
        self.lake = lake
        self.name = name

    def to_df(self):
        """The table's current rows as a Spark DataFrame."""
        return self.lake.read(self.name)

    toDF = to_df  # noqa: N815 - delta-spark's spelling

    def delete(self, condition=None, **commit_args) -> int:
        """Delete the rows matching `condition` (SQL string or Column; all rows when None); returns the count."""
        return self.lake.delete(self.name, condition, **commit_args)

    def update(self, condition=None, set: dict | None = None, **commit_args) -> int:  # noqa: A002 - delta's name
        """Set columns (SQL strings or Columns) on the rows matching `condition`; returns the count."""
        return self.lake.update(self.name, condition, set or {}, **commit_args)

    def update_schema(self, **commit_args):
        """Column changes committed together: `with table.update_schema() as u: u.add_column(...)`."""
        return self.lake.update_schema(self.name, **commit_args)

    def merge(self, source, condition, *, target_alias: str = "target", source_alias: str = "source",
              commit_properties=None, **commit_args):
        """Start a MERGE of `source` (Spark DataFrame, pyarrow Table or pandas DataFrame; small ones merge without
        Spark) on `condition`; add when_... clauses, then execute() (one snapshot, a one-operation transaction)."""
        def run(builder: MergeBuilder):
            with self.lake.transaction(commit_properties=commit_properties, **commit_args) as tx:
                return tx.stage_merge(builder)

        return MergeBuilder(self.lake.context, self.name, source, condition, target_alias, source_alias, run=run)
