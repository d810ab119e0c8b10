"""The analyst's session: one-call differentially private releases with privacy units, budgets and accuracy.

>>> import numpy as np, privnoise as pn
>>> data = {"household": np.repeat(np.arange(200), 4), "kwh": np.tile([1.0, 2.0, 3.0, 4.0], 200)}
>>> s = pn.Session(data, privacy_unit="household", max_contributions=4, epsilon=1.0, delta=1e-6, rng=7)
>>> rel = s.mean("kwh", bounds=(0, 10), epsilon=0.5)
>>> bool(abs(rel.value - 2.5) < 1.0), rel.guarantee.epsilon
(True, 0.5)
>>> low, high = rel.confidence_interval(0.95)
>>> bool(low < rel.value < high)
True
>>> s.remaining().epsilon
0.5

Every query: validates its parameters and the columns it names (no data touched but the missing-value check of the
"error" policy); prices itself from public parameters only (:mod:`privnoise.analysis.plans`); charges the budget,
refused exactly before any aggregate is computed (:mod:`privnoise.analysis.ledger`); asks the backend for the exact
aggregates of the contribution-bounded, clamped data (:mod:`privnoise.analysis.backend`); draws the noise once,
centrally, from the session's cryptographically strong generator; and returns an
:class:`~privnoise.analysis.estimate.Estimate` with its guarantee and accuracy.

Neighbouring databases differ by all the rows of one privacy unit (``privacy_unit``; every row its own unit when
None), of which at most ``max_contributions`` are kept, chosen at random. :meth:`Session.where` filters the rows
(:mod:`privnoise.analysis.filters`); :meth:`Session.group_by` groups by one key column or several
(:mod:`privnoise.analysis.grouping`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validation import check_positive_int, check_probability, describe
from ..core import UnitAddedOrRemoved
from ..core.predicates import describe_filter
from ..dp.exponential import check_noisy_max_method, is_bounded_range, report_noisy_max
from ..engines import engine_for
from ..exceptions import InvalidParameterError
from ..guarantees import DifferentialPrivacyGuarantee, Guarantee
from ..io.missing import validate_missing
from ..random import RNGLike, default_rng
from .backend import AggregateRequest, Aggregates, Backend, InMemoryBackend
from .conveniences import DerivedQueries
from .estimate import RANK, Estimate
from .filters import FilterViews
from .grouping import GroupBy, GroupQueries
from .ledger import Ledger, Remaining
from .plans import (
    Bounds,
    Plan,
    rank_radius,
    ratio_estimate,
    split,
    variance_estimate,
    vector_interval,
)
from .quantiles import grid_steps, quantile_blocks, sample_quantile, score_sensitivity
from .sql_queries import SqlQueries
from .table import Table

__all__ = ["GroupBy", "Session"]

_OWNER = "Session"


class Session(FilterViews, GroupQueries, DerivedQueries, SqlQueries):
    """Differentially private releases from one dataset under one budget.

    Parameters
    ----------
    data : DataFrame, Table, mapping of columns, CSV/Parquet path, or a :class:`~privnoise.analysis.Backend`
        pandas or polars DataFrame, pyarrow Table, ``{"name": array}``, a ``.csv``/``.parquet`` file; a Dask
        DataFrame (:func:`privnoise.io.dask_parquet`) is aggregated on its cluster
        (:class:`privnoise.scale.DaskBackend`).
    privacy_unit : str, optional
        The column identifying whose rows are protected together (a household, a person). None: each row.
    max_contributions : int, default 1
        k: at most k rows of a unit are used (chosen at random with the session's generator); every sensitivity
        scales with k (:mod:`privnoise.analysis.plans`).
    epsilon, delta : float
        The session's total budget (ε, δ).
    accountant : {"pure", "approximate", "advanced", "pld", "rdp", "zcdp"}, optional
        How queries compose (:mod:`privnoise.analysis.ledger`); default "pure" when δ = 0, else "approximate".
        "zcdp" and "rdp" spend ρ and use Gaussian noise by default, the others spend ε and use Laplace noise.
    noise : str, optional
        The noise family by its registered name (:mod:`privnoise.dp.families`), of the accountant's currency;
        default "laplace" for the accountants of ε, "gaussian" for those of ρ.
    missing : "error", "drop" or float, default "error"
        Missing values (null, None, NaN): refuse, drop the row, or impute the constant (clamped to the bounds
        like any value, so no sensitivity changes; a dropped row is simply not one of the unit's k rows).
    rng : None, int or numpy.random.Generator
        Randomness: None is the cryptographically strong generator (an int seed is for research only).
    """

    def __init__(
        self,
        data: Any,
        *,
        privacy_unit: str | None = None,
        max_contributions: int = 1,
        epsilon: float,
        delta: float = 0.0,
        accountant: str | None = None,
        missing: Any = "error",
        noise: str | None = None,
        rng: RNGLike = None,
    ) -> None:
        check_probability(delta, "delta", _OWNER)
        self._ledger = Ledger(accountant or ("pure" if not delta else "approximate"), epsilon, delta, noise)
        self.max_contributions = check_positive_int(max_contributions, "max_contributions", _OWNER)
        self._neighbours = UnitAddedOrRemoved(self.max_contributions)
        self.missing = validate_missing(missing, _OWNER)
        self._generator = default_rng(rng)
        self._backend: Backend = data if isinstance(data, Backend) else backend_for(data)
        if privacy_unit is None and self.max_contributions != 1:
            raise InvalidParameterError(
                f"`max_contributions` of `{_OWNER}` needs `privacy_unit` (the column whose rows are capped)."
            )
        self.privacy_unit = None if privacy_unit is None else self._backend.check_column(privacy_unit, "privacy_unit")
        self.conditions = ()

    # -- budget ----------------------------------------------------------------------------------------------------
    @property
    def accountant(self) -> str:
        return self._ledger.mode

    def remaining(self) -> Remaining:
        """The budget left: ε (exact where the accountant is), δ not yet spent, and ρ for "zcdp"."""
        return self._ledger.remaining()

    def spent(self) -> DifferentialPrivacyGuarantee:
        """The (ε, δ) spent by all queries so far (at the session's δ)."""
        return self._ledger.spent()

    # -- shared steps ----------------------------------------------------------------------------------------------
    @property
    def adjacency(self) -> str:
        if self.privacy_unit is None:
            return "one row added or removed"
        return f"one unit of {self.privacy_unit!r} added or removed (at most {self.max_contributions} rows used)"

    def _plan(self, label: str, epsilon: Any, rho: Any) -> Plan:
        price = self._ledger.price(epsilon, rho, label)
        return Plan(label, self._ledger.family, price=price)

    def _bounds(self, bounds: Any, owner: str) -> Bounds:
        try:
            low, high = (float(b) for b in bounds)
        except (TypeError, ValueError):
            raise InvalidParameterError(f"`bounds` of `{owner}` must be a pair (low, high); got {describe(bounds)}.") from None
        if not (np.isfinite(low) and np.isfinite(high) and low < high):
            raise InvalidParameterError(f"`bounds` of `{owner}` must be finite with low < high; got ({low:g}, {high:g}).")
        return Bounds(low, high)

    def _value_column(self, column: Any, owner: str) -> str:
        name = self._backend.check_column(column, "column")
        if self.missing == "error" and (self._backend.count_missing_where(name, self.conditions) if self.conditions
                                        else self._backend.count_missing(name)):
            raise InvalidParameterError(
                f"column {name!r} of `{owner}` has missing values and the session's policy is missing='error'; "
                "pass missing='drop' or a number to impute to Session."
            )
        return name

    def _request(self, kind: Any, column: str | None, bounds: Bounds | None = None, **extra: Any) -> AggregateRequest:
        return AggregateRequest(
            kind,
            column,
            None if bounds is None else (bounds.low, bounds.high),
            self.missing,
            self.privacy_unit,
            self.max_contributions,
            where=self.conditions,
            **extra,
        )

    def _run(self, plan: Plan, request: AggregateRequest) -> Aggregates:
        self._ledger.charge(plan.cost())  # refused exactly before any aggregate is computed
        return self._backend.aggregate(request, self._generator)

    def _guarantee(self, plan: Plan) -> Guarantee:
        return plan.family.guarantee(plan.price, plan.delta, self.adjacency)

    def _estimate(self, plan: Plan, value: Any, query: dict[str, Any], **fields: Any) -> Estimate:
        noise = [c.describe() for c in plan.components.values()]
        query = {"query": plan.label, **query, "accountant": self.accountant, "max_contributions": self.max_contributions}
        if self.conditions:
            query["where"] = describe_filter(self.conditions)
        total = plan.components.get("sum")
        if total is not None and plan.label in ("sum", "mean", "group sum", "group mean"):
            fields["fisher_information"] = float(total.noise.fisher_information())  # type: ignore[attr-defined]
        return Estimate(value, self._guarantee(plan), query, noise=noise, **fields)

    # -- scalar queries --------------------------------------------------------------------------------------------
    def count(self, column: str | None = None, *, epsilon: float | None = None, rho: float | None = None) -> Estimate:
        """The number of rows (with a value in ``column`` when the policy drops missing ones), as an integer."""
        name = None if column is None else self._value_column(column, "count")
        plan = self._plan("count", epsilon, rho)
        component = plan.add("count", self._neighbours.count(), plan.price, integer=True, discrete=True)
        aggregates = self._run(plan, self._request("moments", name))
        noisy = component.add(aggregates.count, self._generator)
        return self._estimate(plan, int(max(noisy[0], 0.0)), {"column": name},
                              interval=vector_interval(noisy[0], component.law, low=0.0), clamped=bool(noisy[0] < 0))

    def sum(self, column: str, *, bounds: Sequence[float], epsilon: float | None = None,
            rho: float | None = None) -> Estimate:
        """The sum of ``column`` clamped to ``bounds``."""
        name = self._value_column(column, "sum")
        b = self._bounds(bounds, "sum")
        plan = self._plan("sum", epsilon, rho)
        component = plan.add("sum", self._neighbours.sum(b.low, b.high), plan.price)
        aggregates = self._run(plan, self._request("moments", name, b))
        noisy = float(component.add(aggregates.sum, self._generator)[0])
        low = 0.0 if b.low >= 0 else None
        high = 0.0 if b.high <= 0 else None
        value = float(np.clip(noisy, low if low is not None else -np.inf, high if high is not None else np.inf))
        return self._estimate(plan, value, {"column": name, "bounds": [b.low, b.high]},
                              interval=vector_interval(np.asarray(noisy), component.law, low=low, high=high),
                              clamped=value != noisy)

    def mean(self, column: str, *, bounds: Sequence[float], epsilon: float | None = None,
             rho: float | None = None) -> Estimate:
        """The mean of ``column`` clamped to ``bounds``: noisy Σ(x − c) over a noisy count (half the budget each)."""
        name = self._value_column(column, "mean")
        b = self._bounds(bounds, "mean")
        plan = self._plan("mean", epsilon, rho)
        total = plan.add("sum", self._neighbours.sum(-b.half, b.half), split(plan.price, 2))
        count = plan.add("count", self._neighbours.count(), split(plan.price, 2))
        aggregates = self._run(plan, self._request("moments", name, b, centre=b.centre))
        s_hat = total.add(aggregates.sum, self._generator)
        n_hat = count.add(aggregates.count, self._generator)
        values, clamped, interval = ratio_estimate(s_hat, n_hat, b, total.law, count.law)

        def scalar(level: float) -> tuple[Any, Any, Any]:
            low, high, coverage = interval(level)
            return float(low[0]), float(high[0]), coverage

        return self._estimate(plan, float(values[0]), {"column": name, "bounds": [b.low, b.high]},
                              interval=scalar, clamped=bool(clamped[0]))

    def variance(self, column: str, *, bounds: Sequence[float], epsilon: float | None = None,
                 rho: float | None = None) -> Estimate:
        """The (population) variance of ``column`` clamped to ``bounds`` (count, Σ(x − c), Σ(x − c)² at a third
        of the budget each)."""
        name = self._value_column(column, "variance")
        b = self._bounds(bounds, "variance")
        plan = self._plan("variance", epsilon, rho)
        part = split(plan.price, 3)
        count = plan.add("count", self._neighbours.count(), part)
        first = plan.add("sum", self._neighbours.sum(-b.half, b.half), part)
        second = plan.add("sum of squares", self._neighbours.sum(0.0, b.half**2), part)
        aggregates = self._run(plan, self._request("moments", name, b, centre=b.centre))
        n_hat = float(count.add(aggregates.count, self._generator)[0])
        s1 = float(first.add(aggregates.sum, self._generator)[0])
        s2 = float(second.add(aggregates.sum_squares, self._generator)[0])
        value, clamped, interval = variance_estimate(n_hat, s1, s2, b, (count.law, first.law, second.law))
        return self._estimate(plan, value, {"column": name, "bounds": [b.low, b.high]}, interval=interval,
                              clamped=clamped)

    # -- distributions ---------------------------------------------------------------------------------------------
    def histogram(self, column: str, *, bins: Sequence[float] | None = None, categories: Sequence[Any] | None = None,
                  epsilon: float | None = None, rho: float | None = None) -> Estimate:
        """Row counts per public bin (``bins``: edges; values clamped to [first, last]) or per declared category
        (rows of other categories are not counted); integers, one noise draw per cell."""
        if (bins is None) == (categories is None):
            raise InvalidParameterError("`histogram` needs exactly one of `bins` (edges) and `categories`.")
        plan = self._plan("histogram", epsilon, rho)
        k = self.max_contributions
        if bins is not None:
            name = self._value_column(column, "histogram")
            edges = _edges(bins)
            request = self._request("histogram", name, Bounds(edges[0], edges[-1]), edges=edges)
            keys: list[Any] = [f"[{lo:g}, {hi:g})" for lo, hi in zip(edges[:-1], edges[1:], strict=True)]
        else:
            name = self._backend.check_column(column, "column")
            cats = _categories(categories, "histogram")
            request = self._request("categories", name, categories=cats)
            keys = list(cats)
        component = plan.add("cells", self._neighbours.cells(1.0, 1.0, plan.norm), plan.price, integer=True,
                             vector=True, unit_cells=k > 1, discrete=True)
        aggregates = self._run(plan, request)
        noisy = component.add(aggregates.cells[0], self._generator)
        return self._estimate(plan, np.maximum(noisy, 0.0), {"column": name, "bins": keys},
                              interval=vector_interval(noisy, component.law, low=0.0), clamped=noisy < 0, keys=keys)

    def quantile(self, column: str, q: float | Sequence[float], *, bounds: Sequence[float],
                 epsilon: float | None = None, rho: float | None = None, resolution: int = 1 << 14) -> Estimate:
        """Quantiles of ``column`` by the exponential mechanism over a grid of ``bounds`` with at least
        ``resolution`` steps (:mod:`privnoise.analysis.quantiles`); several levels split the budget evenly."""
        name = self._value_column(column, "quantile")
        b = self._bounds(bounds, "quantile")
        levels = _levels(q)
        steps = check_positive_int(resolution, "resolution", "quantile", minimum=2)
        plan = self._plan("quantile", epsilon, rho)
        share = split(plan.price, len(levels))
        eps = plan.family.selection_epsilon(share)
        for _ in levels:
            plan.selection(eps)
        step, low, high = grid_steps(b.low, b.high, steps)
        aggregates = self._run(plan, self._request("grid", name, b, grid=(step, low, high)))
        values, radii = [], []
        for level in levels:
            blocks = quantile_blocks(aggregates.grid_points, aggregates.grid_counts, level, low, high, step)
            sensitivity = score_sensitivity(level, self.max_contributions)
            values.append(sample_quantile(blocks, eps, sensitivity, None, self._generator))
            radii.append(rank_radius(eps, sensitivity, blocks.candidates))
        scalar = isinstance(q, int | float)
        value = values[0] if scalar else np.array(values)

        def radius(level: float) -> Any:
            found = [r(level) for r in radii]
            return found[0] if scalar else np.array(found)

        return self._estimate(plan, value, {"column": name, "q": levels, "bounds": [b.low, b.high], "grid": step,
                                            "epsilon_each": eps}, radius=radius, meaning=RANK)

    def top_k(self, column: str, *, candidates: Sequence[Any], k: int = 1, epsilon: float | None = None,
              rho: float | None = None, method: str = "exponential") -> Estimate:
        """The ``k`` declared categories of ``column`` with the most rows, best first (noisy max: the exponential
        mechanism, or report-noisy-max with Laplace noise; ε/k per selected category)."""
        name = self._backend.check_column(column, "column")
        cats = _categories(candidates, "top_k")
        chosen = check_positive_int(k, "k", "top_k")
        if chosen > len(cats):
            raise InvalidParameterError(f"`k` of `top_k` must be ≤ the {len(cats)} candidates; got {chosen}.")
        bounded = is_bounded_range(check_noisy_max_method(method, "top_k"))
        plan = self._plan("top_k", epsilon, rho)
        eps = plan.family.selection_epsilon(plan.price, bounded_range=bounded)
        for _ in range(chosen):
            plan.selection(eps / chosen, bounded_range=bounded)
        aggregates = self._run(plan, self._request("categories", name, categories=cats))
        order = report_noisy_max(aggregates.cells[0], eps, sensitivity=float(self.max_contributions), k=chosen,
                                 monotone=True, method=method, rng=self._generator)  # type: ignore[arg-type]
        selected = [cats[int(i)] for i in order]
        radius = rank_radius(eps / chosen, float(self.max_contributions), len(cats), monotone=True)
        return self._estimate(plan, selected, {"column": name, "k": chosen, "method": method}, radius=radius,
                              keys=selected,
                              meaning="noise only: with this probability each selected category's row count is "
                              "within this many rows of the largest remaining count")


def backend_for(data: Any) -> Backend:
    """The backend of a session's data: data of a distributed engine (:mod:`privnoise.engines`: Dask data frames)
    aggregates on its cluster, the rest in memory."""
    engine = engine_for(data)
    if engine is not None:
        return engine.backend(data)
    return InMemoryBackend(Table(data))


def _edges(bins: Any) -> tuple[float, ...]:
    try:
        edges = np.asarray(bins, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"`bins` of `histogram` must be numbers (edges); got {describe(bins)}.") from None
    if edges.ndim != 1 or edges.size < 2 or not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0):
        raise InvalidParameterError(
            f"`bins` of `histogram` must be at least two finite, strictly increasing edges; got {describe(bins)}."
        )
    return tuple(float(e) for e in edges)


def _categories(values: Any, owner: str) -> tuple[Any, ...]:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        raise InvalidParameterError(f"the categories of `{owner}` must be a list of values; got {describe(values)}.")
    cats = tuple(v.item() if isinstance(v, np.generic) else v for v in values)
    if not cats or len(set(cats)) != len(cats):
        raise InvalidParameterError(f"the categories of `{owner}` must be a non-empty list of distinct values.")
    return cats


def _levels(q: Any) -> list[float]:
    values = [q] if isinstance(q, int | float) else list(q) if isinstance(q, Sequence | np.ndarray) else None
    if not values or not all(isinstance(v, int | float | np.floating) and 0.0 <= float(v) <= 1.0 for v in values):
        raise InvalidParameterError(f"`q` of `quantile` must be a level in [0, 1] or a list of them; got {describe(q)}.")
    return [float(v) for v in values]
