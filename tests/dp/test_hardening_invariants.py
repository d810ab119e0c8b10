"""Hardened Laplace noise with unequal per-coordinate scales: the stated ε bounds the realised privacy loss.

Second method: the exact probability mass function of the snapped noise K = rint(W/Λ), W ~ Laplace(b), from
differences of the Laplace CDF, and the largest log-ratio max_k log P(K = k)/P(K = k + s) it gives for a lattice
shift s. For neighbouring values a, a' (‖a − a'‖₁ ≤ Δ) the hardened release is Λ(rint(a/Λ) + K), so its privacy
loss is Σ_i max_k log P_i(K = k)/P_i(K = k + s_i) with s = rint(a'/Λ) − rint(a/Λ), computed here coordinate by
coordinate.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from privnoise.dp import accountant_for
from privnoise.dp.lattice_privacy import discrete_gaussian_delta, zcdp_delta, zcdp_epsilon
from privnoise.dp.profile import epsilon_delta_of
from privnoise.exceptions import CalibrationError, DimensionError, InvalidParameterError
from privnoise.mechanisms import Gaussian, Laplace
from privnoise.mechanisms.discrete import DiscreteGaussian, DiscreteLaplace
from privnoise.mechanisms.hardening import hardened, noise_scale

GRID_EXPONENT = -3
REACH = 400  # lattice steps examined on each side (far into the geometric tail)


@functools.cache
def _snapped_log_pmf(scale: float, grid: float) -> np.ndarray:
    """log P(rint(W/Λ) = k) for k = −REACH … REACH, W ~ Laplace(scale) (ties have probability zero)."""
    k = np.arange(-REACH, REACH + 1)
    dist = stats.laplace(scale=scale)
    upper, lower = (k + 0.5) * grid, (k - 0.5) * grid
    mass = np.where(lower >= 0, dist.sf(lower) - dist.sf(upper), dist.cdf(upper) - dist.cdf(lower))
    return np.log(mass)


def _largest_log_ratio(log_pmf: np.ndarray, shift: int) -> float:
    s = abs(int(shift))
    if s == 0:
        return 0.0
    return float(np.max(log_pmf[s:] - log_pmf[:-s]))


def _realised_loss(scales: np.ndarray, grid: float, a: np.ndarray, a_prime: np.ndarray) -> float:
    shifts = np.rint(a_prime / grid) - np.rint(a / grid)
    return sum(
        _largest_log_ratio(_snapped_log_pmf(float(b), grid), int(s))
        for b, s in zip(scales, shifts, strict=True)
    )


@pytest.mark.parametrize("scales", [[1.0, 2.0], [2.0, 1.0], [0.5, 3.0, 1.5]])
def test_stated_epsilon_bounds_the_realised_loss_of_unequal_scales(scales):
    b = np.asarray(scales)
    sensitivity = 1.0
    h = hardened(Laplace(scale=b), sensitivity=sensitivity, bound=20.0, grid_exponent=GRID_EXPONENT)
    grid = h.grid
    stated = h.epsilon()
    rng = np.random.default_rng(5)
    worst = 0.0
    smallest = int(np.argmin(b))
    pairs = []
    # the whole shift on the coordinate with the smallest scale: loss Δ/min b (attained in the tail)
    a = np.zeros(b.size)
    e = np.zeros(b.size)
    e[smallest] = sensitivity
    pairs.append((a, a + e))
    # shifts spread over the coordinates, with values just off the rounding ties
    for _ in range(60):
        a = rng.uniform(-5, 5, b.size)
        d = rng.dirichlet(np.ones(b.size)) * sensitivity * rng.choice([1.0, 1.0 - 1e-9])
        d *= rng.choice([-1.0, 1.0], b.size)
        pairs.append((a, a + d))
    for a, a_prime in pairs:
        loss = _realised_loss(b, grid, a, a_prime)
        assert loss <= stated * (1 + 1e-9), (a, a_prime, loss, stated)
        worst = max(worst, loss)
    assert worst >= sensitivity / b.min() * (1 - 1e-9)  # the loss of the smallest scale is realised
    # the statement is the worst case Δ/min b plus one grid step per coordinate: no looser than that
    assert stated == pytest.approx(sensitivity / b.min() + grid * np.sum(1.0 / b), rel=1e-12)
    assert float(h.epsilon_fraction()) == pytest.approx(stated, rel=1e-12)
    assert h.epsilon_fraction() >= Fraction(sensitivity) / Fraction(float(b.min()))
    assert h.guarantee().epsilon == stated and h.guarantee().delta == 0.0
    assert h.guarantee().adjacency == "clamped to ±bound, sensitivity 1 (ℓ1)"
    assert h.delta(stated) == 0.0 and h.delta(0.99 * worst) == 1.0


def test_unequal_scales_everywhere_use_the_smallest_scale():
    b = np.array([1.0, 2.0])
    mech = Laplace(scale=b)
    # the realised loss of the continuous mechanism for a shift Δ on the first coordinate is Δ/1
    assert _realised_loss(b, 2.0**-5, np.zeros(2), np.array([1.0, 0.0])) == pytest.approx(1.0, rel=1e-9)
    assert epsilon_delta_of(mech, sensitivity=1.0).epsilon == 1.0
    acc = accountant_for(mode="pure")
    acc.record(mech, sensitivity=1.0)
    assert acc.total_epsilon == 1
    assert noise_scale(mech) == 1.0  # the default grid follows the smallest scale
    h = hardened(mech, sensitivity=1.0, bound=4.0)
    assert h.grid >= 1.0 / 2**12 > h.grid / 2
    charged = accountant_for(mode="pure")
    charged.record(h)
    assert charged.total_epsilon == h.epsilon_fraction()
    assert float(charged.total_epsilon) == pytest.approx(h.epsilon(), rel=1e-12)


def test_equal_scales_state_the_lattice_sensitivity():
    # equal scales: ε = (⌊Δ/Λ⌋ + m)Λ/b, realised when every coordinate gains a rounding step
    b = np.full(3, 2.0)
    grid = 2.0**GRID_EXPONENT
    sensitivity = 1.05  # 8.4 grid steps
    h = hardened(Laplace(scale=b), sensitivity=sensitivity, bound=9.0, grid_exponent=GRID_EXPONENT)
    assert h.epsilon() == (8 + 3) * grid / 2.0
    a = np.full(3, 0.45) * grid  # each coordinate rounds to 0 …
    a_prime = a + np.array([8.2, 0.1, 0.1]) * grid  # … and these to 9, 1, 1 lattice steps: 11 steps in all
    assert np.abs(a_prime - a).sum() <= sensitivity
    loss = _realised_loss(b, grid, a, a_prime)
    assert loss == pytest.approx(h.epsilon(), rel=1e-9)
    assert h.epsilon_fraction() == Fraction(11, 8) / 2


def test_rounding_term_is_needed_for_unequal_scales():
    # A shift of Δ = 8Λ split as (7.9Λ, 0.1Λ) moves the lattice points by 8 and 1 steps: the realised loss
    # 8Λ/b₁ + Λ/b₂ exceeds the continuous Δ/min b, and stays within the stated Δ/min b + Λ Σ 1/b_i.
    b = np.array([1.0, 2.0])
    grid = 2.0**GRID_EXPONENT
    a = np.full(2, 0.49) * grid
    a_prime = a + np.array([7.9, 0.1]) * grid
    assert np.abs(a_prime - a).sum() <= 1.0
    loss = _realised_loss(b, grid, a, a_prime)
    h = hardened(Laplace(scale=b), sensitivity=1.0, bound=5.0, grid_exponent=GRID_EXPONENT)
    assert loss == pytest.approx(8 * grid / 1.0 + grid / 2.0, rel=1e-9)
    assert 1.0 / b.min() < loss <= h.epsilon() * (1 + 1e-12)


# -- the release adds exactly the noise sample() draws ----------------------------------------------------------
@pytest.mark.parametrize(
    "make",
    [
        lambda: hardened(Laplace(scale=1.0), sensitivity=1.0, bound=50.0),
        lambda: hardened(Laplace(scale=[1.0, 2.0]), sensitivity=1.0, bound=[5.0, 7.0]),
        lambda: hardened(
            DiscreteGaussian(sigma=2.0, grid_exponent=-3, dimension=2), sensitivity=1.0, bound=9.0
        ),
    ],
)
def test_release_is_the_rounded_value_plus_the_sampled_noise(make):
    h = make()
    rng = np.random.default_rng(3)
    values = rng.uniform(-60, 60, (50,) + h.shape)
    lattice = np.rint(np.clip(values, -h.bound, h.bound) / h.grid) * h.grid
    released = h.release(values, rng=11)
    noise = h.sample(50, rng=11)
    assert np.array_equal(released, lattice + noise)  # the same seed draws the same noise
    assert np.array_equal(h.sample(50, rng=11), noise)  # and sample honours its seed
    assert h.sample((2, 3), rng=1).shape == (2, 3) + h.shape


def test_scalar_samples_are_floats():
    h = hardened(Laplace(scale=1.0), sensitivity=1.0, bound=5.0)
    assert isinstance(h.sample(rng=1), float) and isinstance(h.release(0.2, rng=1), float)
    assert h.describe() == {
        "hardened": True,
        "grid": h.grid,
        "bound": 5.0,
        "sensitivity": 1.0,
        "noise": Laplace(scale=1.0).describe(),
    }


# -- declared bounds -----------------------------------------------------------------------------------------------
def test_bound_rules():
    grid_exponent = -4
    steps = 2.0**52
    ok = hardened(Laplace(scale=1.0), sensitivity=1.0, bound=steps * 2.0**grid_exponent, grid_exponent=-4)
    assert ok.bound == steps * ok.grid  # exactly 2^52 grid steps: allowed
    for too_far in (1.5 * steps, 2 * steps):
        with pytest.raises(InvalidParameterError, match="bound"):
            hardened(
                Laplace(scale=1.0), sensitivity=1.0, bound=too_far * 2.0**grid_exponent, grid_exponent=-4
            )
    for bad in (0.0, -1.0, [1.0, 0.0]):
        with pytest.raises(InvalidParameterError, match="bound"):
            hardened(Laplace(scale=[1.0, 1.0]), sensitivity=1.0, bound=bad)
    with pytest.raises((InvalidParameterError, DimensionError), match="bound"):
        hardened(Laplace(scale=[1.0, 1.0]), sensitivity=1.0, bound=[[1.0, 1.0]])
    with pytest.raises(DimensionError, match="bound"):
        hardened(Laplace(scale=[1.0, 1.0]), sensitivity=1.0, bound=[1.0, 1.0, 1.0])


# -- discrete noise: exact fractions and the vector discrete Gaussian's zCDP guarantee ------------------------------
def test_discrete_laplace_fractions():
    for dim in (None, 3):
        h = hardened(DiscreteLaplace(scale=1.5, grid_exponent=-3, dimension=dim), sensitivity=1.0, bound=4.0)
        m = 1 if dim is None else dim
        expected = Fraction(8 + m) * Fraction(1, 8) / Fraction(1.5)
        assert h.epsilon_fraction() == expected
        assert h.epsilon() == pytest.approx(float(expected), rel=1e-15)
    scalar = hardened(Laplace(scale=3.0), sensitivity=1.0, bound=4.0, grid_exponent=-2)
    assert scalar.epsilon_fraction() == Fraction(4 + 1, 4) / 3
    with pytest.raises(CalibrationError):
        hardened(Gaussian.from_std(1.0), sensitivity=1.0, bound=1.0).epsilon_fraction()


@pytest.mark.parametrize("dim", [2, 3])
def test_vector_discrete_gaussian_guarantee_is_its_zcdp_bound(dim):
    sigma, k = 3.0, -3
    h = hardened(DiscreteGaussian(sigma=sigma, grid_exponent=k, dimension=dim), sensitivity=1.0, bound=9.0)
    grid = 2.0**k
    sens = (1.0 / grid + np.sqrt(dim)) * grid  # ℓ2 lattice sensitivity: Δ/Λ + √m steps
    rho = sens**2 / (2 * sigma**2)  # Canonne, Kamath & Steinke, Theorem 14
    for delta in (1e-3, 1e-6):
        eps = h.epsilon(delta)
        assert eps == pytest.approx(zcdp_epsilon(rho, delta), rel=1e-12)
        assert h.delta(eps) == pytest.approx(zcdp_delta(rho, eps), rel=1e-12)
        g = h.guarantee(delta=delta)
        assert g.epsilon == eps and g.delta == delta
        assert g.adjacency == "clamped to ±bound, sensitivity 1 (ℓ2)"
    with pytest.raises(CalibrationError):
        h.epsilon(0.0)
    assert h.delta(0.0) == pytest.approx(zcdp_delta(rho, 0.0), rel=1e-12)


def test_scalar_discrete_gaussian_guarantee_is_exact():
    h = hardened(DiscreteGaussian(sigma=1.0, grid_exponent=-2), sensitivity=1.0, bound=3.0)
    units = 4 + 1
    for eps in (0.0, 0.5, 2.0):
        assert h.delta(eps) == discrete_gaussian_delta(4.0, eps, sensitivity=units)
    with pytest.raises(CalibrationError):
        h.epsilon(0.0)
    laplace = hardened(Laplace(scale=1.0), sensitivity=1.0, bound=3.0)
    assert laplace.delta(0.0) == 1.0 and laplace.delta(laplace.epsilon()) == 0.0
