"""pn.release for every privacy notion: the guarantee it states, audits below it, hardened output, every family."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import privnoise as pn
from privnoise import dp, queries
from privnoise.exceptions import CalibrationError, InvalidParameterError
from privnoise.guarantees import CombinedGuarantee, DifferentialPrivacyGuarantee, FisherGuarantee
from privnoise.mechanisms import (
    Gaussian,
    L2Laplace,
    Laplace,
    MultiUserLaplace,
    RaisedCosine,
    TabulatedDensity,
)

ALPHA = 1e-6
DELTA = 1e-6


# -- the (ε, δ) a DP release states is epsilon_delta_of's, plus the lattice rounding --------------------------


def dp_cases():
    mean = queries.mean(400, bounds=(0.0, 60.0))
    ident = queries.identity(3, bounds=(-1.0, 2.0))
    users = queries.identity(4, bounds=(0.0, 1.0))
    lap = dp.laplace_for_epsilon(1.0, sensitivity=mean.sensitivity("l1"))
    gauss = dp.gaussian_for_epsilon_delta(0.7, DELTA, sensitivity=mean.sensitivity("l2"))
    l2 = dp.laplace_for_epsilon(0.5, sensitivity=ident.sensitivity("l2"), norm="l2", dim=3)
    multi = dp.multi_user_laplace(2.0, 2, 2, sensitivity=users.sensitivity("l1-l2", block=2))
    dlap = dp.DiscreteLaplace(scale=mean.sensitivity("l1"), dimension=None)
    dgauss = dp.DiscreteGaussian(sigma=3.0, grid_exponent=-3, dimension=3)
    h = dp.hardened(lap, sensitivity=mean.sensitivity("l1"), bound=60.0)
    return [
        ("laplace", mean, lap, "l1", None, 1.0),
        ("gaussian", mean, gauss, "l2", None, 0.7),
        ("l2 laplace", ident, l2, "l2", None, 0.5),
        ("multi-user laplace", users, multi, "l1-l2", 2, 2.0),
        ("discrete laplace", mean, dlap, "l1", None, None),
        ("discrete gaussian", ident, dgauss, "l2", None, None),
        ("hardened laplace", mean, h, "l1", None, None),
    ]


@pytest.mark.parametrize("label, query, noise, norm, block, target", dp_cases(), ids=[c[0] for c in dp_cases()])
def test_dp_release_states_the_epsilon_delta_of_its_noise(label, query, noise, norm, block, target):
    x = np.full(query.n, query.bounds.lower)
    rel = pn.release(x, query, noise, rng=1, delta=DELTA)
    sensitivity = query.sensitivity(norm, block=block)
    expected = dp.epsilon_delta_of(noise, sensitivity=sensitivity, delta=DELTA, coordinates=query.changed_outputs())
    guarantee = rel.guarantee
    assert guarantee.epsilon == pytest.approx(expected.epsilon, rel=1e-12)
    assert guarantee.delta == expected.delta
    if target is not None:  # continuous noise: the snapped release keeps the calibrated ε exactly
        assert guarantee.epsilon == pytest.approx(target, rel=1e-9)
    assert rel.grid > 0 and np.all(np.asarray(rel.value) / rel.grid == np.rint(np.asarray(rel.value) / rel.grid))


def test_fisher_and_dp_together_and_apart():
    q = queries.mean(100, bounds=(0.0, 1.0))
    rel = pn.release(np.full(100, 0.5), q, dp.laplace_for_epsilon(1.0, sensitivity=q.sensitivity()), rng=0)
    assert isinstance(rel.guarantee, CombinedGuarantee)
    assert rel.guarantee.worst_record_bound == pytest.approx(1.0 / (1.0 / 0.01**2 / 100**2))  # b = 0.01
    assert isinstance(pn.release(np.full(100, 0.5), q, RaisedCosine(lower=-0.1, upper=0.1)).guarantee, FisherGuarantee)
    gauss = dp.gaussian_for_epsilon_delta(1.0, DELTA, sensitivity=q.sensitivity("l2"))
    assert isinstance(pn.release(np.full(100, 0.5), q, gauss).guarantee, FisherGuarantee)  # no δ: Fisher only
    assert isinstance(pn.release(np.full(100, 0.5), q, gauss, delta=DELTA).guarantee, CombinedGuarantee)
    lattice = pn.release(np.full(100, 0.5), q, dp.DiscreteLaplace(scale=0.01))
    assert isinstance(lattice.guarantee, DifferentialPrivacyGuarantee)
    with pytest.raises(CalibrationError, match="bounds"):
        pn.release(np.full(100, 0.5), queries.mean(100), dp.DiscreteLaplace(scale=0.01))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["laplace", "gaussian", "discrete laplace"])
def test_audit_of_releases_stays_below_the_stated_epsilon_and_catches_a_false_claim(kind):
    """Each coordinate of an identity release is one record's release: 10⁶ of them per neighbouring input."""
    n, width = 10**6, 1.0
    q = queries.identity(n, bounds=(0.0, width))
    noise = {
        "laplace": Laplace(scale=np.broadcast_to(1.0, (n,))),
        "gaussian": Gaussian.from_std(dp.gaussian_sigma(1.0, 1e-5, sensitivity=width), n),
        "discrete laplace": dp.DiscreteLaplace(scale=1.0, grid_exponent=-3, dimension=n),
    }[kind]
    delta = 1e-5 if kind == "gaussian" else 0.0
    stated = pn.release(np.zeros(n), q, noise, rng=0, delta=delta or None).guarantee.epsilon

    def released(x, count, generator):
        records = queries.identity(count, bounds=(0.0, 3.0 * width))
        return pn.release(np.full(count, float(x)), records, noise, rng=generator).value

    report = dp.audit(released, 0.0, width, samples=n, rng=3, confidence=1 - ALPHA, delta=delta)
    assert report.epsilon_lower_bound <= stated, report.summary()
    assert report.epsilon_lower_bound > 0.3 * stated, report.summary()  # the audit has power
    # neighbours three times further apart than the bounds the ε was stated for: the claim is caught
    false = dp.audit(released, 0.0, 3.0 * width, samples=n, rng=4, confidence=1 - ALPHA, delta=delta)
    assert false.epsilon_lower_bound > stated, false.summary()


