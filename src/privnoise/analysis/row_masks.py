"""The rows of a table that satisfy a filter's public conditions (the row test of :mod:`privnoise.analysis.filters`).

A filter is a tuple of predicates that must all hold: comparisons ``column op literal``
(:mod:`privnoise.core.conditions`) and the compound predicates of :mod:`privnoise.core.predicates` (``IN``,
``IS NULL``, ``LIKE``, ``NOT``, ``AND``, ``OR``), with SQL's three-valued logic. A comparison holds on a row when a
number literal compares with the column's number there, or a text literal with its text value (by code point); it is
unknown on a missing value (null, None, NaN), and a row is kept only where the filter is true.
:class:`~privnoise.analysis.InMemoryBackend` takes the rows of a request with :func:`row_mask`, before contribution
bounding.

>>> import numpy as np
>>> from privnoise.core.conditions import parse_conditions
>>> from privnoise.core.predicates import IsNull, Not
>>> table = Table({"region": np.array(["north", "south", None], dtype=object), "kwh": [1.0, np.nan, 12.0]})
>>> row_mask(table, parse_conditions("kwh >= 1"))
array([ True, False,  True])
>>> row_mask(table, parse_conditions("region != 'north'"))
array([False,  True, False])
>>> row_mask(table, (Not(parse_conditions("kwh > 5")[0]),))  # a missing kwh is unknown, and so is its negation
array([ True, False, False])
>>> row_mask(table, (IsNull("region"),))
array([False, False,  True])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core.conditions import COMPARISONS, Condition
from ..core.predicates import InList, IsNull, Like, Logic, Predicate, like_regex, truth
from .table import Table

__all__ = ["row_mask"]

Mask = NDArray[np.bool_]
_MASKS: Logic[Mask] = Logic(both=np.logical_and, either=np.logical_or)


def _text_test(table: Table, column: str, test: Any) -> tuple[Mask, Mask]:
    """(true, false) of ``test(text)`` on a column's text labels; other and missing values are unknown."""
    key = table.codes(column)
    is_text = np.array([isinstance(v, str) for v in key.labels], dtype=bool)
    holds = np.array([isinstance(v, str) and bool(test(v)) for v in key.labels], dtype=bool)
    if not holds.size:
        empty = np.zeros(table.rows, dtype=bool)
        return empty, empty.copy()
    return holds[key.codes], (is_text & ~holds)[key.codes]


def _number_test(table: Table, column: str, test: Any) -> tuple[Mask, Mask]:
    values = table.numeric(column)
    with np.errstate(invalid="ignore"):
        holds = np.asarray(test(values.values), dtype=bool)
    known = ~values.missing
    return holds & known, ~holds & known


def _missing(table: Table, column: str) -> Mask:
    if table.kind(column) == "number":
        return np.asarray(table.numeric(column).missing, dtype=bool)
    key = table.codes(column)
    absent = np.array([v is None or (isinstance(v, float) and v != v) for v in key.labels], dtype=bool)
    return absent[key.codes] if absent.size else np.zeros(table.rows, dtype=bool)


def _atom(table: Table) -> Any:
    def atom(p: Condition | InList | IsNull | Like) -> tuple[Mask, Mask]:
        if isinstance(p, IsNull):
            missing = _missing(table, p.column)
            return (~missing, missing) if p.negated else (missing, ~missing)
        if isinstance(p, Like):
            regex = like_regex(p.pattern)
            t, f = _text_test(table, p.column, lambda v: regex.fullmatch(v) is not None)
            return (f, t) if p.negated else (t, f)
        if isinstance(p, InList):
            values: Sequence[Any] = p.values
            if values and isinstance(values[0], str):
                chosen = set(values)
                t, f = _text_test(table, p.column, lambda v: v in chosen)
            else:
                t, f = _number_test(table, p.column, lambda x: np.isin(x, np.asarray(values, dtype=float)))
            return (f, t) if p.negated else (t, f)
        compare = COMPARISONS[p.op]
        if isinstance(p.value, str):
            value = p.value
            return _text_test(table, p.column, lambda v: compare(v, value))
        number = p.value
        return _number_test(table, p.column, lambda x: compare(x, number))

    return atom


def row_mask(table: Table, conditions: tuple[Predicate, ...]) -> Mask | None:
    """The rows of ``table`` where every predicate is true (None: no predicate); see the module docstring."""
    if not conditions:
        return None
    atom = _atom(table)
    mask = np.ones(table.rows, dtype=bool)
    for c in conditions:
        mask &= truth(c, atom, _MASKS)[0]
    return mask
