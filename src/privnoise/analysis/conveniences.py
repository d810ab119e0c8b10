"""Queries a session derives from its others: ``median``, ``percentile``, ``count_distinct`` of the privacy unit, and
``clamped_count``, the private diagnostic of the declared bounds.

* ``median(column, bounds=...)`` is ``quantile(column, 0.5, bounds=...)``, and ``percentile(column, p, ...)`` is
  ``quantile(column, p/100, ...)`` for p in [0, 100] (one value or several, splitting the budget evenly): the same
  exponential mechanism, guarantee and rank accuracy (:mod:`privnoise.analysis.quantiles`).
* ``count_distinct()`` is the number of distinct privacy units with at least one row (after the session's
  filters): a count of rows where each unit keeps one row. Adding or removing a unit changes it by exactly one,
  whatever the cap k, so its sensitivity is 1 (not k) and it spends the same budget as a count of rows with k = 1.
  Without a privacy unit, each row is a unit and it counts the rows.
* ``clamped_count(column, bounds=...)`` is the number of rows whose value of ``column`` lies outside ``bounds`` —
  the rows that clamping moves, whose share says how far a sum, mean or quantile over those bounds may be from that
  of the raw values. It is a count of the rows that satisfy the public condition ``column < low or column > high``
  (a filtered view, :mod:`privnoise.analysis.filters`): sensitivity k, charged like any count, and only when asked.
* ``units_over_cap()`` is the number of privacy units with more rows than the cap k — the units that contribution
  bounding cuts. Bounding keeps the first k rows of each unit in the session's random order, so a unit over the
  cap keeps exactly one more row under the cap k + 1 and any other unit the same rows: the number is the count
  of rows kept under k + 1 minus that under k, exactly. Adding or removing a unit changes it by at most one
  (sensitivity 1), so it is charged like a count of rows with k = 1, and only when asked.

Each takes ``dry_run=True`` (:mod:`privnoise.analysis.dry_run`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from .._validation import check_in_range
from ..core.conditions import checked_condition
from ..core.predicates import AnyOf
from ..exceptions import InvalidParameterError
from ..planning.estimates import count_finish
from .arguments import bounds_of
from .dry_run import DryRun, NoiseRadius
from .steps import SessionSteps

if TYPE_CHECKING:
    from .estimate import Estimate

__all__ = ["DerivedQueries"]

Budget = float | None


class DerivedQueries(SessionSteps):
    """:meth:`median`, :meth:`percentile`, :meth:`count_distinct` and :meth:`clamped_count` of
    :class:`~privnoise.analysis.Session` (its base class: the session's steps are declared here and defined
    there)."""

    @overload
    def median(self, column: str, *, bounds: Sequence[float], epsilon: Budget = None, rho: Budget = None,
               resolution: int = 1 << 14, dry_run: Literal[False] = False) -> Estimate: ...
    @overload
    def median(self, column: str, *, bounds: Sequence[float], epsilon: Budget = None, rho: Budget = None,
               resolution: int = 1 << 14, dry_run: Literal[True]) -> DryRun: ...
    def median(self, column: str, *, bounds: Sequence[float], epsilon: Budget = None, rho: Budget = None,
               resolution: int = 1 << 14, dry_run: bool = False) -> Estimate | DryRun:
        """The median of ``column`` clamped to ``bounds``: :meth:`quantile` at 0.5."""
        return self.quantile(column, 0.5, bounds=bounds, epsilon=epsilon, rho=rho,  # type: ignore[attr-defined]
                             resolution=resolution, dry_run=dry_run)

    @overload
    def percentile(self, column: str, p: float | Sequence[float], *, bounds: Sequence[float], epsilon: Budget = None,
                   rho: Budget = None, resolution: int = 1 << 14, dry_run: Literal[False] = False) -> Estimate: ...
    @overload
    def percentile(self, column: str, p: float | Sequence[float], *, bounds: Sequence[float], epsilon: Budget = None,
                   rho: Budget = None, resolution: int = 1 << 14, dry_run: Literal[True]) -> DryRun: ...
    def percentile(self, column: str, p: float | Sequence[float], *, bounds: Sequence[float], epsilon: Budget = None,
                   rho: Budget = None, resolution: int = 1 << 14, dry_run: bool = False) -> Estimate | DryRun:
        """The ``p``-th percentile(s) of ``column`` (p in [0, 100]): :meth:`quantile` at p/100."""
        if isinstance(p, int | float | np.integer | np.floating) and not isinstance(p, bool):
            q: Any = check_in_range(p, "p", "percentile", low=0.0, high=100.0) / 100.0
        else:
            try:
                values = list(p)  # type: ignore[arg-type]
            except TypeError:
                raise InvalidParameterError(f"`p` of `percentile` must be a number or a list of numbers in [0, 100]; "
                                            f"got {p!r}.") from None
            q = [check_in_range(v, "p", "percentile", low=0.0, high=100.0) / 100.0 for v in values]
        return self.quantile(column, q, bounds=bounds, epsilon=epsilon, rho=rho,  # type: ignore[attr-defined]
                             resolution=resolution, dry_run=dry_run)

    @overload
    def count_distinct(self, *, epsilon: Budget = None, rho: Budget = None,
                       dry_run: Literal[False] = False) -> Estimate: ...
    @overload
    def count_distinct(self, *, epsilon: Budget = None, rho: Budget = None, dry_run: Literal[True]) -> DryRun: ...
    def count_distinct(self, *, epsilon: Budget = None, rho: Budget = None,
                       dry_run: bool = False) -> Estimate | DryRun:
        """The number of distinct privacy units with at least one row (module docstring), as an integer."""
        plan = self._plan("count distinct", epsilon, rho)
        component = plan.add("count", 1.0, plan.price, integer=True, discrete=True)
        if dry_run:
            return self._dry_run(plan, {"privacy_unit": self.privacy_unit}, NoiseRadius(component.law, "units"))
        request = replace(self._request("moments", None), max_contributions=1)
        aggregates = self._run(plan, request)
        return self._execute(plan, {"count": aggregates.count}, {"privacy_unit": self.privacy_unit},
                             count_finish(component.law))

    @overload
    def units_over_cap(self, *, epsilon: Budget = None, rho: Budget = None,
                       dry_run: Literal[False] = False) -> Estimate: ...
    @overload
    def units_over_cap(self, *, epsilon: Budget = None, rho: Budget = None, dry_run: Literal[True]) -> DryRun: ...
    def units_over_cap(self, *, epsilon: Budget = None, rho: Budget = None,
                       dry_run: bool = False) -> Estimate | DryRun:
        """The number of privacy units with more than ``max_contributions`` rows (module docstring): a private
        count, sensitivity 1, of the units whose rows contribution bounding cuts.

        >>> import numpy as np, privnoise as pn
        >>> data = {"unit": np.repeat(np.arange(50), np.arange(50) % 5 + 1), "kwh": np.ones(150)}
        >>> s = pn.Session(data, privacy_unit="unit", max_contributions=3, epsilon=1.0, rng=5)
        >>> over = s.units_over_cap(epsilon=0.5)
        >>> over.query["query"], over.query["max_contributions"], over.value >= 0
        ('units over cap', 3, True)
        """
        if self.privacy_unit is None:
            raise InvalidParameterError("`units_over_cap` of `Session`: the session has no privacy unit, so every "
                                        "row is its own unit and none is over the cap; give `privacy_unit`.")
        plan = self._plan("units over cap", epsilon, rho)
        component = plan.add("count", 1.0, plan.price, integer=True, discrete=True)
        if dry_run:
            return self._dry_run(plan, {"privacy_unit": self.privacy_unit}, NoiseRadius(component.law, "units"))
        cap = self.max_contributions
        above = self._run(plan, replace(self._request("moments", None), max_contributions=cap + 1))
        within = self._backend.aggregate(replace(self._request("moments", None), max_contributions=cap),
                                         self._rows_generator)
        over = np.asarray(above.count) - np.asarray(within.count)
        return self._execute(plan, {"count": over}, {"privacy_unit": self.privacy_unit}, count_finish(component.law))

    @overload
    def clamped_count(self, column: str, *, bounds: Sequence[float], epsilon: Budget = None, rho: Budget = None,
                      dry_run: Literal[False] = False) -> Estimate: ...
    @overload
    def clamped_count(self, column: str, *, bounds: Sequence[float], epsilon: Budget = None, rho: Budget = None,
                      dry_run: Literal[True]) -> DryRun: ...
    def clamped_count(self, column: str, *, bounds: Sequence[float], epsilon: Budget = None, rho: Budget = None,
                      dry_run: bool = False) -> Estimate | DryRun:
        """The number of rows whose value of ``column`` lies outside ``bounds`` (module docstring): a private count,
        charged like :meth:`count`, of the values that a release over these bounds clamps.

        >>> import numpy as np, privnoise as pn
        >>> s = pn.Session({"kwh": np.arange(100.0)}, epsilon=1.0, rng=5)
        >>> outside = s.clamped_count("kwh", bounds=(0, 89), epsilon=0.5)
        >>> outside.query["query"], outside.query["bounds"], s.remaining().epsilon
        ('clamped count', [0.0, 89.0], 0.5)
        """
        name = self._backend.check_column(column, "column")
        b = bounds_of(bounds, "clamped_count")
        outside = AnyOf((checked_condition(name, "<", b.low), checked_condition(name, ">", b.high)))
        found = self.where(outside).count(epsilon=epsilon, rho=rho, dry_run=dry_run)
        query = {**found.query, "query": "clamped count", "column": name, "bounds": [b.low, b.high]}
        return replace(found, query=query)
