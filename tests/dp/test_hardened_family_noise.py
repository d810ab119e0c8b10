"""Hardened noise of a registered family (``dp.hardened_calibration.hardened_family_noise``), the rounded sensitivity
it is calibrated at (``rounded_sensitivity``) and the declared δ it reads (``_declared_delta``), against references
that share no code with them:

* the rounded sensitivity Δ + mΛ (ℓ1) or Δ + √m Λ (ℓ2) in exact rationals (the ℓ2 one squared, so that no square
  root is taken): the double returned is the smallest one at or above it (ℓ2: within a few units in the last place);
* Laplace: ε = (Δ + mΛ)/b in exact rationals, b within a few units in the last place of the smallest such
  double;
* Gaussian: the analytic Gaussian δ(ε) of Balle & Wang (2018, Theorem 8) at the rounded sensitivity, written here
  with scipy's normal cdf, is at most the target, and the σ is within 10⁻⁶ of scipy's root of δ(σ) = target;
* the grid is the power of two the scale without rounding asks for (Λ ≥ scale/2¹², Λ/2 below it);
* every refusal names its parameter.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import optimize, stats

from privnoise.dp.families import GAUSSIAN, LAPLACE
from privnoise.dp.hardened_calibration import _declared_delta, hardened_family_noise, rounded_sensitivity
from privnoise.exceptions import CalibrationError, InvalidParameterError


def _grid_for(scale: float) -> float:
    """The smallest power of two at or above scale/2¹² (a reference written from the grid rule's statement)."""
    target = Fraction(scale) / 4096
    grid = Fraction(1)
    while grid < target:
        grid *= 2
    while grid / 2 >= target:
        grid /= 2
    return float(grid)


# -- rounded_sensitivity ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("sensitivity", [1.0, 0.1, 3.7, 1e-7, 12345.678])
@pytest.mark.parametrize("grid", [2.0**-12, 2.0**-3, 0.75, 2.0**5])
@pytest.mark.parametrize("moved", [1, 2, 3, 7, 100])
def test_the_l1_rounded_sensitivity_is_the_smallest_double_at_or_above_delta_plus_m_grid(
    sensitivity: float, grid: float, moved: int
) -> None:
    out = rounded_sensitivity(sensitivity, grid, coordinates=moved)
    exact = Fraction(sensitivity) + moved * Fraction(grid)
    assert Fraction(out) >= exact
    assert Fraction(math.nextafter(out, 0.0)) < exact


@pytest.mark.parametrize("sensitivity", [1.0, 0.1, 3.7, 12345.678])
@pytest.mark.parametrize("grid", [2.0**-12, 0.75, 2.0**5])
@pytest.mark.parametrize("moved", [1, 2, 3, 4, 7, 100, 10**6 + 1])
def test_the_l2_rounded_sensitivity_is_at_or_just_above_delta_plus_root_m_grid(
    sensitivity: float, grid: float, moved: int
) -> None:
    out = rounded_sensitivity(sensitivity, grid, coordinates=moved, norm="l2")
    excess = Fraction(out) - Fraction(sensitivity)  # must be ≥ √m Λ: compare squares, no root taken
    assert excess >= 0 and excess * excess >= moved * Fraction(grid) ** 2
    reference = sensitivity + math.sqrt(moved) * grid
    assert out <= reference * (1 + 8 * 2.0**-52)
    if math.isqrt(moved) ** 2 == moved:  # a square: the exact root, so the smallest double at or above
        assert Fraction(math.nextafter(out, 0.0)) < Fraction(sensitivity) + math.isqrt(moved) * Fraction(grid)


def test_rounded_sensitivity_refuses_what_is_not_a_sensitivity_grid_count_or_norm() -> None:
    for call, name in [
        (lambda: rounded_sensitivity(0.0, 0.5), "sensitivity"),
        (lambda: rounded_sensitivity(-1.0, 0.5), "sensitivity"),
        (lambda: rounded_sensitivity(float("nan"), 0.5), "sensitivity"),
        (lambda: rounded_sensitivity(1.0, 0.0), "grid"),
        (lambda: rounded_sensitivity(1.0, float("inf")), "grid"),
        (lambda: rounded_sensitivity(1.0, 0.5, coordinates=0), "coordinates"),
        (lambda: rounded_sensitivity(1.0, 0.5, coordinates=1.5), "coordinates"),  # type: ignore[arg-type]
        (lambda: rounded_sensitivity(1.0, 0.5, norm="linf"), "norm"),
    ]:
        with pytest.raises(InvalidParameterError, match=f"`{name}` of `rounded_sensitivity`"):
            call()


# -- the declared δ ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("delta", [Fraction(1, 10), Fraction(1, 3), Fraction(1, 10**6), "1e-6", Fraction(2, 7), 0.5])
def test_the_declared_delta_is_the_largest_double_not_above_it(delta: object) -> None:
    exact = Fraction(str(delta)) if isinstance(delta, str) else Fraction(delta)  # type: ignore[arg-type]
    out = _declared_delta(delta, "owner")
    assert isinstance(out, float) and Fraction(out) <= exact
    assert Fraction(math.nextafter(out, 1.0)) > exact


def test_the_declared_delta_may_be_zero_and_refuses_what_is_not_a_probability() -> None:
    assert _declared_delta(0, "owner") == 0.0
    for bad in (Fraction(3, 2), -1, "x"):
        with pytest.raises(InvalidParameterError, match="`delta` of `owner`"):
            _declared_delta(bad, "owner")


# -- Laplace: pure ε in exact rationals ----------------------------------------------------------------------------


@pytest.mark.parametrize("epsilon", [Fraction(1, 2), Fraction(1), Fraction(3, 10), Fraction(7)])
@pytest.mark.parametrize("sensitivity", [1.0, 0.3, 25.0])
@pytest.mark.parametrize(("dim", "moved"), [(1, None), (8, 2), (8, None), (1000, 1)])
def test_hardened_laplace_of_the_family_is_the_smallest_scale_within_epsilon_at_the_rounded_sensitivity(
    epsilon: Fraction, sensitivity: float, dim: int, moved: int | None
) -> None:
    h = hardened_family_noise(LAPLACE, epsilon, sensitivity=sensitivity, dim=dim, coordinates=moved)
    b = float(np.ravel(h.mechanism.scale)[0])
    m = dim if moved is None else moved
    assert h.grid == _grid_for(sensitivity / float(epsilon))
    reach = Fraction(sensitivity) + m * Fraction(h.grid)  # what rounding m moved coordinates can add
    assert reach / Fraction(b) <= epsilon  # within the target at the rounded sensitivity
    smallest = float(reach / epsilon)  # the smallest double b with reach/b ≤ ε
    if Fraction(smallest) < reach / epsilon:
        smallest = math.nextafter(smallest, math.inf)
    assert smallest <= b <= smallest * (1 + 16 * 2.0**-52)  # the safe-side search stops within a few ulps of it
    assert h.epsilon_fraction() <= epsilon  # the release states no more


# -- Gaussian: ε at δ by the analytic Gaussian -----------------------------------------------------------------------


def _analytic_delta(epsilon: float, sigma: float, sensitivity: float) -> float:
    """δ(ε) of Gaussian noise σ at ℓ2 sensitivity Δ (Balle & Wang 2018, Theorem 8), by scipy's normal cdf."""
    a, b = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
    return float(stats.norm.cdf(a - b) - math.exp(epsilon) * stats.norm.cdf(-a - b))


@pytest.mark.parametrize(("epsilon", "delta"), [(1.0, 1e-6), (0.5, 1e-5), (3.0, 1e-9)])
@pytest.mark.parametrize("sensitivity", [1.0, 7.5])
@pytest.mark.parametrize(("dim", "moved"), [(1, None), (16, 4), (16, None)])
def test_hardened_gaussian_of_the_family_meets_delta_at_the_rounded_sensitivity_with_the_smallest_sigma(
    epsilon: float, delta: float, sensitivity: float, dim: int, moved: int | None
) -> None:
    h = hardened_family_noise(GAUSSIAN, epsilon, delta, sensitivity=sensitivity, dim=dim, coordinates=moved)
    sigma = float(np.ravel(h.mechanism.std)[0]) if hasattr(h.mechanism, "std") else float(h.mechanism.scale)
    m = dim if moved is None else moved
    bare = optimize.brentq(lambda s: _analytic_delta(epsilon, s, sensitivity) - delta, 1e-3, 1e4, xtol=1e-14,
                           rtol=1e-15)
    assert h.grid == _grid_for(bare)
    reach = sensitivity + math.sqrt(m) * h.grid
    assert _analytic_delta(epsilon, sigma, reach) <= delta * (1 + 1e-9)
    root = optimize.brentq(lambda s: _analytic_delta(epsilon, s, reach) - delta, 1e-3, 1e4, xtol=1e-14,
                           rtol=1e-15)
    assert root * (1 - 1e-9) <= sigma <= root * (1 + 1e-6)  # the smallest σ, up to the stated margins
    assert h.epsilon(delta) <= epsilon


# -- refusals ------------------------------------------------------------------------------------------------------


def test_the_family_calibration_refuses_a_delta_it_cannot_use_and_names_the_parameter() -> None:
    owner = "`hardened_family_noise`"
    with pytest.raises(InvalidParameterError, match=f"`delta` of {owner}.*pure"):
        hardened_family_noise(LAPLACE, 1, Fraction(1, 10**6), sensitivity=1.0)
    assert hardened_family_noise(LAPLACE, 1, 0, sensitivity=1.0).epsilon_fraction() <= 1  # δ = 0 is no δ
    with pytest.raises(InvalidParameterError, match=f"`delta` of {owner} is required"):
        hardened_family_noise(GAUSSIAN, 1, sensitivity=1.0)
    with pytest.raises(CalibrationError, match="δ = 0"):
        hardened_family_noise(GAUSSIAN, 1, 0, sensitivity=1.0)
    with pytest.raises(InvalidParameterError, match=f"`coordinates` of {owner} must be at most `dim` = 4"):
        hardened_family_noise(LAPLACE, 1, sensitivity=1.0, dim=4, coordinates=5)
    for call, name in [
        (lambda: hardened_family_noise(LAPLACE, 0, sensitivity=1.0), "epsilon"),
        (lambda: hardened_family_noise(LAPLACE, 1, sensitivity=0.0), "sensitivity"),
        (lambda: hardened_family_noise(LAPLACE, 1, sensitivity=1.0, dim=0), "dim"),
        (lambda: hardened_family_noise(GAUSSIAN, 1, 2, sensitivity=1.0), "delta"),
    ]:
        with pytest.raises(InvalidParameterError, match=f"`{name}` of {owner}"):
            call()
