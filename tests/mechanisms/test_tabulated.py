"""TabulatedDensity: exact inverse-CDF sampling, density, moments, entropy and Fisher information of a table."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.fisher.information import fisher_information_quadrature
from privnoise.mechanisms.tabulated import TabulatedDensity

N_DRAWS = 100_000


def triangle(width: float = 1.0) -> TabulatedDensity:
    return TabulatedDensity(grid=[-width, 0.0, width], values=[0.0, 3.0, 0.0])


def test_triangle_samples_and_power(assert_ks):
    t = triangle()
    law = stats.triang(0.5, loc=-1, scale=2)
    wrong = [stats.triang(0.5, loc=-f, scale=2 * f).cdf for f in (0.7, 1.3)]
    assert_ks(t.sample(N_DRAWS, rng=1), law.cdf, wrong)
    x = np.linspace(-1.2, 1.2, 49)
    np.testing.assert_allclose(t.pdf(x), law.pdf(x), atol=1e-14)
    np.testing.assert_allclose(t.cdf(x), law.cdf(x), atol=1e-14)
    assert t.mean() == pytest.approx(0.0, abs=1e-15)
    assert t.covariance() == pytest.approx(law.var())
    assert t.entropy() == pytest.approx(law.entropy())


def table() -> TabulatedDensity:
    """An irregular, asymmetric linear table with interior zeros and flat pieces."""
    grid = np.array([-2.0, -1.5, -0.2, 0.0, 0.3, 0.31, 1.0, 2.5, 3.0])
    values = np.array([0.0, 0.4, 0.4, 1.3, 0.0, 0.2, 0.9, 0.1, 0.05])
    return TabulatedDensity(grid=grid, values=values)


def test_irregular_table_sampler_matches_own_cdf(assert_ks):
    t = table()
    wrong = [lambda x, f=f: t.cdf(x / f) for f in (0.7, 1.3)]
    assert_ks(t.sample(N_DRAWS, rng=2), t.cdf, wrong)


def test_constant_table(assert_ks):
    t = TabulatedDensity(grid=[0.0, 1.0, 3.0, 3.5], values=[1.0, 0.25, 2.0], interpolation="constant")
    assert_ks(t.sample(N_DRAWS, rng=3), t.cdf, [lambda x, f=f: t.cdf(x / f) for f in (0.7, 1.3)])
    assert t.fisher_information() == math.inf
    assert np.all(t.score(np.array([0.5, 2.0])) == 0.0)


def test_density_integrates_and_moments_match_quadrature():
    t = table()
    pts = list(t.grid)
    total = integrate.quad(t.pdf, -3, 4, points=pts, limit=200, epsabs=1e-14)[0]
    assert total == pytest.approx(1.0, rel=1e-12)
    m1 = integrate.quad(lambda x: x * t.pdf(x), -3, 4, points=pts, limit=200, epsabs=1e-14)[0]
    m2 = integrate.quad(lambda x: x * x * t.pdf(x), -3, 4, points=pts, limit=200, epsabs=1e-14)[0]
    assert t.mean() == pytest.approx(m1, rel=1e-12)
    assert t.second_moment() == pytest.approx(m2, rel=1e-12)
    assert t.covariance() == pytest.approx(m2 - m1 * m1, rel=1e-12)

    def plogp(x: float) -> float:
        p = t.pdf(x)
        return -p * math.log(p) if p > 0 else 0.0

    ent = integrate.quad(plogp, -2, 3, points=pts, limit=400, epsabs=1e-13)[0]
    assert t.entropy() == pytest.approx(ent, rel=1e-9)
    xs = np.linspace(-2.5, 3.5, 301)
    cdf_q = [
        integrate.quad(t.pdf, -2, x, points=[p for p in pts if -2 < p < x] or None, limit=200)[0]
        for x in xs[::15]
    ]
    np.testing.assert_allclose(t.cdf(xs[::15]), cdf_q, atol=1e-12)


def test_fisher_information_exact_for_smooth_table():
    # a positive interior with zero ends that fall quadratically would be finite; a linear table rising from zero
    # at a node is infinite. A table of exp(−x²/2) on a wide grid with *positive* ends has a jump -> inf; make the
    # ends zero by a flat-zero first/last cell pair: the cell rising from 0 still gives inf.
    x = np.linspace(-8, 8, 801)
    g = np.exp(-x * x / 2)
    assert TabulatedDensity(grid=x, values=g).fisher_information() == math.inf  # jumps at ±8
    # Compare the exact formula with quadrature on the interior (cells with positive ends).
    t = TabulatedDensity(grid=x, values=g)
    inner = fisher_information_quadrature(
        t.pdf,
        (float(x[0]), float(x[-1])),
        derivative=lambda w: t.score(w) * t.pdf(w),
        breakpoints=tuple(x[1:-1]),
    )
    a, b = t.values[:-1], t.values[1:]
    s = (b - a) / np.diff(x)
    formula = float(np.sum(np.where(a == b, 0.0, s * (np.log(b) - np.log(a)))))
    assert inner == pytest.approx(formula, rel=1e-7)
    assert formula == pytest.approx(1.0, rel=1e-3)  # N(0,1) has Fisher information 1


def test_score_is_slope_over_density():
    t = table()
    x = np.array([-1.8, -1.0, -0.1, 0.1, 0.5, 2.0])
    h = 1e-7
    num = (t.logpdf(x + h) - t.logpdf(x - h)) / (2 * h)
    np.testing.assert_allclose(t.score(x), num, rtol=1e-5)
    assert t.score(5.0) == 0.0 and t.logpdf(5.0) == -math.inf and t.pdf(-5.0) == 0.0


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(grid=[0.0, 1.0], values=[1.0, np.nan]), "values"),
        (dict(grid=[0.0, 1.0], values=[1.0, -1.0]), "values"),
        (dict(grid=[0.0, 1.0], values=[0.0, 0.0]), "values"),
        (dict(grid=[0.0, 1.0], values=[1.0, 1.0, 1.0]), "values"),
        (dict(grid=[1.0, 0.0], values=[1.0, 1.0]), "grid"),
        (dict(grid=[0.0, np.inf], values=[1.0, 1.0]), "grid"),
        (dict(grid=[0.0], values=[1.0]), "grid"),
        (dict(grid=[[0.0, 1.0]], values=[1.0, 1.0]), "grid"),
        (dict(grid="ab", values=[1.0, 1.0]), "grid"),
        (dict(grid=[0.0, 1.0], values=[1.0, 1.0], interpolation="cubic"), "interpolation"),
    ],
)
def test_bad_tables(kwargs, name):
    with pytest.raises(InvalidParameterError, match=f"`{name}` of `TabulatedDensity`"):
        TabulatedDensity(**kwargs)


def test_dimension_error_is_raised_for_wrong_value_count():
    with pytest.raises(DimensionError):
        TabulatedDensity(grid=[0.0, 1.0, 2.0], values=[1.0, 1.0, 1.0], interpolation="constant")
