"""Queries a session derives from its others: ``median``, ``percentile`` and ``count_distinct`` of the privacy unit.

* ``median(column, bounds=...)`` is ``quantile(column, 0.5, bounds=...)``, and ``percentile(column, p, ...)`` is
  ``quantile(column, p/100, ...)`` for p in [0, 100] (one value or several, splitting the budget evenly): the same
  exponential mechanism, guarantee and rank accuracy (:mod:`privnoise.analysis.quantiles`).
* ``count_distinct()`` is the number of distinct privacy units with at least one row (after the session's
  filters): a count of rows where each unit keeps one row. Adding or removing a unit changes it by exactly one,
  whatever the cap k, so its sensitivity is 1 (not k) and it spends the same budget as a count of rows with k = 1.
  Without a privacy unit, each row is a unit and it counts the rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import check_in_range
from ..exceptions import InvalidParameterError
from .plans import vector_interval

if TYPE_CHECKING:
    from .estimate import Estimate

__all__ = ["DerivedQueries"]


class DerivedQueries:
    """:meth:`median`, :meth:`percentile` and :meth:`count_distinct` of :class:`~privnoise.analysis.Session`."""

    privacy_unit: str | None

    def median(self, column: str, *, bounds: Sequence[float], epsilon: float | None = None, rho: float | None = None,
               resolution: int = 1 << 14) -> Estimate:
        """The median of ``column`` clamped to ``bounds``: :meth:`quantile` at 0.5."""
        return self.quantile(column, 0.5, bounds=bounds, epsilon=epsilon, rho=rho,  # type: ignore[attr-defined,no-any-return]
                             resolution=resolution)

    def percentile(self, column: str, p: float | Sequence[float], *, bounds: Sequence[float],
                   epsilon: float | None = None, rho: float | None = None, resolution: int = 1 << 14) -> Estimate:
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
        return self.quantile(column, q, bounds=bounds, epsilon=epsilon, rho=rho,  # type: ignore[attr-defined,no-any-return]
                             resolution=resolution)

    def count_distinct(self, *, epsilon: float | None = None, rho: float | None = None) -> Estimate:
        """The number of distinct privacy units with at least one row (module docstring), as an integer."""
        plan = self._plan("count distinct", epsilon, rho)  # type: ignore[attr-defined]
        component = plan.add("count", 1.0, plan.price, integer=True, discrete=True)
        request = replace(self._request("moments", None), max_contributions=1)  # type: ignore[attr-defined]
        aggregates = self._run(plan, request)  # type: ignore[attr-defined]
        noisy = component.add(aggregates.count, self._generator)  # type: ignore[attr-defined]
        return self._estimate(plan, int(max(noisy[0], 0.0)), {"privacy_unit": self.privacy_unit},  # type: ignore[attr-defined,no-any-return]
                              interval=vector_interval(noisy[0], component.law, low=0.0), clamped=bool(noisy[0] < 0))
