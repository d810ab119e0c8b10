"""Calibration invariants: every calibrated parameter is on the safe side of its profile and tight, and the ε of
every Laplace-family mechanism is the largest log-density ratio between neighbouring outputs.

Second methods: the privacy profile itself evaluated at the returned value and just beside it (safe side and
tightness), closed forms of simple profiles, and log-density ratios of the mechanisms evaluated far along the
direction of a worst-case shift.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from privnoise import dp
from privnoise.dp.inversion import smallest_epsilon
from privnoise.exceptions import CalibrationError, InvalidParameterError
from privnoise.mechanisms import Gaussian, L2Laplace, Laplace, Mechanism, MultiUserLaplace


@settings(max_examples=60, deadline=None)
@given(
    sigma=st.floats(0.05, 50.0),
    log_delta=st.floats(-12.0, -1.0),
    sensitivity=st.sampled_from([0.1, 1.0, 3.0]),
)
def test_gaussian_epsilon_is_safe_and_tight(sigma, log_delta, sensitivity):
    delta = 10.0**log_delta
    eps = dp.gaussian_epsilon(sigma, delta, sensitivity=sensitivity)
    assert dp.gaussian_delta(sigma, eps, sensitivity=sensitivity) <= delta  # never below the true ε
    if eps > 0:
        assert dp.gaussian_delta(sigma, eps * (1 - 1e-7), sensitivity=sensitivity) > delta


@settings(max_examples=60, deadline=None)
@given(
    epsilon=st.floats(0.01, 20.0),
    log_delta=st.floats(-12.0, -1.0),
    sensitivity=st.sampled_from([0.1, 1.0, 3.0]),
)
def test_gaussian_sigma_is_safe_and_tight(epsilon, log_delta, sensitivity):
    delta = 10.0**log_delta
    sigma = dp.gaussian_sigma(epsilon, delta, sensitivity=sensitivity)
    assert (
        dp.gaussian_delta(sigma, epsilon, sensitivity=sensitivity) <= delta
    )  # exactly, never a rounding above
    assert dp.gaussian_delta(sigma * (1 - 1e-9), epsilon, sensitivity=sensitivity) > delta
    mech = dp.gaussian_for_epsilon_delta(epsilon, delta, sensitivity=sensitivity, dim=3)
    assert mech.shape == (3,) and np.allclose(np.asarray(mech.covariance()), sigma**2 * np.eye(3))


def test_gaussian_delta_against_the_explicit_formula_and_its_limits():
    # δ(ε) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ), evaluated here with scipy.stats directly
    for sigma, eps, sens in ((1.0, 0.5, 1.0), (0.3, 2.0, 0.5), (4.0, 0.1, 2.0), (2.0, 0.0, 1.0)):
        a, b = sens / (2 * sigma), eps * sigma / sens
        expected = stats.norm.cdf(a - b) - math.exp(eps) * stats.norm.cdf(-a - b)
        assert dp.gaussian_delta(sigma, eps, sensitivity=sens) == pytest.approx(
            expected, rel=1e-10, abs=1e-300
        )
    # at ε = 0 the profile is the total variation 2Φ(Δ/2σ) − 1
    assert dp.gaussian_delta(1.0, 0.0, sensitivity=1.0) == pytest.approx(
        2 * stats.norm.cdf(0.5) - 1, rel=1e-12
    )
    # far tails: δ is tiny but never negative or NaN, and decreasing in ε
    values = [dp.gaussian_delta(0.05, e, sensitivity=1.0) for e in (400.0, 800.0, 1500.0, 2000.0)]
    assert all(0.0 <= v < 1e-10 for v in values) and values == sorted(values, reverse=True)
    assert values[0] == pytest.approx(
        stats.norm.cdf(-10.0) - math.exp(400.0) * stats.norm.cdf(-30.0), rel=1e-6
    )


def test_zero_epsilon_when_the_noise_is_large_enough():
    # δ(0) = 2Φ(Δ/2σ) − 1 ≤ δ: no ε is needed at all
    sigma = 1e4
    assert dp.gaussian_delta(sigma, 0.0, sensitivity=1.0) < 1e-4
    assert dp.gaussian_epsilon(sigma, 1e-4, sensitivity=1.0) == 0.0
    assert dp.gaussian_epsilon(sigma, 1e-6, sensitivity=1.0) > 0.0


def test_smallest_epsilon_of_a_closed_form_profile():
    for delta in (0.3, 1e-3, 1e-9):
        eps = smallest_epsilon(lambda e: math.exp(-e), delta, what="exp")
        assert eps == pytest.approx(math.log(1 / delta), rel=1e-11)
        assert math.exp(-eps) <= delta
    assert smallest_epsilon(lambda e: 0.5 * math.exp(-e), 0.7, what="exp") == 0.0
    assert smallest_epsilon(lambda e: math.exp(-e), 0.0, what="exp") == math.inf
    # a profile reaching δ only beyond 2^k: bracketed by doubling, found exactly
    assert smallest_epsilon(lambda e: 1.0 if e < 300.0 else 0.0, 0.5, what="step") == pytest.approx(300.0)
    with pytest.raises(CalibrationError, match="flat"):
        smallest_epsilon(lambda e: 1.0, 0.5, what="flat", limit=1e3)
    with pytest.raises(CalibrationError):
        smallest_epsilon(lambda e: math.exp(-e), 1e-300, what="exp", limit=100.0)


def test_gaussian_sigma_brackets_far_from_the_sensitivity():
    # a huge ε needs σ far below Δ, a tiny ε far above it: the brackets must reach them
    for eps, delta, sens in (
        (200.0, 1e-5, 1.0),
        (1e-3, 1e-5, 1.0),
        (1.0, 0.49, 1.0),
        (1e7, 1e-5, 1.0),
        (1e6, 1e-5, 0.3),
    ):
        sigma = dp.gaussian_sigma(eps, delta, sensitivity=sens)
        assert dp.gaussian_delta(sigma, eps, sensitivity=sens) <= delta
        assert dp.gaussian_delta(sigma * (1 - 1e-9), eps, sensitivity=sens) > delta
    assert dp.gaussian_sigma(1e7, 1e-5, sensitivity=1.0) < 1e-3 / 2  # below the first bracket
    assert dp.gaussian_sigma(1e-3, 1e-5, sensitivity=1.0) > 1e3


def test_classical_calibration_formula():
    for eps, delta, sens in ((0.5, 1e-5, 1.0), (0.9, 1e-3, 2.5)):
        expected = sens * math.sqrt(2 * math.log(1.25 / delta)) / eps
        assert dp.classical_gaussian_sigma(eps, delta, sensitivity=sens) == pytest.approx(expected, rel=1e-14)
    for bad in (
        lambda: dp.classical_gaussian_sigma(1.0, 1e-5, sensitivity=1.0),
        lambda: dp.classical_gaussian_sigma(0.5, 0.0, sensitivity=1.0),
    ):
        with pytest.raises(InvalidParameterError):
            bad()


def _largest_log_ratio(mech, shift: np.ndarray) -> float:
    """max over far points v of log g(v) − log g(v + shift): attained along the shift for these laws."""
    direction = shift / np.linalg.norm(shift)
    points = np.outer([5.0, 50.0, 500.0], direction)
    return float(np.max(mech.logpdf(points) - mech.logpdf(points + shift)))


@pytest.mark.parametrize("eps, sens, dim", [(0.5, 2.0, None), (1.3, 0.7, 3)])
def test_l1_laplace_epsilon_is_the_log_density_ratio(eps, sens, dim):
    mech = dp.laplace_for_epsilon(eps, sensitivity=sens, dim=dim)
    m = 1 if dim is None else dim
    assert np.allclose(np.asarray(mech.scale), sens / eps) and mech.shape == (() if dim is None else (dim,))
    shift = np.zeros(m)
    shift[0] = sens
    if dim is None:
        ratio = float(mech.logpdf(5.0) - mech.logpdf(5.0 + sens))
    else:
        ratio = _largest_log_ratio(mech, shift)
    assert ratio == pytest.approx(eps, rel=1e-9)
    assert dp.epsilon_of_laplace(mech, sensitivity=sens) == pytest.approx(eps, rel=1e-12)
    assert dp.laplace_epsilon(sens / eps, sensitivity=sens) == pytest.approx(eps, rel=1e-12)


def test_unequal_laplace_scales_take_the_smallest():
    mech = Laplace(scale=[1.0, 4.0])
    worst = max(
        _largest_log_ratio(mech, np.array([2.0, 0.0])), _largest_log_ratio(mech, np.array([0.0, 2.0]))
    )
    assert worst == pytest.approx(2.0, rel=1e-9)
    assert dp.epsilon_of_laplace(mech, sensitivity=2.0) == pytest.approx(worst, rel=1e-12)
    assert dp.epsilon_delta_of(mech, sensitivity=2.0).epsilon == pytest.approx(worst, rel=1e-12)


@pytest.mark.parametrize("eps, sens, dim", [(0.5, 2.0, 2), (1.5, 0.4, 4)])
def test_l2_laplace_epsilon_is_the_log_density_ratio(eps, sens, dim):
    mech = dp.laplace_for_epsilon(eps, sensitivity=sens, norm="l2", dim=dim)
    assert isinstance(mech, L2Laplace) and mech.epsilon == pytest.approx(eps / sens)
    rng = np.random.default_rng(2)
    shift = rng.normal(size=dim)
    shift *= sens / np.linalg.norm(shift)
    assert _largest_log_ratio(mech, shift) == pytest.approx(eps, rel=1e-9)
    assert dp.epsilon_of_laplace(mech, sensitivity=sens) == pytest.approx(eps, rel=1e-12)
    assert dp.epsilon_delta_of(mech, sensitivity=sens).epsilon == pytest.approx(eps, rel=1e-12)


def test_multi_user_laplace_epsilon_is_the_log_density_ratio():
    eps, users, user_dim, alpha = 0.8, 3, 2, 1.5
    mech = dp.multi_user_laplace(eps, users, user_dim, sensitivity=alpha)
    assert isinstance(mech, MultiUserLaplace) and mech.epsilon == pytest.approx(eps / alpha)
    assert (mech.users, mech.user_dim) == (users, user_dim)
    one_user = np.zeros(users * user_dim)
    one_user[:user_dim] = alpha / math.sqrt(user_dim)  # ‖u₁ − u₁′‖₂ = α
    two_users = np.zeros(users * user_dim)
    two_users[0], two_users[user_dim] = 0.4 * alpha, 0.6 * alpha  # Σᵢ‖uᵢ − uᵢ′‖₂ = α, adjacency (4)
    for shift in (one_user, two_users):
        assert _largest_log_ratio(mech, shift) == pytest.approx(eps, rel=1e-9)
    assert dp.epsilon_of_laplace(mech, sensitivity=alpha) == pytest.approx(eps, rel=1e-12)
    assert dp.epsilon_delta_of(mech, sensitivity=alpha).epsilon == pytest.approx(eps, rel=1e-12)


def test_epsilon_of_laplace_refuses_other_noise():
    with pytest.raises(InvalidParameterError, match="mechanism"):
        dp.epsilon_of_laplace(Gaussian(cov=1.0), sensitivity=1.0)
    with pytest.raises(InvalidParameterError, match="dim"):
        dp.laplace_for_epsilon(1.0, norm="l2")
    with pytest.raises(InvalidParameterError, match="norm"):
        dp.laplace_for_epsilon(1.0, norm="linf", dim=2)


def test_gaussian_guarantee_uses_the_weakest_direction_by_monte_carlo_free_check():
    # Σ with eigenvalues (9, 0.25): the ℓ2 shift along the 0.25 direction is the worst, i.e. σ = 0.5
    rotation = np.array([[0.6, -0.8], [0.8, 0.6]])
    cov = rotation @ np.diag([9.0, 0.25]) @ rotation.T
    g = dp.epsilon_delta_of(Gaussian(cov=cov), sensitivity=1.0, delta=1e-5)
    assert g.epsilon == pytest.approx(dp.gaussian_epsilon(0.5, 1e-5, sensitivity=1.0), rel=1e-9)
    assert g.epsilon > dp.gaussian_epsilon(3.0, 1e-5, sensitivity=1.0)
    # scaling: Δ at σ equals 2Δ at 2σ
    assert dp.epsilon_delta_of(Gaussian(cov=4 * cov), sensitivity=2.0, delta=1e-5).epsilon == pytest.approx(
        g.epsilon, rel=1e-9
    )


def test_unit_sensitivity_is_the_default():
    mech = dp.laplace_for_epsilon(0.5, dim=2)
    assert np.allclose(mech.scale, 2.0)
    assert dp.epsilon_of_laplace(mech) == pytest.approx(0.5)
    assert dp.laplace_epsilon(4.0) == pytest.approx(0.25)
    assert dp.multi_user_laplace(0.5, 2, 3).epsilon == pytest.approx(0.5)
    assert dp.epsilon_of_laplace(dp.multi_user_laplace(0.5, 2, 3)) == pytest.approx(0.5)


def test_smallest_epsilon_refuses_exactly_past_its_limit():
    # hi doubles 1, 2, …, 1024: a profile that first meets δ at ε = 1000 is found with limit 1024 …
    step = lambda e: 1.0 if e < 1000.0 else 0.0  # noqa: E731
    assert smallest_epsilon(step, 0.5, what="step", limit=1024.0) == pytest.approx(1000.0)
    # … and refused with a limit below the bracket it needs
    with pytest.raises(CalibrationError, match="step"):
        smallest_epsilon(step, 0.5, what="step", limit=1000.0)


def test_guarantees_state_their_adjacency():
    g = dp.epsilon_delta_of(Laplace(scale=[1.0, 2.0]), sensitivity=2.0)
    assert g.adjacency == "ℓ1 sensitivity 2"
    g = dp.epsilon_delta_of(L2Laplace(epsilon=1.0, dim=2), sensitivity=0.5)
    assert g.adjacency == "ℓ2 sensitivity 0.5"
    g = dp.epsilon_delta_of(MultiUserLaplace(epsilon=1.0, users=2, user_dim=2), sensitivity=3.0)
    assert g.adjacency == "per-user ℓ2 (Σ‖block‖₂) sensitivity 3"
    g = dp.epsilon_delta_of(Gaussian(cov=2.0), sensitivity=1.5, delta=1e-6)
    assert g.adjacency == "ℓ2 sensitivity 1.5" and g.delta == 1e-6


def test_hardened_gaussian_reports_its_own_profile():
    h = dp.hardened(Gaussian.from_std(2.0), sensitivity=1.0, bound=10.0, grid_exponent=-5)
    g = dp.epsilon_delta_of(h, sensitivity=1.0, delta=1e-6)
    assert g.epsilon == pytest.approx(dp.gaussian_epsilon(2.0, 1e-6, sensitivity=1.0 + 2.0**-5), rel=1e-12)
    assert g.epsilon > dp.epsilon_delta_of(Gaussian.from_std(2.0), sensitivity=1.0, delta=1e-6).epsilon
    with pytest.raises((CalibrationError, InvalidParameterError)):
        dp.epsilon_delta_of(h, sensitivity=1.0)  # Gaussian noise: no pure ε
    pure = dp.hardened(Laplace(scale=2.0), sensitivity=1.0, bound=10.0, grid_exponent=-4)
    assert dp.epsilon_delta_of(pure, sensitivity=1.0, delta=1e-6).epsilon == pure.epsilon()


class _NotSampled(Mechanism):
    """The protocol's abstract methods, unused: the guarantee is refused from the support (the covariance sets a scale)."""

    def _unused(self, *args, **kwargs):
        raise AssertionError("epsilon_delta_of must refuse before using the density")

    _logpdf = _sample = _score = describe = entropy = fisher_information = mean = _unused

    def covariance(self):  # the scale that sets the grid of the refusal's NoProfile
        return np.eye(int(np.prod(self.shape)))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class _OneSided(_NotSampled):
    """Noise on [0, ∞) (an exponential law, say): a shift moves mass below 0, where the original has none."""

    @property
    def shape(self) -> tuple[int, ...]:
        return ()

    def support(self):
        return np.asarray(0.0), np.asarray(np.inf)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class _OneSidedBelow(_OneSided):
    """Noise on (−∞, 0]."""

    def support(self):
        return np.asarray(-np.inf), np.asarray(0.0)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class _Unknown(_NotSampled):
    """An unbounded noise family epsilon_delta_of has no profile for."""

    @property
    def shape(self) -> tuple[int, ...]:
        return (2,)


