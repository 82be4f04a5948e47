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
block are tracked by name (staged_names.py). What is staged for each table is one `StagedTable` record (the
reference's LocalTableDataChanges); the operations and their files are one list each, in commit order.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import NamedTuple

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
from ..spec.model import Column, Snapshot, TableInfo
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
from .staged_names import Names, drop_new, drop_schema_tables, rename
from .staged_reads import staged_context
from .write import load_layout, new_table, schema_of, stage_write

WRITE_MODES = ("append", "overwrite", "error", "errorifexists")

Key = tuple[str, str]


class NewTable(NamedTuple):
    """A table created in the transaction: the TableInfo its writes use and the TableRef of its pending CREATE."""

    info: TableInfo
    ref: TableRef


@dataclass
class StagedTable:
    """What a transaction staged for one table name, as the reference's LocalTableDataChanges: the table created
    under that name now, or the one that had it when the transaction began (rows, ALTERs). A name may hold both
    (RENAME t TO t_old; CREATE t): renaming or dropping the created table moves or clears its fields alone."""

    created: NewTable | None = None  # created in this transaction (by its name now)
    row_changed: bool = False  # a DELETE, UPDATE, MERGE or overwrite is staged
    columns: list[Column] | None = None  # after the ALTERs staged so far (by the name at the start)


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
        self._read_row: Snapshot | None = None  # the snapshot row this transaction reads from and commits after
        if not snapshot_at_first_read:  # `with lake.transaction()`: the lake as the block opens
            with ctx.connect() as conn:
                self.begin_reads(conn)
        self._guards: list = []  # operations committed first that may refuse the commit (stream_guards)
        self._ops: list = []  # in commit order, across tables
        self._files: list[str] = []  # written by the staged operations: deleted if the commit does not happen
        self.new_schemas: dict[str, CreateSchema] = {}
        self.tables: dict[Key, StagedTable] = {}  # what is staged for each table (`table`)
        self.names = Names()  # tables renamed or dropped in this transaction
        self._discarded: list[str] = []  # files of operations re-staged since (staged_changes.py): gone at the end
        self.snapshot_id: int | None = None
        self.aborted = False  # lake.sql: a statement failed and aborted it; only ROLLBACK / COMMIT end it

    def begin_reads(self, conn) -> Snapshot:
        """Fix the snapshot this transaction reads from on `conn` unless it is fixed already, so that a write's
        catalog reads and this one share one connection (one short read before the data moves); that snapshot."""
        if self._read_row is None:
            self._read_row = reader.latest_snapshot(conn)
        return self._read_row

    @property
    def read_row(self) -> Snapshot:
        """The snapshot row this transaction reads from (read now if no operation has read it yet)."""
        if self._read_row is not None:
            return self._read_row
        with self.ctx.connect() as conn:
            return self.begin_reads(conn)

    @property
    def read_snapshot(self) -> int:
        """The id of the snapshot this transaction reads from; its commit checks the snapshots after it."""
        return self.read_row.snapshot_id

    # ----------------------------------------------------------------------------------------- staged state
    @property
    def ops(self) -> Sequence:
        """The staged operations, in commit order (change them with stage, unstage, replace_op or replace_ops)."""
        return self._ops

    @property
    def files(self) -> Sequence[str]:
        """The files the staged operations wrote."""
        return self._files

    def stage(self, *ops, files: Iterable[str] = ()) -> None:
        """Stage operations after those staged so far, with the files they wrote."""
        self._ops += ops
        self._files += files

    def unstage(self, op) -> None:
        """Forget a staged operation (a view or macro created and dropped in this transaction: nothing is written)."""
        self._ops = [staged for staged in self._ops if staged is not op]

    def replace_op(self, old, new) -> None:
        """Stage `new` in the place of the staged operation `old` (a pending CREATE or RENAME changed)."""
        self._ops = [new if staged is old else staged for staged in self._ops]

    def replace_ops(self, ops: list, *, files: list[str] | None = None, discarded: Iterable[str] = ()) -> None:
        """Stage `ops` instead of the staged operations (and `files` instead of their files when given); the
        `discarded` files, of operations re-staged, are deleted when the transaction ends."""
        self._ops = ops
        if files is not None:
            self._files = files
        self._discarded += discarded

    def table(self, key: Key) -> StagedTable:
        """The record of what is staged for the table `key`, created on first use."""
        return self.tables.setdefault(key, StagedTable())

    def created(self, key: Key) -> NewTable | None:
        """The table created in this transaction under the name `key` (its name now), else None."""
        staged = self.tables.get(key)
        return None if staged is None else staged.created

    def _columns(self, key: Key) -> list[Column] | None:
        """The columns the staged ALTERs leave a table that existed when the transaction began (None: unaltered)."""
        staged = self.tables.get(key)
        return None if staged is None else staged.columns

    # ----------------------------------------------------------------------------------------- DDL
    def create_schema(self, name: str | Sequence[str]) -> None:
        """CREATE SCHEMA, visible to the rest of this transaction; 'sales.europe' or ('sales', 'europe') is a
        nested schema on a DuckLake 1.1 catalog (LakeContext.schema_path)."""
        path = self.ctx.schema_path(name)
        op = CreateSchema(schema_key(path), path=path)
        self.new_schemas[op.name] = op
        self._ops.append(op)

    def drop_schema(self, name: str | Sequence[str], *, cascade: bool = False) -> None:
        """DROP SCHEMA (CASCADE: with its tables, views, macros and nested schemas)."""
        key = schema_key(self.ctx.schema_path(name))
        if cascade and key not in self.new_schemas:
            drop_schema_tables(self, key)
        self._ops.append(DropSchema(key, cascade))

    def create_table(self, name: str, schema) -> None:
        """CREATE TABLE (Spark StructType, pyarrow Schema or DDL string)."""
        schema_name, table = split_name(name)
        key = (schema_name, table)
        if self.names.exists(self, key):
            raise AlreadyExistsError(f"table {schema_name}.{table} already exists")
        op = CreateTable(schema_name, table, plan_columns(schema))
        self._ops.append(op)
        schema_id, schema_path = self._schema(schema_name)
        info = TableInfo(table_id=-1, table_uuid=op.table_uuid, schema_id=schema_id, schema_name=schema_name,
                         name=table, path=schema_path + paths_for.dir_name_for(table, op.table_uuid),
                         columns=op.columns, begin_snapshot=self.read_snapshot)
        self.table(key).created = NewTable(info, op.ref)

    def update_schema(self, table: str):
        """Column changes of a table that existed when the transaction began: `with tx.update_schema(t) as u:`
        (the SchemaUpdate builder); staged when the block ends, after the table's earlier ALTERs in the block."""
        new = split_name(table)
        created = self.created(new)
        if created is not None:  # created in this transaction: its CREATE takes the new columns
            return SchemaUpdate(self.ctx, new, read_snapshot=self.read_snapshot, pending=created.info,
                                stage=lambda op: alter_new(self, new, op.new))
        key = self._alter(table)
        update: SchemaUpdate = SchemaUpdate(self.ctx, key, read_snapshot=self.read_snapshot,
                                            stage=lambda op: self._stage_alter(key, op),
                                            layout=lambda: layout(self, update.table.table_id),
                                            staged_rows=self.staged if self._ops and key == new else None)
        columns = self._columns(key)
        if columns is not None:  # an earlier ALTER in this transaction: go on from its columns
            update.columns = copy.deepcopy(columns)
            update._next_id = max(update._next_id, next_column_id(update.columns))
        return update

    def _stage_alter(self, key: Key, op) -> None:
        """Stage a column change, folded into an earlier one of the same table (one new version at COMMIT)."""
        self.table(key).columns = op.new
        self._ops = fold_alter(self._ops, op)

    def set_partitioning(self, table: str, keys: list[str]) -> None:
        """SET PARTITIONED BY (see DuckLake.set_partitioning); an empty list resets it (staged_layout.py)."""
        created = self.created(split_name(table))
        info, ref = created if created is not None else (self._altered_info(table), None)
        stage_partitioning(self, info, ref, keys)

    def set_sorted_by(self, table: str, keys: list[str]) -> None:
        """SET SORTED BY (see DuckLake.set_sorted_by); an empty list resets it (staged_layout.py)."""
        created = self.created(split_name(table))
        info, ref = created if created is not None else (self._altered_info(table), None)
        stage_sorting(self, info, ref, keys)

    def _altered_info(self, table: str) -> TableInfo:
        """A table that existed when the transaction began, with the columns its ALTERs here left (keys may name
        a column added in this transaction)."""
        key = self._alter(table)
        info = self.existing(key)
        columns = self._columns(key)
        return info if columns is None else replace(info, columns=copy.deepcopy(columns))

    def _alter(self, table: str) -> Key:
        """A table an ALTER may change in this transaction (one that existed when it began), by its name then."""
        schema, name = key = split_name(table)
        if self.created(key) is not None:
            raise DuckLakeError(f"{schema}.{name} is created in this transaction: give create_table its final columns")
        return self.names.source(key)

    def _not_altered(self, table: str | Key, what: str) -> None:
        """Refuse a change that reads the table's rows with the columns it had when the transaction began."""
        schema, name = key = split_name(table)
        if self._columns(key) is not None:
            raise DuckLakeError(f"{schema}.{name} has its columns altered in this transaction: {what} it in another "
                                "transaction (INSERT and DELETE may follow the ALTER)")

    def drop_table(self, name: str) -> None:
        """DROP TABLE (a table created in this transaction is forgotten with everything staged for it)."""
        key = split_name(name)
        created = self.created(key)
        if created is not None:
            drop_new(self, key, created)
            return
        src = self.names.source(key)
        table_id = self.existing(src).table_id
        if self.names.renamed.pop(key, None) is not None:  # renamed here first: only the drop is written
            self._ops = [op for op in self._ops if not (isinstance(op, RenameTable) and op.table_id == table_id)]
        self._ops.append(DropTable(table_id))
        self.names.gone.add(src)

    def rename_table(self, name: str, new_name: str) -> None:
        """ALTER TABLE ... RENAME TO (also of a table created or renamed in this transaction)."""
        rename(self, name, new_name)

    # ----------------------------------------------------------------------------------------- DML
    def write(self, df, table: str | tuple[str, str], mode: WriteMode = "append", *, where=None,
              merge_schema: bool = False, one_file_if_small: bool = False) -> None:
        """Stage a write (see DuckLake.write); a table created in this transaction can be written to.
        `one_file_if_small`: a small Spark DataFrame becomes one file, as DuckDB writes INSERT ... SELECT."""
        check_data(df)
        if mode not in WRITE_MODES:
            raise InvalidArgumentError(f"mode must be one of {', '.join(WRITE_MODES)}; got {mode!r}")
        if where is not None and mode != "overwrite":
            raise InvalidArgumentError("where= only applies to mode='overwrite'")
        schema, name = key = split_name(table)
        freed = key in self.names.gone and key not in self.names.renamed  # dropped here: a new table may take it
        if self.created(key) is None and not freed:
            schema, name = key = self.names.source(key)  # a renamed table's rows are under its old name
        pending = self.created(key)
        with self.ctx.connect() as conn:  # one round of catalog reads before the data moves
            self.begin_reads(conn)
            existing = None if pending or freed else self.ctx.table_cache.find(
                conn, self.read_row, self.ctx.data_path, schema, name)
            if (pending or existing) and mode in ("error", "errorifexists"):
                raise AlreadyExistsError(f"table {schema}.{name} already exists (mode='error')")
            if pending:
                info, ref, replace_existing = pending[0], pending[1], False
            elif existing is not None:
                # a copy: writing fills in the layout, the cached record stays as it is; after an ALTER in this
                # transaction the rows take the columns it left (they are staged after it)
                altered = self._columns(key)
                columns = existing.columns if altered is None else altered
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
            self._row_change(key)
        if not pending and existing is None:
            self._ops.append(create)
            self.table(key).created = NewTable(info, create.ref)
        if merge_schema and existing is not None:
            self._not_altered(key, "write with merge_schema to")
            alter, info = evolve_for(self.ctx, info, schema_of(df), read_snapshot=self.read_snapshot)
            if alter is not None:
                self._stage_alter(key, alter)
        overwrite = replace_existing and mode == "overwrite"
        if overwrite and where is not None:  # replace the matching rows only: stage their delete first
            plan = self.ctx.plan_scan(key, version=self.read_snapshot, where=pruning_filter(where))
            deleted = stage_delete_op(self.ctx, plan, where)
            self.stage(*deleted.ops, files=deleted.files)
        staged = stage_write(self.ctx, df, info, ref, replace_all=overwrite and where is None,
                             read_snapshot=self.read_snapshot, replace_existing=replace_existing, limit=limit,
                             one_file_if_small=one_file_if_small, options=options)
        self.stage(*staged.ops, files=staged.files)

    def guard(self, op) -> None:
        """An operation committed before the others that may refuse the whole commit."""
        self._guards.append(op)

    def delete(self, table: str, condition=None) -> int:
        """Stage a DELETE on the table as this transaction sees it; returns the rows it deletes."""
        check_condition(condition)
        if needs_compose(self, table):
            self._changed(table)
            return compose_delete(self, table, condition)
        src = self.names.source(table)
        self._changed(src)
        plan = self.ctx.plan_scan(src, version=self.read_snapshot, where=pruning_filter(condition))
        staged = stage_delete_op(self.ctx, plan, condition)
        self.stage(*staged.ops, files=staged.files)
        return staged.result

    def update(self, table: str, condition=None, set: dict | None = None) -> int:  # noqa: A002 - delta's name
        """Stage an UPDATE on the table as this transaction sees it; returns the rows it updates."""
        condition, set = update_arguments(condition, set)  # noqa: A001
        check_assignments(set)
        check_condition(condition)
        if needs_compose(self, table):
            self._changed(table)
            return compose_update(self, table, set, condition)
        src = self.names.source(table)
        self._changed(src)
        plan = self._change_plan(src, "update", where=pruning_filter(condition))
        staged = stage_update(self.ctx, plan, set, condition)
        self.stage(*staged.ops, files=staged.files)
        return staged.result

    def merge(self, source, table: str, condition, *, target_alias: str = "target",
              source_alias: str = "source"):
        """Start a MERGE into a table as it was when the transaction began; execute() stages it here."""
        return MergeBuilder(self.ctx, self.names.source(table), source, condition, target_alias, source_alias,
                            run=self.stage_merge)

    def stage_merge(self, builder):
        """Stage a MERGE built by MergeBuilder (its execute() calls this); returns its counts."""
        schema, name = key = split_name(builder.table)
        if self.created(key) is None and has_staged_rows(
                self, self.ctx.table_info(key, version=self.read_snapshot).table_uuid):  # it would not see them
            raise DuckLakeError(f"MERGE INTO {schema}.{name} after other writes to it in this transaction is not "
                                "supported: merge in another transaction")
        self._row_change(builder.table)
        plan = self._change_plan(builder.table, "merge into")
        staged = stage_merge(builder, plan)
        self.stage(*staged.ops, files=staged.files)
        return staged.result

    def flush_inlined_data(self, schema_name: str | None = None, table_name: str | None = None) -> list:
        """flush_inlined_data inside the transaction: the rows inlined when it began go to files (sorted by the
        keys it set) at COMMIT; refused for a table whose rows it changes. Returns the flush's rows."""
        return flush_in_transaction(self, schema_name, table_name)

    def _change_plan(self, table, what: str, where: str | None = None):
        """The scan plan an UPDATE or MERGE rewrites: the table as the transaction began, with the columns its
        staged ALTERs leave it (the new rows are written with those)."""
        plan = self.ctx.plan_scan(table, version=self.read_snapshot, where=where)
        key = split_name(table)
        if self._columns(key) is None:
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

    def _row_change(self, table) -> None:
        """A MERGE or overwrite, planned against the table as the transaction began: its only row-level change."""
        schema, name = key = split_name(table)
        staged = self.table(key)
        if staged.created is not None or staged.row_changed:
            raise DuckLakeError(f"a MERGE or overwrite must be the only row-level change of a pre-existing table in "
                                f"a transaction: {schema}.{name}")
        staged.row_changed = True

    def _changed(self, table) -> None:
        """A DELETE or UPDATE of the table (by its name now) is staged."""
        key = split_name(table)
        key = key if self.created(key) is not None else self.names.source(key)
        self.table(key).row_changed = True

    # ----------------------------------------------------------------------------------------- reads
    def staged(self, *, catalog_only: bool = False):
        """`with tx.staged() as ctx:` a read-only LakeContext of the lake as this transaction would leave it (its
        staged operations applied, nothing committed; operations/staged_reads.py). Plan reads inside the block;
        `catalog_only=True` for names and metadata alone (Spark is then never started)."""
        return staged_context(self.ctx, self._ops, self.read_snapshot, catalog_only=catalog_only)

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
        created = self.created(key)
        if created is not None:
            return created.info
        src = self.names.source(key)
        info = self.ctx.table_info(src, version=self.read_snapshot)
        columns = self._columns(src)
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
        if not self._ops:
            self.abort()  # guards alone change nothing
            return None
        try:
            self.snapshot_id = self.ctx.commit(self._guards + self._ops, read_snapshot=self.read_snapshot,
                                               properties=self.properties, staged_files=self._files)
        finally:
            self._drop_discarded()
        return self.snapshot_id

    def abort(self) -> None:
        """Forget the staged operations and delete their files."""
        delete_paths(self._files)
        self._drop_discarded()
        self._ops, self._files, self._guards = [], [], []

    def _drop_discarded(self) -> None:
        """Delete the files of re-staged operations (those a savepoint brought back excepted)."""
        live = set(self._files)
        delete_paths([f for f in self._discarded if f not in live])
        self._discarded = []

    def savepoint(self) -> Savepoint:
        """The staged state now, for `rollback_to` (undoing one failed statement, the transaction going on)."""
        # Records are changed in place (flags, columns): each is copied; TableInfos and TableRefs are shared, the
        # staged operations hold them.
        return Savepoint(list(self._ops), list(self._files), list(self._guards), dict(self.new_schemas),
                         {key: replace(staged) for key, staged in self.tables.items()}, self.names.copy())

    def rollback_to(self, point: Savepoint) -> None:
        """Undo what was staged since `point`: its operations are forgotten and the files they wrote deleted."""
        kept = set(point.files)
        delete_paths([f for f in self._files if f not in kept])
        self._ops, self._files, self._guards = point.ops, point.files, point.guards
        self.new_schemas, self.tables, self.names = point.new_schemas, point.tables, point.names


@dataclass
class Savepoint:
    """A Transaction's staged state at one moment (copies: later staging does not change it)."""

    ops: list
    files: list[str]
    guards: list
    new_schemas: dict[str, CreateSchema]
    tables: dict[Key, StagedTable]
    names: Names


def _contents(plan) -> tuple:
    """What a scan plan reads, its columns aside: data files, their delete files, inlined rows and deletes."""
    files = sorted((f.data_file_id, f.path, None if f.delete_file is None else f.delete_file.path) for f in plan.files)
    inlined = None if plan.inlined is None else plan.inlined.num_rows
    return files, inlined, {k: sorted(v) for k, v in plan.inlined_deletes.items()}
