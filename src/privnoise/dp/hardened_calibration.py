"""Hardened noise calibrated to a declared (ε, δ), the rounding to its grid included (what the query server uses).

A hardened release (:class:`~privnoise.dp.hardening.HardenedMechanism`) rounds the value to a grid Λ before adding
the noise, which adds up to Λ per coordinate to the sensitivity. These calibrations choose the grid from the noise
scale the target needs and then the smallest scale whose *hardened* guarantee meets the target, through the one
safe-side calibrator (:mod:`privnoise.dp.calibration`):

* Laplace: b = (⌊Δ/Λ⌋ + m)Λ/ε, checked in exact rationals with
  :meth:`~privnoise.dp.hardening.HardenedMechanism.epsilon_fraction` (what an exact budget charges);
* Gaussian: the analytic Gaussian σ at the lattice sensitivity ⌊Δ/Λ⌋Λ + Λ (scalar) or Δ + √m Λ (vector),
  checked with the exact profile.

Examples
--------
>>> from fractions import Fraction
>>> h = hardened_laplace_for_epsilon(Fraction(1, 2), sensitivity=1.0)
>>> h.epsilon_fraction() <= Fraction(1, 2), h.pure
(True, True)
>>> g = hardened_gaussian_for_epsilon_delta(1.0, 1e-6, sensitivity=1.0)
>>> g.epsilon(1e-6) <= 1.0
True
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import check_positive, check_positive_int, check_probability
from ..exceptions import CalibrationError, InvalidParameterError
from ..mechanisms import Gaussian, Laplace
from .accounting import exact_rational
from .calibration import safe_side
from .gaussian import gaussian_sigma
from .hardening import HardenedMechanism, hardened
from .lattice import default_grid_exponent, lattice_sensitivity

__all__ = ["DEFAULT_BOUND_STEPS", "hardened_gaussian_for_epsilon_delta", "hardened_laplace_for_epsilon"]

#: Without a declared bound, values are clamped to ±2^50 grid steps (far beyond any declared data range).
DEFAULT_BOUND_STEPS = 2.0**50


def _bound(bound: Any, grid: float) -> Any:
    return DEFAULT_BOUND_STEPS * grid if bound is None else bound


def _moved(coordinates: Any, dim: int, owner: str) -> int:
    """The coordinates one record moves: ``coordinates`` (1 ≤ it ≤ dim), all ``dim`` by default."""
    if coordinates is None:
        return dim
    moved = check_positive_int(coordinates, "coordinates", owner)
    if moved > dim:
        raise InvalidParameterError(f"`coordinates` of `{owner}` must be at most `dim` = {dim}; got {moved}.")
    return moved


def hardened_laplace_for_epsilon(
    epsilon: Any, *, sensitivity: float, dim: int = 1, bound: Any = None, coordinates: int | None = None
) -> HardenedMechanism:
    """Hardened Laplace noise whose exact ε, rounding included, is at most ``epsilon`` (a Fraction, int or float).

    Parameters
    ----------
    epsilon : Fraction, int, decimal string or float
        The target ε (floats read at their shortest decimal value).
    sensitivity : float
        ℓ1 sensitivity Δ of the query.
    dim : int
        Number of coordinates (independent Laplace per coordinate).
    bound : float, optional
        The declared bound the value is clamped to (default 2^50 grid steps).
    coordinates : int, optional
        How many coordinates one record moves (default ``dim``): the rounding adds Λ per moved coordinate only.

    Examples
    --------
    >>> every = hardened_laplace_for_epsilon(1, sensitivity=1.0, dim=100_000)
    >>> one = hardened_laplace_for_epsilon(1, sensitivity=1.0, dim=100_000, coordinates=1)  # an identity release
    >>> round(float(every.mechanism.scale[0]), 3), round(float(one.mechanism.scale[0]), 4)
    (25.414, 1.0002)
    """
    owner = "hardened_laplace_for_epsilon"
    eps = exact_rational(epsilon, "epsilon", owner)
    d = check_positive(sensitivity, "sensitivity", owner)
    m = check_positive_int(dim, "dim", owner)
    moved = _moved(coordinates, m, owner)
    e = float(eps)
    k = default_grid_exponent(d / e)
    grid = math.ldexp(1.0, k)
    start = lattice_sensitivity(d, grid, dim=moved) * grid / e

    def build(b: float) -> HardenedMechanism:
        noise = Laplace(scale=b) if m == 1 else Laplace(scale=np.broadcast_to(b, (m,)))
        return hardened(noise, sensitivity=d, bound=_bound(bound, grid), grid_exponent=k, coordinates=coordinates)

    scale = safe_side(start, lambda b: build(b).epsilon_fraction() <= eps, what="hardened Laplace noise")
    return build(scale)


def hardened_gaussian_for_epsilon_delta(
    epsilon: Any, delta: Any, *, sensitivity: float, dim: int = 1, bound: Any = None, coordinates: int | None = None
) -> HardenedMechanism:
    """Hardened Gaussian noise whose ε at ``delta``, rounding included, is below ``epsilon``.

    Parameters
    ----------
    epsilon, delta : Fraction, int, decimal string or float
        The target (ε, δ), δ > 0.
    sensitivity : float
        ℓ2 sensitivity Δ of the query.
    dim : int
        Number of coordinates (isotropic noise).
    bound : float, optional
        The declared bound the value is clamped to (default 2^50 grid steps).
    coordinates : int, optional
        How many coordinates one record moves (default ``dim``): the rounding adds Λ per moved coordinate only.
    """
    owner = "hardened_gaussian_for_epsilon_delta"
    e = float(exact_rational(epsilon, "epsilon", owner))
    declared = exact_rational(delta, "delta", owner, allow_zero=True)
    dl = float(declared)
    if Fraction(dl) > declared:  # the nearest double may lie above the declared δ: calibrate to the one below
        dl = math.nextafter(dl, 0.0)
    dl = check_probability(dl, "delta", owner)
    if dl == 0.0:
        raise CalibrationError("Gaussian noise cannot give δ = 0; use hardened Laplace noise for pure ε-DP.")
    d = check_positive(sensitivity, "sensitivity", owner)
    m = check_positive_int(dim, "dim", owner)
    moved = _moved(coordinates, m, owner)
    k = default_grid_exponent(gaussian_sigma(e, dl, sensitivity=d))
    grid = math.ldexp(1.0, k)
    effective = lattice_sensitivity(d, grid, dim=moved, norm="l2") * grid
    start = gaussian_sigma(e, dl, sensitivity=effective)

    def build(sigma: float) -> HardenedMechanism:
        return hardened(
            Gaussian.from_std(sigma, m if m > 1 else None), sensitivity=d, bound=_bound(bound, grid), grid_exponent=k,
            coordinates=coordinates,
        )

    sigma = safe_side(start, lambda s: build(s).epsilon(dl) <= e * (1.0 - 1e-12), what="hardened Gaussian noise")
    return build(sigma)
