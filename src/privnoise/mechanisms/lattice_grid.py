"""The lattice Λ·ℤ, Λ = 2^k, a value is rounded to before lattice noise is added, and the sensitivity it leaves.

* :func:`default_grid_exponent` — the exponent k of the default grid for a noise scale (Λ ≥ scale/2^12).
* :func:`check_grid_exponent` — a grid exponent checked against a noise scale: at most 2^40 grid steps per scale,
  so that every integer the lattice arithmetic meets stays below 2^53, exact in a double.
* :func:`lattice_sensitivity` — the sensitivity, in lattice units, of a query whose value is rounded to Λ·ℤ:
  rounding moves each coordinate by at most Λ/2, so the sensitivity grows by at most Λ per coordinate (the price
  of the lattice; Mironov 2012 on why the output must be an exact lattice point).

References
----------
.. [1] I. Mironov, "On significance of the least significant bits for differential privacy", CCS 2012.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np

from .._validation import check_positive, check_positive_int
from ..exceptions import InvalidParameterError
from ..snapping import DEFAULT_GRID_BITS, grid_exponent_for

__all__ = [
    "DEFAULT_GRID_BITS",
    "check_grid_exponent",
    "checked_rounding",
    "default_grid_exponent",
    "lattice_sensitivity",
]

#: The noise scale may span at most 2^40 grid steps (keeps every integer below 2^53, exact in a double).
_MAX_SCALE_BITS = 40


def default_grid_exponent(scale: float, bits: int = DEFAULT_GRID_BITS) -> int:
    """The exponent k of the smallest power of two Λ = 2^k with Λ ≥ ``scale`` / 2^``bits``
    (:func:`privnoise.snapping.grid_exponent_for`).

    Examples
    --------
    >>> default_grid_exponent(1.0), default_grid_exponent(3.0, bits=4)
    (-12, -2)
    """
    return grid_exponent_for(scale, bits)


def check_grid_exponent(k: Any, scale: float, owner: str) -> int:
    """Validate a grid exponent against a noise scale (at most 2^40 grid steps per scale, Λ a normal double)."""
    if k is None:
        return default_grid_exponent(scale)
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise InvalidParameterError(f"`grid_exponent` of `{owner}` must be an integer or None; got {k!r}.")
    k = int(k)
    if not -1000 <= k <= 1000:
        raise InvalidParameterError(f"`grid_exponent` of `{owner}` must be in [-1000, 1000]; got {k}.")
    if scale / math.ldexp(1.0, k) > 2.0**_MAX_SCALE_BITS:
        raise InvalidParameterError(
            f"`grid_exponent` of `{owner}` must give a grid ≥ scale/2^{_MAX_SCALE_BITS}; got 2^{k} for "
            f"scale {scale:g}."
        )
    return k


def checked_rounding(
    sensitivity: float, grid: float, count: int, *, count_name: str, norm: str, owner: str
) -> tuple[float, float, int]:
    """The sensitivity Δ > 0, the grid Λ > 0 and the count m ≥ 1 of moved coordinates (the argument
    ``count_name``) of a value rounded to Λ·ℤ, checked, and the norm of the rounding's price ("l1" or "l2")."""
    d = check_positive(sensitivity, "sensitivity", owner)
    g = check_positive(grid, "grid", owner)
    m = check_positive_int(count, count_name, owner)
    if norm not in ("l1", "l2"):
        raise InvalidParameterError(f"`norm` of `{owner}` must be 'l1' or 'l2'; got {norm!r}.")
    return d, g, m


def lattice_sensitivity(
    sensitivity: float, grid: float, *, dim: int = 1, norm: Literal["l1", "l2"] = "l1"
) -> float:
    """Sensitivity, in lattice units, of a query after its value is rounded to the grid Λ·ℤ.

    Rounding to nearest moves each coordinate by at most Λ/2, so neighbouring values a, a' with
    ‖a − a'‖ ≤ Δ round to lattice points r(a), r(a') with |r(a)_i − r(a')_i| ≤ (⌊|a_i − a'_i|/Λ⌋ + 1)·Λ.

    * ℓ1 (and scalar): ‖r(a) − r(a')‖₁/Λ ≤ ⌊Δ/Λ⌋ + m — an integer.
    * ℓ2: ‖r(a) − r(a')‖₂/Λ ≤ Δ/Λ + √m (triangle inequality); for m = 1 the ℓ1 value ⌊Δ/Λ⌋ + 1 is used.

    So the rounding adds at most Λ per coordinate to the sensitivity: the price of the lattice.

    Examples
    --------
    >>> lattice_sensitivity(1.0, 0.25), lattice_sensitivity(0.3, 0.25), lattice_sensitivity(1.0, 0.25, dim=3)
    (5.0, 2.0, 7.0)
    """
    d, g, m = checked_rounding(
        sensitivity, grid, dim, count_name="dim", norm=norm, owner="lattice_sensitivity"
    )
    if norm == "l1" or m == 1:
        return float(math.floor(d / g) + m)
    return d / g + math.sqrt(m)
