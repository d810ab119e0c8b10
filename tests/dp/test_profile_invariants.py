"""Privacy profiles against closed forms written here: the rounding to a lattice, zCDP, exact composition, the
noise scale each profile reports, the base class a new family plugs into, and profiles of noise without one."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from privnoise import dp, queries
from privnoise.dp.privacy_profiles import (
    DiscreteGaussianProfile,
    GaussianProfile,
    PrivacyProfile,
    RoundedProfile,
)
from privnoise.dp.profile import dp_guarantee_for, profile_of
from privnoise.exceptions import CalibrationError, InvalidParameterError
from privnoise.mechanisms import Gaussian, L2Laplace, Laplace, MultiUserLaplace, RaisedCosine


def l2_lattice_units(sensitivity: float, grid: float, moved: int) -> float:
    """ℓ2 sensitivity, in grid units, after rounding to Λℤ: ⌊Δ/Λ⌋ + 1 for one moved coordinate, Δ/Λ + √m for m
    (each moved coordinate shifts by at most Λ more; triangle inequality)."""
    if moved == 1:
        return math.floor(sensitivity / grid) + 1
    return sensitivity / grid + math.sqrt(moved)


def gaussian_delta_closed_form(mu: float, epsilon: float) -> float:
    """δ(ε) of μ-GDP (Balle & Wang 2018, Theorem 8; Dong, Roth & Su 2022, Corollary 2.13)."""
    return float(stats.norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2))


class _ShiftProfile(PrivacyProfile):
    """A minimal pure family plugged into the base class (not a dataclass): ε = (Δ + Λ)/b."""

    norm = "l1"
    pure = True
    scale = 2.0
    label = "shift"

    def epsilon(self, sensitivity: float, delta: float = 0.0, *, grid: float | None = None) -> float:
        return (sensitivity + (grid or 0.0)) / self.scale


def test_a_new_pure_family_gets_exact_charges_zcdp_and_its_guarantee_from_the_base_class():
    p = _ShiftProfile()
    for grid, expected in ((None, Fraction(3, 2)), (1.0, Fraction(2))):
        eps = p.epsilon_fraction(3.0, grid=grid)
        assert expected <= eps <= expected * (1 + Fraction(1, 10**11))  # an upper bound, and a tight one
        rho = p.rho(3.0, grid=grid)
        assert rho == eps * eps / 2  # ε-DP ⇒ ε²/2-zCDP (Bun & Steinke 2016, Proposition 1.4)
    assert p.touching(2) is p and p.moved == 1
    g = p.guarantee(3.0, grid=1.0)
    assert g.epsilon == 2.0 and g.delta == 0.0
    assert "ℓ1 sensitivity 3" in g.adjacency and "grid 1" in g.adjacency


@pytest.mark.parametrize(
    "profile",
    [
        GaussianProfile(2.0, 1),
        DiscreteGaussianProfile(2.0, 0.25, 1),
        RoundedProfile(GaussianProfile(2.0, 1), 2.0**-8),
    ],
    ids=["gaussian", "discrete-gaussian", "hardened-gaussian"],
)
def test_gaussian_type_profiles_state_no_epsilon_without_a_delta(profile):
    with pytest.raises(CalibrationError, match="pass delta > 0"):
        profile.epsilon(1.0)
    for call in (lambda: profile.guarantee(1.0), lambda: profile.guarantee(1.0, 0.0)):
        with pytest.raises(CalibrationError, match="pass delta > 0"):
            call()
    with pytest.raises(InvalidParameterError, match="delta"):  # δ = 1 is no guarantee at all
        profile.guarantee(1.0, 1.0)
    with pytest.raises(CalibrationError, match="no pure"):
        profile.epsilon_fraction(1.0)


@pytest.mark.parametrize("sigma, sensitivity, grid, dim", [(2.0, 3.0, None, 3), (2.0, 3.0, 0.25, 3), (0.7, 0.3, 2.0**-6, 1)])
def test_gaussian_rho_is_the_squared_sensitivity_over_twice_the_variance(sigma, sensitivity, grid, dim):
    sens = sensitivity if grid is None else l2_lattice_units(sensitivity, grid, dim) * grid
    expected = sens**2 / (2 * sigma**2)  # Bun & Steinke 2016, Proposition 1.6
    for profile in (GaussianProfile(sigma, dim), RoundedProfile(GaussianProfile(sigma, dim), grid) if grid else None):
        if profile is None:
            continue
        rho = profile.rho(sensitivity, grid=grid) if not isinstance(profile, RoundedProfile) else profile.rho(sensitivity)
        assert Fraction(expected) <= rho <= Fraction(expected) * (1 + Fraction(1, 10**11))


@pytest.mark.parametrize("sensitivity, dim", [(0.3, 1), (1.0, 1), (1.0, 3)])
def test_discrete_gaussian_rho_includes_the_rounding(sensitivity, dim):
    sigma, grid = 1.5, 0.125
    noise = dp.DiscreteGaussian(sigma=sigma, grid_exponent=-3, dimension=dim if dim > 1 else None)
    profile = profile_of(noise)
    expected = (l2_lattice_units(sensitivity, grid, dim) * grid) ** 2 / (2 * sigma**2)  # CKS 2020, Theorem 14
    assert Fraction(expected) <= profile.rho(sensitivity) <= Fraction(expected) * (1 + Fraction(1, 10**11))
    assert profile.scale == sigma


@pytest.mark.parametrize("count", [1, 4, 9])
@pytest.mark.parametrize("grid", [None, 0.125])
def test_composed_gaussian_is_the_closed_form_composition(count, grid):
    sigma, sensitivity, dim = 3.0, 1.0, 3
    composed = GaussianProfile(sigma, dim).composed(count)
    sens = sensitivity if grid is None else l2_lattice_units(sensitivity, grid, dim) * grid
    mu = math.sqrt(count) * sens / sigma  # T adaptive μ₀-GDP releases are √T μ₀-GDP
    for eps in (0.1, 1.0, 3.0):
        assert composed.delta(eps, sensitivity, grid=grid) == pytest.approx(
            gaussian_delta_closed_form(mu, eps), rel=1e-9, abs=1e-15
        )


@pytest.mark.parametrize("epsilon, dim", [(0.7, 1), (0.7, 3), (2.5, 5)])
def test_l2_laplace_scale_is_the_standard_deviation_of_a_coordinate(epsilon, dim):
    # ‖w‖₂ ~ Gamma(d, 1/ε) with a uniform direction: E w_i² = E‖w‖²/d = (d + 1)/ε²
    variance = stats.gamma(dim, scale=1 / epsilon).moment(2) / dim
    assert profile_of(L2Laplace(epsilon=epsilon, dim=dim)).scale == pytest.approx(math.sqrt(variance), rel=1e-12)
    users, block = 3, dim
    per_block = stats.gamma(block, scale=1 / epsilon).moment(2) / block  # each user's block is ℓ2 Laplace
    multi = profile_of(MultiUserLaplace(epsilon=epsilon, users=users, user_dim=block))
    assert multi.scale == pytest.approx(math.sqrt(per_block), rel=1e-12)


@pytest.mark.parametrize(
    "noise",
    [L2Laplace(epsilon=0.7, dim=3), L2Laplace(epsilon=0.7, dim=1), MultiUserLaplace(epsilon=0.7, users=2, user_dim=2)],
    ids=["l2-laplace", "scalar", "multi-user"],
)
@pytest.mark.parametrize("moved", [None, 1])
def test_norm_laplace_on_a_lattice_pays_its_rounding(noise, moved):
    sensitivity, grid = 2.1, 0.25
    profile = profile_of(noise) if moved is None else profile_of(noise).touching(moved)
    m = noise.dim if moved is None else moved
    expected = 0.7 * l2_lattice_units(sensitivity, grid, m) * grid  # ε₀ · (ℓ2 lattice sensitivity)
    assert profile.epsilon(sensitivity, grid=grid) == pytest.approx(expected, rel=1e-12)
    exact = profile.epsilon_fraction(sensitivity, grid=grid)
    assert Fraction(expected) * (1 - Fraction(1, 10**12)) <= exact <= Fraction(expected) * (1 + Fraction(1, 10**11))
    assert profile.epsilon(sensitivity) == pytest.approx(0.7 * sensitivity, rel=1e-15)  # unrounded: ε₀Δ


def test_lattice_profiles_report_their_noise_scale():
    laplace = dp.DiscreteLaplace(scale=1.5, grid_exponent=-4)
    assert profile_of(laplace).scale == 1.5
    assert profile_of(dp.DiscreteGaussian(sigma=0.75, grid_exponent=-4)).scale == 0.75


def test_hardened_profile_keeps_the_norm_and_scale_of_its_noise_and_counts_moved_coordinates():
    gauss = dp.hardened(Gaussian.from_std(2.0, 3), sensitivity=1.0, bound=100.0, grid_exponent=-3)
    profile = profile_of(gauss)
    assert profile.norm == "l2" and profile.scale == 2.0 and not profile.pure
    lap = dp.hardened(Laplace(scale=np.full(3, 2.0)), sensitivity=1.0, bound=100.0, grid_exponent=-3)
    assert profile_of(lap).norm == "l1" and profile_of(lap).scale == 2.0
    # ℓ1: a record moving m coordinates moves the rounded value by ⌊Δ/Λ⌋ + m grid steps
    for coordinates, units in ((None, 8 + 3), (1, 8 + 1), (2, 8 + 2)):
        g = dp.epsilon_delta_of(lap, sensitivity=1.0, coordinates=coordinates)
        assert g.epsilon == pytest.approx(units * 0.125 / 2.0, rel=1e-15)


def test_dp_guarantee_measures_the_sensitivity_in_the_norm_of_the_noise():
    # one record moves all three outputs by up to 2: ℓ1 sensitivity 6, ℓ2 sensitivity 2√3
    query = queries.linear(np.ones((3, 1)), bounds=(0.0, 2.0))
    delta = 1e-6
    g = dp_guarantee_for(Gaussian.from_std(4.0, 3), query, delta=delta)
    assert g.epsilon == pytest.approx(dp.gaussian_epsilon(4.0, delta, sensitivity=2 * math.sqrt(3)), rel=1e-12)
    assert g.delta == delta and "[0, 2]" in g.adjacency and "ℓ2 sensitivity" in g.adjacency
    hardened = dp.hardened(Gaussian.from_std(4.0, 3), sensitivity=2 * math.sqrt(3), bound=100.0, grid_exponent=-4)
    gh = dp_guarantee_for(hardened, query, delta=delta)
    sens = l2_lattice_units(2 * math.sqrt(3), 2.0**-4, 3) * 2.0**-4
    assert gh.epsilon == pytest.approx(dp.gaussian_epsilon(4.0, delta, sensitivity=sens), rel=1e-12)
    lap = dp_guarantee_for(Laplace(scale=np.full(3, 2.0)), query, delta=delta)
    assert lap.epsilon == pytest.approx(6.0 / 2.0, rel=1e-15) and lap.delta == 0.0


def test_no_dp_guarantee_for_a_query_no_record_can_move():
    constant = queries.FunctionQuery(lambda x: 1.0, n=2, bounds=(0.0, 1.0), jacobian_bound=0.0)
    assert constant.sensitivity("l1") == 0.0  # a declared zero Jacobian: no record moves the value
    assert dp_guarantee_for(Laplace(scale=1.0), constant) is None


class _Unnamed:
    """Noise-like object without a name, a support or a scale."""


class _Named:
    name = "shaped noise"

    def noise_scale(self) -> float:
        return 3.0


def test_noise_without_a_profile_is_named_and_keeps_its_scale():
    unnamed = profile_of(_Unnamed())
    assert unnamed.scale == 1.0
    with pytest.raises(CalibrationError, match="known for _Unnamed"):
        unnamed.epsilon(1.0)
    named = profile_of(_Named())
    assert named.scale == 3.0
    with pytest.raises(CalibrationError, match="known for shaped noise"):
        named.guarantee(1.0)
    bounded = RaisedCosine(lower=-3.0, upper=1.0)
    profile = profile_of(bounded)
    assert profile.scale == bounded.noise_scale() != 1.0
    with pytest.raises(CalibrationError, match=r"Its guarantee is Fisher-information privacy\.$"):
        profile.delta(1.0, 1.0)