# -- hardened by default: no low-order-bit event separates neighbours --------------------------------------------


def low_bits(values: np.ndarray, bits: int = 8) -> np.ndarray:
    """The lowest ``bits`` bits of each double's mantissa."""
    return (np.ascontiguousarray(values, dtype=np.float64).view(np.uint64) & np.uint64((1 << bits) - 1)).astype(int)


def low_bit_p_value(a: np.ndarray, b: np.ndarray) -> float:
    """χ² test that the low-bit patterns of two samples share one law (1.0 when both show a single pattern)."""
    categories = np.union1d(a, b)
    table = np.array([[np.count_nonzero(a == c) for c in categories], [np.count_nonzero(b == c) for c in categories]])
    table = table[:, table.sum(axis=0) > 0]
    if table.shape[1] < 2:
        return 1.0
    return float(stats.chi2_contingency(table).pvalue)


@pytest.mark.parametrize(
    "noise",
    [Gaussian.from_std(1.0, 100_000), Laplace(scale=np.broadcast_to(1.0, (100_000,)))],
    ids=["fisher-optimal gaussian", "laplace"],
)
def test_low_bits_of_releases_do_not_depend_on_the_data(noise):
    n = 100_000
    q = queries.identity(n, bounds=(-10.0, 10.0))

    def bits(x, harden):
        return low_bits(pn.release(np.full(n, x), q, noise, rng=int(x * 10) + 7, harden=harden).value)

    assert low_bit_p_value(bits(0.0, True), bits(1.0, True)) > ALPHA
    assert low_bit_p_value(bits(0.0, False), bits(1.0, False)) < ALPHA  # power: the raw release leaks


def test_release_outputs_lie_on_the_grid_for_every_query_kind():
    x = np.linspace(0.0, 1.0, 50)
    for q, noise in [
        (queries.mean(50, bounds=(0, 1)), Laplace(scale=0.1)),
        (queries.identity(50, bounds=(0, 1)), Gaussian.from_std(0.2, 50)),
        (queries.variance(50, bounds=(0, 1)), RaisedCosine(lower=-0.01, upper=0.01)),
        (queries.linear(np.ones((2, 50)) / 50, bounds=(0, 1)), Gaussian(cov=np.eye(2) * 0.01)),
    ]:
        rel = pn.release(x, q, noise, rng=0)
        units = np.asarray(rel.value) / rel.grid
        assert rel.grid > 0 and np.all(units == np.rint(units))
        raw = pn.release(x, q, noise, rng=0, harden=False)
        assert raw.grid == 0.0
        np.testing.assert_allclose(rel.value, raw.value, atol=rel.grid)  # same draw, rounded to the grid


