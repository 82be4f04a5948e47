"""Table names inside one transaction: RENAME and DROP of tables, also of tables created in it, as DuckDB's
transaction-local catalog has them.

A table that existed when the transaction began keeps its rows under its name at the start (`source`): after
`RENAME TO`, statements name it by its new name and this maps it back; the old name is free (and unknown) until
COMMIT. Several renames of one table fold into one `RenameTable`, as DuckDB writes one new table row. A table
created in the transaction is renamed by renaming its pending CREATE, and dropped by forgetting its CREATE and
everything staged for it (its files deleted): DuckDB writes nothing of it either.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..catalog.changes.ddl import CreateSchema, CreateTable, DropSchema, RenameTable
from ..catalog.changes.macros import CreateMacro
from ..catalog.changes.views import CreateView, DropView, RenameView
from ..catalog.reads import reader
from ..dataplane.arrow.storage import delete_paths
from ..errors import AlreadyExistsError, DuckLakeError, NotFoundError
from ..spec.names import parse_table_name
from ..spec.paths import dir_name_for

if TYPE_CHECKING:
    from .transaction import NewTable, Transaction

Key = tuple[str, str]


@dataclass
class Names:
    """Renamed and dropped tables of one transaction."""

    renamed: dict[Key, Key] = field(default_factory=dict)  # current name -> name at the start
    gone: set[Key] = field(default_factory=set)  # names at the start no longer in use (dropped, renamed away)

    def copy(self) -> Names:
        """An independent copy (for a savepoint)."""
        return Names(dict(self.renamed), set(self.gone))

    def source(self, table) -> Key:
        """The name a table had when the transaction began; NotFoundError for a name dropped or renamed away."""
        key = parse_table_name(table)
        if key in self.renamed:
            return self.renamed[key]
        if key in self.gone:
            raise NotFoundError(f"table {key[0]}.{key[1]} does not exist (dropped or renamed in this transaction)")
        return key

    def exists(self, tx: Transaction, key: Key) -> bool:
        """Whether a table is named `key` in the transaction's view of the lake."""
        if tx.created(key) is not None or key in self.renamed:
            return True
        return key not in self.gone and tx.ctx.find(*key) is not None


def rename(tx: Transaction, table, new_name: str) -> None:
    """ALTER TABLE ... RENAME TO inside the transaction."""
    key = parse_table_name(table)
    new_key = (key[0], new_name)
    if new_key != key and tx.names.exists(tx, new_key):
        raise AlreadyExistsError(f"table {new_key[0]}.{new_name} already exists")
    created = tx.created(key)
    if created is not None:  # the record's other fields stay: they may be of the table that had the name then
        ref = created.ref
        tx.table(key).created = None
        tx.replace_ops([replace(op, name=new_name, dir_name=op.dir_name or dir_name_for(op.name, op.table_uuid))
                        if isinstance(op, CreateTable) and op.ref is ref else op for op in tx.ops])  # files stay put
        tx.table(new_key).created = created._replace(info=replace(created.info, name=new_name))
        return
    src = tx.names.source(key)
    info = tx.existing(src)
    op = RenameTable(info.table_id, info.schema_name, new_name)
    ops = list(tx.ops)
    at = next((i for i, o in enumerate(ops) if isinstance(o, RenameTable) and o.table_id == info.table_id), None)
    if at is None:  # before the CREATEs: a table created here may take the old name (dbt's swap)
        at = next((i for i, o in enumerate(ops) if isinstance(o, CreateTable)), len(ops))
        ops.insert(at, op)
    else:
        ops[at] = op
    tx.replace_ops(ops)
    tx.names.renamed.pop(key, None)
    if new_key == src:
        tx.names.gone.discard(src)
    else:
        tx.names.renamed[new_key] = src
        tx.names.gone.add(src)


def drop_new(tx: Transaction, key: Key, created: NewTable) -> None:
    """DROP TABLE of the table `created` in this transaction under the name `key`: its CREATE and staged rows are
    forgotten."""
    info, ref = created
    staged = tx.table(key)
    staged.created, staged.row_changed = None, False
    mine = [f for f in tx.files if f.startswith(info.path)]
    delete_paths(mine)
    tx.replace_ops([op for op in tx.ops if getattr(op, "ref", None) is not ref],
                   files=[f for f in tx.files if not f.startswith(info.path)])


def _staged_view(tx: Transaction, key: Key) -> CreateView | RenameView | None:
    """The staged CREATE or RENAME of the view now named `key` in this transaction, or None."""
    wanted = (key[0].lower(), key[1].lower())
    for op in reversed(tx.ops):
        if isinstance(op, CreateView) and (op.schema.lower(), op.name.lower()) == wanted:
            return op
        if isinstance(op, RenameView) and (op.schema.lower(), op.new_name.lower()) == wanted:
            return op
    return None


