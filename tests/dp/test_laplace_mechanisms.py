# Class identity is compared by name: pytest --import-mode=importlib can execute a src module twice when its
# doctests are collected, so classes bound by privnoise.dp.laplace and by this file may be distinct objects.
"""Laplace calibration under ℓ1, ℓ2 and multi-user adjacency (Theorems 7–9 with Proposition 3): round trips."""

from __future__ import annotations

import numpy as np
import pytest

from privnoise.dp.laplace import epsilon_of_laplace, laplace_epsilon, laplace_for_epsilon, multi_user_laplace
from privnoise.dp.lipschitz import lipschitz_constant
from privnoise.exceptions import InvalidParameterError
from privnoise.mechanisms.gaussian import Gaussian
from privnoise.mechanisms.laplace import Laplace


def test_scalar_default_is_unchanged():
    lap = laplace_for_epsilon(0.5, sensitivity=1.0)
    assert type(lap).__name__ == "Laplace" and lap.shape == () and float(lap.scale) == 2.0
    assert laplace_for_epsilon(0.5).scale == 2.0
    assert laplace_epsilon(2.0, sensitivity=1.0) == 0.5


@pytest.mark.parametrize("eps, sens, dim", [(0.5, 1.0, 3), (2.0, 0.3, 1), (1e-3, 7.0, 10)])
def test_l1_round_trip(eps, sens, dim):
    lap = laplace_for_epsilon(eps, sensitivity=sens, dim=dim)
    assert type(lap).__name__ == "Laplace" and lap.shape == (dim,)
    np.testing.assert_allclose(lap.scale, sens / eps)
    assert epsilon_of_laplace(lap, sensitivity=sens) == pytest.approx(eps, rel=1e-14)
    assert lap.second_moment() == pytest.approx(2 * dim * sens**2 / eps**2)  # Theorem 7: 2n/ε² (Δ = 1)
    assert lipschitz_constant(lap, norm="l1").epsilon(sens) == pytest.approx(eps)


@pytest.mark.parametrize("eps, sens, dim", [(0.5, 1.0, 3), (2.0, 0.3, 1), (1.0, 4.0, 7)])
def test_l2_round_trip(eps, sens, dim):
    mech = laplace_for_epsilon(eps, sensitivity=sens, norm="l2", dim=dim)
    assert type(mech).__name__ == "L2Laplace" and mech.shape == (dim,)
    assert mech.epsilon == pytest.approx(eps / sens)
    assert epsilon_of_laplace(mech, sensitivity=sens) == pytest.approx(eps, rel=1e-14)
    assert mech.second_moment() == pytest.approx(dim * (dim + 1) * sens**2 / eps**2)
    assert lipschitz_constant(mech, norm="l2").epsilon(sens) == pytest.approx(eps)


@pytest.mark.parametrize("eps, users, dim, sens", [(1.0, 4, 2, 1.0), (0.2, 1, 5, 3.0), (3.0, 10, 1, 0.5)])
def test_multi_user_round_trip(eps, users, dim, sens):
    mech = multi_user_laplace(eps, users, dim, sensitivity=sens)
    assert type(mech).__name__ == "MultiUserLaplace" and mech.shape == (users * dim,)
    assert epsilon_of_laplace(mech, sensitivity=sens) == pytest.approx(eps, rel=1e-14)
    assert mech.second_moment() == pytest.approx(users * dim * (dim + 1) * sens**2 / eps**2)
    assert lipschitz_constant(mech, norm="l1-l2", block=dim).epsilon(sens) == pytest.approx(eps)


def test_l2_beats_l1_under_l2_adjacency():
    # Under ℓ2 adjacency the ℓ1 Laplace needs scale √n/ε (its ℓ2 Lipschitz constant is √n/b): MSE 2n²/ε² ≥ n(n+1)/ε².
    eps, n = 1.0, 5
    l1 = Laplace(scale=np.full(n, np.sqrt(n) / eps))
    assert lipschitz_constant(l1, norm="l2").value == pytest.approx(eps)
    l2 = laplace_for_epsilon(eps, norm="l2", dim=n)
    assert l2.second_moment() < l1.second_moment()


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: laplace_for_epsilon(0.0), "epsilon"),
        (lambda: laplace_for_epsilon(np.nan), "epsilon"),
        (lambda: laplace_for_epsilon(np.inf), "epsilon"),
        (lambda: laplace_for_epsilon("1"), "epsilon"),
        (lambda: laplace_for_epsilon(1.0, sensitivity=-1.0), "sensitivity"),
        (lambda: laplace_for_epsilon(1.0, norm="l3"), "norm"),
        (lambda: laplace_for_epsilon(1.0, norm="l2"), "dim"),
        (lambda: laplace_for_epsilon(1.0, dim=0), "dim"),
        (lambda: laplace_for_epsilon(1.0, dim=2.5), "dim"),
        (lambda: multi_user_laplace(1.0, 0, 2), "users"),
        (lambda: multi_user_laplace(1.0, 2, -1), "dim"),
        (lambda: multi_user_laplace(-1.0, 2, 2), "epsilon"),
        (lambda: multi_user_laplace(1.0, 2, 2, sensitivity=np.nan), "sensitivity"),
        (lambda: epsilon_of_laplace(Gaussian(cov=1.0)), "mechanism"),
        (lambda: epsilon_of_laplace(Laplace(scale=1.0), sensitivity=0.0), "sensitivity"),
    ],
)
def test_bad_inputs(call, name):
    with pytest.raises(InvalidParameterError, match=f"`{name}`"):
        call()
