"""ATTACH / DETACH / USE of a test file, done by the runner on `DuckLake` handles (DuckDB's own statements)."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

_ATTACH = re.compile(r"^ATTACH\s+(?P<orr>OR\s+REPLACE\s+)?(?:DATABASE\s+)?(?P<ine>IF\s+NOT\s+EXISTS\s+)?"
                     r"'(?P<path>[^']*)'"
                     r"(?:\s+AS\s+(?P<q>\"?)(?P<name>[\w-]+)(?P=q))?\s*(?:\((?P<options>.*)\))?\s*;?\s*$",
                     re.IGNORECASE | re.DOTALL)
_DETACH = re.compile(r"^DETACH\s+(?:DATABASE\s+)?(?P<ie>IF\s+EXISTS\s+)?\"?(?P<name>[\w-]+)\"?\s*;?\s*$",
                     re.IGNORECASE)
_USE = re.compile(r"^USE\s+\"?(?P<name>[\w-]+)\"?(?:\.\"?(?P<schema>[\w-]+)\"?)?\s*;?\s*$", re.IGNORECASE)
# ATTACH options the runner maps to DuckLake.attach keywords (value parser per option).
_BOOL = {"true": True, "false": False, "1": True, "0": False}
OPTIONS = {
    "DATA_PATH": ("data_path", str),
    "READ_ONLY": ("read_only", lambda v: _BOOL[v.lower()] if v else True),
    "DATA_INLINING_ROW_LIMIT": ("data_inlining_row_limit", int),
    "SNAPSHOT_VERSION": ("snapshot_version", int),
    "SNAPSHOT_TIME": ("snapshot_time", lambda v: dt.datetime.fromisoformat(v.replace(" ", "T"))),
    "AUTOMATIC_MIGRATION": ("automatic_migration", lambda v: _BOOL[v.lower()] if v else True),
    "OVERRIDE_DATA_PATH": ("override_data_path", lambda v: _BOOL[v.lower()] if v else True),
    "CREATE_IF_MISSING": ("create_if_missing", lambda v: _BOOL[v.lower()] if v else True),
    "DUCKLAKE_VERSION": ("ducklake_version", str),
}
IGNORED_OPTIONS = {"TYPE"}  # TYPE ducklake: the same as the ducklake: prefix


class AttachError(ValueError):
    """An ATTACH the runner cannot map to DuckLake.attach (named option or form)."""


@dataclass
class AttachSpec:
    """A parsed ATTACH: the metadata location as the test wrote it, the name, DuckLake.attach keywords."""

    location: str
    name: str
    if_not_exists: bool
    is_ducklake: bool
    keywords: dict = field(default_factory=dict)
    metadata_catalog: str = ""  # the name DuckDB gives the catalog database it attaches
    or_replace: bool = False


def parse_attach(sql: str) -> AttachSpec:
    """An ATTACH statement's parts; AttachError for an option without a DuckLake.attach keyword."""
    match = _ATTACH.match(sql.strip())
    if match is None:
        raise AttachError(f"ATTACH form not understood: {sql.strip()[:80]!r}")
    path = match.group("path")
    is_ducklake = path.lower().startswith("ducklake:")
    location = path[len("ducklake:"):] if is_ducklake else path
    name = match.group("name") or _default_name(location)
    keywords, metadata_catalog = {}, None
    for key, value in _options(match.group("options") or ""):
        if key == "TYPE" and value.lower() == "ducklake":
            is_ducklake = True
        if key in IGNORED_OPTIONS:
            continue
        if key in OPTIONS:
            keyword, convert = OPTIONS[key]
            keywords[keyword] = convert(value)
        elif key.lower() in _attach_keywords():
            keywords[key.lower()] = _generic(value)
        elif key != "METADATA_CATALOG":  # without a keyword it only names DuckDB's attached catalog database
            raise AttachError(f"ATTACH option {key} has no DuckLake.attach keyword")
        if key == "METADATA_CATALOG":
            metadata_catalog = value
    return AttachSpec(location, name, bool(match.group("ine")), is_ducklake, keywords,
                      metadata_catalog or f"__ducklake_metadata_{name}", bool(match.group("orr")))


def _attach_keywords() -> set[str]:
    """DuckLake.attach's keyword parameters: an option of the same name (lower case) maps to it."""
    import inspect

    from spark_ducklake import DuckLake

    return {n for n, p in inspect.signature(DuckLake.attach).parameters.items() if p.kind == p.KEYWORD_ONLY}


def _generic(value: str):
    """An option value as bool, int, float or text."""
    if value.lower() in _BOOL or not value:
        return _BOOL.get(value.lower(), True)
    for convert in (int, float):
        try:
            return convert(value)
        except ValueError:
            pass
    return value


def _default_name(location: str) -> str:
    base = location.rsplit(":", 1)[-1].rstrip("/").rsplit("/", 1)[-1]
    return base.split(".", 1)[0] or "ducklake"


def _options(text: str) -> list[tuple[str, str]]:
    """`KEY value, KEY 'v', FLAG` pairs (commas inside quotes kept)."""
    out, current, quoted = [], "", False
    for char in text:
        if char == "'":
            quoted = not quoted
        if char == "," and not quoted:
            out.append(current)
            current = ""
        else:
            current += char
    out.append(current)
    pairs = []
    for part in (p.strip() for p in out):
        if not part:
            continue
        key, _, value = part.partition(" ")
        value = value.strip()
        if value.startswith("'") and value.endswith("'"):
            value = value[1:-1].replace("''", "'")
        pairs.append((key.upper(), value))
    return pairs


def parse_detach(sql: str) -> tuple[str, bool] | None:
    """(name, if_exists) of a DETACH, or None."""
    match = _DETACH.match(sql.strip())
    return (match.group("name"), bool(match.group("ie"))) if match else None


def parse_use(sql: str) -> tuple[str, str | None] | None:
    """(catalog, schema or None) of a USE, or None."""
    match = _USE.match(sql.strip())
    return (match.group("name"), match.group("schema")) if match else None
