"""Values across the protocol of `CALL` and the metadata tables: a procedure's parameters (the Spark type each
declares, the Python values it takes) and its arguments as Python values coming in; result rows as JSON and their
Spark schema going out."""

from __future__ import annotations

import base64
import builtins
import dataclasses
from datetime import date, datetime, timedelta, timezone
from typing import Any

from ..errors import InvalidArgumentError
from .fields import EPOCH


@dataclasses.dataclass(frozen=True)
class Param:
    """A procedure parameter: `type` is the Spark type declared when the argument is not given, `accepts` the
    Python values (after `argument_value`) the API takes for it, `what` how an error names them."""

    name: str
    type: str
    accepts: tuple[builtins.type, ...]  # builtins: `type` is the field above
    what: str
    required: bool = False

    def convert(self, procedure: str, arg: Any) -> Any:
        """The argument as the API takes it (None: not given); a wrong kind of value names the argument."""
        value = None if arg is None else argument_value(arg.get("type"), arg.get("value"))
        if value is None:
            if self.required:
                raise InvalidArgumentError(f"argument {self.name} of {procedure} is required")
            return None
        ok = isinstance(value, self.accepts) and not (isinstance(value, bool) and bool not in self.accepts)
        if ok and isinstance(value, list):
            ok = all(isinstance(v, int) and not isinstance(v, bool) for v in value) if self.type == "array<bigint>" \
                else all(isinstance(v, str) for v in value)
        if not ok:
            raise InvalidArgumentError(f"argument {self.name} of {procedure} must be {self.what}, not "
                                       f"{arg.get('type')} {arg.get('value')!r}")
        return value


def argument_value(type_name: Any, value: Any) -> Any:
    """A CALL argument from the plugin (Spark's type name, its value as JSON) as a Python value: timestamps
    (microseconds; TIMESTAMP_NTZ taken as UTC) as datetimes, day-time intervals as timedeltas, dates as dates."""
    if value is None:
        return None
    name = str(type_name)
    if name in ("timestamp", "timestamp_ntz"):
        return EPOCH + timedelta(microseconds=int(value))
    if name == "date":
        return date.fromordinal(_EPOCH_ORDINAL + int(value))
    if name.startswith("interval") and "year" not in name and "month" not in name:
        return timedelta(microseconds=int(value))
    return value


_EPOCH_ORDINAL = EPOCH.date().toordinal()
_WHEN = (datetime, timedelta, str)
_WHEN_TEXT = "a timestamp, an interval or a string such as '7 days'"
_SIZE = (int, str)
_SIZE_TEXT = "a byte count or a size such as '10MB'"


def param(name: str, kind: str, required: bool = False) -> Param:
    """A parameter of one of the kinds the procedures take."""
    spark_type, accepts, what = _KINDS[kind]
    return Param(name, spark_type, accepts, what, required)


_KINDS: dict[str, tuple[str, tuple[type, ...], str]] = {
    "text": ("string", (str,), "a string"),
    "flag": ("boolean", (bool,), "true or false"),
    "count": ("bigint", (int,), "an integer"),
    "fraction": ("double", (int, float), "a number"),
    "size": ("bigint", _SIZE, _SIZE_TEXT),
    "when": ("timestamp", _WHEN, _WHEN_TEXT),
    "moment": ("timestamp", (datetime,), "a timestamp"),
    "ids": ("array<bigint>", (list,), "an array of snapshot ids"),
    "paths": ("string", (str, list), "a path or glob, or an array of them"),
    "value": ("string", (str, int, float, bool), "a string, number or boolean"),
}


def result_struct(columns: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    """Spark's StructType JSON for result columns (all nullable)."""
    return {"type": "struct", "fields": [{"name": n, "type": t, "nullable": True, "metadata": {}}
                                         for n, t in columns]}


def result_value(value: Any) -> Any:
    """A result value as JSON the plugin turns into Spark's internal value (timestamps in microseconds)."""
    if isinstance(value, datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
        return (moment - EPOCH) // timedelta(microseconds=1)  # exact, unlike timestamp() * 1e6
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {str(k): result_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [result_value(v) for v in value]
    return value
