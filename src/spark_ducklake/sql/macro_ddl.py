"""CREATE [OR REPLACE] MACRO and DROP MACRO [TABLE] in `lake.sql` (DuckDB's syntax; FUNCTION is its synonym in the
duckdb dialect). sqlglot has no node for them, so the statement is split here: the header by a regular
expression, parameter lists and bodies by a scan that respects parentheses and quotes; each body is parsed by
sqlglot and stored as DuckDB SQL, as the reference stores it. Calls are expanded by macros.py."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import sqlglot
from sqlglot import exp

from ..catalog.changes.macros import CreateMacro, DropMacro, MacroImpl, kind_label
from ..catalog.reads.macros import MacroParameter, MacroRow
from ..errors import AlreadyExistsError, NotFoundError, UnsupportedSqlError
from ..spec.duckdb_keywords import needs_quotes
from ..spec.names import schema_key
from . import session
from .sandbox import refuse_outside_reads
from .sqlglot_dialects import LakeDuckDB

if TYPE_CHECKING:
    from .references import QueryContext

_CREATE = re.compile(r"^\s*CREATE\s+(?P<replace>OR\s+REPLACE\s+)?(?P<temp>(?:TEMP|TEMPORARY)\s+)?"
                     r"(?P<word>MACRO|FUNCTION)\s+(?P<exists>IF\s+NOT\s+EXISTS\s+)?", re.IGNORECASE)
_DROP = re.compile(r"^\s*DROP\s+(?P<word>MACRO|FUNCTION)\s+(?P<table>TABLE\s+)?(?P<exists>IF\s+EXISTS\s+)?"
                   r"(?P<name>.+?)\s*(?P<cascade>CASCADE|RESTRICT)?\s*$", re.IGNORECASE | re.DOTALL)
_AS = re.compile(r"\s*AS\s+(?P<table>TABLE\s+)?", re.IGNORECASE)
# sqlglot's DataType names -> DuckLake's type names (ducklake_macro_parameters.parameter_type)
_TYPE_NAMES = {"TINYINT": "int8", "SMALLINT": "int16", "INT": "int32", "BIGINT": "int64", "HUGEINT": "int128",
               "UTINYINT": "uint8", "USMALLINT": "uint16", "UINT": "uint32", "UBIGINT": "uint64",
               "UHUGEINT": "uint128", "FLOAT": "float32", "DOUBLE": "float64", "VARCHAR": "varchar",
               "TEXT": "varchar", "CHAR": "varchar", "BOOLEAN": "boolean", "DATE": "date", "TIME": "time",
               "TIMESTAMP": "timestamp", "TIMESTAMPTZ": "timestamptz", "TIMESTAMP_S": "timestamp_s",
               "TIMESTAMP_MS": "timestamp_ms", "TIMESTAMP_NS": "timestamp_ns", "BLOB": "blob", "VARBINARY": "blob",
               "UUID": "uuid", "INTERVAL": "interval", "JSON": "json", "ARRAY": "list", "LIST": "list",
               "STRUCT": "struct", "MAP": "map"}


def is_macro_ddl(text: str, dialect: str) -> bool:
    """Whether `text` is CREATE/DROP MACRO (or FUNCTION, in the duckdb dialect)."""
    found = _CREATE.match(text) or _DROP.match(text)
    return found is not None and (found["word"].upper() == "MACRO" or dialect == "duckdb")


def run_macro_ddl(ctx: QueryContext, tx, text: str) -> None:
    """Create or drop a macro: staged in `tx` when one is open, else committed as one snapshot."""
    created = _CREATE.match(text)
    if created:
        ops = _create_ops(ctx, tx, text, created)
    else:
        dropped = _DROP.match(text)
        assert dropped is not None  # the caller checked is_macro_ddl
        ops = _drop_ops(ctx, tx, dropped)
    if not ops:
        return None
    if tx is not None:
        tx.stage(*ops)
    else:
        ctx.lake.context.commit(ops)
    return None


def visible_macros(ctx: QueryContext) -> list:
    """The macros a statement sees: the lake's at its snapshot, with those created or dropped by the open
    transaction of `lake.sql` (not yet committed) applied."""
    rows = list(ctx.lake.macros(version=ctx.snapshot))
    tx = session.current(ctx.lake)
    for op in tx.ops if tx is not None else []:
        if isinstance(op, DropMacro):
            rows = [r for r in rows if r.macro_id != op.macro_id]
        elif isinstance(op, CreateMacro):
            rows += [MacroRow(op.schema, op.name, -1, impl_id, op.kind, impl.dialect, impl.sql, impl.parameters)
                     for impl_id, impl in enumerate(op.impls)]
    return rows


def _find(ctx: QueryContext, schema: str, name: str, kind: str) -> tuple[int | None, CreateMacro | None]:
    """(committed macro id, staged CreateMacro) of the visible macro schema.name of a kind."""
    tx = session.current(ctx.lake)
    for op in reversed(tx.ops if tx is not None else []):
        if isinstance(op, CreateMacro) and (op.schema.lower(), op.name.lower(), op.kind) == (
                schema.lower(), name.lower(), kind):
            return None, op
    for row in visible_macros(ctx):
        if (row.schema_name.lower(), row.macro_name.lower(), row.macro_type) == (schema.lower(), name.lower(), kind):
            return row.macro_id, None
    return None, None


def _target(ctx: QueryContext, text: str) -> tuple[str, str]:
    """(schema, name) of a macro name as written: `m`, `s.m`, `lake.s.m`, quoted or not."""
    try:
        node = sqlglot.parse_one(text, into=exp.Table, read="duckdb")
    except sqlglot.errors.SqlglotError:
        raise UnsupportedSqlError(f"not a macro name: {text!r}") from None
    parts = [part.name for part in node.parts]
    ours = parts[0].lower() == ctx.catalog_name.lower()
    if len(parts) > 3 or (len(parts) == 3 and not ours):  # a macro of a nested schema (DuckLake 1.1)
        key = schema_key(parts[1:-1] if ours else parts[:-1])
        tx = session.current(ctx.lake)
        if len(parts) > 3 or key in ctx.lake.schemas() or (tx is not None and key in tx.new_schemas):
            return key, parts[-1]
    catalog = node.args.get("catalog")
    if catalog is not None and catalog.name.lower() != ctx.catalog_name.lower():
        raise UnsupportedSqlError(f"catalog {catalog.name!r} is not this lake (named {ctx.catalog_name!r} here)")
    db = node.args.get("db")
    if db is not None and catalog is None and db.name.lower() == ctx.catalog_name.lower():
        db = None  # `lake.m`
    return (db.name if db is not None else "main"), node.name


def _drop_ops(ctx: QueryContext, tx, found: re.Match) -> list:
    kind = "table" if found["table"] else "scalar"
    schema, name = _target(ctx, found["name"])
    macro_id, staged = _find(ctx, schema, name, kind)
    if staged is not None:  # created in this transaction: it never reaches the catalog
        tx.unstage(staged)
        return []
    if macro_id is None:
        if found["exists"]:
            return []
        raise NotFoundError(f"{kind_label(kind)} with name {name} does not exist!")
    return [DropMacro(macro_id, kind)]


def _create_ops(ctx: QueryContext, tx, text: str, found: re.Match) -> list:
    if found["temp"]:
        raise UnsupportedSqlError("CREATE TEMPORARY MACRO is not supported by lake.sql (lake macros only)")
    rest = text[found.end():]
    paren = _top_level(rest, "(")
    if paren is None:
        raise UnsupportedSqlError(f"CREATE MACRO needs a parameter list: {text[:80]!r}")
    schema, name = _target(ctx, rest[:paren].strip())
    impls, kind = _implementations(rest[paren:].rstrip().rstrip(";"))
    ops: list = []
    macro_id, staged = _find(ctx, schema, name, kind)
    if macro_id is not None or staged is not None:
        if found["exists"]:
            return []
        if not found["replace"]:
            raise AlreadyExistsError(f'{kind_label(kind)} with name "{name}" already exists')
        if staged is not None:
            tx.unstage(staged)
        elif macro_id is not None:
            ops.append(DropMacro(macro_id, kind))
    return [*ops, CreateMacro(schema, name, kind, tuple(impls))]


def _implementations(text: str) -> tuple[list[MacroImpl], str]:
    """`(params) AS body[, (params) AS body ...]` or `(params) AS TABLE query` -> implementations and kind."""
    impls, kinds, pos = [], set(), 0
    while True:
        close = _matching(text, pos)
        params = _parameters(text[pos + 1:close])
        after = _AS.match(text, close + 1)
        if after is None:
            raise UnsupportedSqlError(f"CREATE MACRO: expected AS after the parameters in {text[:80]!r}")
        kind = "table" if after["table"] else "scalar"
        kinds.add(kind)
        # a scalar body is one expression: a top-level comma starts the next implementation; a query's commas
        # belong to it, so a table macro has one implementation
        end = _top_level(text, ",", after.end()) if kind == "scalar" else None
        body = text[after.end():end].strip()
        impls.append(MacroImpl(_body_sql(body, kind), tuple(params)))
        if end is None:
            break
        next_pos = _top_level(text, "(", end + 1)
        if next_pos is None:
            raise UnsupportedSqlError(f"CREATE MACRO: expected (parameters) after ',' in {text[:80]!r}")
        pos = next_pos
    if len(kinds) > 1:
        raise UnsupportedSqlError("CREATE MACRO: implementations must all be scalar or all be TABLE")
    return impls, kinds.pop()


def _body_sql(body: str, kind: str) -> str:
    try:
        tree = sqlglot.parse_one(body, read=LakeDuckDB)
    except sqlglot.errors.SqlglotError as exc:
        raise UnsupportedSqlError(f"CREATE MACRO: cannot parse the body {body[:80]!r}: "
                                  f"{str(exc).splitlines()[0]}") from None
    if kind == "table" and not isinstance(tree, exp.Query):
        raise UnsupportedSqlError(f"CREATE MACRO ... AS TABLE needs a query, got {body[:80]!r}")
    refuse_outside_reads(tree, lambda _node: True)  # a name like a file may be a lake table: checked when used
    return _as_duckdb_prints(tree).sql(dialect="duckdb")


_OPERATORS = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.IntDiv, exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT,
              exp.LTE, exp.And, exp.Or)


def _as_duckdb_prints(tree: exp.Expr) -> exp.Expr:
    """The body with DuckDB's own parentheses: none as written, one pair around every operator (`(a + b)`), so
    the stored text reads as the reference stores it."""
    def unwrap(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Paren) and not isinstance(node.this, (exp.Query, exp.Tuple)):
            return node.this
        return node

    tree = tree.transform(unwrap)
    for ident in tree.find_all(exp.Identifier):  # quoted exactly when DuckDB would (`"name"`, `MyCol`)
        ident.set("quoted", needs_quotes(ident.name))
    for node in list(tree.find_all(*_OPERATORS)):
        paren = exp.Paren()
        if node is tree:
            paren.set("this", node)
            tree = paren
            continue
        node.replace(paren)
        paren.set("this", node)
    return tree


def _parameters(text: str) -> list[MacroParameter]:
    out: list[MacroParameter] = []
    for piece in _split(text):
        head, *default = re.split(r"\s*:=\s*|\s+DEFAULT\s+", piece, maxsplit=1, flags=re.IGNORECASE)
        words = head.strip().split(None, 1)
        if not words:
            raise UnsupportedSqlError(f"CREATE MACRO: empty parameter in ({text})")
        name = words[0].strip('"')
        declared = _type_name(words[1]) if len(words) > 1 else None
        value, value_type = _default(default[0].strip()) if default else (None, None)
        out.append(MacroParameter(name, declared, value, value_type))
    return out


def _type_name(text: str) -> str:
    try:
        dtype = exp.DataType.build(text, dialect="duckdb")
    except (sqlglot.errors.SqlglotError, ValueError):
        raise UnsupportedSqlError(f"CREATE MACRO: unknown parameter type {text!r}") from None
    name = dtype.this.name
    if name == "DECIMAL":
        sizes = [p.name for p in dtype.expressions] or ["18", "3"]
        return f"decimal({','.join(sizes)})"
    if name not in _TYPE_NAMES:
        raise UnsupportedSqlError(f"CREATE MACRO: parameter type {text!r} is not a DuckLake type")
    return _TYPE_NAMES[name]


def _default(text: str) -> tuple[str, str]:
    """A default value as the reference keeps it: its text and its type (`5` int32, `'x'` varchar, ...)."""
    try:
        node = sqlglot.parse_one(text, read=LakeDuckDB)
    except sqlglot.errors.SqlglotError:
        raise UnsupportedSqlError(f"CREATE MACRO: cannot parse the default {text!r}") from None
    negative = isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal)
    literal = node.this if negative else node
    if isinstance(literal, exp.Literal) and literal.is_string:
        return literal.this, "varchar"
    if isinstance(literal, exp.Literal):
        digits = ("-" if negative else "") + literal.this
        if re.fullmatch(r"-?\d+", digits):
            return digits, "int32" if -2**31 <= int(digits) < 2**31 else "int64"
        if re.fullmatch(r"-?\d*\.\d+", digits):
            whole, frac = digits.lstrip("-").split(".")
            return digits, f"decimal({len(whole.lstrip('0')) + len(frac) or 1},{len(frac)})"
        return digits, "float64"
    if isinstance(node, exp.Boolean):
        return ("true" if node.this else "false"), "boolean"
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal):
        return node.this.this, _type_name(node.to.sql(dialect="duckdb"))
    raise UnsupportedSqlError(f"CREATE MACRO: a default must be a constant of a DuckLake type, got {text!r}")


# ------------------------------------------------------------------------------------------------ scanning
def _scan(text: str, start: int = 0):
    """(position, character, depth) of every character outside quotes, depth counting parentheses."""
    depth, quote = 0, None
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
            continue
        if ch == ")":
            depth -= 1
        yield i, ch, depth
        if ch == "(":
            depth += 1


def _top_level(text: str, char: str, start: int = 0) -> int | None:
    return next((i for i, ch, depth in _scan(text, start) if ch == char and depth == 0), None)


def _matching(text: str, open_at: int) -> int:
    for i, ch, depth in _scan(text, open_at):
        if ch == ")" and depth == 0:
            return i
    raise UnsupportedSqlError(f"CREATE MACRO: unbalanced parentheses in {text[:80]!r}")


def _split(text: str) -> list[str]:
    cuts = [i for i, ch, depth in _scan(text) if ch == "," and depth == 0]
    bounds = zip([-1, *cuts], [*cuts, len(text)], strict=True)
    return [text[a + 1:b].strip() for a, b in bounds if text[a + 1:b].strip()]
