"""Post-processing of noisy components into a release's value and its interval (no privacy spent).

:func:`ratio_estimate` (a mean c + Ŝ/N̂ clipped to [low, high]), :func:`variance_estimate` (Ŝ₂/N̂ − (Ŝ₁/N̂)²
clipped to [0, h²]), :func:`vector_interval` (per-coordinate noisy ± r) and :func:`rank_radius` (the exponential
mechanism's score radius): each returns the value, what was clipped, and the interval function a
:class:`~privnoise.Release` states (:mod:`privnoise.planning.accuracy`). Both the analyst's Session and the query
server finish their answers here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core import Bounds
from .accuracy import NoiseLaw, exponential_rank_radius, ratio_interval, variance_interval

__all__ = ["count_finish", "rank_radius", "ratio_estimate", "variance_estimate", "vector_interval"]


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


def count_finish(law: NoiseLaw, part: str = "count") -> Callable[[dict[str, NDArray[np.float64]]], dict[str, Any]]:
    """The finish of a plan releasing one count (component ``part``): the noisy count as an integer ≥ 0, clipped
    at 0 (``clamped``), with its interval cut at 0."""

    def finish(noisy: dict[str, NDArray[np.float64]]) -> dict[str, Any]:
        n_hat = noisy[part][0]
        return {"value": int(max(n_hat, 0.0)), "interval": vector_interval(n_hat, law, low=0.0),
                "clamped": bool(n_hat < 0)}

    return finish
