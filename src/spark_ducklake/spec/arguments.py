"""Checking the snapshot arguments users pass (`version=`, `timestamp=`, `snapshot_version=`, `snapshot_time=`)."""

from __future__ import annotations

import numbers
from datetime import datetime

from ..errors import InvalidArgumentError, NotFoundError

MAX_SNAPSHOT_ID = 2**63 - 1  # snapshot ids are BIGINT in every catalog database


def snapshot_version(value, name: str = "version") -> int | None:
    """An integer snapshot id (None stays None); ids no catalog can hold do not exist."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidArgumentError(f"{name} must be an integer snapshot id, got {type(value).__name__} {value!r}")
    if not 0 <= value <= MAX_SNAPSHOT_ID:
        raise NotFoundError(f"snapshot {value} does not exist (snapshot ids run from 0 to {MAX_SNAPSHOT_ID})")
    return int(value)


def snapshot_time(value, name: str = "timestamp") -> datetime | None:
    """A datetime (naive: UTC), or an ISO 8601 string such as '2026-11-23 10:00:00+00:00' (None stays None)."""
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.strip())
        except ValueError:
            raise InvalidArgumentError(f"{name} {value!r} is not an ISO 8601 date-time such as "
                                       "'2026-11-23 10:00:00+00:00'") from None
    raise InvalidArgumentError(f"{name} must be a datetime or an ISO 8601 string, got {type(value).__name__}")
