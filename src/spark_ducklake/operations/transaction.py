"""`with lake.transaction() as tx:` — any DDL and DML on any tables, committed as one snapshot or not at all.

Operations are staged as they are called (files written by executors, catalog rows not yet) and committed in one
catalog transaction when the block ends without an exception; an exception, or a conflict at commit, deletes every
staged file and leaves the catalog untouched. `tx.read(table)` (and `tx.staged()`) see the transaction's own
staged changes, no other reader does; `lake.read` inside the block sees the lake without them. Tables created in
the block can be written to, renamed and dropped. DELETE and UPDATE may follow any earlier change of the same table
and see its effect (staged_changes.py re-stages the table's net change); a MERGE, or an overwrite, addresses a
table as it was at the start and must be its only row-level change. A table may be altered several times
(the column changes fold into one new version, staged_alters.py) and written to after its ALTER (INSERT, DELETE,
and UPDATE or MERGE, which rewrite its rows with the altered columns; a MERGE not when rows were also written to
it in the transaction). Tables renamed or dropped in the
block are tracked by name (staged_names.py).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

from ..catalog.changes.ddl import CreateSchema, CreateTable, DropSchema, DropTable, RenameTable, TableRef
from ..catalog.reads import reader
from ..catalog.reads.reader import find_schema
from ..dataplane.arrow.storage import delete_paths
from ..dataplane.spark.conform import plan_columns
from ..dataplane.spark.expressions import check_expression
from ..errors import AlreadyExistsError, DuckLakeError, InvalidArgumentError, NotFoundError
from ..spec import paths as paths_for
from ..spec.arguments import WriteMode, check_assignments, check_condition, check_data, update_arguments
from ..spec.commit_properties import CommitProperties
from ..spec.model import TableInfo
from ..spec.names import parse_table_name as split_name
from ..spec.names import schema_key
from .context import LakeContext
from .delete_update import pruning_filter, stage_delete_op, stage_update
from .error_causes import call_translated, translate_methods
from .merge import MergeBuilder, stage_merge
from .schema_change import SchemaUpdate, evolve_for
from .staged_alters import alter_new, fold_alter, next_column_id
from .staged_changes import compose_delete, compose_update, has_staged_rows, needs_compose
from .staged_flush import flush_in_transaction
from .staged_layout import follow_staged_layout, layout, stage_partitioning, stage_sorting
from .staged_names import Names, drop_new, rename
from .staged_reads import staged_context
from .write import load_layout, new_table, schema_of, stage_write

WRITE_MODES = ("append", "overwrite", "error", "errorifexists")


@contextmanager
def transaction(ctx: LakeContext, properties: CommitProperties | None = None, *,
                snapshot_at_first_read: bool = False) -> Iterator[Transaction]:
    """Stage operations in the block; commit them as one snapshot when it ends, or delete their files on error.
    `snapshot_at_first_read` (one-operation transactions: lake.write, lake.delete, ...): the snapshot it reads
    from is taken by its operation's first catalog read instead of a read of its own as the block opens."""
    tx = call_translated(ctx.location, Transaction, ctx, properties or CommitProperties(),
                         snapshot_at_first_read=snapshot_at_first_read)
    try:
        yield tx
    except BaseException:
        tx.abort()
        raise
    tx.commit()


