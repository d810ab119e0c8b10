"""Empirical audit (SECURITY.md requirement 4): never above the claim for correct mechanisms, catches wrong ones."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from privnoise.dp.audits import AuditReport, audit, clopper_pearson
from privnoise.dp.gaussian import gaussian_for_epsilon_delta
from privnoise.dp.laplace import laplace_for_epsilon
from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.mechanisms import Gaussian, Laplace
from privnoise.mechanisms.discrete import DiscreteGaussian, DiscreteLaplace
from privnoise.mechanisms.hardening import hardened

CONFIDENCE = 1 - 1e-6  # the bound is valid with probability ≥ 1 − 10⁻⁶, the suite's α
DELTA = 1e-5


def correct_mechanisms():
    """(label, mechanism, x, x', claimed ε, δ) for every DP mechanism privnoise builds."""
    g = gaussian_for_epsilon_delta(1.0, DELTA, sensitivity=1.0)
    h_lap = hardened(laplace_for_epsilon(1.0, sensitivity=1.0), sensitivity=1.0, bound=10.0)
    h_gauss = hardened(g, sensitivity=1.0, bound=10.0)
    h_dlap = hardened(DiscreteLaplace(scale=1.0, grid_exponent=-2), sensitivity=1.0, bound=10.0)
    h_dgauss = hardened(DiscreteGaussian(sigma=2.0, grid_exponent=-1), sensitivity=1.0, bound=10.0)
    vec = laplace_for_epsilon(1.0, sensitivity=1.0)
    return [
        ("laplace eps=1", laplace_for_epsilon(1.0, sensitivity=1.0), 0.0, 1.0, 1.0, 0.0),
        ("laplace eps=0.5 sens=4", laplace_for_epsilon(0.5, sensitivity=4.0), 0.0, 4.0, 0.5, 0.0),
        ("gaussian eps=1 delta=1e-5", g, 0.0, 1.0, 1.0, DELTA),
        ("hardened laplace", h_lap, 0.0, 1.0, h_lap.epsilon(), 0.0),
        ("hardened gaussian", h_gauss, 0.0, 1.0, h_gauss.epsilon(DELTA), DELTA),
        ("hardened discrete laplace", h_dlap, 0.0, 1.0, h_dlap.epsilon(), 0.0),
        ("hardened discrete gaussian", h_dgauss, 0.0, 1.0, h_dgauss.epsilon(DELTA), DELTA),
        ("laplace 2-D (l1)", Laplace(scale=[float(vec.scale)] * 2), [0.0, 0.0], [0.5, 0.5], 1.0, 0.0),
        ("gaussian 2-D", Gaussian.from_std(g.std, 2), [0.0, 0.0], [0.6, 0.8], 1.0, DELTA),
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    "label, mech, x, xn, claimed, delta", correct_mechanisms(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_lower_bound_never_exceeds_the_claim(label, mech, x, xn, claimed, delta):
    report = audit(
        mech, x, xn, samples=10**6, confidence=CONFIDENCE, rng=101, delta=delta, claimed_epsilon=claimed
    )
    assert report.epsilon_lower_bound <= claimed, report.summary()
    assert report.violates_claim is False
    # and the audit is not vacuous: it finds a good part of the real leakage
    assert report.epsilon_lower_bound > 0.3 * claimed, report.summary()


@pytest.mark.slow
def test_catches_the_printed_proposition_3_scale():
    # Farokhi & Sandberg, Proposition 3 as printed: b = ε/Δ. With ε = 1, Δ = 4: b = 0.25, real ε = Δ/b = 16.
    report = audit(
        Laplace(scale=0.25), 0.0, 4.0, samples=10**6, confidence=CONFIDENCE, rng=102, claimed_epsilon=1.0
    )
    assert report.violates_claim and report.epsilon_lower_bound > 5.0, report.summary()


@pytest.mark.slow
def test_catches_laplace_at_half_the_scale():
    half = Laplace(scale=float(laplace_for_epsilon(1.0, sensitivity=1.0).scale) / 2)  # real ε = 2
    report = audit(half, 0.0, 1.0, samples=10**6, confidence=CONFIDENCE, rng=103, claimed_epsilon=1.0)
    assert report.violates_claim and 1.5 < report.epsilon_lower_bound <= 2.0, report.summary()


def test_report_fields_and_interval_events():
    report = audit(
        Laplace(scale=0.5), 0.0, 1.0, samples=100_000, rng=7, events=[(-np.inf, 0.5), (0.5, np.inf)]
    )
    assert isinstance(report, AuditReport)
    assert report.held_out == 50_000 and 0 < report.epsilon_lower_bound <= 2.0
    assert (
        report.p_lower <= report.count / report.held_out
        and report.q_upper >= report.count_neighbour / report.held_out
    )
    assert report.violates_claim is None and "ε ≥" in report.summary()
    for kind in ("threshold", "likelihood-ratio"):
        assert (
            0
            < audit(Laplace(scale=0.5), 0.0, 1.0, samples=100_000, rng=8, events=kind).epsilon_lower_bound
            <= 2.0
        )
    same = audit(Laplace(scale=0.5), 0.0, 0.0, samples=100_000, rng=9)
    assert same.epsilon_lower_bound == 0.0 or same.epsilon_lower_bound < 0.05
    callable_report = audit(lambda x, n, g: x + g.laplace(0.0, 0.5, n), 0.0, 1.0, samples=100_000, rng=10)
    assert 0 < callable_report.epsilon_lower_bound <= 2.0


def test_clopper_pearson_matches_scipy():
    for k, n in ((0, 100), (3, 1000), (500, 1000), (1000, 1000)):
        lo, hi = clopper_pearson(k, n, 0.975)
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
        assert float(lo) == pytest.approx(ci.low, abs=1e-12) and float(hi) == pytest.approx(
            ci.high, abs=1e-12
        )


@pytest.mark.parametrize(
    "kwargs, name, error",
    [
        ({"x": np.nan}, "x", InvalidParameterError),
        ({"x_neighbour": np.inf}, "x_neighbour", InvalidParameterError),
        ({"x": [0.0, 1.0]}, "same shape", DimensionError),
        ({"samples": 10}, "samples", InvalidParameterError),
        ({"confidence": 1.0}, "confidence", InvalidParameterError),
        ({"delta": 1.0}, "delta", InvalidParameterError),
        ({"events": "magic"}, "events", InvalidParameterError),
        ({"events": [(1.0, 0.0)]}, "events", InvalidParameterError),
        ({"bins": 1}, "bins", InvalidParameterError),
        ({"mechanism": "laplace"}, "mechanism", InvalidParameterError),
    ],
)
def test_bad_inputs(kwargs, name, error):
    args = {
        "mechanism": Laplace(scale=1.0),
        "x": 0.0,
        "x_neighbour": 1.0,
        "samples": 10_000,
        "rng": 1,
    } | kwargs
    mech = args.pop("mechanism")
    x, xn = args.pop("x"), args.pop("x_neighbour")
    with pytest.raises(error) as info:
        audit(mech, x, xn, **args)
    assert name in str(info.value)
