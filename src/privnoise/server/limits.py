"""Bounds on the work a query costs before its querier's budget is checked (SECURITY.md, requirements 15 and 21).

A request body that is not in the plan cache is parsed and planned (:mod:`.planner`: calibration and one SQL
statement compiled by SQLAlchemy), which costs CPU before the charge can refuse it. That work is bounded here:

* **Size.** A ``group by`` has at most :data:`MAX_KEY_COLUMNS` key columns and, on several declared ones, at most
  :data:`MAX_CELLS` cells (the product of their categories); either is refused with 422 naming the limit, before
  the query is planned. :func:`parameter_bound` is an upper bound, computed from the parsed query's shape alone, of the
  number of bound parameters of its statement; a query above :data:`MAX_PARAMETERS` is refused with 422 naming
  the limit, before it is planned. Planning is linear in the number of parameters (the compiled statement's
  parameters are built once), so this also bounds its time: a query at the limit plans in about 0.1 s on one
  core of the reference machine.
* **Place.** Parsing and planning run in a worker thread, at most :data:`PLANNING_THREADS` at a time per
  process, never in the event loop (cached plans are found in the loop without a hand-over).
* **Per querier.** A querier has at most :data:`PLANNINGS_PER_QUERIER` plannings in flight; one more waits idle
  (timers, no CPU) for one of them to finish — and takes the plan from the cache when it was the same body — and is
  refused with 429 (``rate``) when none finishes within :data:`PLANNING_WAIT` seconds. A querier whose budget on a dataset cannot pay for any of
  its policies is remembered as exhausted there (:class:`Exhausted`) after its first refusal, and its later
  queries on that dataset are refused with 429 before they are parsed or planned. Both refusals are sent after
  an idle wait of :data:`REFUSAL_DELAY` seconds (a timer, no CPU), so that a flood of them over a few
  connections cannot take the event loop from the other queriers.
* **Memory.** The plan cache is bounded in bytes (:func:`plan_bytes`, :data:`PLAN_CACHE_BYTES`) as well as in
  entries.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from ..core.conditions import Condition
from ..core.predicates import InList, Predicate, atoms_of

if TYPE_CHECKING:  # no import at run time: the query language and the vectors read their limits here
    from .queryspec import QuerySpec

__all__ = [
    "EXHAUSTED_SECONDS",
    "MAX_CELLS",
    "MAX_KEY_COLUMNS",
    "MAX_PARAMETERS",
    "PLANNINGS_PER_QUERIER",
    "PLANNING_THREADS",
    "PLANNING_WAIT",
    "PLAN_CACHE_BYTES",
    "REFUSAL_DELAY",
    "Exhausted",
    "PlanningSlots",
    "filter_size",
    "parameter_bound",
    "plan_bytes",
]

#: The most bound parameters a query's statement may have (by :func:`parameter_bound`).
MAX_PARAMETERS = 4096
#: The most key columns of a ``group by`` clause (refused by the parser).
MAX_KEY_COLUMNS = 4
#: The most cells of a group-by on several declared key columns: the product of their numbers of categories
#: (refused before planning, :func:`~.answers.check_size`, and by the planner).
MAX_CELLS = 256
#: Plannings in flight per querier (per server process).
PLANNINGS_PER_QUERIER = 2
#: Seconds a query waits for one of its querier's planning slots before it is refused with 429.
PLANNING_WAIT = 10.0
#: Worker threads that plan at once (per server process).
PLANNING_THREADS = 2
#: Bytes the cached plans of one process may take (estimated by :func:`plan_bytes`).
PLAN_CACHE_BYTES = 64 << 20
#: Seconds a refusal known before planning (exhausted, too many plannings) waits, idle, before it is sent.
REFUSAL_DELAY = 0.25
#: How long a querier is remembered as exhausted on a dataset before the database is asked again.
EXHAUSTED_SECONDS = 30.0

_PER_CONDITION = 8  # a clamped column, the literal and the indicator's constants (per listed value of an IN)
_PER_CONNECTIVE = 4  # a test below NOT, AND or OR: its negation's constant and the connective's (.weights)
_PER_CELL = 24  # a cell's test (bin edges or key), the weight's and the sum's constants
_PER_COEFFICIENT = 5  # a clamped column and its coefficient
_PER_KEY = 8  # the indicator of one more key column in a cell's test (the key and the indicator's constants)
_COMPONENTS = {"count": 1, "sum": 1, "linear": 1, "identity": 1, "histogram": 1, "quantile": 1,
               "mean": 2, "weighted_mean": 2, "variance": 3}


def parameter_bound(query: QuerySpec, categories: int = 0) -> int:
    """An upper bound of the bound parameters of ``query``'s statement, from its shape alone.

    ``categories``: the number of declared keys of the column it groups by or counts, or the number of cells of a
    group-by on several key columns (0 when it has none). Each cell of each component is
    ``sum(weight * test * value)``: the weight has one indicator per ``where`` test (:func:`filter_size`), the
    test one per cell (bins or keys; one per key column on several), the value one clamped column (or one per
    coefficient).
    """
    if query.bins:
        cells = max(len(query.bins) - 1, 1)
    elif query.group_by is not None or query.kind == "histogram":
        cells = max(categories, 1)
    else:
        cells = 1
    components = _COMPONENTS.get(query.kind, 3) + (1 if query.group_by is not None else 0)
    per_cell = _PER_CELL + filter_size(query.where) + _PER_COEFFICIENT * len(query.coefficients)
    per_cell += _PER_KEY * max(len(query.key_columns()) - 1, 0)
    return components * cells * per_cell + 8


def filter_size(where: tuple[Predicate, ...]) -> int:
    """An upper bound of the bound parameters of a record's filter weight (:mod:`.weights`): one indicator per
    test, per listed value of an ``IN``, and the constants of ``NOT``, ``AND`` and ``OR`` around a compound one."""
    size = 0
    for predicate in where:
        for atom in atoms_of((predicate,)):
            size += _PER_CONDITION * (len(atom.values) if isinstance(atom, InList) else 1)
            size += 0 if isinstance(predicate, Condition) else _PER_CONNECTIVE
    return size


def plan_bytes(plan: Any) -> int:
    """An estimate of the memory a cached plan holds: its SQL text, its parameters and the statement they were
    compiled from (about 400 bytes per parameter, measured), and a fixed part (noise, calibration, views)."""
    return 16_384 + 2 * len(plan.sql) + 400 * len(plan.parameters)


class PlanningSlots:
    """At most ``per_querier`` plannings in flight per querier (thread-safe)."""

    def __init__(self, per_querier: int = PLANNINGS_PER_QUERIER) -> None:
        self.per_querier = per_querier
        self._busy: dict[int, int] = {}
        self._lock = threading.Lock()

    def take(self, querier_id: int) -> bool:
        with self._lock:
            n = self._busy.get(querier_id, 0)
            if n >= self.per_querier:
                return False
            self._busy[querier_id] = n + 1
            return True

    def give(self, querier_id: int) -> None:
        with self._lock:
            n = self._busy.pop(querier_id, 1) - 1
            if n > 0:
                self._busy[querier_id] = n


class Exhausted:
    """Queriers known to have no budget left on a dataset for any of its policies, with their remaining budget
    view, each remembered for ``seconds`` (at most ``tracked`` entries, the oldest dropped first)."""

    def __init__(self, seconds: float = EXHAUSTED_SECONDS, *, tracked: int = 100_000) -> None:
        self.seconds = seconds
        self.tracked = tracked
        self._until: dict[tuple[int, str], tuple[float, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def mark(self, querier_id: int, dataset: str, remaining: dict[str, Any]) -> None:
        with self._lock:
            self._until.pop((querier_id, dataset), None)
            self._until[(querier_id, dataset)] = (time.monotonic() + self.seconds, remaining)
            while len(self._until) > self.tracked:
                self._until.pop(next(iter(self._until)))

    def remaining(self, querier_id: int, dataset: str) -> dict[str, Any] | None:
        """The remaining budget view of an exhausted querier on ``dataset``, or None when it is not known to be."""
        entry = self._until.get((querier_id, dataset))
        if entry is None:
            return None
        if entry[0] < time.monotonic():
            with self._lock:
                self._until.pop((querier_id, dataset), None)
            return None
        return entry[1]
