"""Declared group keys and categories on Spark: each row's position among the declared values, by a join.

In memory (:class:`~privnoise.analysis.InMemoryBackend`) a row whose key is not among the declared keys (or whose
value is not among the declared categories) is dropped before contribution bounding, and the others are numbered by
the position of their key in the declaration: a Python dictionary lookup, so a key matches a declared value that is
equal to it (``2 == 2.0``; the missing key None matches a declared None). On Spark the declared values become a
small DataFrame — one row per declared key, its values in the types of the key columns, and its position — joined
with the rows (broadcast, null-safe equality on every key column, an inner join: undeclared rows go); up to
:data:`INLINE_KEYS` keys, the position is one expression instead (a chain of null-safe equalities with the keys as
literals), which needs no job of its own.

:func:`convert` puts a declared value in the type of a key column, or says that no value of that type can equal it
(the string ``"2"`` in a numeric column, ``2.5`` in an integer one): such a key is released with a count of zero,
as in memory, and takes no place in the join.

>>> convert(2.0, "long"), convert(2.5, "long"), convert("2", "long"), convert(None, "string")
(2, NO_MATCH, NO_MATCH, None)
>>> convert(1.5, "decimal(4,2)")
Decimal('1.50')
"""

from __future__ import annotations

import datetime
import functools
import math
import operator
from decimal import Decimal, InvalidOperation
from enum import Enum
from typing import Any

import numpy as np

from .columns import column, functions, types

__all__ = ["INLINE_KEYS", "NO_MATCH", "convert", "join_positions"]


class _Sentinel(Enum):
    NO_MATCH = "NO_MATCH"

    def __repr__(self) -> str:
        return self.value


#: What :func:`convert` returns for a value no value of the column's type equals.
NO_MATCH = _Sentinel.NO_MATCH

_INTEGER_RANGES = {"tinyint": 7, "smallint": 15, "int": 31, "bigint": 63}
_NAMES = {"long": "bigint", "integer": "int", "short": "smallint", "byte": "tinyint"}


def _number(value: Any) -> float | Decimal | None:
    """A finite number (booleans count as 0 and 1, as in Python), or None."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool | int | Decimal):
        return value if isinstance(value, Decimal) else int(value)
    if isinstance(value, float) and math.isfinite(value):
        return value
    return None


def _decimal(value: Any, precision: int, scale: int) -> Any:
    number = _number(value)
    if number is None:
        return NO_MATCH
    try:
        exact = Decimal(number)
        rounded = exact.quantize(Decimal(1).scaleb(-scale))
    except InvalidOperation:
        return NO_MATCH
    if rounded != exact or len(rounded.as_tuple().digits) > precision:
        return NO_MATCH
    return rounded


def convert(value: Any, data_type: Any) -> Any:
    """``value`` in the Python type Spark uses for ``data_type`` (a Spark type, or its name), None for None, or
    :data:`NO_MATCH` when no value of that type is equal to it."""
    name = data_type if isinstance(data_type, str) else data_type.simpleString()
    name = _NAMES.get(name, name)
    if value is None:
        return None
    if name == "boolean":
        number = _number(value)
        return bool(number) if number is not None and number in (0, 1) else NO_MATCH
    if name.startswith(("string", "varchar", "char")):
        return value if isinstance(value, str) else NO_MATCH
    if name in _INTEGER_RANGES:
        number = _number(value)
        if number is None or number != int(number) or abs(int(number) + 0.5) > 2 ** _INTEGER_RANGES[name]:
            return NO_MATCH
        return int(number)
    if name in ("double", "float"):
        number = _number(value)
        if number is None:
            return NO_MATCH
        as_float = float(number)
        if as_float != number or (name == "float" and float(np.float32(as_float)) != as_float):
            return NO_MATCH
        return as_float
    if name.startswith("decimal"):
        precision, scale = (int(p) for p in name[len("decimal("):-1].split(","))
        return _decimal(value, precision, scale)
    if name == "date":
        return value if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime) else NO_MATCH
    if name.startswith("timestamp"):
        return value if isinstance(value, datetime.datetime) else NO_MATCH
    if name == "binary":
        return bytes(value) if isinstance(value, bytes | bytearray) else NO_MATCH
    return NO_MATCH


#: Up to this many declared keys, a row's position is one expression (a chain of null-safe equalities, no job);
#: beyond, a join with a broadcast table of the keys.
INLINE_KEYS = 64


def _entries(declared: tuple[Any, ...], data_types: list[Any], several: bool) -> dict[tuple[Any, ...], int]:
    """The declared keys that some row can equal, in the columns' types, with their positions."""
    entries: dict[tuple[Any, ...], int] = {}
    for i, key in enumerate(declared):
        values = tuple(key) if several else (key,)
        converted = tuple(convert(v, t) for v, t in zip(values, data_types, strict=True))
        if NO_MATCH not in converted:
            entries[converted] = i  # equal keys: the last one, as a dictionary of positions has it
    return entries


def join_positions(rows: Any, names: list[str], data_types: list[Any], declared: tuple[Any, ...], several: bool,
                   position: str) -> Any:
    """``rows`` restricted to the declared keys, with each row's key position in column ``position`` (the columns
    ``names`` are dropped). ``several``: the declared keys are tuples of values of the columns ``names``."""
    F, T = functions(), types()
    entries = _entries(declared, data_types, several)
    if len(entries) <= INLINE_KEYS:
        found = F.lit(None).cast("long")
        for key, i in reversed(entries.items()):
            matches = [column(n).eqNullSafe(F.lit(v).cast(t)) for n, v, t in zip(names, key, data_types, strict=True)]
            found = F.when(functools.reduce(operator.and_, matches), F.lit(i)).otherwise(found)
        return rows.withColumn(position, found).where(F.col(position).isNotNull()).drop(*names)
    lookup_names = [f"__pn_lookup{j}" for j in range(len(names))]
    schema = T.StructType(
        [T.StructField(n, t, True) for n, t in zip(lookup_names, data_types, strict=True)]
        + [T.StructField(position, T.LongType(), False)]
    )
    lookup = rows.sparkSession.createDataFrame([(*k, i) for k, i in entries.items()], schema)
    matches = [column(n).eqNullSafe(column(m)) for n, m in zip(names, lookup_names, strict=True)]
    joined = rows.join(F.broadcast(lookup), on=functools.reduce(operator.and_, matches), how="inner")
    return joined.drop(*lookup_names, *names)
