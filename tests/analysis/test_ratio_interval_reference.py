"""The Fieller-type ratio interval against references computed here: the tail of W₁ − mW₂ by numerical
integration over the count's noise, the limits by a bisection of the p-value written in this file, the accepted set
by a fine scan of m, and the coverage by Monte Carlo at a fixed seed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from privnoise.mechanisms.error_laws import error_law
from privnoise.planning.accuracy import NoiseLaw, _difference_tail, _p_value_one, ratio_interval


def _laplace_tail(x: float, a: float, c: float) -> float:
    """P(|W₁ + Y| ≥ x), W₁ ~ Laplace(a), Y ~ Laplace(c) (the law of −Y is the same), by integrating over Y."""
    first = stats.laplace(scale=a)
    if c == 0.0:
        return float(first.sf(x) + first.cdf(-x))

    def given(y: float) -> float:
        return float(first.sf(x - y) + first.cdf(-x - y)) * stats.laplace.pdf(y, scale=c)

    pieces = [(-math.inf, -x), (-x, 0.0), (0.0, x), (x, math.inf)] if x > 0 else [(-math.inf, 0.0), (0.0, math.inf)]
    return sum(integrate.quad(given, lo, hi, epsabs=1e-14, epsrel=1e-12, limit=200)[0] for lo, hi in pieces)


def _laplace_tail_closed(x: float, a: float, c: float) -> float:
    """The same tail in closed form (checked against the integral below): a mixture of the two exponential tails,
    and (1 + x/2a) e^{−x/a} when the scales are equal."""
    if c == 0.0:
        return math.exp(-x / a)
    if c == a:
        return (1.0 + x / (2.0 * a)) * math.exp(-x / a)
    return (a * a * math.exp(-x / a) - c * c * math.exp(-x / c)) / (a * a - c * c)


def _tail(x: float, family: str, a: float, c: float) -> float:
    if family == "gaussian":
        return float(2.0 * stats.norm.sf(x / math.sqrt(a * a + c * c)))
    return _laplace_tail_closed(x, a, c)


def _p_ref(m: float, s: float, n: float, first: NoiseLaw, second: NoiseLaw, offset: float) -> float:
    slope = m + offset
    x = max(abs(s - m * n) - first.grid / 2.0 - abs(slope) * second.grid / 2.0, 0.0)
    return _tail(x, first.error.name, first.scale, abs(slope) * second.scale)


def _limits_ref(s: float, n: float, first: NoiseLaw, second: NoiseLaw, level: float, h: float,
                offset: float) -> tuple[float, float]:
    """The crossings of p = α on each side of the point estimate (an interval-shaped set), by bisection."""
    alpha = 1.0 - level
    centre = min(max(s / n, -h), h)
    assert _p_ref(centre, s, n, first, second, offset) > alpha
    out = []
    for edge in (-h, h):
        if _p_ref(edge, s, n, first, second, offset) > alpha:
            out.append(edge)
            continue
        inside, outside = centre, edge
        for _ in range(80):
            middle = (inside + outside) / 2.0
            if _p_ref(middle, s, n, first, second, offset) > alpha:
                inside = middle
            else:
                outside = middle
        out.append(outside)
    return out[0], out[1]


# (family, sum scale, count scale, sum grid, count grid, offset, half range, level, releases (Ŝ, N̂))
CASES = [
    ("laplace", 3.0, 2.0, 0.0, 0.0, 0.0, 1.0, 0.95, [(50.0, 100.0), (-30.0, 60.0), (5.0, 40.0)]),
    ("laplace", 2.0, 2.0, 2.0**-4, 2.0**-3, 0.3, 2.0, 0.9, [(80.0, 120.0), (-100.0, 90.0), (0.0, 35.0)]),
    ("laplace", 1.0, 4.0, 0.0, 0.0, -0.2, 1.0, 0.99, [(20.0, 200.0), (-150.0, 400.0)]),
    ("gaussian", 3.0, 2.0, 0.0, 0.0, 0.0, 1.0, 0.95, [(50.0, 100.0), (-30.0, 60.0), (5.0, 40.0)]),
    ("gaussian", 1.5, 2.5, 2.0**-4, 2.0**-3, 0.3, 2.0, 0.8, [(80.0, 120.0), (-100.0, 90.0), (10.0, 25.0)]),
]


@pytest.mark.parametrize("case", CASES)
def test_limits_are_the_crossings_of_the_exact_tail(case) -> None:
    family, a, b, g1, g2, offset, h, level, releases = case
    first, second = NoiseLaw(error_law(family, a), g1), NoiseLaw(error_law(family, b), g2)
    s_all = np.array([r[0] for r in releases])
    n_all = np.array([r[1] for r in releases])
    many_low, many_high = ratio_interval(s_all, n_all, first, second, level, half_range=h, offset=offset)
    for i, (s, n) in enumerate(releases):
        ref_low, ref_high = _limits_ref(s, n, first, second, level, h, offset)
        one_low, one_high = ratio_interval([s], [n], first, second, level, half_range=h, offset=offset)
        for got in (one_low[0], many_low[i]):
            assert got == pytest.approx(ref_low, rel=1e-7, abs=1e-9)
        for got in (one_high[0], many_high[i]):
            assert got == pytest.approx(ref_high, rel=1e-7, abs=1e-9)
        # the limits lie on the rejected side of each crossing (or at the range's edge)
        alpha = 1.0 - level
        for limit in (one_low[0], one_high[0], many_low[i], many_high[i]):
            assert abs(limit) == pytest.approx(h) or _p_ref(limit, s, n, first, second, offset) <= alpha + 1e-9


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
def test_the_interval_holds_every_accepted_point_of_a_fine_scan(family: str) -> None:
    # counts near zero give sets that are not intervals: the limits must still enclose every accepted m, and go at
    # most one 1/32 of the remaining span (plus the scan's step) beyond the farthest one
    first, second = NoiseLaw(error_law(family, 3.0)), NoiseLaw(error_law(family, 2.0))
    h, level, offset = 1.0, 0.95, 0.3
    alpha = 1.0 - level
    grid = np.linspace(-h, h, 801)
    releases = [(4.0, 2.0), (-3.0, 1.5), (0.5, 6.0), (10.0, 3.0), (-8.0, 12.0), (30.0, 50.0)]
    s_all = np.array([r[0] for r in releases])
    n_all = np.array([r[1] for r in releases])
    many_low, many_high = ratio_interval(s_all, n_all, first, second, level, half_range=h, offset=offset)
    for i, (s, n) in enumerate(releases):
        accepted = grid[[_p_ref(float(m), s, n, first, second, offset) > alpha for m in grid]]
        one_low, one_high = ratio_interval([s], [n], first, second, level, half_range=h, offset=offset)
        for low, high in ((one_low[0], one_high[0]), (many_low[i], many_high[i])):
            assert -h <= low <= high <= h
            if accepted.size:
                assert low <= accepted.min() + 1e-12 and high >= accepted.max() - 1e-12
                assert low >= accepted.min() - (2.0 * h / 32.0 + 2.0 * h / 800.0)
                assert high <= accepted.max() + (2.0 * h / 32.0 + 2.0 * h / 800.0)


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
def test_no_count_or_a_rejected_estimate(family: str) -> None:
    law = NoiseLaw(error_law(family, 1.0))
    # a count that is not positive: the whole range
    for n in (0.0, -3.0):
        low, high = ratio_interval([1.0], [n], law, law, 0.95, half_range=2.0)
        assert (low[0], high[0]) == (-2.0, 2.0)
        low, high = ratio_interval([1.0, 5.0], [n, 10.0], law, law, 0.95, half_range=2.0)
        assert (low[0], high[0]) == (-2.0, 2.0) and -2.0 < low[1] < 0.5 < high[1] < 2.0
    # an estimate far outside the range, with little noise: clipped to the edge, which is rejected → one point
    tiny = NoiseLaw(error_law(family, 1e-3))
    low, high = ratio_interval([500.0], [100.0], tiny, tiny, 0.95, half_range=1.0)
    assert low[0] == high[0] == 1.0
    low, high = ratio_interval([500.0, -500.0], [100.0, 100.0], tiny, tiny, 0.95, half_range=1.0)
    assert list(low) == list(high) == [1.0, -1.0]


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
def test_monte_carlo_coverage_is_the_level(family: str) -> None:
    # no grid, counts far from zero and limits inside the range: the set is an interval whose coverage is exact
    rng = np.random.default_rng(2024)
    releases, level, h = 4000, 0.9, 5.0
    a, b = 4.0, 3.0
    n_true, m_true = 60.0, 0.35
    if family == "laplace":
        w1, w2 = rng.laplace(0.0, a, releases), rng.laplace(0.0, b, releases)
    else:
        w1, w2 = rng.normal(0.0, a, releases), rng.normal(0.0, b, releases)
    s_hat, n_hat = m_true * n_true + w1, n_true + w2
    low, high = ratio_interval(s_hat, n_hat, NoiseLaw(error_law(family, a)), NoiseLaw(error_law(family, b)), level, half_range=h)
    assert np.all(low > -h) and np.all(high < h)
    covered = np.count_nonzero((low <= m_true) & (m_true <= high))
    sd = math.sqrt(level * (1 - level) / releases)
    assert abs(covered / releases - level) < 4.0 * sd


@pytest.mark.parametrize(("a", "c"), [(2.0, 0.0), (2.0, 2.0), (2.0, 2.0 * (1 + 4e-6)), (2.0, 2.0 * (1 - 3e-5)),
                                      (2.0, 0.7), (1.0, 5.0)])
def test_the_difference_tail_is_the_integral_over_the_count_noise(a: float, c: float) -> None:
    xs = np.array([0.0, 0.3, 1.0, 4.0, 11.0])
    for slope_sign in (1.0, -1.0):
        m = np.full(xs.size, slope_sign * c / 1.5)
        got = _difference_tail(xs, NoiseLaw(error_law("laplace", a)), NoiseLaw(error_law("laplace", 1.5)), m)
        for x, value in zip(xs, got, strict=True):
            ref = _laplace_tail(float(x), a, c)
            if abs(a - c) > 1e-3 * a or c == a:
                assert _laplace_tail_closed(float(x), a, c) == pytest.approx(ref, rel=1e-8, abs=1e-15)
            assert value == pytest.approx(ref, rel=1e-8, abs=1e-15)
            one = _p_value_one(0.0, float(x), 1.0, NoiseLaw(error_law("laplace", a)), NoiseLaw(error_law("laplace", 1.5)),
                               slope_sign * c / 1.5)
            assert one == pytest.approx(ref, rel=1e-8, abs=1e-15)
    for c2 in (0.0, 0.7, 3.0):
        got = _difference_tail(xs, NoiseLaw(error_law("gaussian", a)), NoiseLaw(error_law("gaussian", 1.0)), np.full(xs.size, -c2))
        np.testing.assert_allclose(got, 2.0 * stats.norm.sf(xs / math.hypot(a, c2)), rtol=1e-12)
