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

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core import Bounds
from ..core.adjacency import Norm
from ..dp.partition import gaussian_partition_threshold, laplace_partition_threshold, pure_budget_share
from .accuracy import NoiseLaw, exponential_rank_radius, ratio_interval, variance_interval
from .ledger import Cost
from .noise import Component, calibrate

__all__ = ["Bounds", "Plan", "group_plan", "ratio_estimate", "split"]


def split(share: Fraction, parts: int) -> Fraction:
    """An even part of a budget (exact)."""
    return share / parts


@dataclass
class Plan:
    """The parts of one query: calibrated components and what the whole query costs."""

    label: str
    family: str
    components: dict[str, Component] = field(default_factory=dict)
    pld: list[tuple[Any, ...]] = field(default_factory=list)
    rdp: list[tuple[Any, ...]] = field(default_factory=list)
    price: Fraction = Fraction(0)
    delta: Fraction = Fraction(0)
    gaussian: bool = True

    @property
    def norm(self) -> Norm:
        """The norm its sensitivities are measured in: ℓ2 for Gaussian noise, ℓ1 otherwise."""
        return "l2" if self.gaussian else "l1"

    def add(self, name: str, sensitivity: float, share: Fraction, *, integer: bool = False, vector: bool = False,
            unit_cells: bool = True, discrete: bool = False) -> Component:
        """Calibrate a component on ``share`` and record its accounting pieces.

        ``vector`` components (groups, cells) are accounted in PLD as pure ε-DP (a worst-case pair), unless one unit
        moves a single coordinate (``unit_cells`` False: k = 1), when the scalar Laplace pair is exact.
        """
        geometric = discrete and self.family == "laplace"
        component = calibrate(name, self.family, sensitivity, share, integer=integer,  # type: ignore[arg-type]
                              discrete=geometric)
        self.components[name] = component
        ratio = component.scale / sensitivity
        if self.family == "laplace":
            if vector and unit_cells:
                self.pld.append(("dp", float(share), 0.0))
            elif geometric:
                self.pld.append(("discrete-laplace", 1.0 / component.scale, int(sensitivity)))
            else:
                self.pld.append(("laplace", ratio))
        else:
            self.rdp.append(("gaussian", ratio))
        return component

    def selection(self, epsilon: float, *, bounded_range: bool = True) -> None:
        """Record an exponential-mechanism (or report-noisy-max) part of pure ε: ε²/8-zCDP when bounded-range,
        ε²/2 otherwise (Gaussian family: within the query's price by :func:`exponential_epsilon`)."""
        self.gaussian = False
        self.pld.append(("dp", epsilon, 0.0))
        self.rdp.append(("zcdp", epsilon * epsilon / (8.0 if bounded_range else 2.0)))

    def cost(self) -> Cost:
        if self.family == "laplace":
            # With partition selection the whole query is one (ε, δ)-DP release (dp.partition), so composed as such.
            pld = (("dp", float(self.price), float(self.delta)),) if self.delta else tuple(self.pld)
            return Cost(self.label, epsilon=self.price, delta=self.delta, pld=pld, rdp=tuple(self.rdp))
        return Cost(self.label, rho=self.price, delta=self.delta, pld=tuple(self.pld), rdp=tuple(self.rdp),
                    gaussian=self.gaussian and not self.delta)


def exponential_epsilon(family: str, share: Fraction, *, bounded_range: bool = True) -> float:
    """The ε an exponential-mechanism part may use on ``share``: ε itself, or the ε with ε²/8 ≤ ρ (ε²/2 ≤ ρ for
    report-noisy-max with Laplace noise, which is pure but not bounded-range), rounded down."""
    if family == "laplace":
        eps = float(share)  # the nearest double may lie above the exact share
        return eps if Fraction(eps) <= share else math.nextafter(eps, 0.0)
    factor = 8.0 if bounded_range else 2.0
    return math.nextafter(math.sqrt(factor * float(share)), 0.0)


def group_plan(plan: Plan, *, unknown_keys: bool, delta: Fraction, count_share: Fraction, k: int,
               integer: bool) -> tuple[Component, int | None]:
    """The count component of a group-by and, with unknown keys, the partition-selection threshold.

    Laplace family: the count noise uses ε₀ = ε_count − log(1/(1 − δ)) (:func:`~privnoise.dp.partition.pure_budget_share`)
    so that the query is (ε, δ)-DP; Gaussian family: the release is δ-approximate ρ-zCDP.
    """
    if not unknown_keys:
        return plan.add("count", float(k), count_share, integer=integer, vector=True, unit_cells=k > 1,
                        discrete=integer), None
    plan.delta = delta
    if plan.family == "laplace":
        share = Fraction(pure_budget_share(float(count_share), float(delta)))
        component = calibrate("count", "laplace", float(k), share, integer=True)
        plan.components["count"] = component
        return component, laplace_partition_threshold(component.scale, float(delta), max_contributions=k)
    component = plan.add("count", float(k), count_share, integer=True, vector=True)
    return component, gaussian_partition_threshold(component.scale, float(delta), max_contributions=k)


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
