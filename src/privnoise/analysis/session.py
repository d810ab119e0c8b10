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
"error" policy); prices itself from public parameters only (:mod:`privnoise.planning.plan`); charges the budget,
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

import warnings
from collections.abc import Sequence
from typing import Any, Literal, overload

import numpy as np

from .._validation import check_positive_int, check_probability
from ..core import Bounds, RecordReplaced
from ..core.predicates import describe_filter
from ..exceptions import ContributionCapWarning, InvalidParameterError
from ..guarantees import DifferentialPrivacyGuarantee
from ..io.missing import validate_missing
from ..planning.estimates import count_finish, ratio_estimate, variance_estimate, vector_interval
from ..planning.plan import Finish, Plan, execute, split
from ..random import RNGLike, default_rng, derived_generator
from .arguments import backend_for, bounds_of, neighbours_of
from .backend import AggregateRequest, Aggregates, Backend
from .conveniences import DerivedQueries
from .distributions import DistributionQueries
from .dry_run import DryRun, NoiseRadius, RatioRadius, VarianceRadius, cost_of
from .estimate import Estimate
from .filters import FilterViews
from .grouping import GroupBy, GroupQueries
from .ledger import Ledger, Remaining
from .sql_queries import SqlQueries

__all__ = ["GroupBy", "Session", "backend_for"]

_OWNER = "Session"


