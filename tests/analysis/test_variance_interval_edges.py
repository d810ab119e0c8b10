"""Edges of the variance interval, checked against the extremes of S₂/N − (S₁/N)² over the box of the three
part intervals, found here by brute force over a grid of the box."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from privnoise.mechanisms.error_laws import error_law
from privnoise.planning.accuracy import NoiseLaw, variance_interval

LAW = NoiseLaw(error_law("laplace", 0.5))
LEVEL = 0.9
PART = 1.0 - (1.0 - LEVEL) / 3.0


def _brute(n_hat: float, s1_hat: float, s2_hat: float, h: float) -> tuple[float, float]:
    """Interval arithmetic: the range of S₂/N minus the range of (S₁/N)², each found over a grid of its own box."""
    r = LAW.radius(PART)[0]
    ns = np.linspace(n_hat - r, n_hat + r, 41)
    s1s = np.r_[np.linspace(s1_hat - r, s1_hat + r, 41), 0.0 if s1_hat - r <= 0.0 <= s1_hat + r else s1_hat]
    s2s = np.linspace(max(s2_hat - r, 0.0), s2_hat + r, 41)
    first = [s2 / n for n, s2 in itertools.product(ns, s2s)]
    second = [(s1 / n) ** 2 for n, s1 in itertools.product(ns, s1s)]
    low, high = min(first) - max(second), max(first) - min(second)
    return float(min(max(low, 0.0), h * h)), float(min(max(high, 0.0), h * h))


@pytest.mark.parametrize(("n_hat", "s1_hat", "s2_hat", "h"), [
    (2.5, 4.0, 9.0, 4.0),       # N low in (0, 1]: still a finite interval; S₁ interval above 0
    (2.2, 3.0, 8.0, 40.0),
    (40.0, 2.0, 30.0, 2.0),     # S₁ interval inside (0, ∞) but containing 1
    (40.0, -2.0, 30.0, 2.0),
    (40.0, 1.0, 30.0, 2.0),     # containing 0
])
def test_the_limits_are_the_extremes_over_the_box(n_hat, s1_hat, s2_hat, h) -> None:
    r = LAW.radius(PART)[0]
    assert n_hat - r > 0
    low, high = variance_interval(n_hat, s1_hat, s2_hat, (LAW, LAW, LAW), LEVEL, half_range=h)
    ref_low, ref_high = _brute(n_hat, s1_hat, s2_hat, h)
    assert low == pytest.approx(ref_low, rel=1e-9, abs=1e-12)
    assert high == pytest.approx(ref_high, rel=1e-9, abs=1e-12)


def test_a_count_interval_reaching_zero_gives_the_whole_range() -> None:
    r = LAW.radius(PART)[0]
    for n_hat in (r, r - 0.5, 0.0):
        assert variance_interval(n_hat, 1.0, 2.0, (LAW, LAW, LAW), LEVEL, half_range=3.0) == (0.0, 9.0)
