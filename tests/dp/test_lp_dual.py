"""Dual certificates of Figures 1 and 2: closed form against the ODE; feasible iff λ < λ* = n(n+1)/ε²."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privnoise.dp.lp_dual import dual_crossing, dual_eta, dual_eta_ode, dual_threshold
from privnoise.exceptions import InvalidParameterError


@pytest.mark.parametrize("eps, n", [(1.0, 1), (0.5, 1), (2.0, 2), (1.0, 3)])
@pytest.mark.parametrize("fraction", [0.3, 0.9, 1.0, 1.1])
def test_closed_form_matches_ode(eps, n, fraction):
    lam = fraction * dual_threshold(eps, n)
    r = np.linspace(0, 14 / eps, 57)
    a, b = dual_eta(r, lam, epsilon=eps, dim=n), dual_eta_ode(r, lam, epsilon=eps, dim=n)
    np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-8 / eps**2)


@pytest.mark.parametrize("eps, n", [(1.0, 1), (0.7, 3)])
def test_feasible_iff_below_threshold(eps, n):
    star = dual_threshold(eps, n)
    for f in (0.5, 0.95, 0.999):
        r3 = dual_crossing(f * star, epsilon=eps, dim=n)
        assert math.sqrt(f * star) < r3 < math.inf
        far = dual_eta([r3 * 1.01, 3 * r3], f * star, epsilon=eps, dim=n)
        assert np.all(far > 0)
    for f in (1.0, 1.05):
        assert dual_crossing(f * star, epsilon=eps, dim=n) == math.inf
        assert dual_eta([40 / eps], f * star, epsilon=eps, dim=n)[0] < 0


def test_threshold_by_bisection_on_the_ode():
    # second method: bisection on the sign of η(R) from direct integration, R = 30/ε
    for eps, n in [(1.0, 1), (1.0, 2)]:
        lo, hi = 0.5 * dual_threshold(eps, n), 1.5 * dual_threshold(eps, n)
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            if dual_eta_ode([30 / eps], mid, epsilon=eps, dim=n)[0] > 0:
                lo = mid
            else:
                hi = mid
        assert lo == pytest.approx(dual_threshold(eps, n), rel=1e-6)


def test_printed_solutions_at_threshold():
    eps = 1.3
    v = np.linspace(-6, 6, 25)
    np.testing.assert_allclose(
        dual_eta(v, 2 / eps**2, epsilon=eps), -v * (eps * np.abs(v) + 2) / eps**2, rtol=1e-9
    )
    for n in (2, 5):
        r = np.linspace(0, 8, 17)
        star = n * (n + 1) / eps**2
        np.testing.assert_allclose(
            dual_eta(r, star, epsilon=eps, dim=n), -r * (r * eps + n + 1) / eps**2, rtol=1e-9, atol=1e-12
        )


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: dual_eta([1.0], 0.0, epsilon=1.0), "lam"),
        (lambda: dual_eta([1.0], 1.0, epsilon=-1.0), "epsilon"),
        (lambda: dual_eta([-1.0], 1.0, epsilon=1.0, dim=2), "points"),
        (lambda: dual_eta([np.nan], 1.0, epsilon=1.0), "points"),
        (lambda: dual_eta_ode([1.0], 1.0, epsilon=1.0, dim=0), "dim"),
        (lambda: dual_threshold(np.inf), "epsilon"),
    ],
)
def test_bad_inputs(call, name):
    with pytest.raises(InvalidParameterError, match=f"`{name}`"):
        call()
