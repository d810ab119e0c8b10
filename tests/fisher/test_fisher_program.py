"""The discretised minimum-Fisher program recovers cos² (4π²/L²) and the Gaussian (1/ϑ)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privnoise.exceptions import InvalidParameterError
from privnoise.fisher.fisher_program import minimum_fisher_noise
from privnoise.fisher.information import fisher_information_quadrature


@pytest.mark.parametrize("support", [(0.0, 1.0), (-0.3, 1.1), (2.0, 2.05)])
def test_support_recovers_raised_cosine(support):
    a, b = support
    length = b - a
    sol = minimum_fisher_noise(support=support, grid=2001)
    expected = 4 * math.pi**2 / length**2
    assert sol.reference == pytest.approx(expected)
    assert abs(sol.fisher_information / expected - 1) < 0.01
    assert sol.fisher_information >= expected * (1 - 1e-12)  # Ritz upper bound
    x = sol.density.grid
    cos2 = 2 / length * np.cos(math.pi / length * (x - (a + b) / 2)) ** 2
    assert np.max(np.abs(sol.density.values - cos2)) < 1e-3 * np.max(cos2)
    assert sol.multiplier == 0.0
    # second method: quadrature of ∫g′²/g of the exact cos² density the table approximates
    quad = fisher_information_quadrature(
        lambda w: 2 / length * np.cos(math.pi / length * (w - (a + b) / 2)) ** 2, (a, b)
    )
    assert sol.fisher_information == pytest.approx(quad, rel=0.01)


@pytest.mark.parametrize("theta", [0.01, 1.0, 4.0])
def test_variance_budget_recovers_gaussian(theta):
    sol = minimum_fisher_noise(variance=theta, grid=2001)
    assert abs(sol.fisher_information * theta - 1) < 0.01
    assert sol.second_moment == pytest.approx(theta, rel=1e-9)
    assert sol.density.covariance() == pytest.approx(theta, rel=1e-3)
    assert sol.multiplier == pytest.approx(1 / theta**2, rel=1e-3)  # harmonic oscillator: μ = 1/ϑ²
    x = sol.density.grid
    gauss = np.exp(-x * x / (2 * theta)) / math.sqrt(2 * math.pi * theta)
    assert np.max(np.abs(sol.density.values - gauss)) < 1e-3 * gauss.max()
    # Cramér–Rao: Fisher·variance ≥ 1 for every location family; the optimum is the equality case
    assert sol.fisher_information * sol.second_moment >= 1 - 1e-12


def test_support_and_budget():
    loose = minimum_fisher_noise(support=(-1.0, 1.0), variance=10.0, grid=801)
    assert loose.multiplier == 0.0 and loose.fisher_information == pytest.approx(math.pi**2, rel=1e-4)
    tight = minimum_fisher_noise(support=(-1.0, 1.0), variance=0.1, grid=801)
    assert tight.multiplier > 0 and tight.second_moment == pytest.approx(0.1, rel=1e-9)
    assert tight.fisher_information > max(math.pi**2, 1 / 0.1)
    assert math.isnan(tight.reference)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(), "support` or `variance"),
        (dict(support=(1.0, 0.0)), "support"),
        (dict(support=(0.0, np.inf)), "support"),
        (dict(support=(0.0,)), "support"),
        (dict(variance=0.0), "variance"),
        (dict(variance=np.nan), "variance"),
        (dict(variance=1.0, grid=3), "grid"),
        (dict(variance=1.0, half_width=0.0), "half_width"),
        (dict(support=(0.0, 1.0), half_width=3.0), "half_width"),
    ],
)
def test_bad_inputs(kwargs, name):
    with pytest.raises(InvalidParameterError, match=f"`{name}` of `minimum_fisher_noise`"):
        minimum_fisher_noise(**kwargs)