@translate_methods  # users call them inside `with lake.transaction()`, and commit() runs as the block ends
class Transaction:
    """Staged operations of one future snapshot."""

    def __init__(self, ctx: LakeContext, properties: CommitProperties, *, snapshot_at_first_read: bool = False):
        ctx.check_writable()
        self.ctx, self.properties = ctx, properties
        self._read_row = None  # the snapshot row this transaction reads from and commits after
        if not snapshot_at_first_read:  # `with lake.transaction()`: the lake as the block opens
            with ctx.connect() as conn:
                self.begin_reads(conn)
        self.guards: list = []  # operations committed first that may refuse the commit (stream_guards)
        self.ops: list = []
        self.files: list[str] = []
        self.new_schemas: dict[str, CreateSchema] = {}
        self.new_tables: dict[tuple[str, str], tuple[TableInfo, TableRef]] = {}
        self.row_changed: set[tuple[str, str]] = set()
        self.altered: set[tuple[str, str]] = set()  # tables with an ALTER staged
        self.touched: set[tuple[str, str]] = set()  # tables written or changed row by row
        self.alter_columns: dict[tuple[str, str], list] = {}  # altered tables: their columns after the ALTERs
        self.names = Names()  # tables renamed or dropped in this transaction
        self.discarded: list[str] = []  # files of operations re-staged since (staged_changes.py): gone at the end
        self.snapshot_id: int | None = None
        self.aborted = False  # lake.sql: a statement failed and aborted it; only ROLLBACK / COMMIT end it

    def begin_reads(self, conn) -> None:
        """Fix the snapshot this transaction reads from on `conn` unless it is fixed already, so that a write's
        catalog reads and this one share one connection (one short read before the data moves)."""
        if self._read_row is None:
            self._read_row = reader.latest_snapshot(conn)

    @property
    def read_row(self):
        """The snapshot row this transaction reads from (read now if no operation has read it yet)."""
        if self._read_row is None:
            with self.ctx.connect() as conn:
                self.begin_reads(conn)
        return self._read_row

    @property
    def read_snapshot(self) -> int:
        """The id of the snapshot this transaction reads from; its commit checks the snapshots after it."""
        return self.read_row.snapshot_id

    # ----------------------------------------------------------------------------------------- DDL
    def create_schema(self, name: str | Sequence[str]) -> None:
        """CREATE SCHEMA, visible to the rest of this transaction; 'sales.europe' or ('sales', 'europe') is a
        nested schema on a DuckLake 1.1 catalog (LakeContext.schema_path)."""
        path = self.ctx.schema_path(name)
        op = CreateSchema(schema_key(path), path=path)
        self.new_schemas[op.name] = op
        self.ops.append(op)

    def drop_schema(self, name: str | Sequence[str], *, cascade: bool = False) -> None:
        """DROP SCHEMA (CASCADE: with its tables, views, macros and nested schemas)."""
        self.ops.append(DropSchema(schema_key(self.ctx.schema_path(name)), cascade))

    def create_table(self, name: str, schema) -> None:
        """CREATE TABLE (Spark StructType, pyarrow Schema or DDL string)."""
        schema_name, table = split_name(name)
        key = (schema_name, table)
        if self.names.exists(self, key):
            raise AlreadyExistsError(f"table {schema_name}.{table} already exists")
        op = CreateTable(schema_name, table, plan_columns(schema))
        self.ops.append(op)
        schema_id, schema_path = self._schema(schema_name)
        info = TableInfo(table_id=-1, table_uuid=op.table_uuid, schema_id=schema_id, schema_name=schema_name,
                         name=table, path=schema_path + paths_for.dir_name_for(table, op.table_uuid),
                         columns=op.columns, begin_snapshot=self.read_snapshot)
        self.new_tables[(schema_name, table)] = (info, op.ref)

    def update_schema(self, table: str):
        """Column changes of a table that existed when the transaction began: `with tx.update_schema(t) as u:`
        (the SchemaUpdate builder); staged when the block ends, after the table's earlier ALTERs in the block."""
        new = split_name(table)
        if new in self.new_tables:  # created in this transaction: its CREATE takes the new columns
            return SchemaUpdate(self.ctx, new, read_snapshot=self.read_snapshot, pending=self.new_tables[new][0],
                                stage=lambda op: alter_new(self, new, op.new))
        key = self._alter(table)
        update = SchemaUpdate(self.ctx, key, read_snapshot=self.read_snapshot,
                              stage=lambda op: self._stage_alter(key, op),
                              layout=lambda: layout(self, update.table.table_id))
        if key in self.alter_columns:  # an earlier ALTER in this transaction: go on from its columns
            update.columns = copy.deepcopy(self.alter_columns[key])
            update._next_id = max(update._next_id, next_column_id(update.columns))
        return update

    def _stage_alter(self, key: tuple[str, str], op) -> None:
        """Stage a column change, folded into an earlier one of the same table (one new version at COMMIT)."""
        self.alter_columns[key] = op.new
        fold_alter(self.ops, op)

    def set_partitioning(self, table: str, keys: list[str]) -> None:
        """SET PARTITIONED BY (see DuckLake.set_partitioning); an empty list resets it (staged_layout.py)."""
        created = self.new_tables.get(split_name(table))
        info, ref = created if created is not None else (self._altered_info(table), None)
        stage_partitioning(self, info, ref, keys)

    def set_sorted_by(self, table: str, keys: list[str]) -> None:
        """SET SORTED BY (see DuckLake.set_sorted_by); an empty list resets it (staged_layout.py)."""
        created = self.new_tables.get(split_name(table))
        info, ref = created if created is not None else (self._altered_info(table), None)
        stage_sorting(self, info, ref, keys)

    def _altered_info(self, table: str) -> TableInfo:
        """A table that existed when the transaction began, with the columns its ALTERs here left (keys may name
        a column added in this transaction)."""
        key = self._alter(table)
        info = self.existing(key)
        columns = self.alter_columns.get(key)
        return info if columns is None else replace(info, columns=copy.deepcopy(columns))

    def _alter(self, table: str) -> tuple[str, str]:
        """A table an ALTER may change in this transaction (one that existed when it began), by its name then."""
        schema, name = key = split_name(table)
        if key in self.new_tables:
            raise DuckLakeError(f"{schema}.{name} is created in this transaction: give create_table its final columns")
        key = self.names.source(key)
        self.altered.add(key)
        return key

    def _touch(self, table: str) -> None:
        self.touched.add(split_name(table))

    def _not_altered(self, table: str, what: str) -> None:
        """Refuse a change that reads the table's rows with the columns it had when the transaction began."""
        schema, name = key = split_name(table)
        if key in self.alter_columns:
            raise DuckLakeError(f"{schema}.{name} has its columns altered in this transaction: {what} it in another "
                                "transaction (INSERT and DELETE may follow the ALTER)")

    def drop_table(self, name: str) -> None:
        """DROP TABLE (a table created in this transaction is forgotten with everything staged for it)."""
        key = split_name(name)
        if key in self.new_tables:
            drop_new(self, key)
            return
        src = self.names.source(key)
        table_id = self.existing(src).table_id
        if self.names.renamed.pop(key, None) is not None:  # renamed here first: only the drop is written
            self.ops = [op for op in self.ops if not (isinstance(op, RenameTable) and op.table_id == table_id)]
        self.ops.append(DropTable(table_id))
        self.names.gone.add(src)

    def rename_table(self, name: str, new_name: str) -> None:
        """ALTER TABLE ... RENAME TO (also of a table created or renamed in this transaction)."""
        rename(self, name, new_name)

    # ----------------------------------------------------------------------------------------- DML
    def write(self, df, table: str, mode: WriteMode = "append", *, where=None, merge_schema: bool = False,
              one_file_if_small: bool = False) -> None:
        """Stage a write (see DuckLake.write); a table created in this transaction can be written to.
        `one_file_if_small`: a small Spark DataFrame becomes one file, as DuckDB writes INSERT ... SELECT."""
        check_data(df)
        if mode not in WRITE_MODES:
            raise InvalidArgumentError(f"mode must be one of {', '.join(WRITE_MODES)}; got {mode!r}")
        if where is not None and mode != "overwrite":
            raise InvalidArgumentError("where= only applies to mode='overwrite'")
        schema, name = key = split_name(table)
        freed = key in self.names.gone and key not in self.names.renamed  # dropped here: a new table may take it
        if key not in self.new_tables and not freed:
            schema, name = key = table = self.names.source(key)  # a renamed table's rows are under its old name
        self._touch(table)
        pending = self.new_tables.get(key)
        with self.ctx.connect() as conn:  # one round of catalog reads before the data moves
            self.begin_reads(conn)
            existing = None if pending or freed else self.ctx.table_cache.find(
                conn, self._read_row, self.ctx.data_path, schema, name)
            if (pending or existing) and mode in ("error", "errorifexists"):
                raise AlreadyExistsError(f"table {schema}.{name} already exists (mode='error')")
            if pending:
                info, ref, replace_existing = pending[0], pending[1], False
            elif existing is not None:
                # a copy: writing fills in the layout, the cached record stays as it is; after an ALTER in this
                # transaction the rows take the columns it left (they are staged after it)
                columns = self.alter_columns.get(key, existing.columns)
                info, ref, replace_existing = replace(existing, columns=copy.deepcopy(columns)), None, True
                follow_staged_layout(self, info)
            else:
                if schema in self.new_schemas:
                    schema_id, schema_path = self._schema(schema)
                else:
                    found = find_schema(conn, self.read_snapshot, self.ctx.data_path, schema)
                    schema_id, schema_path = found.schema_id, found.path
                create, info = new_table(schema, name, schema_of(df), schema_id, schema_path, self.read_snapshot)
                ref, replace_existing = create.ref, False
            # the options, and the layout of an existing table, on the same connection: the write reads nothing more
            options = self.ctx.options_of(existing, conn)
            limit = self.ctx.inlining_limit(existing, options=options)
            if existing is not None:
                load_layout(self.ctx, info, self.read_snapshot, conn)
        if existing is not None and mode == "overwrite":  # it deletes rows: one row-level change per table
            self._row_change(table)
        if not pending and existing is None:
            self.ops.append(create)
            self.new_tables[key] = (info, ref)
        if merge_schema and existing is not None:
            self._not_altered(table, "write with merge_schema to")
            alter, info = evolve_for(self.ctx, info, schema_of(df), read_snapshot=self.read_snapshot)
            if alter is not None:
                self._stage_alter(key, alter)
        overwrite = replace_existing and mode == "overwrite"
        if overwrite and where is not None:  # replace the matching rows only: stage their delete first
            plan = self.ctx.plan_scan(key, version=self.read_snapshot, where=pruning_filter(where))
            delete_op, delete_files, _count = stage_delete_op(self.ctx, plan, where)
            if delete_op is not None:
                self.ops.append(delete_op)
                self.files += delete_files
        staged = stage_write(self.ctx, df, info, ref, replace_all=overwrite and where is None,
                             read_snapshot=self.read_snapshot, replace_existing=replace_existing, limit=limit,
                             one_file_if_small=one_file_if_small, options=options)
        self.ops += staged.ops
        self.files += staged.files

    def guard(self, op) -> None:
        """An operation committed before the others that may refuse the whole commit."""
        self.guards.append(op)

    def delete(self, table: str, condition=None) -> int:
        """Stage a DELETE on the table as this transaction sees it; returns the rows it deletes."""
        check_condition(condition)
        if needs_compose(self, table):
            self._changed(table)
            return compose_delete(self, table, condition)
        table = self.names.source(table)
        self._changed(table)
        plan = self.ctx.plan_scan(table, version=self.read_snapshot, where=pruning_filter(condition))
        op, files, count = stage_delete_op(self.ctx, plan, condition)
        if op is not None:
            self.ops.append(op)
            self.files += files
        return count

    def update(self, table: str, condition=None, set: dict | None = None) -> int:  # noqa: A002 - delta's name
        """Stage an UPDATE on the table as this transaction sees it; returns the rows it updates."""
        condition, set = update_arguments(condition, set)  # noqa: A001
        check_assignments(set)
        check_condition(condition)
        if needs_compose(self, table):
            self._changed(table)
            return compose_update(self, table, set, condition)
        table = self.names.source(table)
        self._changed(table)
        plan = self._change_plan(table, "update", where=pruning_filter(condition))
        ops, files, count = stage_update(self.ctx, plan, set, condition)
        self.ops += ops
        self.files += files
        return count

    def merge(self, source, table: str, condition, *, target_alias: str = "target",
              source_alias: str = "source"):
        """Start a MERGE into a table as it was when the transaction began; execute() stages it here."""
        return MergeBuilder(self.ctx, self.names.source(table), source, condition, target_alias, source_alias,
                            run=self.stage_merge)

    def stage_merge(self, builder):
        """Stage a MERGE built by MergeBuilder (its execute() calls this); returns its counts."""
        schema, name = key = split_name(builder.table)
        if key not in self.new_tables and has_staged_rows(
                self, self.ctx.table_info(key, version=self.read_snapshot).table_uuid):  # it would not see them
            raise DuckLakeError(f"MERGE INTO {schema}.{name} after other writes to it in this transaction is not "
                                "supported: merge in another transaction")
        self._row_change(builder.table)
        plan = self._change_plan(builder.table, "merge into")
        ops, files, outcome = stage_merge(builder, plan)
        self.ops += ops
        self.files += files
        return outcome

    def flush_inlined_data(self, schema_name: str | None = None, table_name: str | None = None) -> list:
        """flush_inlined_data inside the transaction: the rows inlined when it began go to files (sorted by the
        keys it set) at COMMIT; refused for a table whose rows it changes. Returns the flush's rows."""
        return flush_in_transaction(self, schema_name, table_name)

    def _change_plan(self, table, what: str, where: str | None = None):
        """The scan plan an UPDATE or MERGE rewrites: the table as the transaction began, with the columns its
        staged ALTERs leave it (the new rows are written with those)."""
        plan = self.ctx.plan_scan(table, version=self.read_snapshot, where=where)
        key = split_name(table)
        if key not in self.alter_columns:
            return plan
        current = next((now for now, was in self.names.renamed.items() if was == key), key)
        with self.staged() as ctx:
            altered = ctx.plan_scan(current, where=where)
        # Only the columns may differ: rows staged by an INSERT would be files and ids the commit has not given yet.
        if _contents(altered) != _contents(plan):
            schema, name = key
            raise DuckLakeError(f"{schema}.{name} has its columns altered and rows written in this transaction: "
                                f"{what} it in another transaction")
        return replace(altered, snapshot_id=plan.snapshot_id)  # deletes are foreseen at read_snapshot + 1

    def _row_change(self, table: str) -> None:
        """A MERGE or overwrite, planned against the table as the transaction began: its only row-level change."""
        self._touch(table)
        schema, name = key = split_name(table)
        if key in self.new_tables or key in self.row_changed:
            raise DuckLakeError(f"a MERGE or overwrite must be the only row-level change of a pre-existing table in "
                                f"a transaction: {schema}.{name}")
        self.row_changed.add(key)

    def _changed(self, table: str) -> None:
        """A DELETE or UPDATE of the table (by its name now) is staged."""
        key = split_name(table)
        key = key if key in self.new_tables else self.names.source(key)
        self.touched.add(key)
        self.row_changed.add(key)

    # ----------------------------------------------------------------------------------------- reads
    def staged(self, *, catalog_only: bool = False):
        """`with tx.staged() as ctx:` a read-only LakeContext of the lake as this transaction would leave it (its
        staged operations applied, nothing committed; operations/staged_reads.py). Plan reads inside the block;
        `catalog_only=True` for names and metadata alone (Spark is then never started)."""
        return staged_context(self.ctx, self.ops, self.read_snapshot, catalog_only=catalog_only)

    def read(self, table: str, *, where: str | None = None):
        """The table as this transaction sees it: its staged rows, deletes and updates included (other readers
        see none of them before the commit). The DataFrame reads staged files: use it before an abort."""
        with self.staged() as ctx:
            plan = ctx.plan_scan(table, where=where)
        spark = self.ctx.spark
        if where:
            check_expression(spark, plan.table, where, "where")
        frame = plan.to_dataframe(spark)
        return frame.where(where) if where else frame

    # ----------------------------------------------------------------------------------------- helpers
    def table_info(self, name) -> TableInfo:
        """A table as this transaction sees it: created, renamed or altered in it (columns as its ALTERs left
        them)."""
        key = split_name(name)
        if key in self.new_tables:
            return self.new_tables[key][0]
        src = self.names.source(key)
        info = self.ctx.table_info(src, version=self.read_snapshot)
        columns = self.alter_columns.get(src)
        return info if columns is None else replace(info, columns=copy.deepcopy(columns))

    def existing(self, name) -> TableInfo:
        """A table that existed when the transaction began, by its name then."""
        schema, table = split_name(name)
        info = self.ctx.find(schema, table)
        if info is None:
            raise NotFoundError(f"table {schema}.{table} does not exist")
        return info

    def _schema(self, name: str) -> tuple[int, str]:
        if name in self.new_schemas:
            op = self.new_schemas[name]
            return -1, self.ctx.data_path + op.dir_name
        with self.ctx.connect() as conn:
            sch = reader.find_schema(conn, self.read_snapshot, self.ctx.data_path, name)
        return sch.schema_id, sch.path

    def commit(self) -> int | None:
        """Commit every staged operation as one snapshot (None when nothing was staged); on failure the staged
        files are deleted."""
        if not self.ops:
            self.abort()  # guards alone change nothing
            return None
        try:
            self.snapshot_id = self.ctx.commit(self.guards + self.ops, read_snapshot=self.read_snapshot,
                                               properties=self.properties, staged_files=self.files)
        finally:
            self._drop_discarded()
        return self.snapshot_id

    def abort(self) -> None:
        """Forget the staged operations and delete their files."""
        delete_paths(self.files)
        self._drop_discarded()
        self.ops, self.files, self.guards = [], [], []

    def _drop_discarded(self) -> None:
        """Delete the files of re-staged operations (those a savepoint brought back excepted)."""
        live = set(self.files)
        delete_paths([f for f in self.discarded if f not in live])
        self.discarded = []

    def savepoint(self) -> Savepoint:
        """The staged state now, for `rollback_to` (undoing one failed statement, the transaction going on)."""
        return Savepoint(list(self.ops), list(self.files), list(self.guards), dict(self.new_schemas),
                         dict(self.new_tables), set(self.row_changed), set(self.altered), set(self.touched),
                         dict(self.alter_columns), self.names.copy())

    def rollback_to(self, point: Savepoint) -> None:
        """Undo what was staged since `point`: its operations are forgotten and the files they wrote deleted."""
        kept = set(point.files)
        delete_paths([f for f in self.files if f not in kept])
        self.files = point.files
        self.ops, self.guards = point.ops, point.guards
        self.new_schemas, self.new_tables = point.new_schemas, point.new_tables
        self.row_changed, self.altered, self.touched = point.row_changed, point.altered, point.touched
        self.alter_columns, self.names = point.alter_columns, point.names


@dataclass
class Savepoint:
    """A Transaction's staged state at one moment (copies: later staging does not change it)."""

    ops: list
    files: list
    guards: list
    new_schemas: dict
    new_tables: dict
    row_changed: set
    altered: set
    touched: set
    alter_columns: dict
    names: Names


def _contents(plan) -> tuple:
    """What a scan plan reads, its columns aside: data files, their delete files, inlined rows and deletes."""
    files = sorted((f.data_file_id, f.path, None if f.delete_file is None else f.delete_file.path) for f in plan.files)
    inlined = None if plan.inlined is None else plan.inlined.num_rows
    return files, inlined, {k: sorted(v) for k, v in plan.inlined_deletes.items()}
