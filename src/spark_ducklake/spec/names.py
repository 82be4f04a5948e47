"""Names of schemas, tables and columns: the reference's rules, parsing table names, quoting them for Spark SQL."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..errors import AlreadyExistsError, InvalidNameError

# PostgreSQL truncates identifiers to NAMEDATALEN - 1 bytes.
POSTGRES_MAX_IDENTIFIER_BYTES = 63


def check_name(name: object, kind: str) -> str:
    """`name` if DuckDB can use it as a `kind` (schema, table, column) name: non-empty, without NUL,
    UTF-8 encodable."""
    if not isinstance(name, str) or not name:
        raise InvalidNameError(f"{kind} name must be a non-empty string, got {name!r}")
    if "\0" in name:
        raise InvalidNameError(f"{kind} name {name!r} contains a NUL character")
    if any("\ud800" <= ch <= "\udfff" for ch in name):  # half of a UTF-16 pair: no UTF-8 form to store
        raise InvalidNameError(f"{kind} name {ascii(name)} contains a lone surrogate, which has no UTF-8 form")
    return name


def check_unique(names: Iterable[str], kind: str, where: str) -> None:
    """AlreadyExistsError if two names differ only in case (DuckDB's names are case-insensitive)."""
    seen: dict[str, str] = {}
    for name in names:
        if name.lower() in seen:
            raise AlreadyExistsError(f"{kind} {name!r} of {where} already exists as {seen[name.lower()]!r} "
                                     "(names are case-insensitive)")
        seen[name.lower()] = name


def schema_key(parts: Sequence[str]) -> str:
    """The name a schema goes by in this package (`lake.schemas()`, `TableInfo.schema_name`, `schema=` arguments):
    a top-level schema's own name as stored; a nested schema's path (DuckLake 1.1) joined with dots, a component
    double-quoted when it holds a dot or a quote ('sales.europe', '"a.b".c')."""
    parts = [check_name(part, "schema") for part in parts]
    if not parts:
        raise InvalidNameError("a schema path needs at least one name")
    if len(parts) == 1:
        return parts[0]
    return ".".join('"' + p.replace('"', '""') + '"' if "." in p or '"' in p else p for p in parts)


def split_schema_path(name: object) -> tuple[str, ...]:
    """A schema path as its components: a ('sales', 'europe') tuple, or a string whose unquoted dots separate
    components ('sales.europe'; '"sales.europe"' is one name), as DuckDB reads `CREATE SCHEMA lake.sales.europe`."""
    if isinstance(name, tuple | list):
        return tuple(check_name(part, "schema") for part in name)
    if not isinstance(name, str) or not name.strip():
        raise InvalidNameError(f"schema name must be a non-empty string, got {name!r}")
    return tuple(check_name(part, "schema") for part in _split_identifiers(name))


def parse_table_name(name: object, default_schema: str = "main") -> tuple[str, str]:
    """'table', 'schema.table', '"my.schema"."t"' (double quotes, "" inside), 'sales.europe.t' (a table of a nested
    schema, DuckLake 1.1: the schema is `schema_key` of the parts before the table) or a (schema, ..., table)
    tuple."""
    if isinstance(name, tuple | list):
        if len(name) < 2:
            raise InvalidNameError(f"a table name pair must be (schema, table), got {name!r}")
        return schema_key(name[:-1]), check_name(name[-1], "table")
    if not isinstance(name, str) or not name.strip():
        raise InvalidNameError(f"table name must be a non-empty string, got {name!r}")
    parts = _split_identifiers(name)
    if len(parts) == 1:
        return default_schema, check_name(parts[0], "table")
    return schema_key(parts[:-1]), check_name(parts[-1], "table")


def _split_identifiers(text: str) -> list[str]:
    """Dot-separated parts; a part starting with a double quote runs to its closing quote ("" is a quote)."""
    parts: list[str] = []
    i = 0
    while True:
        if text.startswith('"', i):
            out, i = [], i + 1
            while True:
                end = text.find('"', i)
                if end < 0:
                    raise InvalidNameError(f"unterminated quoted identifier in table name {text!r}")
                out.append(text[i:end])
                if text.startswith('"', end + 1):  # "" stands for one quote
                    out.append('"')
                    i = end + 2
                    continue
                i = end + 1
                break
            parts.append("".join(out))
            if i < len(text) and text[i] != ".":
                raise InvalidNameError(f"unexpected text after a quoted identifier in table name {text!r}")
        else:
            end = text.find(".", i)
            end = len(text) if end < 0 else end
            parts.append(text[i:end])
            i = end
        if i >= len(text):
            return parts
        i += 1  # the dot
        if i == len(text):
            return [*parts, ""]  # 'main.': an empty table name, refused by check_name


def spark_name(name: str) -> str:
    """`name` as one Spark identifier: backquoted, backquotes doubled (dots and spaces stay part of it)."""
    return "`" + name.replace("`", "``") + "`"


def fits_postgres(name: str) -> bool:
    """Whether PostgreSQL keeps the identifier whole (it truncates longer ones silently)."""
    return len(name.encode()) <= POSTGRES_MAX_IDENTIFIER_BYTES
