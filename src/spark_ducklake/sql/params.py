"""Bound parameters of `lake.sql(text, params=...)`: each placeholder of the parsed statement is replaced by a typed
literal node, and the statement runs as sqlglot writes it back, so a value is always one literal, never SQL.

Spark's forms are `:name` (params a dict) and `?` (a list); DuckDB's `$name`, `?` and `$1` (1-based). A text of
several statements shares its params: `?` are counted across the whole text, `$n` and names mean the same value in
every statement. Every statement is bound, and every count and name checked, before the first one runs.
"""

from __future__ import annotations

import datetime
import math
from decimal import Decimal
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.tokens import TokenType

from ..errors import InvalidArgumentError, UnsupportedSqlError
from .macro_ddl import is_macro_ddl
from .sqlglot_dialects import reading

_MARK = "__ducklake_param_"  # a `?` renamed by its position in the text, so the tree says which one it is
_SIGIL = {"spark": ":", "duckdb": "$"}
_MAYBE = (TokenType.PLACEHOLDER, TokenType.PARAMETER, TokenType.COLON, TokenType.QDCOLON)  # a placeholder's start
_QUESTIONS = {(TokenType.PLACEHOLDER, "?"), (TokenType.QDCOLON, "?::")}


class _Binding:
    """The params and what the statements used of them so far."""

    def __init__(self, params, dialect: str):
        if isinstance(params, dict):
            if not all(isinstance(k, str) for k in params):
                raise InvalidArgumentError("params keys must be parameter names (strings)")
            self.named: dict[str, Any] | None = {k.lstrip(":$"): v for k, v in params.items()}
            self.values: list[Any] | None = None
        elif isinstance(params, (list, tuple)):
            self.named, self.values = None, list(params)
        else:
            raise InvalidArgumentError(f"params must be a list, a tuple or a dict of values; got "
                                       f"{type(params).__name__}")
        self.sigil = _SIGIL.get(dialect, ":")
        self.questions = 0  # `?` seen
        self.numbers: set[int] = set()  # `$n` seen
        self.names: set[str] = set()  # named parameters seen

    def literal(self, node: exp.Placeholder) -> exp.Expression:
        """The literal for one placeholder node."""
        name = str(node.this)
        if name.startswith(_MARK) or name.isdigit():
            kind = "?" if name.startswith(_MARK) else "$n"
            if self.names:
                raise InvalidArgumentError("the SQL has both named and positional parameters: use one kind")
            if (self.questions if kind == "$n" else self.numbers):
                raise InvalidArgumentError("the SQL has both ? and $n parameters: use one kind")
            if self.values is None:
                raise InvalidArgumentError("positional parameters (? or $1) need a list or tuple of values; "
                                           "params is a dict")
            index = int(name.removeprefix(_MARK)) if kind == "?" else int(name) - 1
            if kind == "?":
                self.questions += 1
            else:
                self.numbers.add(index + 1)
            if not 0 <= index < len(self.values):
                return exp.Null()  # counted and reported once every statement is bound
            return typed_literal(self.values[index], f"#{index + 1}")
        if self.questions or self.numbers:
            raise InvalidArgumentError("the SQL has both named and positional parameters: use one kind")
        if self.named is None:
            raise InvalidArgumentError(f"named parameters ({self.sigil}{name}) need a dict of values; params is a "
                                       "list")
        if name not in self.named:
            raise InvalidArgumentError(f"no value for parameter {self.sigil}{name} in params")
        self.names.add(name)
        return typed_literal(self.named[name], f"{self.sigil}{name}")

    def check_complete(self) -> None:
        """Every value used, every placeholder given one."""
        if self.named is not None:
            unused = sorted(set(self.named) - self.names)
            if unused and self.names:
                raise InvalidArgumentError(f"params names parameters not in the SQL: {', '.join(unused)}")
            if unused:
                raise InvalidArgumentError(f"params has {_count(len(unused), 'value')} but the SQL has no parameters")
            return
        assert self.values is not None  # __init__ set one of named and values
        given = len(self.values)
        if self.numbers:
            missing = max(self.numbers)
            if missing > given:
                raise InvalidArgumentError(f"${missing} has no value: params has {_count(given, 'value')}")
            unused_number = min(set(range(1, given + 1)) - self.numbers, default=None)
            if unused_number is not None:
                raise InvalidArgumentError(f"params has {_count(given, 'value')} but ${unused_number} is not used in "
                                           "the SQL")
        elif self.questions != given:
            if not self.questions:
                raise InvalidArgumentError(f"params has {_count(given, 'value')} but the SQL has no parameters")
            raise InvalidArgumentError(f"the SQL has {_count(self.questions, 'positional parameter')} but params "
                                       f"has {_count(given, 'value')}")


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def bind(pieces: list[str], dialect: str, params) -> list[str]:
    """The statements of one `lake.sql` text with their placeholders bound to `params` (all checked first)."""
    binding = _Binding(params, dialect)
    bound = [_bind_statement(piece, dialect, binding) for piece in pieces]
    binding.check_complete()
    return bound