def drop_new_view(tx: Transaction, key: Key) -> bool:
    """DROP VIEW of a view created in this transaction (its CREATE is forgotten) or renamed in it (the RENAME
    becomes the DROP): True; False for a view the transaction has not touched."""
    op = _staged_view(tx, key)
    if op is None:
        return False
    if isinstance(op, CreateView):
        tx.unstage(op)
    else:
        tx.replace_op(op, DropView(op.view_id))
    return True


def rename_new_view(tx: Transaction, key: Key, new_name: str) -> bool:
    """ALTER VIEW ... RENAME TO of a view created or renamed in this transaction: its pending CREATE or RENAME
    takes the new name (True), as the reference writes one row; False for a view the transaction has not touched."""
    op = _staged_view(tx, key)
    if op is None:
        return False
    new_key = (key[0], new_name)
    if new_key[1].lower() != key[1].lower():
        check_view_name(tx, new_key, replace_view=False)
    tx.replace_op(op, replace(op, name=new_name) if isinstance(op, CreateView) else replace(op, new_name=new_name))
    return True


def comment_new_view(tx: Transaction, key: Key, comment: str | None) -> bool:
    """COMMENT ON VIEW of a view created in this transaction: the comment is written with it (True), else False."""
    op = _staged_view(tx, key)
    if not isinstance(op, CreateView):
        return False
    tx.replace_op(op, replace(op, comment=comment))
    return True


def new_view_named(tx: Transaction, key: Key) -> bool:
    """Whether a view of that name was created in this transaction (and not dropped since)."""
    wanted = (key[0].lower(), key[1].lower())
    return any(isinstance(op, CreateView) and (op.schema.lower(), op.name.lower()) == wanted for op in tx.ops)


def frees_view_name(tx: Transaction, view_id: int, schema: str) -> bool:
    """Whether the transaction dropped or renamed the committed view `view_id` (of `schema`), or dropped its schema
    with CASCADE: its name is free for a new view until COMMIT, as in DuckDB's transaction-local catalog."""
    for op in tx.ops:
        if isinstance(op, DropView | RenameView) and op.view_id == view_id:
            return True
        if isinstance(op, DropSchema) and op.cascade and op.name.lower() == schema.lower():
            return True
    return False


def drop_schema_tables(tx: Transaction, schema: str) -> None:
    """DROP SCHEMA ... CASCADE of a schema that existed when the transaction began: the names of its committed
    tables are free until COMMIT (a schema created again under its name may hold new tables by them)."""
    with tx.ctx.connect() as conn:
        found = reader.list_tables(conn, tx.read_snapshot, tx.ctx.data_path, schema=schema)
    tx.names.gone.update((info.schema_name, info.name) for info in found)


def check_view_name(tx: Transaction, key: Key, *, replace_view: bool) -> bool:
    """Before CREATE VIEW in a transaction: AlreadyExistsError when a table, or a view created in it, holds the
    name (OR REPLACE forgets such a view first); True when the name is free of both."""
    if tx.names.exists(tx, key):
        raise AlreadyExistsError(f"table {key[0]}.{key[1]} already exists: a view cannot take its name")
    if new_view_named(tx, key):
        if not replace_view:
            raise AlreadyExistsError(f"view {key[0]}.{key[1]} already exists")
        drop_new_view(tx, key)
    return True


def drop_schema_entries(tx: Transaction, schema: str, cascade: bool) -> bool:
    """Before DROP SCHEMA in a transaction: the tables, views and macros created in it in this transaction. Without
    CASCADE they refuse the drop (DuckDB's "there are entries that depend on it"); with it they are forgotten.
    Returns True when the schema itself was created in this transaction (its CREATE is then forgotten too, and
    nothing of it is written)."""
    mine = schema.lower()
    tables = [(k, staged.created) for k, staged in tx.tables.items()
              if staged.created is not None and k[0].lower() == mine]
    others = [op for op in tx.ops if isinstance(op, CreateView | CreateMacro) and op.schema.lower() == mine]
    if (tables or others) and not cascade:
        names = ", ".join([f"{s}.{n}" for (s, n), _ in tables] + [f"{op.schema}.{op.name}" for op in others])
        raise DuckLakeError(f"cannot drop schema {schema}: there are entries that depend on it ({names}); "
                            "use CASCADE")
    for key, new in tables:
        drop_new(tx, key, new)
    tx.replace_ops([op for op in tx.ops if not any(op is other for other in others)])  # views and macros made here
    created = [op for op in tx.ops if isinstance(op, CreateSchema) and op.name.lower() == schema.lower()]
    if not created:
        return False
    tx.replace_ops([op for op in tx.ops if op not in created])
    tx.new_schemas.pop(created[0].name, None)
    return True
