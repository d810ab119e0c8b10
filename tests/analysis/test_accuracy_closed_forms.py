"""Accuracy statements against computations made here: radii from scipy's laws (the integer radius by summing the
law of round(W), the discrete Laplace from its probability mass), noise variances by summation, the variance
interval by brute force over its three part intervals, and the exponential mechanism's rank radius from the union
bound it rests on."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from privnoise.mechanisms.error_laws import error_law
from privnoise.planning.accuracy import NoiseLaw, exponential_rank_radius, variance_interval

LEVELS = [0.5, 0.9, 0.95, 0.999]


def _continuous(family: str, scale: float):  # noqa: ANN202 - a frozen scipy law
    return stats.laplace(scale=scale) if family == "laplace" else stats.norm(scale=scale)


def _discrete_laplace_pmf(scale: float, k: np.ndarray) -> np.ndarray:
    q = math.exp(-1.0 / scale)
    return (1.0 - q) / (1.0 + q) * q ** np.abs(k)


def _integer_coverage(family: str, scale: float, j: int) -> float:
    """P(|round(W)| ≤ j), W continuous (P(|W| < j + ½)), or the discrete Laplace summed over |k| ≤ j."""
    if family == "discrete-laplace":
        return float(_discrete_laplace_pmf(scale, np.arange(-j, j + 1)).sum())
    law = _continuous(family, scale)
    return float(law.cdf(j + 0.5) - law.cdf(-j - 0.5))


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
@pytest.mark.parametrize("level", LEVELS)
def test_continuous_radius_is_the_quantile_of_the_absolute_noise_plus_half_the_grid(family, level) -> None:
    for scale, grid in ((0.7, 0.0), (3.0, 0.25)):
        radius, coverage = NoiseLaw(error_law(family, scale), grid).radius(level)
        q = _continuous(family, scale).ppf((1.0 + level) / 2.0)
        assert radius == pytest.approx(q + grid / 2.0, rel=1e-12) and coverage == level


@pytest.mark.parametrize("family", ["laplace", "gaussian", "discrete-laplace"])
@pytest.mark.parametrize("level", LEVELS)
def test_integer_radius_is_the_smallest_with_its_exact_coverage(family, level) -> None:
    for scale in (0.05, 0.4, 1.0, 2.7, 15.0):
        radius, coverage = NoiseLaw(error_law(family, scale), integer=True).radius(level)
        j = 0
        while _integer_coverage(family, scale, j) < level:
            j += 1
        assert radius == j
        assert coverage == pytest.approx(_integer_coverage(family, scale, j), rel=1e-9, abs=1e-15)


def test_noise_variances_are_the_laws_second_moments() -> None:
    assert NoiseLaw(error_law("laplace", 1.5)).variance() == pytest.approx(stats.laplace(scale=1.5).var(), rel=1e-14)
    assert NoiseLaw(error_law("gaussian", 1.5)).variance() == pytest.approx(1.5**2, rel=1e-14)
    k = np.arange(-4000, 4001)
    for scale in (0.3, 2.0, 9.0):
        exact = float((k.astype(float) ** 2 * _discrete_laplace_pmf(scale, k)).sum())
        assert NoiseLaw(error_law("discrete-laplace", scale)).variance() == pytest.approx(exact, rel=1e-10)


def _brute_variance_interval(n_hat, s1_hat, s2_hat, scales, level, h):  # noqa: ANN001, ANN202
    part = 1.0 - (1.0 - level) / 3.0
    rn, rs1, rs2 = (stats.laplace(scale=b).ppf((1.0 + part) / 2.0) for b in scales)
    if n_hat - rn <= 0:
        return 0.0, h * h
    ns = [n_hat - rn, n_hat + rn]
    s1s = [s1_hat - rs1, s1_hat + rs1] + ([0.0] if s1_hat - rs1 <= 0.0 <= s1_hat + rs1 else [])
    s2s = [max(s2_hat - rs2, 0.0), s2_hat + rs2]
    # S₂/N − (S₁/N)² is monotone in S₂ and in S₁² for each N, so its extremes over the box are at these points
    # with S₂ and S₁ chosen independently for the lower and the upper end.
    lows = [s2s[0] / n2 - max(s * s for s in s1s) / (n1 * n1) for n1, n2 in itertools.product(ns, ns)]
    highs = [s2s[1] / n2 - min(s * s for s in s1s) / (n1 * n1) for n1, n2 in itertools.product(ns, ns)]
    clip = lambda v: min(max(v, 0.0), h * h)  # noqa: E731
    return clip(min(lows)), clip(max(highs))


@pytest.mark.parametrize(
    ("n_hat", "s1_hat", "s2_hat"),
    [(1000.0, 0.0, 250.0), (1000.0, 300.0, 400.0), (1000.0, -300.0, 400.0), (40.0, 30.0, 33.0), (5.0, 1.0, 2.0),
     (2.0, 1.0, 1.0), (300.0, -5.0, 0.5)],
)
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_variance_interval_is_interval_arithmetic_on_the_three_parts(n_hat, s1_hat, s2_hat, level) -> None:
    scales = (0.8, 0.5, 0.3)
    for h in (1.0, 2.5):
        _check_variance_interval(n_hat, s1_hat, s2_hat, level, scales, h)


def _check_variance_interval(n_hat, s1_hat, s2_hat, level, scales, h) -> None:  # noqa: ANN001
    laws = tuple(NoiseLaw(error_law("laplace", b)) for b in scales)
    got = variance_interval(n_hat, s1_hat, s2_hat, laws, level, half_range=h)  # type: ignore[arg-type]
    assert got == pytest.approx(_brute_variance_interval(n_hat, s1_hat, s2_hat, scales, level, h), rel=1e-12,
                                abs=1e-15)


@pytest.mark.parametrize("monotone", [False, True])
@pytest.mark.parametrize(("epsilon", "sensitivity", "candidates", "level"),
                         [(1.0, 0.5, 1001, 0.95), (0.3, 2.0, 2, 0.9), (4.0, 1.0, 65, 0.999)])
def test_rank_radius_meets_the_union_bound_with_equality(epsilon, sensitivity, candidates, level, monotone) -> None:
    # C − 1 candidates, each t below the best, are chosen together with probability at most
    # (C − 1)·exp(−ε t/(cΔ)), c = 2 (1 for monotone scores): the radius makes that α exactly.
    t = exponential_rank_radius(epsilon, sensitivity, candidates, level, monotone=monotone)
    c = 1.0 if monotone else 2.0
    assert (candidates - 1) * math.exp(-epsilon * t / (c * sensitivity)) == pytest.approx(1.0 - level, rel=1e-12)
    assert exponential_rank_radius(epsilon, sensitivity, 1, level, monotone=monotone) == 0.0
    if not monotone:  # scores are not monotone unless said
        assert exponential_rank_radius(epsilon, sensitivity, candidates, level) == t


def test_a_level_is_strictly_between_0_and_1() -> None:
    from privnoise.exceptions import InvalidParameterError
    from privnoise.planning.accuracy import check_level

    for bad in (0.0, 1.0, 1.5, -0.1):
        with pytest.raises(InvalidParameterError, match="level"):
            check_level(bad, "interval")
    assert check_level(0.95, "interval") == 0.95


def test_integer_radius_of_the_discrete_laplace_over_many_scales() -> None:
    # The continuous quantile only starts the search: for the discrete law it is often one too many.
    for scale in np.arange(0.1, 6.0, 0.1):
        for level in (0.5, 0.8, 0.9, 0.95, 0.99, 0.999):
            radius, coverage = NoiseLaw(error_law("discrete-laplace", float(scale)), integer=True).radius(level)
            j = 0
            while _integer_coverage("discrete-laplace", float(scale), j) < level:
                j += 1
            assert radius == j
            assert coverage == pytest.approx(_integer_coverage("discrete-laplace", float(scale), j), rel=1e-9)