class Session(FilterViews, GroupQueries, DistributionQueries, DerivedQueries, SqlQueries):
    """Differentially private releases from one dataset under one budget.

    Parameters
    ----------
    data : DataFrame, Table, mapping of columns, CSV/Parquet path, or a :class:`~privnoise.analysis.Backend`
        pandas or polars DataFrame, pyarrow Table, ``{"name": array}``, a ``.csv``/``.parquet`` file; a Dask
        DataFrame (:func:`privnoise.io.dask_parquet`) is aggregated on its cluster
        (:class:`privnoise.scale.DaskBackend`).
    privacy_unit : str, optional
        The column identifying whose rows are protected together (a household, a person). None: each row.
    max_contributions : int, optional
        k: at most k rows of a unit are used (chosen at random with the session's generator); every sensitivity
        scales with k (:mod:`privnoise.planning.plan`). Not given: 1 — one row of each unit, the others left out
        of every release (counts then count units, sums add one value per unit) — and, when ``privacy_unit`` is
        given, a :class:`~privnoise.exceptions.ContributionCapWarning` says so at construction (no data read): a
        cap is a choice of the analyst, as the bounds are. Pass ``max_contributions=1`` to keep one row per unit
        without the warning.
    epsilon, delta : float
        The session's total budget (ε, δ).
    accountant : {"pure", "approximate", "advanced", "pld", "rdp", "zcdp"}, optional
        How queries compose (:mod:`privnoise.analysis.ledger`); default "pure" when δ = 0, else "approximate".
        "zcdp" and "rdp" spend ρ and use Gaussian noise by default, the others spend ε and use Laplace noise.
    noise : str, optional
        The noise family by its registered name (:mod:`privnoise.dp.families`), of the accountant's currency;
        default "laplace" for the accountants of ε, "gaussian" for those of ρ.
    neighbours : {"added-or-removed", "replaced"}, default "added-or-removed"
        Which databases are neighbours (:mod:`privnoise.core.adjacency`): one unit (or row) added or removed, or
        — rows only, without ``privacy_unit`` — one row added, removed or replaced by another, the query server's
        neighbours (bounded and unbounded differential privacy at once: a replaced row may leave one cell for
        another, so cell counts have sensitivity 2 in ℓ1, √2 in ℓ2, and a quantile's score 1). Keys drawn from the
        data need rows added or removed: a group-by of a "replaced" session declares its keys.
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
        max_contributions: int | None = None,
        epsilon: float,
        delta: float = 0.0,
        accountant: str | None = None,
        missing: Any = "error",
        noise: str | None = None,
        neighbours: str = "added-or-removed",
        rng: RNGLike = None,
    ) -> None:
        check_probability(delta, "delta", _OWNER)
        self._ledger = Ledger(accountant or ("pure" if not delta else "approximate"), epsilon, delta, noise)
        self.max_contributions = check_positive_int(1 if max_contributions is None else max_contributions,
                                                    "max_contributions", _OWNER)
        self._neighbours = neighbours_of(neighbours, privacy_unit, self.max_contributions)
        self.missing = validate_missing(missing, _OWNER)
        self._generator = default_rng(rng)
        # The backend's randomness (the contribution order, drawn once: :mod:`privnoise.analysis.bounding`): a
        # stream of this session's own, shared with its views, keyed from the session's generator.
        self._rows_generator = derived_generator(self._generator)
        self._backend: Backend = data if isinstance(data, Backend) else backend_for(data)
        if privacy_unit is None and self.max_contributions != 1:
            raise InvalidParameterError(
                f"`max_contributions` of `{_OWNER}` needs `privacy_unit` (the column whose rows are capped)."
            )
        self.privacy_unit = None if privacy_unit is None else self._backend.check_column(privacy_unit, "privacy_unit")
        self.conditions = ()
        if max_contributions is None and privacy_unit is not None:
            warnings.warn(ContributionCapWarning(
                f"Session(privacy_unit={privacy_unit!r}) without max_contributions: at most 1 row per unit is used "
                "(one chosen at random; the unit's other rows are left out of every release). Pass "
                "max_contributions=k to use up to k rows per unit (every sensitivity scales with k), or "
                "max_contributions=1 to keep one; Session.units_over_cap counts the units over the cap privately, "
                "at a cost."), stacklevel=2)

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
        if isinstance(self._neighbours, RecordReplaced):
            return self._neighbours.describe()  # the query server's words: the same neighbours, stated alike
        if self.privacy_unit is None:
            return "one row added or removed"
        k = self.max_contributions
        return f"one unit of {self.privacy_unit!r} added or removed (at most {k} row{'s' * (k > 1)} per unit used)"

    def _plan(self, label: str, epsilon: Any, rho: Any) -> Plan:
        price = self._ledger.price(epsilon, rho, label)
        return Plan(label, self._ledger.family, self._neighbours, price=price, stated=self.adjacency)

    def _bounds(self, bounds: Any, owner: str) -> Bounds:
        return bounds_of(bounds, owner)

    def _value_column(self, column: Any, owner: str, dry_run: bool = False) -> str:
        """``column`` checked; with the "error" policy, refused when it has missing values (not in a dry run, which
        reads no value)."""
        name = self._backend.check_column(column, "column")
        if dry_run:
            return name
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
        return self._backend.aggregate(request, self._rows_generator)

    def _describe(self, plan: Plan, query: dict[str, Any]) -> dict[str, Any]:
        query = {"query": plan.label, **query, "accountant": self.accountant, "max_contributions": self.max_contributions}
        if self.conditions:
            query["where"] = describe_filter(self.conditions)
        return query

    def _execute(self, plan: Plan, aggregates: dict[str, Any], query: dict[str, Any], finish: Finish,
                 **fields: Any) -> Estimate:
        """Release ``plan`` on the exact ``aggregates`` through the core's :func:`~privnoise.planning.execute`."""
        plan.finish = finish
        total = plan.components.get("sum")
        if total is not None and plan.label in ("sum", "mean", "group sum", "group mean"):
            fields["fisher_information"] = float(total.noise.fisher_information())  # type: ignore[attr-defined]
        return execute(plan, aggregates, self._generator, query=self._describe(plan, query), **fields)

    def _dry_run(self, plan: Plan, query: dict[str, Any], accuracy: Any) -> DryRun:
        """What ``plan`` would charge and its accuracy, from public information only (nothing charged or read)."""
        cost = plan.cost()
        after, refusal = self._ledger.trial(cost)
        return DryRun(self._describe(plan, query), plan.guarantee(), cost_of(cost, self._ledger.currency),
                      after, refusal, accuracy, [c.describe() for c in plan.components.values()], charge=cost)

    # -- scalar queries (each with ``dry_run``: :mod:`privnoise.analysis.dry_run`) ----------------------------------
    @overload
    def count(self, column: str | None = None, *, epsilon: float | None = None, rho: float | None = None,
              dry_run: Literal[False] = False) -> Estimate: ...
    @overload
    def count(self, column: str | None = None, *, epsilon: float | None = None, rho: float | None = None,
              dry_run: Literal[True]) -> DryRun: ...
    def count(self, column: str | None = None, *, epsilon: float | None = None, rho: float | None = None,
              dry_run: bool = False) -> Estimate | DryRun:
        """The number of rows (with a value in ``column`` when the policy drops missing ones), as an integer."""
        name = None if column is None else self._value_column(column, "count", dry_run)
        plan = self._plan("count", epsilon, rho)
        component = plan.add("count", plan.adjacency.count(), plan.price, integer=True, discrete=True)
        if dry_run:
            return self._dry_run(plan, {"column": name}, NoiseRadius(component.law, "rows"))
        aggregates = self._run(plan, self._request("moments", name))
        return self._execute(plan, {"count": aggregates.count}, {"column": name}, count_finish(component.law))

    @overload
    def sum(self, column: str, *, bounds: Sequence[float], epsilon: float | None = None,
        rho: float | None = None, dry_run: Literal[False] = False) -> Estimate: ...
    @overload
    def sum(self, column: str, *, bounds: Sequence[float], epsilon: float | None = None,
        rho: float | None = None, dry_run: Literal[True]) -> DryRun: ...
    def sum(self, column: str, *, bounds: Sequence[float], epsilon: float | None = None,
            rho: float | None = None, dry_run: bool = False) -> Estimate | DryRun:
        """The sum of ``column`` clamped to ``bounds``."""
        name = self._value_column(column, "sum", dry_run)
        b = self._bounds(bounds, "sum")
        plan = self._plan("sum", epsilon, rho)
        component = plan.add("sum", plan.adjacency.sum(b.low, b.high), plan.price)
        query = {"column": name, "bounds": [b.low, b.high]}
        if dry_run:
            return self._dry_run(plan, query, NoiseRadius(component.law, f"in the unit of {name}"))
        aggregates = self._run(plan, self._request("moments", name, b, squares=False))
        low = 0.0 if b.low >= 0 else None
        high = 0.0 if b.high <= 0 else None

        def finish(noisy: dict[str, Any]) -> dict[str, Any]:
            s_hat = float(noisy["sum"][0])
            value = float(np.clip(s_hat, low if low is not None else -np.inf, high if high is not None else np.inf))
            return {"value": value, "interval": vector_interval(np.asarray(s_hat), component.law, low=low, high=high),
                    "clamped": value != s_hat}

        return self._execute(plan, {"sum": aggregates.sum}, query, finish)

    @overload
    def mean(self, column: str, *, bounds: Sequence[float], epsilon: float | None = None,
         rho: float | None = None, dry_run: Literal[False] = False) -> Estimate: ...
    @overload
    def mean(self, column: str, *, bounds: Sequence[float], epsilon: float | None = None,
         rho: float | None = None, dry_run: Literal[True]) -> DryRun: ...
    def mean(self, column: str, *, bounds: Sequence[float], epsilon: float | None = None,
             rho: float | None = None, dry_run: bool = False) -> Estimate | DryRun:
        """The mean of ``column`` clamped to ``bounds``: noisy Σ(x − c) over a noisy count (half the budget each)."""
        name = self._value_column(column, "mean", dry_run)
        b = self._bounds(bounds, "mean")
        plan = self._plan("mean", epsilon, rho)
        total = plan.add("sum", plan.adjacency.sum(-b.half, b.half), split(plan.price, 2))
        count = plan.add("count", plan.adjacency.count(), split(plan.price, 2))
        query = {"column": name, "bounds": [b.low, b.high]}
        if dry_run:
            return self._dry_run(plan, query, RatioRadius(total.law, count.law, b.half, f"in the unit of {name}"))
        aggregates = self._run(plan, self._request("moments", name, b, centre=b.centre, squares=False))

        def finish(noisy: dict[str, Any]) -> dict[str, Any]:
            values, clamped, interval = ratio_estimate(noisy["sum"], noisy["count"], b, total.law, count.law)

            def scalar(level: float) -> tuple[Any, Any, Any]:
                low, high, coverage = interval(level)
                return float(low[0]), float(high[0]), coverage

            return {"value": float(values[0]), "interval": scalar, "clamped": bool(clamped[0]),
                    "empty": bool(noisy["count"][0] <= 0)}

        return self._execute(plan, {"sum": aggregates.sum, "count": aggregates.count}, query, finish)

    @overload
    def variance(self, column: str, *, bounds: Sequence[float], epsilon: float | None = None,
             rho: float | None = None, dry_run: Literal[False] = False) -> Estimate: ...
    @overload
    def variance(self, column: str, *, bounds: Sequence[float], epsilon: float | None = None,
             rho: float | None = None, dry_run: Literal[True]) -> DryRun: ...
    def variance(self, column: str, *, bounds: Sequence[float], epsilon: float | None = None,
                 rho: float | None = None, dry_run: bool = False) -> Estimate | DryRun:
        """The (population) variance of ``column`` clamped to ``bounds`` (count, Σ(x − c), Σ(x − c)² at a third
        of the budget each)."""
        name = self._value_column(column, "variance", dry_run)
        b = self._bounds(bounds, "variance")
        plan = self._plan("variance", epsilon, rho)
        part = split(plan.price, 3)
        count = plan.add("count", plan.adjacency.count(), part)
        first = plan.add("sum", plan.adjacency.sum(-b.half, b.half), part)
        second = plan.add("sum of squares", plan.adjacency.sum(0.0, b.half**2), part)
        query = {"column": name, "bounds": [b.low, b.high]}
        if dry_run:
            return self._dry_run(plan, query, VarianceRadius((count.law, first.law, second.law), b.half,
                                                             f"in the squared unit of {name}"))
        aggregates = self._run(plan, self._request("moments", name, b, centre=b.centre))
        laws = (count.law, first.law, second.law)

        def finish(noisy: dict[str, Any]) -> dict[str, Any]:
            n_hat, s1, s2 = (float(noisy[part][0]) for part in ("count", "sum", "sum of squares"))
            value, clamped, interval = variance_estimate(n_hat, s1, s2, b, laws)
            return {"value": value, "interval": interval, "clamped": clamped, "empty": n_hat <= 0}

        exact = {"count": aggregates.count, "sum": aggregates.sum, "sum of squares": aggregates.sum_squares}
        return self._execute(plan, exact, query, finish)
