"""How each session query is priced, calibrated and finished: sensitivities, budget splits, noise and accuracy.

Neighbouring databases differ by all the rows of one privacy unit, of which at most k are kept
(:func:`~privnoise.analysis.backend.bound_contributions`); values are clamped to the declared bounds [low, high],
h = (high − low)/2 and c = (low + high)/2. The sensitivities (ℓ1 for Laplace noise, ℓ2 for Gaussian noise) are:

===========================  ====================  ==========================================================
aggregate                    ℓ1 (= ℓ2 for scalars)  why
===========================  ====================  ==========================================================
count of rows                k                     k rows added or removed
sum of x                     k·max(|low|, |high|)  each row adds a value in [low, high]
sum of (x − c)               k·h                   the centred value lies in [−h, h]
sum of (x − c)²              k·h²                  its square lies in [0, h²]
histogram / group counts     k (ℓ2 ≤ k)            the k rows fall in at most k cells, one each
quantile score               k·max(q, 1 − q)       :mod:`privnoise.analysis.quantiles`
category counts (top-k)      k in every count      monotone scores
===========================  ====================  ==========================================================

A query's budget (ε, or ρ in the Gaussian family) is split evenly over its parts, as the query server does:
mean = sum of (x − c) and count at half each; variance = count, Σ(x − c), Σ(x − c)² at a third each; a group-by
sum or mean with unknown keys also spends half on the count that selects the keys. The value is post-processing:
mean = c + Ŝ/N̂ and variance = Ŝ₂/N̂ − (Ŝ₁/N̂)², clipped to their possible ranges (reported as ``clamped``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core import Bounds
from ..core.adjacency import Adjacency, Norm, UnitAddedOrRemoved
from ..dp.events import PrivacyEvent, PureEvent, SelectionEvent
from ..dp.families import NoiseFamily
from ..dp.profile import profile_of
from ..exceptions import InvalidParameterError
from .accuracy import NoiseLaw, exponential_rank_radius, ratio_interval, variance_interval
from .ledger import Cost
from .noise import Component, calibrate

__all__ = ["Bounds", "Plan", "group_plan", "ratio_estimate", "split"]


def split(share: Fraction, parts: int) -> Fraction:
    """An even part of a budget (exact)."""
    return share / parts


@dataclass
class Plan:
    """The parts of one query: calibrated components, their privacy events and what the whole query costs."""

    label: str
    family: NoiseFamily
    components: dict[str, Component] = field(default_factory=dict)
    events: list[PrivacyEvent] = field(default_factory=list)
    price: Fraction = Fraction(0)
    delta: Fraction = Fraction(0)
    gaussian: bool = True  # every part's privacy loss is that of the continuous Gaussian mechanism

    @property
    def norm(self) -> Norm:
        """The norm its sensitivities are measured in: the family's (ℓ1 for Laplace, ℓ2 for Gaussian noise)."""
        return self.family.norm

    def add(self, name: str, sensitivity: float, share: Fraction, *, integer: bool = False, vector: bool = False,
            unit_cells: bool = True, discrete: bool = False) -> Component:
        """Calibrate a component on ``share`` and record its privacy event.

        ``vector`` components (groups, cells) are composed by the numerical accountants as a worst-case pair of
        their share, unless one unit moves a single coordinate (``unit_cells`` False: k = 1) or the family's scalar
        event is exact for vectors (Gaussian noise at ℓ2 sensitivity), when the family's own event is exact.
        """
        component = calibrate(name, self.family, sensitivity, share, integer=integer, discrete=discrete)
        self.components[name] = component
        self.events.append(component.event(scalar=not (vector and unit_cells)))
        self.gaussian = self.gaussian and profile_of(component.noise).gaussian_curve
        return component

    def selection(self, epsilon: float, *, bounded_range: bool = True) -> None:
        """Record an exponential-mechanism (or report-noisy-max) part of pure ε: ε²/8-zCDP when bounded-range,
        ε²/2 otherwise (families of ρ: within the query's price by the family's ``selection_epsilon``)."""
        self.gaussian = False
        self.events.append(SelectionEvent(epsilon, bounded_range))

    def cost(self) -> Cost:
        if self.family.currency == "epsilon":
            # With partition selection the whole query is one (ε, δ)-DP release (dp.partition), so composed as such.
            events = (PureEvent(float(self.price), float(self.delta)),) if self.delta else tuple(self.events)
            return Cost(self.label, epsilon=self.price, delta=self.delta, events=events)
        return Cost(self.label, rho=self.price, delta=self.delta, events=tuple(self.events),
                    gaussian=self.gaussian and not self.delta)