def _bind_statement(text: str, dialect: str, binding: _Binding) -> str:
    """One statement with its placeholders replaced by literals; the text itself when it has none."""
    try:
        tokens = sqlglot.tokenize(text, read=dialect)
    except sqlglot.errors.TokenError as exc:
        raise UnsupportedSqlError(f"cannot tokenize SQL: {str(exc).splitlines()[0]}") from None
    if len(tokens) == 2 and tokens[0].token_type == TokenType.COMMAND and tokens[0].text.upper() == "CALL":
        return f"CALL {_bind_statement(tokens[1].text, dialect, binding)}"  # the arguments, one string token
    if not any(t.token_type in _MAYBE for t in tokens):
        return text
    marked = text
    questions = [t for t in tokens if (t.token_type, t.text) in _QUESTIONS]  # `?`, and `?::` of `?::INT`
    for offset, token in reversed(list(enumerate(questions, start=binding.questions))):
        cast = "::" if token.token_type == TokenType.QDCOLON else ""
        marked = f"{marked[:token.start]}{_SIGIL.get(dialect, ':')}{_MARK}{offset}{cast}{marked[token.end + 1:]}"
    explicit = questions or any(t.token_type == TokenType.PARAMETER for t in tokens)
    try:
        tree = sqlglot.parse_one(marked, read=reading(dialect))
    except sqlglot.errors.SqlglotError as exc:
        if not explicit:  # colons of a struct literal or a slice in a statement parsed elsewhere (macros, ...)
            return text
        raise UnsupportedSqlError(f"cannot parse {text[:80]!r} to bind its parameters: "
                                  f"{str(exc).splitlines()[0]}") from None
    placeholders = list(tree.find_all(exp.Placeholder))
    if not placeholders:
        return text
    if is_macro_ddl(text, dialect):
        raise InvalidArgumentError("parameters are not supported in CREATE MACRO (a macro's body is stored SQL)")
    for node in placeholders:
        if node.this is None:
            raise UnsupportedSqlError(f"cannot bind the ? in {text[:80]!r}: write CAST(? AS type) instead")
        node.replace(binding.literal(node))
    return tree.sql(dialect=dialect)


def typed_literal(value, label: str) -> exp.Expression:
    """The SQL literal of a Python value: NULL, a boolean, a number, a string, a blob, a date or timestamp."""
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int):
        return exp.Literal.number(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return exp.Literal.number(repr(value))
        return exp.cast(exp.Literal.string(str(value).replace("inf", "Infinity").replace("nan", "NaN")), "DOUBLE")
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise InvalidArgumentError(f"parameter {label}: a DECIMAL cannot hold {value}")
        return exp.Literal.number(format(value, "f"))
    if isinstance(value, str):
        return exp.Literal.string(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return exp.HexString(this=bytes(value).hex())
    if isinstance(value, datetime.datetime):
        return exp.cast(exp.Literal.string(value.isoformat(sep=" ")),
                        "TIMESTAMPTZ" if value.tzinfo is not None else "TIMESTAMP")
    if isinstance(value, datetime.date):
        return exp.cast(exp.Literal.string(value.isoformat()), "DATE")
    if isinstance(value, datetime.time):
        return exp.cast(exp.Literal.string(value.isoformat()), "TIME")
    raise InvalidArgumentError(f"parameter {label}: cannot bind a value of type {type(value).__name__} (use None, "
                               "bool, int, float, Decimal, str, bytes, date, datetime or time)")
