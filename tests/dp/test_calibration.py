"""DP calibration: the exact Gaussian profile against dp-accounting and Monte Carlo; Laplace round trips."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privnoise import dp
from privnoise.exceptions import CalibrationError, InvalidParameterError

dp_accounting = pytest.importorskip("dp_accounting")


@pytest.mark.parametrize("epsilon, delta", [(0.1, 1e-6), (1.0, 1e-5), (3.0, 1e-9), (8.0, 0.01)])
def test_sigma_matches_dp_accounting(epsilon, delta):
    ours = dp.gaussian_sigma(epsilon, delta, sensitivity=1.0)
    theirs = dp_accounting.get_sigma_gaussian(epsilon, delta)
    assert ours == pytest.approx(theirs, rel=1e-6)


@pytest.mark.parametrize("sigma, delta", [(0.5, 1e-3), (1.0, 1e-5), (4.0, 1e-8)])
def test_epsilon_matches_dp_accounting(sigma, delta):
    ours = dp.gaussian_epsilon(sigma, delta, sensitivity=1.0)
    theirs = dp_accounting.get_epsilon_gaussian(sigma, delta)
    assert ours == pytest.approx(theirs, rel=1e-5, abs=1e-9)


@pytest.mark.parametrize("epsilon, delta, sens", [(0.5, 1e-6, 1.0), (2.0, 1e-3, 3.0), (1.0, 0.1, 0.2)])
def test_round_trips(epsilon, delta, sens):
    sigma = dp.gaussian_sigma(epsilon, delta, sensitivity=sens)
    assert dp.gaussian_delta(sigma, epsilon, sensitivity=sens) == pytest.approx(delta, rel=1e-8)
    assert dp.gaussian_epsilon(sigma, delta, sensitivity=sens) == pytest.approx(epsilon, rel=1e-8)
    mech = dp.gaussian_for_epsilon_delta(epsilon, delta, sensitivity=sens)
    assert mech.std == pytest.approx(sigma)
    lap = dp.laplace_for_epsilon(epsilon, sensitivity=sens)
    assert dp.laplace_epsilon(float(lap.scale), sensitivity=sens) == pytest.approx(epsilon)


def test_profile_is_the_hockey_stick_divergence():
    # δ(ε) = ∫ max(0, p(y) − e^ε q(y)) dy for p = N(Δ, σ²), q = N(0, σ²): a second method by quadrature.
    from scipy import integrate

    sigma, eps, sens = 0.8, 0.7, 1.0
    p = stats.norm(sens, sigma).pdf
    q = stats.norm(0.0, sigma).pdf
    value, _ = integrate.quad(
        lambda y: max(0.0, p(y) - math.exp(eps) * q(y)), -10, 12, limit=200, points=[0.5]
    )
    assert dp.gaussian_delta(sigma, eps, sensitivity=sens) == pytest.approx(value, rel=1e-7)


def test_classical_calibration_is_looser_than_exact():
    for eps in (0.1, 0.5, 0.9):
        classical = dp.classical_gaussian_sigma(eps, 1e-5, sensitivity=1.0)
        assert classical > dp.gaussian_sigma(eps, 1e-5, sensitivity=1.0)
        assert dp.gaussian_delta(classical, eps, sensitivity=1.0) <= 1e-5


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: dp.gaussian_sigma(0.0, 1e-5, sensitivity=1.0), "epsilon"),
        (lambda: dp.gaussian_sigma(np.nan, 1e-5, sensitivity=1.0), "epsilon"),
        (lambda: dp.gaussian_sigma(1.0, 1.0, sensitivity=1.0), "delta"),
        (lambda: dp.gaussian_sigma(1.0, -0.1, sensitivity=1.0), "delta"),
        (lambda: dp.gaussian_sigma(1.0, 1e-5, sensitivity=-1.0), "sensitivity"),
        (lambda: dp.gaussian_epsilon(-1.0, 1e-5, sensitivity=1.0), "sigma"),
        (lambda: dp.laplace_for_epsilon(np.inf, sensitivity=1.0), "epsilon"),
        (lambda: dp.classical_gaussian_sigma(1.5, 1e-5, sensitivity=1.0), "epsilon"),
    ],
)
def test_bad_parameters(call, name):
    with pytest.raises(InvalidParameterError) as info:
        call()
    assert name in str(info.value)


def test_delta_zero_cannot_be_met_by_gaussian_noise():
    with pytest.raises(CalibrationError):
        dp.gaussian_sigma(1.0, 0.0, sensitivity=1.0)
    assert math.isinf(dp.gaussian_epsilon(1.0, 0.0, sensitivity=1.0))
