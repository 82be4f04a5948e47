"""sqllogictest files as DuckDB's runner reads them: records (statement / query) and directives, loops expanded.

A record's header is `statement ok|error|maybe [conN]` or `query <types> [nosort|rowsort|valuesort] [label|conN]`;
its SQL runs to `----` or a blank line; after `----` come the expected error text or result lines, to a blank line.
`skipif X` / `onlyif X` lines apply to the next record. `loop v a b`, `foreach v x y ...` and the concurrent forms
repeat their body (ended by `endloop`) with `{v}` / `${v}` replaced.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

SORT_MODES = ("nosort", "rowsort", "valuesort")
_CONNECTION = re.compile(r"^con\d+$")


@dataclass
class Record:
    """A `statement` or `query` record."""

    kind: str  # "statement" | "query"
    sql: str
    line: int
    expect: str = "ok"  # statement: ok | error | maybe
    error: str | None = None  # expected error text (statement error)
    types: str = ""  # query: one letter per column
    sort: str = "nosort"
    label: str | None = None
    expected: list[str] = field(default_factory=list)
    connection: str | None = None
    conditions: list[tuple[str, str]] = field(default_factory=list)  # ("skipif" | "onlyif", argument)
    concurrent: bool = False  # inside a concurrentloop / concurrentforeach


@dataclass
class Directive:
    """Any other line-level command: require, require-env, test-env, mode, halt, load, restart, ..."""

    kind: str
    args: list[str]
    line: int


@dataclass
class TestFile:
    """One parsed file: its `# name:` header and its items in order, loops expanded."""

    path: str
    name: str
    items: list[Record | Directive]

    @property
    def records(self) -> list[Record]:
        """The statement and query records."""
        return [i for i in self.items if isinstance(i, Record)]


def parse_text(text: str, path: str = "<text>") -> TestFile:
    """Parse sqllogictest text; loops are expanded."""
    lines = text.splitlines()
    name = path
    for line in lines[:5]:
        if line.startswith("# name:"):
            name = line.split(":", 1)[1].strip()
    items = _parse_lines(lines)
    return TestFile(path, name, _expand(items, {}, False))


def _parse_lines(lines: list[str]) -> list:
    items: list = []
    conditions: list[tuple[str, str]] = []
    i = 0
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        words = stripped.split()
        head = words[0]
        if head in ("skipif", "onlyif"):
            conditions.append((head, " ".join(words[1:])))
            i += 1
        elif head in ("statement", "query"):
            record, i = _record(lines, i, words)
            record.conditions, conditions = conditions, []
            items.append(record)
        else:
            items.append(Directive(head, words[1:], i + 1))
            i += 1
    return items


def _record(lines: list[str], start: int, words: list[str]) -> tuple[Record, int]:
    sql_lines, i = [], start + 1
    while i < len(lines) and lines[i].strip() and lines[i].strip() != "----":
        sql_lines.append(lines[i])
        i += 1
    after: list[str] = []
    if i < len(lines) and lines[i].strip() == "----":
        i += 1
        while i < len(lines) and lines[i] != "" and lines[i].strip() != "":
            after.append(lines[i])
            i += 1
    record = Record(words[0], "\n".join(sql_lines), start + 1)
    rest = words[1:]
    if record.kind == "statement":
        record.expect = rest[0] if rest else "ok"
        if len(rest) > 1 and _CONNECTION.match(rest[1]):
            record.connection = rest[1]
        if after:
            record.error = "\n".join(after)
    else:
        record.types = rest[0] if rest else ""
        for word in rest[1:]:
            if word in SORT_MODES:
                record.sort = word
            elif _CONNECTION.match(word):
                record.connection = word
            else:
                record.label = word
        record.expected = after
    return record, i


def _loop_values(directive: Directive) -> tuple[str, list[str]]:
    var, args = directive.args[0], directive.args[1:]
    if directive.kind in ("loop", "concurrentloop"):
        return var, [str(v) for v in range(int(args[0]), int(args[1]))]
    values: list[str] = []
    for arg in args:  # DuckDB's foreach shorthands for type groups
        values.extend(_GROUPS.get(arg, [arg]))
    return var, values


_GROUPS = {
    "<integral>": ["tinyint", "smallint", "integer", "bigint", "hugeint", "utinyint", "usmallint", "uinteger",
                   "ubigint", "uhugeint"],
    "<signed>": ["tinyint", "smallint", "integer", "bigint", "hugeint"],
    "<unsigned>": ["utinyint", "usmallint", "uinteger", "ubigint", "uhugeint"],
    "<numeric>": ["tinyint", "smallint", "integer", "bigint", "hugeint", "float", "double"],
}
_LOOPS = ("loop", "foreach", "concurrentloop", "concurrentforeach")


def _expand(items: list, variables: dict[str, str], concurrent: bool) -> list:
    out: list = []
    i = 0
    while i < len(items):
        item = items[i]
        if isinstance(item, Directive) and item.kind in _LOOPS:
            depth, j = 1, i + 1
            while j < len(items) and depth:
                if isinstance(items[j], Directive):
                    depth += items[j].kind in _LOOPS
                    depth -= items[j].kind == "endloop"
                j += 1
            body = items[i + 1:j - 1]
            var, values = _loop_values(item)
            for value in values:
                out.extend(_expand(body, {**variables, var: value}, concurrent or item.kind.startswith("concurrent")))
            i = j
            continue
        if isinstance(item, Record):
            out.append(replace(item, sql=substitute(item.sql, variables),
                               expected=[substitute(e, variables) for e in item.expected],
                               error=substitute(item.error, variables) if item.error else item.error,
                               conditions=[(k, _condition(a, variables)) for k, a in item.conditions],
                               concurrent=concurrent))
        else:
            out.append(replace(item, args=[substitute(a, variables) for a in item.args]))
        i += 1
    return out


def _condition(arg: str, variables: dict[str, str]) -> str:
    """`skipif i=1` names a loop variable on the left: its value replaces it."""
    name, equals, value = arg.partition("=")
    if equals and name.strip() in variables:
        return f"{variables[name.strip()]}={value.strip()}"
    return substitute(arg, variables)


def substitute(text: str, variables: dict[str, str]) -> str:
    """`{name}` and `${name}` replaced by the variables' values."""
    for key, value in variables.items():
        text = text.replace("${" + key + "}", value).replace("{" + key + "}", value)
    return text
