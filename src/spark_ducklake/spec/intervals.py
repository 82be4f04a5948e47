"""Durations as DuckDB's INTERVAL text (`'1 week'`, `'7d'`, `'1h30m'`, `'00:00:05'`), used by the options
`expire_older_than` and `delete_older_than`, and the points in time they mean."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from ..errors import DuckLakeError

_UNITS = {  # unit -> (months, timedelta) per 1
    **dict.fromkeys(("us", "usec", "usecs", "microsecond", "microseconds"), (0, timedelta(microseconds=1))),
    **dict.fromkeys(("ms", "msec", "msecs", "millisecond", "milliseconds"), (0, timedelta(milliseconds=1))),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), (0, timedelta(seconds=1))),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), (0, timedelta(minutes=1))),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), (0, timedelta(hours=1))),
    **dict.fromkeys(("d", "day", "days"), (0, timedelta(days=1))),
    **dict.fromkeys(("w", "week", "weeks"), (0, timedelta(weeks=1))),
    **dict.fromkeys(("mon", "mons", "month", "months"), (1, timedelta())),
    **dict.fromkeys(("y", "yr", "yrs", "year", "years"), (12, timedelta())),
    **dict.fromkeys(("decade", "decades"), (120, timedelta())),
    **dict.fromkeys(("century", "centuries"), (1200, timedelta())),
    **dict.fromkeys(("millennium", "millennia"), (12000, timedelta())),
}
_PART = re.compile(r"\s*([+-]?\d+(?:\.\d+)?)\s*([a-zA-Z]+)")
_CLOCK = re.compile(r"\s*([+-]?)(\d+):(\d{1,2})(?::(\d{1,2}(?:\.\d+)?))?\s*$")


@dataclass(frozen=True)
class Interval:
    """Calendar months plus an exact duration, like DuckDB's INTERVAL."""

    months: int
    duration: timedelta

    def before(self, when: datetime) -> datetime:
        """`when - self`, months counted on the calendar (Jan 31 - 1 month = Dec 31)."""
        return _add_months(when, -self.months) - self.duration


def parse_interval(text: str) -> Interval:
    """'1 week' / '7d' / '1h30m' / '2 days 04:00:00' -> Interval; DuckLakeError when it is not one."""
    rest, months, duration = str(text).strip(), 0, timedelta()
    if not rest:
        raise DuckLakeError("an interval cannot be empty (use e.g. '7 days', '24h' or '1 week')")
    while rest:
        clock = _CLOCK.match(rest)
        if clock:
            sign = -1 if clock.group(1) == "-" else 1
            seconds = int(clock.group(2)) * 3600 + int(clock.group(3)) * 60 + float(clock.group(4) or 0)
            duration += sign * timedelta(seconds=seconds)
            break
        part = _PART.match(rest)
        unit = part.group(2).lower() if part else None
        if unit not in _UNITS:
            raise DuckLakeError(f"not an interval: {text!r} (use e.g. '7 days', '24h', '1 week' or '00:30:00')")
        amount = float(part.group(1))  # type: ignore[union-attr]  # a match: `unit` is None without one
        unit_months, unit_duration = _UNITS[unit]
        if unit_months:
            if amount != int(amount):
                raise DuckLakeError(f"not an interval: {text!r} (months and years must be whole numbers)")
            months += int(amount) * unit_months
        duration += amount * unit_duration
        rest = rest[part.end():]  # type: ignore[union-attr]  # a match, as above
    return Interval(months, duration)


def cutoff(text: str, now: datetime | None = None) -> datetime:
    """The point in time `text` (an interval) before now."""
    return parse_interval(text).before(now or datetime.now(timezone.utc))


def _add_months(when: datetime, months: int) -> datetime:
    if not months:
        return when
    index = when.year * 12 + when.month - 1 + months
    year, month = divmod(index, 12)
    day = min(when.day, calendar.monthrange(year, month + 1)[1])
    return when.replace(year=year, month=month + 1, day=day)
