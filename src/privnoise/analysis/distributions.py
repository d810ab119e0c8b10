"""The distribution queries of a session: histograms, quantiles and top-k (the base class of
:class:`~privnoise.analysis.Session`, whose steps they use).

* ``histogram`` counts rows per public bin or declared category, one noise draw per cell (integers);
* ``quantile`` selects grid points of the declared bounds by the exponential mechanism
  (:mod:`privnoise.analysis.quantiles`); its accuracy is a rank radius in rows, and no interval in value units
  follows from public information (:meth:`~privnoise.analysis.Estimate.confidence_interval` says why);
* ``top_k`` selects the declared categories with the most rows by noisy max.

Each takes ``dry_run=True`` (:mod:`privnoise.analysis.dry_run`): its price and accuracy, nothing charged or read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from .._validation import check_positive_int
from ..core import Bounds
from ..dp.exponential import check_noisy_max_method, is_bounded_range, report_noisy_max
from ..exceptions import InvalidParameterError
from ..planning.estimates import rank_radius, vector_interval
from ..planning.plan import split
from .arguments import categories as category_list
from .arguments import edges, levels
from .dry_run import DryRun, NoiseRadius, RankRadius
from .estimate import RANK, Estimate
from .quantiles import grid_steps, quantile_blocks, sample_quantile
from .steps import SessionSteps

if TYPE_CHECKING:
    pass

__all__ = ["DistributionQueries"]

_TOP = "noise only: with this probability each selected category's row count is within this many rows of the " \
       "largest remaining count"


class DistributionQueries(SessionSteps):
    """:meth:`histogram`, :meth:`quantile` and :meth:`top_k` of :class:`~privnoise.analysis.Session` (module
    docstring; the session's steps are declared here and defined there)."""

    @overload
    def histogram(self, column: str, *, bins: Sequence[float] | None = None, categories: Sequence[Any] | None = None,
                  epsilon: float | None = None, rho: float | None = None,
                  dry_run: Literal[False] = False) -> Estimate: ...
    @overload
    def histogram(self, column: str, *, bins: Sequence[float] | None = None, categories: Sequence[Any] | None = None,
                  epsilon: float | None = None, rho: float | None = None, dry_run: Literal[True]) -> DryRun: ...
    def histogram(self, column: str, *, bins: Sequence[float] | None = None, categories: Sequence[Any] | None = None,
                  epsilon: float | None = None, rho: float | None = None, dry_run: bool = False) -> Estimate | DryRun:
        """Row counts per public bin (``bins``: edges; values clamped to [first, last]) or per declared category
        (rows of other categories are not counted); integers, one noise draw per cell."""
        if (bins is None) == (categories is None):
            raise InvalidParameterError("`histogram` needs exactly one of `bins` (edges) and `categories`.")
        plan = self._plan("histogram", epsilon, rho)
        if bins is not None:
            name = self._value_column(column, "histogram", dry_run)
            found = edges(bins)
            request = self._request("histogram", name, Bounds(found[0], found[-1]), edges=found)
            keys: list[Any] = [f"[{lo:g}, {hi:g})" for lo, hi in zip(found[:-1], found[1:], strict=True)]
        else:
            name = self._backend.check_column(column, "column")
            cats = category_list(categories, "histogram")
            request = self._request("categories", name, categories=cats)
            keys = list(cats)
        component = plan.add("cells", plan.adjacency.cells(1.0, 1.0, plan.norm), plan.price, integer=True,
                             vector=True, unit_cells=plan.adjacency.several_cells, discrete=True)
        if dry_run:
            return self._dry_run(plan, {"column": name, "bins": keys}, NoiseRadius(component.law, "rows per cell"))
        aggregates = self._run(plan, request)

        def finish(noisy: dict[str, Any]) -> dict[str, Any]:
            cells = noisy["cells"]
            return {"value": np.maximum(cells, 0.0), "interval": vector_interval(cells, component.law, low=0.0),
                    "clamped": cells < 0, "keys": keys}

        return self._execute(plan, {"cells": aggregates.cells[0]}, {"column": name, "bins": keys}, finish)

    @overload
    def quantile(self, column: str, q: float | Sequence[float], *, bounds: Sequence[float],
                 epsilon: float | None = None, rho: float | None = None, resolution: int = 1 << 14,
                 dry_run: Literal[False] = False) -> Estimate: ...
    @overload
    def quantile(self, column: str, q: float | Sequence[float], *, bounds: Sequence[float],
                 epsilon: float | None = None, rho: float | None = None, resolution: int = 1 << 14,
                 dry_run: Literal[True]) -> DryRun: ...
    def quantile(self, column: str, q: float | Sequence[float], *, bounds: Sequence[float],
                 epsilon: float | None = None, rho: float | None = None, resolution: int = 1 << 14,
                 dry_run: bool = False) -> Estimate | DryRun:
        """Quantiles of ``column`` by the exponential mechanism over a grid of ``bounds`` with at least
        ``resolution`` steps (:mod:`privnoise.analysis.quantiles`); several levels split the budget evenly.

        The accuracy is a rank radius (``accuracy(alpha)``, in rows): no interval in value units follows from
        public information (``confidence_interval`` says so)."""
        name = self._value_column(column, "quantile", dry_run)
        b = self._bounds(bounds, "quantile")
        found = levels(q)
        steps = check_positive_int(resolution, "resolution", "quantile", minimum=2)
        plan = self._plan("quantile", epsilon, rho)
        eps = plan.calibrating.selection_epsilon(split(plan.price, len(found)))
        for _ in found:
            plan.selection(eps)
        step, low, high = grid_steps(b.low, b.high, steps)
        scalar = isinstance(q, int | float)
        query = {"column": name, "q": found, "bounds": [b.low, b.high], "grid": step, "epsilon_each": eps}
        if dry_run:  # every grid point is a candidate: the radius needs no data
            radii = [rank_radius(eps, plan.adjacency.quantile_score(v), high - low + 1) for v in found]
        else:
            aggregates = self._run(plan, self._request("grid", name, b, grid=(step, low, high)))
            values, radii = [], []
            for level in found:
                blocks = quantile_blocks(aggregates.grid_points, aggregates.grid_counts, level, low, high, step)
                sensitivity = plan.adjacency.quantile_score(level)
                values.append(sample_quantile(blocks, eps, sensitivity, None, self._generator))
                radii.append(rank_radius(eps, sensitivity, blocks.candidates))

        def radius(level: float) -> Any:
            each = [r(level) for r in radii]
            return each[0] if scalar else np.array(each)

        if dry_run:
            return self._dry_run(plan, query, RankRadius(radius))
        value = values[0] if scalar else np.array(values)
        return self._execute(plan, {}, query, lambda _: {"value": value, "radius": radius, "meaning": RANK})

    @overload
    def top_k(self, column: str, *, candidates: Sequence[Any], k: int = 1, epsilon: float | None = None,
              rho: float | None = None, method: str = "exponential", dry_run: Literal[False] = False) -> Estimate: ...
    @overload
    def top_k(self, column: str, *, candidates: Sequence[Any], k: int = 1, epsilon: float | None = None,
              rho: float | None = None, method: str = "exponential", dry_run: Literal[True]) -> DryRun: ...
    def top_k(self, column: str, *, candidates: Sequence[Any], k: int = 1, epsilon: float | None = None,
              rho: float | None = None, method: str = "exponential", dry_run: bool = False) -> Estimate | DryRun:
        """The ``k`` declared categories of ``column`` with the most rows, best first (noisy max: the exponential
        mechanism, or report-noisy-max with Laplace noise; ε/k per selected category)."""
        name = self._backend.check_column(column, "column")
        cats = category_list(candidates, "top_k")
        chosen = check_positive_int(k, "k", "top_k")
        if chosen > len(cats):
            raise InvalidParameterError(f"`k` of `top_k` must be ≤ the {len(cats)} candidates; got {chosen}.")
        bounded = is_bounded_range(check_noisy_max_method(method, "top_k"))
        plan = self._plan("top_k", epsilon, rho)
        eps = plan.calibrating.selection_epsilon(plan.price, bounded_range=bounded)
        for _ in range(chosen):
            plan.selection(eps / chosen, bounded_range=bounded)
        per_count, monotone = plan.adjacency.count(), plan.adjacency.monotone_counts
        radius = rank_radius(eps / chosen, per_count, len(cats), monotone=monotone)
        query = {"column": name, "k": chosen, "method": method}
        if dry_run:
            return self._dry_run(plan, query, RankRadius(radius))
        aggregates = self._run(plan, self._request("categories", name, categories=cats))
        order = report_noisy_max(aggregates.cells[0], eps, sensitivity=per_count, k=chosen,
                                 monotone=monotone, method=method, rng=self._generator)  # type: ignore[arg-type]
        selected = [cats[int(i)] for i in order]
        return self._execute(plan, {}, query,
                             lambda _: {"value": selected, "radius": radius, "keys": selected, "meaning": _TOP})
