"""The reference's commit-retry settings (`SET ducklake_max_retry_count = 5`, ...) checked and turned into a
`RetryPolicy`. The reference keeps them per DuckDB instance; here each attached handle has its own."""

from __future__ import annotations

import math
from dataclasses import replace

from ..errors import InvalidArgumentError
from .commit import RetryPolicy

# setting name -> (RetryPolicy field, whether it is a whole number): DuckDB's UBIGINT, UBIGINT, DOUBLE.
RETRY_SETTINGS = {
    "ducklake_max_retry_count": ("max_retries", True),
    "ducklake_retry_wait_ms": ("wait_ms", True),
    "ducklake_retry_backoff": ("backoff", False),
}


def is_retry_setting(name: str) -> bool:
    """Whether `name` is one of the reference's retry settings (case-insensitive, as DuckDB's SET)."""
    return isinstance(name, str) and name.lower() in RETRY_SETTINGS


def retry_setting(policy: RetryPolicy, name: str) -> int | float:
    """The value a retry setting has in `policy`."""
    field_name, whole = RETRY_SETTINGS[_known(name)]
    value = getattr(policy, field_name)
    return int(value) if whole else float(value)


def with_retry_setting(policy: RetryPolicy, name: str, value: object) -> RetryPolicy:
    """`policy` with one setting changed; a bad name or value is an InvalidArgumentError naming both."""
    key = _known(name)
    field_name, whole = RETRY_SETTINGS[key]
    return replace(policy, **{field_name: _checked(key, value, whole)})  # type: ignore[arg-type]  # int for whole fields


def retry_policy(**settings: object) -> RetryPolicy:
    """A policy from settings given by name (those not given keep the reference's defaults: 10, 100, 1.5)."""
    policy = RetryPolicy()
    for name, value in settings.items():
        if value is not None:
            policy = with_retry_setting(policy, name, value)
    return policy


def _known(name: str) -> str:
    if not is_retry_setting(name):
        raise InvalidArgumentError(f"unknown setting {name!r}; the retry settings are {', '.join(RETRY_SETTINGS)}")
    return name.lower()


def _checked(name: str, value: object, whole: bool) -> int | float:
    if isinstance(value, str):
        try:
            value = int(value) if whole else float(value)
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidArgumentError(f"{name} must be a number; got {value!r}")
    if whole and (not float(value).is_integer()):
        raise InvalidArgumentError(f"{name} must be a whole number; got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise InvalidArgumentError(f"{name} must be a finite number >= 0; got {value!r}")
    return int(value) if whole else float(value)