def group_plan(plan: Plan, *, unknown_keys: bool, delta: Fraction, count_share: Fraction, neighbours: Adjacency,
               integer: bool) -> tuple[Component, int | None]:
    """The count component of a group-by and, with unknown keys, the partition-selection threshold.

    Declared keys: the counts' sensitivity is that of a vector of cells under ``neighbours`` (k for a unit of k
    rows; 2 in ℓ1, √2 in ℓ2 for a record replaced). Keys drawn from the data: the threshold rules are stated for
    units added or removed, so a session whose rows may be replaced must declare its keys.

    Families of ε: the count noise uses ε₀ = ε_count − log(1/(1 − δ)) (:func:`~privnoise.dp.partition.pure_budget_share`)
    so that the query is (ε, δ)-DP; families of ρ: the release is δ-approximate ρ-zCDP. A family without a
    threshold rule cannot select keys: the keys must be declared.
    """
    if not unknown_keys:
        return plan.add("count", neighbours.cells(1.0, 1.0, plan.norm), count_share, integer=integer, vector=True,
                        unit_cells=neighbours.several_cells, discrete=integer), None
    if not isinstance(neighbours, UnitAddedOrRemoved):
        raise InvalidParameterError(
            f"{plan.label} with keys drawn from the data selects them by a noisy count whose threshold is stated for "
            f"rows added or removed; this session's neighbours are {neighbours.describe()}: declare the keys."
        )
    k = neighbours.k
    family = plan.family
    if family.threshold is None:
        raise InvalidParameterError(
            f"{plan.label} with keys drawn from the data needs a partition-selection threshold, which noise family "
            f"{family.name!r} does not state: declare the keys."
        )
    plan.delta = delta
    if family.currency == "epsilon":
        component = calibrate("count", family, float(k), family.selection_share(count_share, delta), integer=True)
        plan.components["count"] = component
    else:
        component = plan.add("count", float(k), count_share, integer=True, vector=True)
    return component, family.threshold(component.scale, float(delta), k)


def ratio_estimate(noisy_sum: NDArray[np.float64], noisy_count: NDArray[np.float64], bounds: Bounds,
                   sum_law: NoiseLaw, count_law: NoiseLaw) -> tuple[NDArray[np.float64], NDArray[np.bool_], Any]:
    """Mean values c + Ŝ/N̂ clipped to [low, high], the clamped mask, and the interval function."""
    positive = noisy_count > 0
    raw = np.where(positive, noisy_sum / np.where(positive, noisy_count, 1.0), 0.0)
    clipped = np.clip(raw, -bounds.half, bounds.half)
    clamped = (~positive) | (clipped != raw)
    values = bounds.centre + clipped

    def interval(level: float) -> tuple[Any, Any, Any]:
        low, high = ratio_interval(noisy_sum, noisy_count, sum_law, count_law, level, half_range=bounds.half)
        return bounds.centre + low, bounds.centre + high, level

    return values, clamped, interval


def variance_estimate(n_hat: float, s1_hat: float, s2_hat: float, bounds: Bounds,
                      laws: tuple[NoiseLaw, NoiseLaw, NoiseLaw]) -> tuple[float, bool, Any]:
    """The variance Ŝ₂/N̂ − (Ŝ₁/N̂)² clipped to [0, h²], whether it was clipped, and its interval function."""
    top = bounds.half**2
    raw = s2_hat / n_hat - (s1_hat / n_hat) ** 2 if n_hat > 0 else 0.0
    value = min(max(raw, 0.0), top)

    def interval(level: float) -> tuple[Any, Any, Any]:
        low, high = variance_interval(n_hat, s1_hat, s2_hat, laws, level, half_range=bounds.half)
        return low, high, level

    return value, bool(n_hat <= 0 or value != raw), interval


def vector_interval(noisy: NDArray[np.float64], law: NoiseLaw, *, low: float | None = None,
                    high: float | None = None) -> Any:
    """Per-coordinate intervals noisy ± r (coverage per coordinate, not simultaneous), cut to [low, high]."""

    def interval(level: float) -> tuple[Any, Any, Any]:
        r, coverage = law.radius(level)
        lo, hi = noisy - r, noisy + r
        if low is not None:
            lo, hi = np.maximum(lo, low), np.maximum(hi, low)
        if high is not None:
            lo, hi = np.minimum(lo, high), np.minimum(hi, high)
        return (lo, hi, coverage) if np.ndim(noisy) else (float(lo), float(hi), coverage)

    return interval


def rank_radius(epsilon: float, sensitivity: float, candidates: int, *, monotone: bool = False) -> Any:
    """level ↦ the exponential mechanism's score radius (rank accuracy)."""
    return lambda level: exponential_rank_radius(epsilon, sensitivity, candidates, level, monotone=monotone)