def test_snapping_rounds_the_exact_sum_at_half_way_points():
    from privnoise.snapping import snapped_sum

    # v + w is exactly half a grid step above 0 though the double sum rounds: the exact error decides
    v, w = np.array([0.5 + 2.0**-53]), np.array([-(2.0**-53) + 2.0**-80])
    assert snapped_sum(v, w.copy(), 0).tolist() == [1.0]
    assert snapped_sum(np.array([0.5]), np.array([-(2.0**-80)]), 0).tolist() == [0.0]
    rng = np.random.default_rng(5)
    v = rng.uniform(-4, 4, 100_000)
    w = rng.normal(size=100_000)
    exact = [float(round((Fraction(a) + Fraction(b)) * 8)) / 8 for a, b in zip(v[:2000], w[:2000], strict=True)]
    assert snapped_sum(v[:2000], w[:2000].copy(), -3).tolist() == exact


# -- every noise family goes through pn.release ------------------------------------------------------------------


def test_every_family_releases_with_its_notion():
    x = np.linspace(0.0, 1.0, 4)
    ident = queries.identity(4, bounds=(0.0, 1.0))
    mean = queries.mean(4, bounds=(0.0, 1.0))
    table = TabulatedDensity(grid=[-0.2, 0.0, 0.2], values=[0.0, 1.0, 0.0])
    cases = {
        "gaussian": (mean, pn.fisher.optimal_noise(mean, quality_budget=0.01), "fisher-information+differential-privacy"),
        "raised cosine": (ident, pn.fisher.optimal_noise(ident, support=(-0.1, 0.1)), "fisher-information"),
        "laplace": (ident, dp.laplace_for_epsilon(1.0, sensitivity=1.0, dim=4), "fisher-information+differential-privacy"),
        "l2 laplace": (ident, L2Laplace(epsilon=1.0, dim=4), "fisher-information+differential-privacy"),
        "multi-user": (ident, MultiUserLaplace(epsilon=1.0, users=2, user_dim=2), "fisher-information+differential-privacy"),
        "discrete gaussian": (ident, dp.DiscreteGaussian(sigma=0.5, dimension=4), "differential-privacy"),
        "hardened": (mean, dp.hardened(Laplace(scale=1.0), sensitivity=0.25, bound=1.0), "differential-privacy"),
        "policy": (mean, pn.fisher.optimal_noise(mean, output_range=(0.0, 1.0)), "fisher-information"),
    }
    for label, (q, noise, notion) in cases.items():
        rel = pn.release(x, q, noise, rng=2, delta=DELTA)
        assert rel.guarantee.notion == notion, label
        assert np.all(np.isfinite(rel.value)), label
    with pytest.raises(CalibrationError, match="infinite Fisher information"):  # no notion holds: refused
        pn.release(x, mean, table, rng=2)


def test_system_and_recoverability_noise_release_through_the_same_path():
    sys = pn.systems.StateSpace(A=[[0.9]], B=[[1.0]], C=[[1.0]], D=[[0.0]])
    x0 = pn.systems.GaussianInput(mean=[90], cov=[[10]])
    stat = pn.systems.statistical_input_noise(sys, horizon=2, c=2.02, delta=0.1, x0_public=x0)
    window = queries.identity(3)
    rel = pn.release([410.0, 411.0, 409.0], window, stat, rng=0)
    assert rel.guarantee.delta == 0.1 and "input law" in rel.guarantee.notion
    init = pn.systems.initial_state_noise(pn.systems.StateSpace(A=[[1, 1], [0, 1]], C=[[1, 0]]), horizon=4, quality_weight=1.0)
    rel = pn.release([3.0, 1.0], init.query(), init, rng=0)
    assert rel.guarantee.cramer_rao_bound == pytest.approx(float(np.trace(init.initial_covariance)))
    with pytest.raises(InvalidParameterError, match="Ψ_T"):
        pn.release([3.0, 1.0, 0.0, 0.0, 0.0], queries.identity(5), init)
    resp = pn.recoverability.optimal_response(np.array([[1.0, 0.0], [0.0, 2.0]]), 1.0)
    rel = pn.release([0.3, -0.2], resp.query(), resp, rng=0)
    assert rel.guarantee.notion == "mmse" and rel.guarantee.privacy == pytest.approx(resp.privacy())


def test_identity_release_with_optimal_noise_has_the_right_law(assert_ks):
    """The hardened identity release with Fisher-optimal noise is x + N(0, σ²) to within its grid (Λ ≈ σ/4096)."""
    n, sigma = 200_000, 0.7
    q = queries.identity(n, bounds=(0.0, 5.0))
    noise = pn.fisher.optimal_noise(q, quality_budget=n * sigma**2)
    rel = pn.release(np.full(n, 2.0), q, noise, rng=11)
    assert_ks(
        rel.value,
        lambda t: stats.norm.cdf(t - 2.0, scale=sigma),
        [lambda t, s=s: stats.norm.cdf(t - 2.0, scale=s * sigma) for s in (0.7, 1.3)],
    )
    assert math.isclose(rel.guarantee.worst_record_bound, sigma**2, rel_tol=1e-12)
