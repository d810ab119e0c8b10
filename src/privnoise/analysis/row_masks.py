"""The rows of a table that satisfy a filter's public conditions (the row test of :mod:`privnoise.analysis.filters`).

A condition ``column op literal`` (:mod:`privnoise.core.conditions`) holds on a row when a number literal compares
with the column's number there, or a text literal with its text value (by code point); another value, and a missing
one (null, None, NaN), never satisfies a condition. :class:`~privnoise.analysis.InMemoryBackend` takes the rows of a
request with :func:`row_mask`, before contribution bounding.

>>> import numpy as np
>>> from privnoise.core.conditions import parse_conditions
>>> table = Table({"region": np.array(["north", "south", None], dtype=object), "kwh": [1.0, np.nan, 12.0]})
>>> row_mask(table, parse_conditions("kwh >= 1"))
array([ True, False,  True])
>>> row_mask(table, parse_conditions("region != 'north'"))
array([False,  True, False])
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..core.conditions import COMPARISONS, Condition
from .table import Table

__all__ = ["row_mask"]


def row_mask(table: Table, conditions: tuple[Condition, ...]) -> NDArray[np.bool_] | None:
    """The rows of ``table`` that satisfy every condition (None: no condition). A number literal compares the
    column's numbers, a text literal its text values (other values, and missing ones, never match)."""
    if not conditions:
        return None
    mask = np.ones(table.rows, dtype=bool)
    for c in conditions:
        compare = COMPARISONS[c.op]
        if isinstance(c.value, str):
            key = table.codes(c.column)
            holds = np.array([isinstance(v, str) and bool(compare(v, c.value)) for v in key.labels], dtype=bool)
            mask &= holds[key.codes] if holds.size else False
        else:
            column = table.numeric(c.column)
            with np.errstate(invalid="ignore"):
                mask &= compare(column.values, c.value) & ~column.missing
    return mask
