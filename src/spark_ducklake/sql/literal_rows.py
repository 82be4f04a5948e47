"""`INSERT ... VALUES` of plain literals as an Arrow table, so a small SQL insert never starts Spark.

Only what converts the same way in pyarrow as in Spark's store assignment: numbers into numeric columns, strings
into text and date columns, booleans into boolean columns, NULL anywhere (of those types). Any other value or
column type, or a value pyarrow cannot convert exactly (overflow, a fraction into an integer, a malformed date),
gives None and the statement runs on Spark as before, with Spark's result or error.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

import pyarrow as pa
from sqlglot import exp

from ..spec import types
from ..spec.model import Column

_NUMERIC = ("int8", "int16", "int32", "int64", "float32", "float64", "decimal")
_KINDS = {"number": _NUMERIC, "string": ("varchar", "date"), "boolean": ("boolean",)}
_SKIP = object()  # a value this path does not take


def literal_rows(source: exp.Expression | None, columns: list[Column]) -> pa.Table | None:
    """The VALUES rows typed as `columns` (one value per column, in order), or None when Spark must run it."""
    if not isinstance(source, exp.Values) or not columns:
        return None
    rows = [t.expressions for t in source.expressions if isinstance(t, exp.Tuple)]
    if len(rows) != len(source.expressions) or any(len(r) != len(columns) for r in rows):
        return None
    arrays = {}
    for i, col in enumerate(columns):
        values = [_value(row[i]) for row in rows]
        if any(v is _SKIP for v in values):
            return None
        kinds = {kind for kind, _ in values if kind is not None}
        base = col.type.split("(")[0]
        if len(kinds) > 1 or (kinds and base not in _KINDS[kinds.pop()]):
            return None
        try:
            target = types.to_arrow_type(col)
            if base == "decimal":  # built at the column's scale (an int64 cast needs precision 19 + scale)
                arrays[col.name] = pa.array([None if v is None else Decimal(v) for _, v in values], target)
            else:
                arrays[col.name] = pa.array([v for _, v in values]).cast(target, safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OverflowError):
            return None
    return pa.table(arrays, schema=pa.schema([pa.field(c.name, types.to_arrow_type(c)) for c in columns]))


def _value(node: exp.Expression):
    """(kind, Python value) of a plain literal, (None, None) for NULL, _SKIP for anything else."""
    negative = isinstance(node, exp.Neg)
    if negative:
        node = node.this
    if isinstance(node, exp.Null) and not negative:
        return None, None
    if isinstance(node, exp.Boolean) and not negative:
        return "boolean", bool(node.this)
    if not isinstance(node, exp.Literal):
        return _SKIP
    if node.is_string:
        return _SKIP if negative else ("string", node.this)
    try:
        number = Decimal(node.this)
    except InvalidOperation:
        return _SKIP
    if not number.is_finite() or "e" in node.this.lower():  # 1e3 is a DOUBLE in Spark: left to it
        return _SKIP
    number = -number if negative else number
    return "number", int(number) if number == number.to_integral_value() and "." not in node.this else number
