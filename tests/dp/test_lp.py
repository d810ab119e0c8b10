"""The discretised optimal-noise LP (Appendix of Koufogiannis, Han & Pappas) converges to Laplace."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privnoise.dp.lp import optimal_noise_lp
from privnoise.exceptions import InvalidParameterError


@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_mse_within_one_percent_on_2001_points(eps):
    sol = optimal_noise_lp(eps, grid=2001)
    assert sol.reference == pytest.approx(2 / eps**2)
    assert abs(sol.objective - 2 / eps**2) < 0.01 * 2 / eps**2
    # the discrete optimum is the two-sided geometric law: MSE (2/ε²)(1 − (εν)²/4) exactly
    nu = 2 * sol.half_width / (sol.grid - 1)
    assert sol.objective == pytest.approx(2 / eps**2 * (1 - (eps * nu) ** 2 / 4), rel=1e-6)


def test_convergence_is_monotone_from_below():
    gaps = [optimal_noise_lp(1.0, grid=n, half_width=25.0).relative_gap for n in (51, 101, 201, 401, 801)]
    assert all(g < 0 for g in gaps)
    assert all(abs(b) < abs(a) for a, b in zip(gaps, gaps[1:], strict=False))
    # O(ν²): halving ν quarters the gap
    assert gaps[-2] / gaps[-1] == pytest.approx(4.0, rel=0.02)


def test_minimiser_is_the_laplace_density():
    eps = 1.5
    sol = optimal_noise_lp(eps, grid=2001)
    v = sol.density.grid
    laplace = eps / 2 * np.exp(-eps * np.abs(v))
    assert np.max(np.abs(sol.density.values - laplace)) < 0.01 * eps / 2
    # its samples and moments follow
    assert sol.density.second_moment() == pytest.approx(2 / eps**2, rel=0.01)
    assert sol.density.mean() == pytest.approx(0.0, abs=1e-6)


def test_absolute_error_loss():
    sol = optimal_noise_lp(2.0, loss="l1", grid=2001)
    assert sol.reference == 0.5
    assert abs(sol.objective - 0.5) < 0.005


def test_tabulated_lp_noise_is_not_private():
    from privnoise.dp.lipschitz import lipschitz_constant

    sol = optimal_noise_lp(1.0, grid=201)
    assert lipschitz_constant(sol.density).value == math.inf


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(epsilon=0.0), "epsilon"),
        (dict(epsilon=np.nan), "epsilon"),
        (dict(epsilon=1.0, loss="linf"), "loss"),
        (dict(epsilon=1.0, grid=2), "grid"),
        (dict(epsilon=1.0, grid=10.5), "grid"),
        (dict(epsilon=1.0, half_width=-3.0), "half_width"),
        (dict(epsilon=1.0, half_width=np.inf), "half_width"),
    ],
)
def test_bad_inputs(kwargs, name):
    eps = kwargs.pop("epsilon")
    with pytest.raises(InvalidParameterError, match=f"`{name}` of `optimal_noise_lp`"):
        optimal_noise_lp(eps, **kwargs)
