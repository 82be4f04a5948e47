"""User SQL strings (conditions, assignments) evaluated on Arrow tables with pyarrow.compute, without Spark.

Only a well-understood subset of Spark SQL is taken: top-level columns, literals (numbers, strings, booleans,
NULL, DATE/TIMESTAMP literals), comparisons (`=`, `<>`, `<`, `<=`, `>`, `>=`, `<=>`), AND/OR/NOT with SQL's
three-valued logic, IN, BETWEEN, IS [NOT] NULL, LIKE, `+ - * / %`, unary minus, CAST and lower/upper/abs/coalesce.
Anything else raises `NotLocal`: DML then runs on Spark instead, and `read_arrow` says what it cannot evaluate.
Where Spark and pyarrow could disagree (string literals against numbers, overflow), `NotLocal` is raised too.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TypeAlias

import pyarrow as pa
import pyarrow.compute as pc
import sqlglot
from sqlglot import exp

# What an expression evaluates to: a scalar (literals and what is computed from them alone) or a value per row.
Value: TypeAlias = "pa.Scalar | pa.Array | pa.ChunkedArray"


class NotLocal(Exception):
    """The expression is outside what the in-process path evaluates exactly as Spark would."""


_COMPARE = {exp.EQ: pc.equal, exp.NEQ: pc.not_equal, exp.LT: pc.less, exp.LTE: pc.less_equal,
            exp.GT: pc.greater, exp.GTE: pc.greater_equal}
_ARITH = {exp.Add: pc.add_checked, exp.Sub: pc.subtract_checked, exp.Mul: pc.multiply_checked}
_CAST_TYPES = {
    "BOOLEAN": pa.bool_(), "TINYINT": pa.int8(), "SMALLINT": pa.int16(), "INT": pa.int32(), "BIGINT": pa.int64(),
    "FLOAT": pa.float32(), "DOUBLE": pa.float64(), "TEXT": pa.string(), "VARCHAR": pa.string(),
    "DATE": pa.date32(), "TIMESTAMP": pa.timestamp("us", tz="UTC"), "TIMESTAMPNTZ": pa.timestamp("us"),
}


def parse(text: str) -> exp.Expr:
    """The sqlglot tree of one Spark SQL expression; NotLocal if sqlglot cannot parse it."""
    try:
        return sqlglot.parse_one(text, read="spark")
    except sqlglot.errors.SqlglotError as exc:
        raise NotLocal(f"cannot parse {text!r}") from exc


def evaluate(text: str, data: pa.Table) -> pa.Array:
    """`text` evaluated over every row of `data` (columns matched case-insensitively), as one array."""
    value = eval_node(parse(text), Scope(data))
    if isinstance(value, pa.Scalar):
        return pa.array([value.as_py()] * data.num_rows, value.type)
    return value.combine_chunks() if isinstance(value, pa.ChunkedArray) else value


def predicate_mask(text: str | None, data: pa.Table) -> pa.Array:
    """Boolean mask of the rows where `text` is true (NULL counts as false, as in WHERE)."""
    if text is None:
        return pa.array([True] * data.num_rows, pa.bool_())
    mask = evaluate(text, data)
    if not pa.types.is_boolean(mask.type):
        raise NotLocal(f"{text!r} is not a condition")
    return pc.fill_null(mask, False)


def check(text: str, schema: pa.Schema, *, condition: bool) -> None:
    """NotLocal unless `text` evaluates over rows of `schema` (checked on no rows, before any data is read)."""
    empty = schema.empty_table()
    if condition:
        predicate_mask(text, empty)
    else:
        evaluate(text, empty)


class Scope:
    """The rows an expression is evaluated over; columns found case-insensitively."""

    def __init__(self, data: pa.Table) -> None:
        self.data = data
        self.names = {name.lower(): name for name in data.column_names}

    def column(self, node: exp.Column) -> pa.ChunkedArray:
        if node.table or node.name.lower() not in self.names:
            raise NotLocal(f"unknown column {node.sql()}")
        return self.data.column(self.names[node.name.lower()])


def eval_node(node: exp.Expr, scope: Scope) -> Value:
    try:
        return _dispatch(node, scope)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, TypeError, ValueError) as exc:
        raise NotLocal(f"{node.sql()}: {exc}") from exc


def _dispatch(node: exp.Expr, scope: Scope) -> Value:
    if isinstance(node, exp.Paren):
        return eval_node(node.this, scope)
    if isinstance(node, exp.Column):
        return scope.column(node)
    if isinstance(node, exp.Literal | exp.Boolean | exp.Null):
        return _literal(node)
    if isinstance(node, exp.Cast):  # TryCast too
        return _cast(node, scope)
    for klass, fn in _COMPARE.items():
        if isinstance(node, klass):
            left, right = coerce_pair(eval_node(node.left, scope), eval_node(node.right, scope))
            return fn(left, right)
    if isinstance(node, exp.NullSafeEQ):
        left, right = coerce_pair(eval_node(node.left, scope), eval_node(node.right, scope))
        both_null = pc.and_(pc.is_null(left), pc.is_null(right))
        return pc.if_else(both_null, True, pc.fill_null(pc.equal(left, right), False))
    if isinstance(node, exp.And):
        return pc.and_kleene(_bool(eval_node(node.left, scope)), _bool(eval_node(node.right, scope)))
    if isinstance(node, exp.Or):
        return pc.or_kleene(_bool(eval_node(node.left, scope)), _bool(eval_node(node.right, scope)))
    if isinstance(node, exp.Not):
        return pc.invert(_bool(eval_node(node.this, scope)))
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        return pc.is_null(eval_node(node.this, scope))
    if isinstance(node, exp.Between):
        value = eval_node(node.this, scope)
        low, high = eval_node(node.args["low"], scope), eval_node(node.args["high"], scope)
        return pc.and_kleene(pc.greater_equal(*coerce_pair(value, low)), pc.less_equal(*coerce_pair(value, high)))
    if isinstance(node, exp.In) and not node.args.get("query"):
        return _in(eval_node(node.this, scope), [eval_node(v, scope) for v in node.expressions])
    if isinstance(node, exp.Like) and not node.args.get("escape"):
        pattern = eval_node(node.expression, scope)
        if not isinstance(pattern, pa.Scalar) or not pa.types.is_string(pattern.type):
            raise NotLocal("LIKE takes a string literal pattern here")
        value = eval_node(node.this, scope)
        return pc.match_like(value, pattern.as_py()) if pattern.is_valid else pc.is_null(value, nan_is_null=False)
    if isinstance(node, exp.Neg):
        return pc.negate_checked(eval_node(node.this, scope))
    for klass, fn in _ARITH.items():
        if isinstance(node, klass):
            return fn(*_numeric_pair(eval_node(node.left, scope), eval_node(node.right, scope)))
    if isinstance(node, exp.Div):  # Spark's `/` on integers and doubles is a double division
        left, right = (_as_double(eval_node(x, scope)) for x in (node.left, node.right))
        return pc.if_else(pc.equal(right, 0.0), pa.scalar(None, pa.float64()), pc.divide(left, right))
    if isinstance(node, exp.Mod):
        return _mod(eval_node(node.left, scope), eval_node(node.right, scope))
    if isinstance(node, exp.Lower | exp.Upper):
        value = eval_node(node.this, scope)
        return (pc.utf8_lower if isinstance(node, exp.Lower) else pc.utf8_upper)(value)
    if isinstance(node, exp.Abs):
        return pc.abs_checked(eval_node(node.this, scope))
    if isinstance(node, exp.Coalesce):
        values = [eval_node(node.this, scope)] + [eval_node(v, scope) for v in node.expressions]
        first = values[0]
        return pc.coalesce(first, *[coerce_pair(first, v)[1] for v in values[1:]])
    raise NotLocal(f"{type(node).__name__} ({node.sql()}) is not evaluated in-process")


def _literal(node: exp.Expr) -> pa.Scalar:
    if isinstance(node, exp.Null):
        return pa.scalar(None, pa.null())
    if isinstance(node, exp.Boolean):
        return pa.scalar(bool(node.this), pa.bool_())
    if node.is_string:
        return pa.scalar(node.this, pa.string())
    text = node.this
    if any(ch in text for ch in "eEdDfFlLsSyYbB"):
        raise NotLocal(f"numeric literal {text!r}")
    if "." not in text:
        value = int(text)
        # Spark: an INT literal when it fits, else a BIGINT
        return pa.scalar(value, pa.int32() if -2**31 <= value < 2**31 else pa.int64())
    exact = Decimal(text)
    digits, exponent = len(exact.as_tuple().digits), exact.as_tuple().exponent
    if not isinstance(exponent, int):  # NaN or infinity: no digits
        raise NotLocal(f"numeric literal {text!r}")
    scale = max(0, -exponent)
    return pa.scalar(exact, pa.decimal128(max(digits, scale, 1), scale))


def _cast(node: exp.Cast, scope: Scope) -> Value:
    name = node.to.this.name if hasattr(node.to.this, "name") else str(node.to.this)
    if name == "DECIMAL":
        params = [int(p.this.this) for p in node.to.expressions]
        target = pa.decimal128(*(params + [10, 0][len(params):]))
    elif name in _CAST_TYPES:
        target = _CAST_TYPES[name]
    else:
        raise NotLocal(f"CAST to {node.to.sql()}")
    value = eval_node(node.this, scope)
    if isinstance(node.this, exp.Literal) and node.this.is_string:
        return _string_scalar(value.as_py(), target)
    if pa.types.is_string(_type(value)) and not pa.types.is_string(target):
        raise NotLocal("CAST of strings to other types")  # Spark's parsing rules are wider than Arrow's
    return pc.cast(value, target)


def _string_scalar(text: str, target: pa.DataType) -> pa.Scalar:
    """A string literal read as `target` (timestamps in UTC, the session time zone of the lake's Spark)."""
    if pa.types.is_timestamp(target) and target.tz is not None:
        naive = pa.scalar(text.strip(), pa.string()).cast(pa.timestamp("us"))
        return pa.scalar(naive.value, target)
    return pa.scalar(text.strip(), pa.string()).cast(target)


def _type(value: Value) -> pa.DataType:
    return value.type


def _bool(value: Value) -> Value:
    if pa.types.is_null(_type(value)):
        return pc.cast(value, pa.bool_())
    if not pa.types.is_boolean(_type(value)):
        raise NotLocal("a non-boolean operand of AND/OR/NOT")
    return value


def _is_number(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)


def coerce_pair(left: Value, right: Value) -> tuple[Value, Value]:
    """Operands brought to one type as Spark compares them: a string literal takes the other side's type;
    numbers widen (to double when one is floating, to a common decimal when one is decimal)."""
    lt, rt = _type(left), _type(right)
    if pa.types.is_null(lt) or pa.types.is_null(rt):
        other = rt if pa.types.is_null(lt) else lt
        return (pc.cast(left, other), right) if pa.types.is_null(lt) else (left, pc.cast(right, other))
    if lt == rt:
        return left, right
    if pa.types.is_string(rt) and isinstance(right, pa.Scalar) and not _is_number(lt):
        return left, _string_scalar(right.as_py(), lt) if right.is_valid else pc.cast(right, lt)
    if pa.types.is_string(lt) and isinstance(left, pa.Scalar) and not _is_number(rt):
        return (_string_scalar(left.as_py(), rt) if left.is_valid else pc.cast(left, rt)), right
    if _is_number(lt) and _is_number(rt):
        return _numeric_pair(left, right)
    if pa.types.is_timestamp(lt) and pa.types.is_timestamp(rt) and (lt.tz is None) == (rt.tz is None):
        return pc.cast(left, pa.timestamp("us", lt.tz)), pc.cast(right, pa.timestamp("us", rt.tz))
    if pa.types.is_integer(lt) and pa.types.is_integer(rt):
        return left, right
    raise NotLocal(f"comparing {lt} with {rt}")


def _numeric_pair(left: Value, right: Value) -> tuple[Value, Value]:
    lt, rt = _type(left), _type(right)
    if not (_is_number(lt) and _is_number(rt)):
        if pa.types.is_null(lt) or pa.types.is_null(rt):
            return coerce_pair(left, right)
        raise NotLocal(f"arithmetic on {lt} and {rt}")
    if pa.types.is_floating(lt) or pa.types.is_floating(rt):
        return _as_double(left), _as_double(right)
    if pa.types.is_decimal(lt) or pa.types.is_decimal(rt):
        target = _common_decimal(lt, rt)
        return pc.cast(left, target), pc.cast(right, target)
    return left, right


def _common_decimal(a: pa.DataType, b: pa.DataType) -> pa.DataType:
    def shape(t: pa.DataType) -> tuple[int, int]:
        if pa.types.is_decimal(t):
            return t.precision - t.scale, t.scale
        return {8: 3, 16: 5, 32: 10, 64: 19}[t.bit_width], 0

    (ia, sa), (ib, sb) = shape(a), shape(b)
    scale = max(sa, sb)
    precision = max(ia, ib) + scale
    if precision > 38:
        raise NotLocal("decimal precision above 38")
    return pa.decimal128(precision, scale)


def _as_double(value: Value) -> Value:
    t = _type(value)
    if not (_is_number(t) or pa.types.is_null(t)):
        raise NotLocal(f"division of {t}")
    return pc.cast(value, pa.float64())


def _mod(left: Value, right: Value) -> Value:
    """Spark's `%` on integers: the remainder takes the dividend's sign (truncating division)."""
    if not (pa.types.is_integer(_type(left)) and pa.types.is_integer(_type(right))):
        raise NotLocal("% on non-integers")
    zero = pc.equal(right, 0)
    if (zero.as_py() if isinstance(zero, pa.Scalar) else pc.any(zero).as_py()):
        raise NotLocal("% by zero")  # NULL or an error depending on Spark's ANSI mode: Spark decides
    left, right = _numeric_pair(left, right)
    quotient = pc.divide(left, right)  # integer division truncates toward zero, as Spark's
    return pc.subtract(left, pc.multiply(quotient, right))


def _in(value: Value, options: list[Value]) -> Value:
    valid = [o for o in options if not (isinstance(o, pa.Scalar) and not o.is_valid)]
    if any(not isinstance(o, pa.Scalar) for o in options):
        raise NotLocal("IN over non-literal values")
    has_null = len(valid) < len(options)
    if valid:
        coerced = [coerce_pair(value, o)[1] for o in valid]
        left = coerce_pair(value, valid[0])[0]
        target = _type(left)
        values = pa.array([c.as_py() for c in coerced], target)
        found = pc.is_in(left, value_set=values)
        found = pc.if_else(pc.is_null(left), pa.scalar(None, pa.bool_()), found)
    else:
        found = pc.if_else(pc.is_null(value), pa.scalar(None, pa.bool_()), False)
    if has_null:  # x IN (..., NULL) is NULL, not false, when x matches nothing
        found = pc.if_else(found, True, pa.scalar(None, pa.bool_()))
    return found
