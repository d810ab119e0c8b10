"""Contribution bounding, done once per session: which rows of each privacy unit a query keeps (at most k).

A unit may hold more rows than the cap k; then a query uses k of the unit's rows that take part in it (those that
pass the query's filter, missing-value policy, declared keys or categories), chosen uniformly at random. The choice
is drawn once per session and unit column, in one vectorised step:

1. the rows of the units with more than k rows (the others always keep every row) are put in one uniformly random
   order — a random permutation drawn from the generator the session hands its backend, a stream keyed from the
   session's own cryptographically strong generator — and grouped by unit with one sort of their unit codes;
2. a query keeps, of each such unit, the first k of its rows *that take part in the query* in that order: a running
   count of the taking-part rows along the grouped order (one cumulative sum), so any set of taking-part rows —
   a filter of :meth:`Session.where`, rows dropped for a missing value — is bounded in O(n) without drawing or
   sorting again.

For each query alone the rows kept of a unit are a uniformly random choice of k among its taking-part rows, as a
fresh draw per query would give: the random order restricted to any subset of a unit's rows is a uniform order of
that subset. (Grouping by unit with an unstable sort keeps this: the sort moves rows by their unit code only, and
rows of one unit are exchangeable under the random permutation.)

Privacy is that of a fresh draw per query. The order is drawn independently of the data's values, and a unit's kept
rows depend only on its own rows and their places in the order: adding or removing one unit changes, in every query,
only that unit's at most k kept rows. Conditioned on the order, every query is then a mechanism of the stated
sensitivity on neighbouring datasets and the session's queries compose as stated, for every order, hence for the
random one. The order itself is never released.

>>> import numpy as np
>>> units = np.array([0, 0, 0, 1, 0, 2, 1])
>>> order = ContributionOrder.draw(units, 2, np.random.default_rng(0))
>>> kept = order.kept(None)
>>> np.bincount(units[kept]).tolist()
[2, 2, 1]
>>> only = np.array([True, False, False, True, True, True, False])  # a filter: unit 0 keeps 2 of its 2 matching rows
>>> np.flatnonzero(order.kept(only)).tolist()
[0, 3, 4, 5]
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["ContributionOrder", "Prepared", "bound_contributions"]

Mask = NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class ContributionOrder:
    """The rows of the units with more than ``k`` rows, grouped by unit in a uniformly random order within each
    unit (module docstring).

    Attributes
    ----------
    rows : ndarray of int64
        Row numbers: each unit's rows in a run, in random order.
    starts : ndarray of int64
        Where each unit's run begins in ``rows``.
    size : int
        The number of rows of the table.
    k : int
        The cap.
    """

    rows: NDArray[np.int64]
    starts: NDArray[np.int64]
    size: int
    k: int

    @classmethod
    def draw(cls, units: NDArray[np.int64], k: int, rng: np.random.Generator) -> ContributionOrder:
        """The order for the unit codes ``units`` (0 … m − 1), drawn from ``rng`` (one permutation)."""
        size = int(units.size)
        per_unit = np.bincount(units) if size else np.zeros(0, dtype=np.int64)
        over = per_unit > k
        if not over.any():
            return cls(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), size, k)
        rows = np.flatnonzero(over[units])
        rows = rows[rng.permutation(rows.size)]
        rows = rows[np.argsort(units[rows])]
        grouped = units[rows]
        starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
        return cls(rows, starts, size, k)

    def kept(self, taking_part: Mask | None) -> Mask | None:
        """Which rows a query keeps: of the rows ``taking_part`` (None: all), at most k of each unit, the first in
        the order. None when every row is kept (no mask given and no unit over the cap)."""
        if not self.rows.size:
            return taking_part
        if taking_part is None:
            lengths = np.diff(np.r_[self.starts, self.rows.size])
            rank = np.arange(self.rows.size) - np.repeat(self.starts, lengths)
            keep = np.ones(self.size, dtype=bool)
            keep[self.rows[rank >= self.k]] = False
            return keep
        part = taking_part[self.rows]
        running = np.cumsum(part, dtype=np.int64)
        before = running[self.starts] - part[self.starts]
        rank = running - np.repeat(before, np.diff(np.r_[self.starts, self.rows.size]))
        keep = taking_part.copy()
        keep[self.rows[part & (rank > self.k)]] = False
        return keep


def bound_contributions(units: NDArray[np.int64], k: int, rng: np.random.Generator) -> NDArray[np.bool_] | None:
    """A mask keeping at most ``k`` rows of every unit, chosen uniformly at random (None: every row is kept).

    The rows of a unit may be anywhere; one draw of ``ContributionOrder`` (only the rows of units with more than
    k rows are ordered: the first k of each in that order are kept).

    Examples
    --------
    >>> import numpy as np
    >>> mask = bound_contributions(np.array([0, 1, 0, 0, 1]), 2, np.random.default_rng(0))
    >>> int(mask[[0, 2, 3]].sum()), bool(mask[1] and mask[4])
    (2, True)
    """
    if units.size == 0:
        return None
    return ContributionOrder.draw(units, k, rng).kept(None)


class Prepared:
    """What a backend computes once and reuses across a session's queries: contribution orders, the rows each set of
    public choices keeps, and columns gathered over those rows — each under a public key (column names, conditions,
    declared keys; never a value), the least recently used dropped beyond ``limit`` entries so memory stays O(n).

    One :class:`Prepared` belongs to one generator (that of one session and its views): the order drawn from it is
    never used with another session's generator. Threads sharing a session compute each entry once (a lock).
    """

    def __init__(self, generator: np.random.Generator | None, limit: int = 12) -> None:
        self.generator = generator
        self.limit = limit
        self.orders: dict[tuple[str, int], ContributionOrder] = {}
        self._entries: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.RLock()

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """The entry under ``key``, computed on first use."""
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
            value = compute()
            self._entries[key] = value
            while len(self._entries) > self.limit:
                self._entries.popitem(last=False)
            return value

    def order(self, unit: str, k: int, units: Callable[[], NDArray[np.int64]]) -> ContributionOrder:
        """The contribution order of ``unit`` capped at ``k``, drawn once from this session's generator."""
        with self._lock:
            if (unit, k) not in self.orders:
                assert self.generator is not None, "the data's own entries draw nothing"
                self.orders[(unit, k)] = ContributionOrder.draw(units(), k, self.generator)
            return self.orders[(unit, k)]