def test_noise_without_a_known_guarantee_is_refused_with_its_reason():
    from privnoise.mechanisms import RaisedCosine

    for bounded in (RaisedCosine(lower=-1.0, upper=1.0), _OneSided(), _OneSidedBelow()):
        with pytest.raises(CalibrationError, match="bounded support"):
            dp.epsilon_delta_of(bounded, sensitivity=1.0)
    with pytest.raises(CalibrationError, match="no differential-privacy guarantee is known"):
        dp.epsilon_delta_of(_Unknown(), sensitivity=1.0)


def test_absurdly_small_epsilon_is_refused():
    # near ε = 0, δ(ε) is the total variation ≈ Δ/(σ√(2π)): δ = 1e-14 would need σ ≈ 4·10¹³ Δ, beyond the
    # 10¹² Δ at which the bracket stops; δ = 1e-11 needs σ ≈ 4·10¹⁰ Δ, within it (whatever the sensitivity)
    for sens in (0.1, 1.0, 10.0):
        with pytest.raises(CalibrationError, match="bracket"):
            dp.gaussian_sigma(1e-12, 1e-14, sensitivity=sens)
        sigma = dp.gaussian_sigma(1e-12, 1e-11, sensitivity=sens)
        assert 1e10 * sens < sigma < 1e12 * sens
