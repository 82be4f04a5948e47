"""`with lake.transaction() as tx:` — any DDL and DML on any tables, committed as one snapshot or not at all.

Operations are staged as they are called (files written by executors, catalog rows not yet) and committed in one
catalog transaction when the block ends without an exception; an exception, or a conflict at commit, deletes every
staged file and leaves the catalog untouched. Reads inside the block see the lake as of the block's start, and
tables created in the block can be written to; row-level changes (delete/update) address tables as they were at the
start, one change (delete, update or merge) per table per transaction. ALTERs (update_schema, partitioning, sort
keys) take tables as they were at the start too, one per table, and such a table is not written in the same block.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..catalog.commit import CommitInfo
from ..catalog.operations.ddl import CreateSchema, CreateTable, DropSchema, DropTable, RenameTable, TableRef
from ..catalog.reads import reader
from ..errors import AlreadyExistsError, DuckLakeError, NotFoundError
from ..lake import WRITE_MODES, split_name
from ..spark.conform import plan_columns
from ..spec import paths as paths_for
from ..spec.model import TableInfo

if TYPE_CHECKING:
    from ..lake import DuckLake


class Transaction:
    """Staged operations of one future snapshot."""

    def __init__(self, lake: DuckLake, info: CommitInfo):
        lake.check_writable()
        self.lake, self.info = lake, info
        with lake.engine.connect() as conn:
            self.read_snapshot = reader.latest_snapshot(conn).snapshot_id
        self.ops: list = []
        self.files: list[str] = []
        self.new_schemas: dict[str, CreateSchema] = {}
        self.new_tables: dict[tuple[str, str], tuple[TableInfo, TableRef]] = {}
        self.row_changed: set[tuple[str, str]] = set()
        self.altered: set[tuple[str, str]] = set()  # tables with an ALTER staged
        self.touched: set[tuple[str, str]] = set()  # tables written or changed row by row
        self.snapshot_id: int | None = None

    # ----------------------------------------------------------------------------------------- DDL
    def create_schema(self, name: str) -> None:
        """CREATE SCHEMA, visible to the rest of this transaction."""
        op = CreateSchema(name)
        self.new_schemas[name] = op
        self.ops.append(op)

    def drop_schema(self, name: str, *, cascade: bool = False) -> None:
        """DROP SCHEMA."""
        self.ops.append(DropSchema(name, cascade))

    def create_table(self, name: str, schema) -> None:
        """CREATE TABLE (Spark StructType, pyarrow Schema or DDL string)."""
        schema_name, table = split_name(name)
        op = CreateTable(schema_name, table, plan_columns(schema))
        self.ops.append(op)
        schema_id, schema_path = self._schema(schema_name)
        info = TableInfo(table_id=-1, table_uuid=op.table_uuid, schema_id=schema_id, schema_name=schema_name,
                         name=table, path=schema_path + paths_for.dir_name_for(table, op.table_uuid),
                         columns=op.columns, begin_snapshot=self.read_snapshot)
        self.new_tables[(schema_name, table)] = (info, op.ref)

    def update_schema(self, table: str):
        """Column changes of a table that existed when the transaction began: `with tx.update_schema(t) as u:`
        (the SchemaUpdate builder); staged when the block ends. Such a table is not written to in the same
        transaction (its rows would need the columns of both sides of the change)."""
        from .schema_change import SchemaUpdate

        key = self._alter(table)
        return SchemaUpdate(self.lake, key, read_snapshot=self.read_snapshot, stage=self.ops.append)

    def set_partitioning(self, table: str, keys: list[str]) -> None:
        """SET PARTITIONED BY (see DuckLake.set_partitioning); an empty list resets it."""
        from ..catalog.operations.partitioning import SetPartitioning, parse_keys

        info = self._existing(self._alter(table))
        self.ops.append(SetPartitioning(info.table_id, parse_keys(info, list(keys)) if keys else []))

    def set_sorted_by(self, table: str, keys: list[str]) -> None:
        """SET SORTED BY (see DuckLake.set_sorted_by); an empty list resets it."""
        from ..catalog.operations.sorting import SetSorting, parse_sort_keys

        info = self._existing(self._alter(table))
        self.ops.append(SetSorting(info.table_id, parse_sort_keys(info, list(keys)) if keys else []))

    def _alter(self, table: str) -> tuple[str, str]:
        """Claim a table for one ALTER in this transaction, with no data change to it."""
        schema, name = key = split_name(table)
        if key in self.new_tables:
            raise DuckLakeError(f"{schema}.{name} is created in this transaction: give create_table its final columns")
        if key in self.altered or key in self.touched:
            raise DuckLakeError(f"{schema}.{name} is already altered or written in this transaction: one ALTER per "
                                "table, and no writes to a table altered in the same transaction")
        self.altered.add(key)
        return key

    def _touch(self, table: str) -> None:
        schema, name = key = split_name(table)
        if key in self.altered:
            raise DuckLakeError(f"{schema}.{name} is altered in this transaction: write to it in another transaction")
        self.touched.add(key)

    def drop_table(self, name: str) -> None:
        """DROP TABLE (of a table that existed when the transaction began)."""
        self.ops.append(DropTable(self._existing(name).table_id))

    def rename_table(self, name: str, new_name: str) -> None:
        """ALTER TABLE ... RENAME TO."""
        info = self._existing(name)
        self.ops.append(RenameTable(info.table_id, info.schema_name, new_name))

    # ----------------------------------------------------------------------------------------- DML
    def write(self, df, table: str, mode: str = "append", *, where=None) -> None:
        """Stage a write (see DuckLake.write); a table created in this transaction can be written to."""
        from .write import new_table, stage_write

        if mode not in WRITE_MODES:
            raise ValueError(f"mode must be one of {', '.join(WRITE_MODES)}; got {mode!r}")
        self._touch(table)
        schema, name = split_name(table)
        pending = self.new_tables.get((schema, name))
        existing = pending[0] if pending else self.lake._find(schema, name)
        if existing is not None and mode in ("error", "errorifexists"):
            raise AlreadyExistsError(f"table {schema}.{name} already exists (mode='error')")
        if pending:
            info, ref, replace = pending[0], pending[1], False
        elif existing is not None:
            if mode == "overwrite":  # it deletes rows: one row-level change per table, like delete/update/merge
                self._row_change(table)
            info, ref, replace = existing, None, True
        else:
            schema_id, schema_path = self._schema(schema)
            create, info = new_table(schema, name, df.schema, schema_id, schema_path, self.read_snapshot)
            self.ops.append(create)
            ref, replace = create.ref, False
            self.new_tables[(schema, name)] = (info, ref)
        staged = stage_write(self.lake, df, info, ref, mode, where=where, read_snapshot=self.read_snapshot,
                             replace_existing=replace)
        self.ops += staged.ops
        self.files += staged.files

    def delete(self, table: str, condition=None) -> None:
        """Stage a DELETE on a table as it was when the transaction began."""
        from .delete_update import pruning_filter, stage_delete_op

        self._row_change(table)
        plan = self.lake.plan_scan(table, version=self.read_snapshot, where=pruning_filter(condition))
        op, files, _count = stage_delete_op(self.lake, plan, condition)
        if op is not None:
            self.ops.append(op)
            self.files += files

    def update(self, table: str, set: dict, condition=None) -> None:  # noqa: A002 - delta's name
        """Stage an UPDATE on a table as it was when the transaction began."""
        from .delete_update import pruning_filter, stage_update

        self._row_change(table)
        plan = self.lake.plan_scan(table, version=self.read_snapshot, where=pruning_filter(condition))
        ops, files, _count = stage_update(self.lake, plan, set, condition)
        self.ops += ops
        self.files += files

    def merge(self, source, table: str, condition, *, target_alias: str = "target",
              source_alias: str = "source"):
        """Start a MERGE into a table as it was when the transaction began; execute() stages it here."""
        from .merge import MergeBuilder

        return MergeBuilder(self.lake, table, source, condition, target_alias, source_alias, transaction=self)

    def _stage_merge(self, builder):
        from .merge import stage_merge

        self._row_change(builder.table)
        plan = self.lake.plan_scan(builder.table, version=self.read_snapshot)
        ops, files, outcome = stage_merge(builder, plan)
        self.ops += ops
        self.files += files
        return outcome

    def _row_change(self, table: str) -> None:
        self._touch(table)
        schema, name = key = split_name(table)
        if key in self.new_tables or key in self.row_changed:
            raise DuckLakeError(f"only one row-level change per pre-existing table in a transaction: {schema}.{name}")
        self.row_changed.add(key)

    # ----------------------------------------------------------------------------------------- helpers
    def _existing(self, name: str) -> TableInfo:
        schema, table = split_name(name)
        info = self.lake._find(schema, table)
        if info is None:
            raise NotFoundError(f"table {schema}.{table} does not exist (tables created in this transaction "
                                "cannot be renamed or dropped in it)")
        return info

    def _schema(self, name: str) -> tuple[int, str]:
        if name in self.new_schemas:
            op = self.new_schemas[name]
            return -1, self.lake.data_path + paths_for.dir_name_for(name, op.schema_uuid)
        with self.lake.engine.connect() as conn:
            sch = reader.find_schema(conn, self.read_snapshot, self.lake.data_path, name)
        return sch.schema_id, sch.path

    def commit(self) -> int | None:
        """Commit every staged operation as one snapshot (None when nothing was staged)."""
        from .write import commit_staged

        if not self.ops:
            return None
        self.snapshot_id = commit_staged(self.lake, self.ops, self.read_snapshot, self.info, self.files)
        return self.snapshot_id

    def abort(self) -> None:
        """Forget the staged operations and delete their files."""
        from ..spark.write import delete_paths

        delete_paths(self.files)
        self.ops, self.files = [], []
