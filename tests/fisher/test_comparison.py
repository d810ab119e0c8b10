"""Section 5 helpers: corrected values against mechanisms' own entropies, DP profiles and direct formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privnoise import dp
from privnoise.exceptions import InvalidParameterError
from privnoise.fisher import comparison
from privnoise.mechanisms import Gaussian, Laplace


@pytest.mark.parametrize("theta", [0.1, 1.0, 4.0])
def test_entropies_equal_the_mechanisms_entropies(theta):
    lap = Laplace(scale=math.sqrt(theta / 2))
    gauss = Gaussian(cov=theta)
    assert comparison.laplace_entropy_bits(theta) == pytest.approx(lap.entropy() / math.log(2))
    assert comparison.gaussian_entropy_bits(theta) == pytest.approx(gauss.entropy() / math.log(2))
    assert comparison.gaussian_entropy_bits(theta) > comparison.laplace_entropy_bits(theta)


def test_laplace_epsilon_at_quality_is_the_dp_calibration():
    theta, sens = 0.5, 2.0
    lap = Laplace(scale=math.sqrt(theta / 2))
    assert lap.second_moment() == pytest.approx(theta)
    assert comparison.laplace_epsilon_at_quality(theta, sens) == pytest.approx(
        dp.laplace_epsilon(float(lap.scale), sensitivity=sens)
    )


def test_condition16_certifies_only_the_standard_deviation_reading():
    eps_grid = np.linspace(0.2, 5.0, 25)
    delta_grid = np.geomspace(1e-6, 0.5, 25)
    region = comparison.condition16_region(eps_grid, delta_grid, theta_over_sensitivity=3.0)
    exact = comparison.exact_gaussian_region(eps_grid, delta_grid, sigma_over_sensitivity=3.0)
    assert region.any()
    assert not np.any(region & ~exact)  # (16) with σ = ϑ is sound
    variance_reading = comparison.exact_gaussian_region(
        eps_grid, delta_grid, sigma_over_sensitivity=math.sqrt(3.0)
    )
    assert np.any(region & ~variance_reading)  # … but not with σ = √ϑ


def test_error_bounds_against_direct_computation():
    c = np.array([0.2, 0.3, 0.5])
    x = np.array([1.0, -2.0, 0.5])
    out = comparison.section5_error_bounds(c, x, theta=0.3)
    pinv = np.linalg.pinv(c[None, :])
    residual = x - (pinv @ c[None, :] @ x)
    assert out["unidentifiable_part"] == pytest.approx(residual @ residual)
    assert out["gaussian_bound"] - out["unidentifiable_part"] == pytest.approx(0.3 * (pinv.T @ pinv).item())


def test_sensitivity_of_weighted_mean():
    assert comparison.sensitivity_of_weighted_mean([0.1, -0.6, 0.3], 0.0, 5.0) == pytest.approx(3.0)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: comparison.condition16(-1.0, 1.0, 0.1, sensitivity=1.0), "theta"),
        (lambda: comparison.condition16(1.0, np.nan, 0.1, sensitivity=1.0), "epsilon"),
        (lambda: comparison.condition16(1.0, 1.0, 1.5, sensitivity=1.0), "delta"),
        (lambda: comparison.laplace_entropy_bits(0.0), "theta"),
        (lambda: comparison.section5_error_bounds([1.0, 2.0], [1.0], 1.0), "x"),
        (lambda: comparison.sensitivity_of_weighted_mean([1.0], 2.0, 1.0), "upper"),
        (lambda: comparison.condition16_region([np.inf], [0.1]), "epsilons"),
    ],
)
def test_bad_inputs(call, name):
    with pytest.raises(InvalidParameterError) as info:
        call()
    assert name in str(info.value)


def test_monte_carlo_information_matches_closed_forms():
    from privnoise.fisher import fisher_information_monte_carlo
    from privnoise.mechanisms import RaisedCosine

    for mech in (
        RaisedCosine(lower=[0.0, 1.0], upper=[0.5, 3.0]),
        Laplace(scale=0.7),
        Gaussian(cov=[[1.0, 0.3], [0.3, 2.0]]),
    ):
        est = fisher_information_monte_carlo(mech, samples=200_000, rng=21)
        exact = mech.fisher_information_matrix()
        assert np.all(np.abs(est.estimate - exact) <= 5 * est.standard_error + 1e-12)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: __import__("privnoise").fisher.fisher_information_quadrature(np.exp, (1.0, 0.0)), "support"),
        (
            lambda: __import__("privnoise").fisher.fisher_information_monte_carlo(
                Laplace(scale=1.0), samples=1
            ),
            "samples",
        ),
        (lambda: __import__("privnoise").fisher.fisher_information_monte_carlo("laplace"), "mechanism"),
    ],
)
def test_numerical_information_bad_inputs(call, name):
    with pytest.raises(InvalidParameterError) as info:
        call()
    assert name in str(info.value)
