"""epsilon_delta_of: the inverse of every calibration, and audits of the norm-Laplace mechanisms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privnoise import dp
from privnoise.exceptions import CalibrationError, InvalidParameterError
from privnoise.mechanisms import Gaussian, L2Laplace, Laplace, MultiUserLaplace, RaisedCosine


@pytest.mark.parametrize("epsilon, delta, sens", [(0.3, 1e-6, 1.0), (1.0, 1e-5, 2.5), (4.0, 1e-9, 0.1)])
def test_gaussian_round_trip(epsilon, delta, sens):
    mech = dp.gaussian_for_epsilon_delta(epsilon, delta, sensitivity=sens)
    g = dp.epsilon_delta_of(mech, sensitivity=sens, delta=delta)
    assert g.epsilon == pytest.approx(epsilon, rel=1e-8) and g.delta == delta


@pytest.mark.parametrize(
    "build, sens",
    [
        (lambda e, s: dp.laplace_for_epsilon(e, sensitivity=s), 3.0),
        (lambda e, s: dp.laplace_for_epsilon(e, sensitivity=s, norm="l1", dim=4), 0.5),
        (lambda e, s: dp.laplace_for_epsilon(e, sensitivity=s, norm="l2", dim=3), 2.0),
        (lambda e, s: dp.multi_user_laplace(e, 5, 2, sensitivity=s), 1.5),
    ],
)
def test_laplace_family_round_trips(build, sens):
    for eps in (0.1, 1.0, 3.0):
        g = dp.epsilon_delta_of(build(eps, sens), sensitivity=sens)
        assert g.epsilon == pytest.approx(eps, rel=1e-12) and g.delta == 0.0


def test_correlated_gaussian_uses_its_weakest_direction():
    # Σ = diag(4, 1): a unit ℓ2 shift along the second axis is the worst; equivalent to σ = 1.
    g = dp.epsilon_delta_of(Gaussian(cov=np.diag([4.0, 1.0])), sensitivity=1.0, delta=1e-5)
    assert g.epsilon == pytest.approx(dp.gaussian_epsilon(1.0, 1e-5, sensitivity=1.0))
    rotated = np.array([[np.cos(0.4), -np.sin(0.4)], [np.sin(0.4), np.cos(0.4)]])
    g_rot = dp.epsilon_delta_of(
        Gaussian(cov=rotated @ np.diag([4.0, 1.0]) @ rotated.T), sensitivity=1.0, delta=1e-5
    )
    assert g_rot.epsilon == pytest.approx(g.epsilon, rel=1e-9)


def test_hardened_mechanism_reports_its_own_guarantee():
    h = dp.hardened(Laplace(scale=1.0), sensitivity=1.0, bound=10.0)
    g = dp.epsilon_delta_of(h, sensitivity=1.0)
    assert g.epsilon == pytest.approx(h.epsilon()) and g.epsilon > 1.0


def test_no_epsilon_for_bounded_or_pure_gaussian():
    with pytest.raises(CalibrationError, match="bounded support"):
        dp.epsilon_delta_of(RaisedCosine(lower=-1.0, upper=1.0), sensitivity=1.0)
    with pytest.raises(CalibrationError, match="delta"):
        dp.epsilon_delta_of(Gaussian(cov=1.0), sensitivity=1.0)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"sensitivity": 0.0}, "sensitivity"),
        ({"sensitivity": np.nan}, "sensitivity"),
        ({"sensitivity": 1.0, "delta": 1.0}, "delta"),
    ],
)
def test_bad_parameters(kwargs, name):
    with pytest.raises(InvalidParameterError) as info:
        dp.epsilon_delta_of(Laplace(scale=1.0), **kwargs)
    assert name in str(info.value)


@pytest.mark.slow
@pytest.mark.parametrize(
    "mech, shift",
    [
        (L2Laplace(epsilon=1.0, dim=2), np.array([1.0, 0.0])),
        (MultiUserLaplace(epsilon=1.0, users=2, user_dim=2), np.array([0.6, 0.8, 0.0, 0.0])),
    ],
    ids=["l2", "multi-user"],
)
def test_audit_never_exceeds_the_claim_of_norm_laplace(mech, shift):
    claim = dp.epsilon_delta_of(mech, sensitivity=float(np.linalg.norm(shift))).epsilon
    report = dp.audit(mech, np.zeros_like(shift), shift, samples=400_000, rng=17)
    assert report.epsilon_lower_bound <= claim
    assert report.epsilon_lower_bound > 0.5 * claim  # the audit has power: it finds most of the leakage
    assert math.isfinite(report.epsilon_lower_bound)
