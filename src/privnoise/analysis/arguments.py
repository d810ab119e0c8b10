"""The checked arguments of a session's queries: bounds, histogram edges, categories, quantile levels, and the
backend of the data.

Every check here reads parameters only, never the data: an error names the parameter, its query and the rule.

>>> edges([0, 1, 2.5])
(0.0, 1.0, 2.5)
>>> levels(0.5), levels([0.1, 0.9])
([0.5], [0.1, 0.9])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validation import describe
from ..core import Adjacency, Bounds, RecordReplaced, UnitAddedOrRemoved
from ..engines import engine_for
from ..exceptions import InvalidParameterError
from .backend import Backend, InMemoryBackend
from .table import Table

__all__ = ["NEIGHBOURS", "backend_for", "bounds_of", "categories", "edges", "levels", "neighbours_of"]

#: The neighbours a session may be stated for.
NEIGHBOURS = ("added-or-removed", "replaced")


def neighbours_of(neighbours: Any, privacy_unit: str | None, max_contributions: int) -> Adjacency:
    """The adjacency of a session: a unit (or row) of at most k rows added or removed, or a row replaced.

    >>> neighbours_of("replaced", None, 1).describe()
    'one record added, removed or replaced'
    """
    if not isinstance(neighbours, str) or neighbours not in NEIGHBOURS:
        raise InvalidParameterError(
            f"`neighbours` of `Session` must be one of {', '.join(repr(n) for n in NEIGHBOURS)}; got {describe(neighbours)}."
        )
    if neighbours == "added-or-removed":
        return UnitAddedOrRemoved(max_contributions)
    if privacy_unit is not None:
        raise InvalidParameterError(
            "`neighbours` of `Session` may be 'replaced' only for rows (without `privacy_unit`): a unit's rows are "
            "added or removed together."
        )
    return RecordReplaced()


def backend_for(data: Any) -> Backend:
    """The backend of a session's data: data of a distributed engine (:mod:`privnoise.engines`: Dask data frames)
    aggregates on its cluster, the rest in memory."""
    engine = engine_for(data)
    if engine is not None:
        return engine.backend(data)
    return InMemoryBackend(Table(data))


def bounds_of(bounds: Any, owner: str) -> Bounds:
    """Declared bounds (low, high): finite, low < high."""
    try:
        low, high = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"`bounds` of `{owner}` must be a pair (low, high); got {describe(bounds)}.") from None
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise InvalidParameterError(f"`bounds` of `{owner}` must be finite with low < high; got ({low:g}, {high:g}).")
    return Bounds(low, high)


def edges(bins: Any) -> tuple[float, ...]:
    """Histogram bin edges: at least two, finite, strictly increasing."""
    try:
        found = np.asarray(bins, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"`bins` of `histogram` must be numbers (edges); got {describe(bins)}.") from None
    if found.ndim != 1 or found.size < 2 or not np.all(np.isfinite(found)) or np.any(np.diff(found) <= 0):
        raise InvalidParameterError(
            f"`bins` of `histogram` must be at least two finite, strictly increasing edges; got {describe(bins)}."
        )
    return tuple(float(e) for e in found)


def categories(values: Any, owner: str) -> tuple[Any, ...]:
    """Declared categories: a non-empty list of distinct values."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        raise InvalidParameterError(f"the categories of `{owner}` must be a list of values; got {describe(values)}.")
    cats = tuple(v.item() if isinstance(v, np.generic) else v for v in values)
    if not cats or len(set(cats)) != len(cats):
        raise InvalidParameterError(f"the categories of `{owner}` must be a non-empty list of distinct values.")
    return cats


def levels(q: Any) -> list[float]:
    """Quantile levels: one in [0, 1], or a list of them."""
    values = [q] if isinstance(q, int | float) else list(q) if isinstance(q, Sequence | np.ndarray) else None
    if not values or not all(isinstance(v, int | float | np.floating) and 0.0 <= float(v) <= 1.0 for v in values):
        raise InvalidParameterError(f"`q` of `quantile` must be a level in [0, 1] or a list of them; got {describe(q)}.")
    return [float(v) for v in values]
