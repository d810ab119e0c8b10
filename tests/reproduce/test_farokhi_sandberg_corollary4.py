"""Corollary 4 as printed (Farokhi & Sandberg): the tilted cos² density and its weighted policy (ERRATA 3).

The policy's information is checked against 4π² + 1 (closed form for p ∝ e^{−x}) and against a Monte Carlo
estimate of the score's second moment; the tilted density against quadrature.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from privnoise import queries
from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.reproduce.farokhi_sandberg.printed_policy import TiltedRaisedCosine, WeightedCosinePolicy


@pytest.mark.parametrize("tilt", [-3.0, 0.0, 1.0, 4.0])
def test_tilted_density_integrates_to_one_and_matches_its_moments(tilt: float) -> None:
    g = TiltedRaisedCosine(lower=-0.5, upper=1.5, tilt=tilt)
    total, _ = integrate.quad(g.pdf, -0.5, 1.5, epsabs=0.0, epsrel=1e-12)
    assert total == pytest.approx(1.0, rel=1e-10)
    unnormalised = lambda w: math.exp(tilt * w) * math.cos(math.pi / 2.0 * (w - 0.5)) ** 2  # noqa: E731
    z, _ = integrate.quad(unnormalised, -0.5, 1.5, epsabs=0.0, epsrel=1e-12)
    mean, _ = integrate.quad(lambda w: w * unnormalised(w) / z, -0.5, 1.5, epsabs=0.0, epsrel=1e-12)
    assert g.mean() == pytest.approx(mean, rel=1e-9, abs=1e-12)
    draws = np.asarray(g.sample(200_000, rng=3))
    assert abs(draws.mean() - mean) < 6 * draws.std() / math.sqrt(draws.size)


def test_tilted_density_rejects_bad_parameters() -> None:
    with pytest.raises(InvalidParameterError, match="upper"):
        TiltedRaisedCosine(lower=1.0, upper=0.0, tilt=1.0)
    with pytest.raises(InvalidParameterError, match="tilt"):
        TiltedRaisedCosine(lower=0.0, upper=1.0, tilt=float("nan"))


def test_weighted_policy_is_labelled_and_worse_than_plain_cos2():
    policy = WeightedCosinePolicy(lower=0.0, upper=1.0, log_weight=lambda x: -x)
    assert "not optimal" in policy.label
    assert policy.fisher_information_at(0.3) == pytest.approx(4 * math.pi**2 + 1, rel=1e-7)
    assert policy.plain_cosine_information() == pytest.approx(4 * math.pi**2)
    with pytest.raises(DimensionError):
        policy.guarantee_for(queries.mean(2), np.array([0.1, 0.2]))


def test_weighted_policy_information_matches_monte_carlo_score_for_x_dependent_weight():
    # p ∝ exp(−x²): the policy depends on x; compare the quadrature information with a Monte Carlo estimate of
    # E[(∂/∂x log p(y|x))²] using finite differences of the normalised log density in x.
    policy = WeightedCosinePolicy(lower=0.0, upper=1.0, log_weight=lambda x: -(x**2))
    x0 = 0.4
    quad = policy.fisher_information_at(x0)
    w = policy.density_at(x0).sample(200_000, rng=11)
    y = x0 + w
    h = 1e-5

    def log_p(x):
        return policy.density_at(x).logpdf(y - x)

    score = (log_p(x0 + h) - log_p(x0 - h)) / (2 * h)
    est = np.mean(score**2)
    se = np.std(score**2) / np.sqrt(score.size)
    assert abs(est - quad) < 5 * se
