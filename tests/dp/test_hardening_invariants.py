"""Hardened Laplace noise with unequal per-coordinate scales: the stated ε bounds the realised privacy loss.

Second method: the exact probability mass function of the snapped noise K = rint(W/Λ), W ~ Laplace(b), from
differences of the Laplace CDF, and the largest log-ratio max_k log P(K = k)/P(K = k + s) it gives for a lattice
shift s. For neighbouring values a, a' (‖a − a'‖₁ ≤ Δ) the hardened release is Λ(rint(a/Λ) + K), so its privacy
loss is Σ_i max_k log P_i(K = k)/P_i(K = k + s_i) with s = rint(a'/Λ) − rint(a/Λ), computed here coordinate by
coordinate.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from privnoise.dp.accounting import PrivacyAccountant
from privnoise.dp.hardening import hardened, noise_scale
from privnoise.dp.profile import epsilon_delta_of
from privnoise.mechanisms import Laplace

GRID_EXPONENT = -3
REACH = 400  # lattice steps examined on each side (far into the geometric tail)


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
    assert h.guarantee().epsilon == stated
    assert h.delta(stated) == 0.0 and h.delta(0.99 * worst) == 1.0


def test_unequal_scales_everywhere_use_the_smallest_scale():
    b = np.array([1.0, 2.0])
    mech = Laplace(scale=b)
    # the realised loss of the continuous mechanism for a shift Δ on the first coordinate is Δ/1
    assert _realised_loss(b, 2.0**-5, np.zeros(2), np.array([1.0, 0.0])) == pytest.approx(1.0, rel=1e-9)
    assert epsilon_delta_of(mech, sensitivity=1.0).epsilon == 1.0
    acc = PrivacyAccountant(mode="pure")
    acc.record(mech, sensitivity=1.0)
    assert acc.total_epsilon == 1
    assert noise_scale(mech) == 1.0  # the default grid follows the smallest scale
    h = hardened(mech, sensitivity=1.0, bound=4.0)
    assert h.grid >= 1.0 / 2**12 > h.grid / 2
    charged = PrivacyAccountant(mode="pure")
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
