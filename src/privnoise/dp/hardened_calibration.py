"""Hardened noise calibrated to a declared (ε, δ), the rounding to its grid included (what the query server uses).

A hardened release (:class:`~privnoise.mechanisms.HardenedMechanism`) rounds the value to a grid Λ before adding
the noise, which adds up to Λ per coordinate to the sensitivity. These calibrations choose the grid from the noise
scale the target needs and then the smallest scale whose *hardened* guarantee meets the target, through the one
safe-side calibrator (:mod:`privnoise.dp.calibration`):

* Laplace: b = (⌊Δ/Λ⌋ + m)Λ/ε, checked in exact rationals with
  :meth:`~privnoise.mechanisms.HardenedMechanism.epsilon_fraction` (what an exact budget charges);
* Gaussian: the analytic Gaussian σ at the lattice sensitivity ⌊Δ/Λ⌋Λ + Λ (scalar) or Δ + √m Λ (vector),
  checked with the exact profile;
* any registered noise family (:mod:`privnoise.dp.families`): the smallest scale whose own privacy profile, at the
  sensitivity Δ + mΛ (ℓ1) or Δ + √m Λ (ℓ2) that the rounding of m moved coordinates can reach, is within the
  target — pure ε in exact rationals, or ε at δ for a ρ family — and whose hardened release states no more
  (:meth:`~privnoise.mechanisms.HardenedMechanism.privacy_profile`); see :func:`hardened_family_noise`.

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
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import check_positive, check_positive_int, check_probability
from ..exceptions import CalibrationError, InvalidParameterError
from ..mechanisms import Gaussian, Laplace
from ..mechanisms.hardening import HardenedMechanism, hardened
from ..mechanisms.lattice_grid import checked_rounding, default_grid_exponent, lattice_sensitivity
from .accounting import exact_rational
from .calibration import safe_side, smallest_parameter
from .gaussian import gaussian_sigma
from .profile import profile_of

if TYPE_CHECKING:
    from .families import NoiseFamily

__all__ = [
    "DEFAULT_BOUND_STEPS",
    "hardened_family_noise",
    "hardened_gaussian_for_epsilon_delta",
    "hardened_laplace_for_epsilon",
    "rounded_sensitivity",
]

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
    dl = _declared_delta(delta, owner)  # the nearest double may lie above the declared δ: the one below it
    if dl == 0.0:
        raise CalibrationError("Gaussian noise cannot give δ = 0; use hardened Laplace noise for pure ε-DP.")
    d = check_positive(sensitivity, "sensitivity", owner)
    m = check_positive_int(dim, "dim", owner)
    moved = _moved(coordinates, m, owner)
    k = default_grid_exponent(gaussian_sigma(e, dl, sensitivity=d))
    grid = math.ldexp(1.0, k)
    effective = lattice_sensitivity(d, grid, dim=moved, norm="l2") * grid
    margin = e * (1.0 - 1e-12)  # the target the stated ε must stay below (its inversion adds a few ulps)
    start = gaussian_sigma(margin, dl, sensitivity=effective)

    def build(sigma: float) -> HardenedMechanism:
        return hardened(
            Gaussian.from_std(sigma, m if m > 1 else None), sensitivity=d, bound=_bound(bound, grid), grid_exponent=k,
            coordinates=coordinates,
        )

    sigma = safe_side(start, lambda s: build(s).epsilon(dl) <= margin, what="hardened Gaussian noise")
    return build(sigma)


def _declared_delta(delta: Any, owner: str) -> float:
    """δ as the largest double not above the declared value (the nearest one may lie above it)."""
    declared = exact_rational(delta, "delta", owner, allow_zero=True)
    dl = float(declared)
    if Fraction(dl) > declared:
        dl = math.nextafter(dl, 0.0)
    return check_probability(dl, "delta", owner)


def rounded_sensitivity(sensitivity: float, grid: float, *, coordinates: int = 1, norm: str = "l1") -> float:
    """A double ≥ Δ + mΛ (ℓ1) or Δ + √m Λ (ℓ2): what rounding ``coordinates`` = m moved coordinates of the value to
    the grid Λ adds at most to the sensitivity Δ (each moves by at most Λ/2, for each of two neighbours).

    Examples
    --------
    >>> rounded_sensitivity(1.0, 0.25, coordinates=2), rounded_sensitivity(1.0, 0.25, coordinates=4, norm="l2")
    (1.5, 1.5)
    """
    d, g, m = checked_rounding(
        sensitivity, grid, coordinates, count_name="coordinates", norm=norm, owner="rounded_sensitivity"
    )
    root = math.isqrt(m)
    if norm == "l1":
        spread = Fraction(m)
    else:  # √m from above: exact for a square, else the double after the correctly rounded root
        spread = Fraction(root) if root * root == m else Fraction(math.nextafter(math.sqrt(m), math.inf))
    exact = Fraction(d) + spread * Fraction(g)
    out = float(exact)
    return out if Fraction(out) >= exact else math.nextafter(out, math.inf)


def hardened_family_noise(
    family: NoiseFamily, epsilon: Any, delta: Any = None, *, sensitivity: float, dim: int = 1, bound: Any = None,
    coordinates: int | None = None,
) -> HardenedMechanism:
    """Hardened noise of a registered family whose guarantee, rounding included, is within ``epsilon`` (at ``delta``
    for a family of currency ρ), through the family's own privacy profile — no family is named here.

    The grid Λ is the default one of the scale the target needs without rounding; the scale is then the smallest
    one (:func:`~privnoise.dp.calibration.smallest_parameter`, never rounded down; or the family's closed form
    ``start`` at the rounded sensitivity when that one passes and is lower) at which

    1. the family's profile at the rounded sensitivity (``rounded_sensitivity``: Δ + mΛ at ℓ1, Δ + √m Λ at
       ℓ2, m the moved coordinates) is within the target: the pure ε in exact rationals for a family of
       currency ε, or ε at δ (with a relative margin of 10⁻¹²) for a family of currency ρ; and
    2. the hardened release's own profile (:meth:`~privnoise.mechanisms.HardenedMechanism.privacy_profile`,
       the family's rounding rule at Λ) states no more.

    The family's noise is a scalar applied to every coordinate independently (vector answers are batches), so the
    family's sensitivity norm is that of the vector.

    Parameters
    ----------
    family : NoiseFamily
        The registered family (:func:`privnoise.dp.families.family_named`).
    epsilon : Fraction, int, decimal string or float
        The target ε (floats read at their shortest decimal value).
    delta : Fraction, int, decimal string or float, optional
        The target δ > 0 of a family of currency ρ; none (or 0) for a family of currency ε, which is pure.
    sensitivity : float
        Sensitivity Δ of the query in the family's norm.
    dim : int
        Number of coordinates of the answer.
    bound : float, optional
        The declared bound the value is clamped to (default 2^50 grid steps).
    coordinates : int, optional
        How many coordinates one record moves (default ``dim``).

    Examples
    --------
    >>> from privnoise.dp.families import LAPLACE
    >>> h = hardened_family_noise(LAPLACE, Fraction(1, 2), sensitivity=1.0, dim=8, coordinates=2)
    >>> b = float(h.mechanism.scale)
    >>> (Fraction(1) + 2 * Fraction(h.grid)) / Fraction(b) <= Fraction(1, 2), h.epsilon_fraction() <= Fraction(1, 2)
    (True, True)
    """
    owner = "hardened_family_noise"
    eps = exact_rational(epsilon, "epsilon", owner)
    d = check_positive(sensitivity, "sensitivity", owner)
    m = check_positive_int(dim, "dim", owner)
    moved = _moved(coordinates, m, owner)
    pure = family.currency == "epsilon"
    if pure:
        if delta is not None and exact_rational(delta, "delta", owner, allow_zero=True) != 0:
            raise InvalidParameterError(
                f"`delta` of `{owner}`: noise family {family.name!r} is pure ε-DP; give no δ."
            )
        dl = 0.0
    else:
        if delta is None:
            raise InvalidParameterError(f"`delta` of `{owner}` is required for noise family {family.name!r} (ρ).")
        dl = _declared_delta(delta, owner)
        if dl == 0.0:
            raise CalibrationError(f"noise family {family.name!r} cannot give δ = 0.")
    e = float(eps)
    margin = e * (1.0 - 1e-12)
    what = f"hardened {family.name} noise"

    def measure(scale: float, at: float) -> Any:  # the family's own statement at sensitivity `at`, no rounding
        profile = profile_of(family.build(scale))
        return profile.epsilon_fraction(at) if pure else profile.epsilon(at, dl)

    def within(value: Any) -> bool:
        return bool(value <= eps) if pure else bool(value <= margin)

    start = family.start(d, eps)
    bare = smallest_parameter(lambda s: measure(s, d), eps if pure else margin, start=start, what=what,
                              holds=lambda s: within(measure(s, d)))
    k = default_grid_exponent(profile_of(family.build(bare)).scale)
    grid = math.ldexp(1.0, k)
    effective = rounded_sensitivity(d, grid, coordinates=moved, norm=family.norm)

    def build(scale: float) -> HardenedMechanism:
        return hardened(family.build(scale), sensitivity=d, bound=_bound(bound, grid), grid_exponent=k)

    def rounded(scale: float) -> Any:  # the larger of the two statements (docstring: 1 and 2)
        h = build(scale)
        return max(measure(scale, effective), h.epsilon_fraction() if pure else h.epsilon(dl))

    def holds(scale: float) -> bool:
        return within(rounded(scale))

    scale = smallest_parameter(rounded, eps if pure else margin, start=bare, what=what, holds=holds)
    closed = family.start(effective, eps)  # the family's closed form, where it has one, may be a few ulps lower
    return build(closed if closed < scale and holds(closed) else scale)
