"""Hardened calibrations against their closed forms: the grid from the scale the target needs, the noise from the
lattice sensitivity on that grid, the exact ε of the result, its shape and its declared bound."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from privnoise import dp
from privnoise.dp.hardened_calibration import DEFAULT_BOUND_STEPS
from privnoise.exceptions import CalibrationError, InvalidParameterError


def grid_for(scale: float) -> float:
    """The smallest power of two Λ with Λ ≥ scale / 2¹², by search."""
    k = math.ceil(math.log2(scale)) - 12
    while math.ldexp(1.0, k) < scale / 4096:
        k += 1
    while math.ldexp(1.0, k - 1) >= scale / 4096:
        k -= 1
    return math.ldexp(1.0, k)


@pytest.mark.parametrize(
    "epsilon, sensitivity, dim",
    [
        (Fraction(1), 1.0, 1),  # Δ/ε a power of two: the scale lands just above it
        (Fraction(1, 2), 1.0, 1),
        (Fraction(1, 2), 1.0, 2),
        (Fraction(3), 0.3, 3),
        (Fraction(1, 10), 2.0, 4),
    ],
)
def test_hardened_laplace_is_the_closed_form_on_its_grid(epsilon, sensitivity, dim):
    h = dp.hardened_laplace_for_epsilon(epsilon, sensitivity=sensitivity, dim=dim)
    grid = grid_for(sensitivity / float(epsilon))  # the grid of the scale the target needs
    assert h.grid == grid
    assert h.shape == (() if dim == 1 else (dim,))
    units = math.floor(Fraction(sensitivity) / Fraction(grid)) + dim  # ℓ1 lattice sensitivity ⌊Δ/Λ⌋ + m
    scale = units * Fraction(grid) / epsilon  # b = (⌊Δ/Λ⌋ + m)Λ/ε
    b = float(h.mechanism.scale.flat[0]) if dim > 1 else float(h.mechanism.scale)
    assert Fraction(b) >= scale and b <= float(scale) * (1 + 2**-50)  # never below, a few ulp above at most
    if Fraction(float(scale)) == scale:  # representable: exactly the closed form (ε met with equality)
        assert b == float(scale)
    assert units * Fraction(grid) / Fraction(b) <= epsilon  # the exact ε of the release
    assert h.epsilon_fraction() == units * Fraction(grid) / Fraction(b)


def test_hardened_laplace_default_is_a_scalar():
    h = dp.hardened_laplace_for_epsilon(Fraction(1, 2), sensitivity=1.0)
    assert h.shape == () and isinstance(h.release(0.0, rng=1), float)


@pytest.mark.parametrize(
    "epsilon, delta, sensitivity, dim",
    [
        (1.0, 1e-6, 1.0, 1),
        (0.5, 1e-5, 2.0, 2),
        (2.0, 1e-9, 0.3, 3),
        (1.0, Fraction(1, 10**6), 1.0, 1),
        # σ(Δ)/2¹² just below a power of two: the grid of the needed scale is finer than that of the result
        (1.0, 1e-6, 0.9999995 / dp.gaussian_sigma(1.0, 1e-6, sensitivity=1.0), 1),
    ],
)
def test_hardened_gaussian_is_the_analytic_gaussian_at_the_lattice_sensitivity(epsilon, delta, sensitivity, dim):
    h = dp.hardened_gaussian_for_epsilon_delta(epsilon, delta, sensitivity=sensitivity, dim=dim)
    dl = float(delta)
    grid = grid_for(dp.gaussian_sigma(epsilon, dl, sensitivity=sensitivity))
    assert h.grid == grid
    assert h.shape == (() if dim == 1 else (dim,))
    units = math.floor(sensitivity / grid) + 1 if dim == 1 else sensitivity / grid + math.sqrt(dim)
    effective = units * grid  # ℓ2 lattice sensitivity: ⌊Δ/Λ⌋ + 1 (scalar), Δ/Λ + √m (vector)
    sigma = h.mechanism.noise_scale()
    assert dp.gaussian_delta(sigma, epsilon, sensitivity=effective) <= dl
    assert sigma == pytest.approx(dp.gaussian_sigma(epsilon, dl, sensitivity=effective), rel=1e-9)
    assert h.epsilon(dl) <= epsilon


def test_hardened_gaussian_default_is_a_scalar_and_refuses_zero_delta():
    h = dp.hardened_gaussian_for_epsilon_delta(1.0, 1e-6, sensitivity=1.0)
    assert h.shape == () and isinstance(h.release(0.0, rng=1), float)
    with pytest.raises(CalibrationError, match="δ = 0"):
        dp.hardened_gaussian_for_epsilon_delta(1.0, 0.0, sensitivity=1.0)


@pytest.mark.parametrize("bound", [None, 5.0])
def test_hardened_calibrations_clamp_to_the_declared_bound(bound):
    lap = dp.hardened_laplace_for_epsilon(Fraction(1, 2), sensitivity=1.0, bound=bound)
    gauss = dp.hardened_gaussian_for_epsilon_delta(1.0, 1e-6, sensitivity=1.0, bound=bound, dim=2)
    for h in (lap, gauss):
        expected = DEFAULT_BOUND_STEPS * h.grid if bound is None else bound
        assert float(h.bound.max()) == float(h.bound.min()) == expected
    if bound is not None:  # a huge value is released near the bound (Laplace scale 2: |W| > 100 has e⁻⁵⁰)
        assert abs(lap.release(1e6, rng=1) - bound) < 100


def test_hardened_gaussian_reads_delta_in_every_documented_form():
    reference = dp.hardened_gaussian_for_epsilon_delta(1.0, 1e-6, sensitivity=1.0)
    for delta in ("1e-6", "1/1000000", Fraction(1, 10**6), np.float64(1e-6)):
        h = dp.hardened_gaussian_for_epsilon_delta(1.0, delta, sensitivity=1.0)
        assert h.mechanism.noise_scale() == reference.mechanism.noise_scale() and h.grid == reference.grid
    for delta in ("often", -1e-6, 1.0, "3/2"):
        with pytest.raises(InvalidParameterError, match="`delta` of `hardened_gaussian_for_epsilon_delta`"):
            dp.hardened_gaussian_for_epsilon_delta(1.0, delta, sensitivity=1.0)
