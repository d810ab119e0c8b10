"""Corollary 6 and Section 5 as printed (Farokhi & Sandberg): each printed formula is what the paper computes.

The printed Problem 3 covariance is twice the minimiser (ERRATA 4), checked against the objective; the printed
Laplace scale inverts Δ/ε (ERRATA 7); the printed entropies are those of noise whose *standard deviation* is ϑ
(ERRATA 9), checked against scipy.stats.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privnoise import queries
from privnoise.exceptions import InvalidParameterError
from privnoise.fisher import optimal_noise, problem3_objective
from privnoise.reproduce.farokhi_sandberg.printed_section5 import (
    printed_gaussian_entropy_bits,
    printed_laplace_entropy_bits,
    printed_laplace_epsilon_at_quality,
    printed_laplace_scale,
)
from privnoise.reproduce.farokhi_sandberg.unbounded_support import printed_corollary6_noise


@pytest.mark.parametrize("rho", [0.5, 4.0, 25.0])
@pytest.mark.parametrize(
    "query", [queries.LinearQuery(np.array([[1.0, 0.5, -0.3], [0.2, -1.0, 0.7]])), queries.sum_query(4)]
)
def test_printed_corollary6_is_twice_the_minimiser_and_costs_more(rho: float, query: queries.Query) -> None:
    corrected = optimal_noise(query, quality_weight=rho)
    printed = printed_corollary6_noise(query, quality_weight=rho)
    np.testing.assert_array_equal(np.asarray(printed.covariance()), 2.0 * np.asarray(corrected.covariance()))
    best = problem3_objective(query, corrected.covariance(), rho)
    # Tr(Σ⁻¹CCᵀ) + ϱTrΣ at 2Σ*: half the first term plus twice the second, each (Tr G^½)·√ϱ at Σ*: 5/4 of the optimum
    assert problem3_objective(query, printed.covariance(), rho) == pytest.approx(1.25 * best, rel=1e-12)


def test_printed_laplace_scale_inverts_the_calibration() -> None:
    assert printed_laplace_scale(0.5, 2.0) == pytest.approx(0.25)
    assert printed_laplace_scale(0.5, 2.0) * (2.0 / 0.5) == pytest.approx(1.0)  # ε/Δ, the reciprocal of Δ/ε


def test_printed_epsilon_at_quality_follows_from_the_inverted_scale() -> None:
    theta, sens = 0.5, 4.0
    scale = math.sqrt(theta / 2.0)  # Laplace of variance ϑ
    assert printed_laplace_epsilon_at_quality(theta, sens) == pytest.approx(sens * scale)


@pytest.mark.parametrize("theta", [0.3, 1.0, 4.0])
def test_printed_entropies_read_theta_as_a_standard_deviation(theta: float) -> None:
    laplace_bits = stats.laplace(scale=theta / math.sqrt(2.0)).entropy() / math.log(2.0)
    gaussian_bits = stats.norm(scale=theta).entropy() / math.log(2.0)
    assert printed_laplace_entropy_bits(theta) == pytest.approx(laplace_bits, rel=1e-12)
    assert printed_gaussian_entropy_bits(theta) == pytest.approx(gaussian_bits, rel=1e-12)


@pytest.mark.parametrize(
    "call",
    [
        lambda: printed_corollary6_noise(queries.sum_query(4), quality_weight=0.0),
        lambda: printed_laplace_scale(-1.0, 1.0),
        lambda: printed_laplace_epsilon_at_quality(1.0, 0.0),
        lambda: printed_laplace_entropy_bits(float("nan")),
        lambda: printed_gaussian_entropy_bits(-2.0),
    ],
)
def test_bad_input_is_refused(call) -> None:
    with pytest.raises(InvalidParameterError):
        call()
