"""`SET ducklake_max_retry_count = 5` (also `ducklake_retry_wait_ms`, `ducklake_retry_backoff`; `SET GLOBAL`,
`TO`) and `RESET name` in `lake.sql`: the reference's commit-retry settings and its write settings
(`ducklake_target_file_size`, `ducklake_default_data_inlining_row_limit`, `ducklake_write_deletion_vectors`;
catalog/write_settings.py), for this handle, read back with `current_setting('ducklake_max_retry_count')` in a
query. Other SET statements are refused, naming the settings that exist."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sqlglot import exp

from ..catalog.commit import RetryPolicy
from ..catalog.retry_settings import RETRY_SETTINGS, retry_setting
from ..catalog.write_settings import WRITE_SETTINGS, is_write_setting
from ..errors import UnsupportedSqlError
from .insertion_order import SETTING, set_preserve_insertion_order
from .results import CommandResult

if TYPE_CHECKING:
    from .references import QueryContext


def set_statement(ctx: QueryContext, tree: exp.Set) -> list[CommandResult]:
    """Apply each `name = value` of a SET to the handle's retry settings."""
    for item in tree.expressions:
        assignment = item.this if isinstance(item, exp.SetItem) else None
        if not isinstance(assignment, exp.EQ) or not isinstance(assignment.this, (exp.Column, exp.Var)):
            raise UnsupportedSqlError(f"SET {item.sql(dialect=ctx.dialect)} is not supported by lake.sql")
        name = assignment.this.name
        value = assignment.expression
        if name.lower() == SETTING:  # DuckDB's own setting, which lake.sql honours (insertion_order.py)
            set_preserve_insertion_order(ctx.lake, value.sql(dialect="duckdb"))
            continue
        _check_known(name)
        if isinstance(value, exp.Neg) and isinstance(value.this, exp.Literal):
            text = "-" + value.this.name
        elif isinstance(value, (exp.Literal, exp.Boolean)):
            text = value.name if isinstance(value, exp.Literal) else str(value.this).lower()
        else:
            raise UnsupportedSqlError(f"SET {name}: the value must be a literal; got {value.sql(dialect=ctx.dialect)}")
        ctx.lake.set_setting(name, text)
    return [CommandResult("SET", None)]


def reset_statement(ctx: QueryContext, name: str) -> list[CommandResult]:
    """RESET name: back to the reference's default."""
    name = name.strip().strip("'\"").strip()
    if name.lower() == SETTING:
        set_preserve_insertion_order(ctx.lake, None)
        return [CommandResult("RESET", None)]
    _check_known(name)
    ctx.lake.set_setting(name, None if is_write_setting(name) else retry_setting(RetryPolicy(), name))
    return [CommandResult("RESET", None)]


def current_settings(ctx: QueryContext, tree: exp.Expression) -> exp.Expression:
    """`current_setting('ducklake_max_retry_count')` in a query: the handle's value, as a literal (Spark has no
    such function; other settings are DuckDB's and stay as written, for Spark to refuse)."""
    for node in list(tree.find_all(exp.Anonymous)):
        args = node.expressions
        if node.name.lower() != "current_setting" or len(args) != 1 or not isinstance(args[0], exp.Literal):
            continue
        if args[0].is_string and (args[0].name.lower() in RETRY_SETTINGS or is_write_setting(args[0].name)):
            node.replace(_literal(ctx.lake.current_setting(args[0].name)))
    return tree


def _literal(value: int | float | bool | None) -> exp.Expression:
    if value is None:
        return exp.Null()
    return exp.Boolean(this=value) if isinstance(value, bool) else exp.Literal.number(value)


_SETTINGS_CALL = re.compile(r'(?<![\w."])settings(\s*\()', re.IGNORECASE)


def quote_settings_call(text: str) -> str | None:
    """`FROM settings()` with the name quoted (sqlglot reads a bare SETTINGS as a keyword), or None if absent."""
    quoted = _SETTINGS_CALL.sub(r'"settings"\1', text)
    return quoted if quoted != text else None


def _check_known(name: str) -> None:
    if name.lower() not in RETRY_SETTINGS and not is_write_setting(name):
        raise UnsupportedSqlError(f"SET {name} is not supported by lake.sql; the settings it knows are "
                                  f"{', '.join((*RETRY_SETTINGS, *WRITE_SETTINGS, SETTING))}")

