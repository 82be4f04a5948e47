"""The reference's session settings that change what writes do, for one handle (`SET ducklake_target_file_size =
'64MB'` in lake.sql, or `DuckLake.set_setting`), checked and kept in a `WriteSettings` record.

Precedence, as the reference's `GetTargetFileSize` / `DataInliningRowLimit`: `ducklake_target_file_size` wins over
every target_file_size option (table, schema, lake); `ducklake_default_data_inlining_row_limit` and
`ducklake_write_deletion_vectors` apply only where no option (nor attach value) sets the limit or the delete format.
The reference keeps them per DuckDB instance; here each attached handle has its own, like the retry settings."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import InvalidArgumentError
from .reads.options import DEFAULT_INLINING_ROW_LIMIT, parse_boolean, parse_size

# setting name -> WriteSettings field
WRITE_SETTINGS = {
    "ducklake_target_file_size": "target_file_size",
    "ducklake_default_data_inlining_row_limit": "default_inlining_row_limit",
    "ducklake_write_deletion_vectors": "write_deletion_vectors",
}
# what current_setting shows for a setting not set: the reference's defaults (a target size has none: NULL)
_DEFAULTS: dict[str, int | bool | None] = {
    "ducklake_target_file_size": None,
    "ducklake_default_data_inlining_row_limit": DEFAULT_INLINING_ROW_LIMIT,
    "ducklake_write_deletion_vectors": False,
}


@dataclass(frozen=True)
class WriteSettings:
    """A handle's write settings; None: not set (the options, then the reference's defaults, decide)."""

    target_file_size: int | None = None  # bytes
    default_inlining_row_limit: int | None = None
    write_deletion_vectors: bool | None = None


def is_write_setting(name: str) -> bool:
    """Whether `name` is one of these settings (case-insensitive, as DuckDB's SET)."""
    return isinstance(name, str) and name.lower() in WRITE_SETTINGS


def with_write_setting(settings: WriteSettings, name: str, value: object) -> WriteSettings:
    """`settings` with one changed (None resets it); a bad value is an InvalidArgumentError naming the setting."""
    key = name.lower()
    if key not in WRITE_SETTINGS:
        raise InvalidArgumentError(f"unknown setting {name!r}; the write settings are {', '.join(WRITE_SETTINGS)}")
    field = WRITE_SETTINGS[key]
    checked = None if value is None else _checked(key, value)
    return replace(settings, **{field: checked})  # type: ignore[arg-type]  # each field takes what _checked gives it


def write_setting(settings: WriteSettings, name: str) -> int | bool | None:
    """What `current_setting(name)` shows: the value set, else the reference's default (no target size: NULL)."""
    key = name.lower()
    value = getattr(settings, WRITE_SETTINGS[key])
    return _DEFAULTS[key] if value is None else value


def _checked(key: str, value: object) -> int | bool:
    if key == "ducklake_write_deletion_vectors":
        return parse_boolean(key, value)
    if key == "ducklake_target_file_size":
        try:
            size = parse_size(str(value))
        except InvalidArgumentError as e:
            raise InvalidArgumentError(f"{key} must be a size like '512MB'; got {value!r}") from e
        if size <= 0:
            raise InvalidArgumentError(f"{key} must be a size above 0; got {value!r}")
        return size
    if isinstance(value, bool) or not str(value).strip().isdigit():
        raise InvalidArgumentError(f"{key} must be a whole number >= 0; got {value!r}")
    return int(str(value).strip())
