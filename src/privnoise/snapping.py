"""Hardened addition: values plus noise, rounded to a power-of-two grid without leaking low-order bits.

``x + w`` computed in doubles leaks through its low-order bits: the set of reachable outputs depends on x (Mironov
2012; SECURITY.md, requirement 2). Every release of privnoise is therefore an exact multiple of a grid Λ = 2^k:

* :func:`snapped_sum` — continuous noise: Λ·round((v + w)/Λ) of the *exact* real sum v + w. Scaling by a power of
  two is exact; the sum t + u of the scaled values is rounded to the nearest integer, and where the rounded double
  lands exactly half-way the exact rounding error of the sum (Knuth's TwoSum) decides. The output is thus a
  deterministic function of the real number v + w: for ideal noise the release is post-processing of f(x) + w, so
  its differential privacy is that of the noise, and its Fisher information about x is at most that of f(x) + w
  (data processing) — every stated bound holds without a rounding term. The floating-point noise itself matches
  the ideal law only up to the resolution of its floating-point variates relative to the grid: a relative error of
  order 2⁻⁴⁰ per grid cell at the default grid (the same caveat as :mod:`privnoise.dp.lattice`).
* :func:`lattice_sum` — lattice noise K (integers in units of Λ): Λ·(rint(v/Λ) + K); rounding v moves it by at most
  Λ/2, which the guarantee adds to the sensitivity.

The default grid is the smallest Λ ≥ scale/2^12 (:func:`grid_exponent_for`), so rounding adds a variance below
Λ²/4 < 2⁻²⁴ scale² ≈ 6·10⁻⁸ scale². Arithmetic stays exact while |v|/Λ < 2^50 (:func:`exact_exponent`).

Examples
--------
>>> import numpy as np
>>> y = snapped_sum(np.array([0.1, 0.2]), np.array([1e-9, -3.0]), -10)
>>> (y * 1024).tolist()
[102.0, -2867.0]
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ._validation import check_positive, check_positive_int
from .exceptions import InvalidParameterError

__all__ = [
    "DEFAULT_GRID_BITS",
    "MAX_GRID_UNITS",
    "exact_exponent",
    "grid_exponent_for",
    "grid_exponent_for_variances",
    "lattice_sum",
    "snapped_sum",
]

#: Default resolution of the grid: Λ is the smallest power of two with Λ ≥ scale / 2**DEFAULT_GRID_BITS, so the
#: noise scale spans between 2^11 and 2^12 grid steps.
DEFAULT_GRID_BITS = 12
#: Values may span at most 2^50 grid steps, so that every sum of grid units is an exact double.
MAX_GRID_UNITS = 2.0**50


def grid_exponent_for(scale: float, bits: int = DEFAULT_GRID_BITS) -> int:
    """The exponent k of the smallest power of two Λ = 2^k with Λ ≥ ``scale`` / 2^``bits``.

    Examples
    --------
    >>> grid_exponent_for(1.0), grid_exponent_for(3.0, bits=4)
    (-12, -2)
    """
    s = check_positive(scale, "scale", "grid_exponent_for")
    b = check_positive_int(bits, "bits", "grid_exponent_for", minimum=0)
    mantissa, exponent = math.frexp(s)  # s = mantissa · 2^exponent, mantissa in [0.5, 1)
    return exponent - 1 - b if mantissa == 0.5 else exponent - b


def grid_exponent_for_variances(variances: NDArray[np.float64], fallback: float = 1.0) -> int:
    """The default grid for noise whose coordinates have these variances: from the smallest positive standard
    deviation (``fallback`` when no coordinate is noisy)."""
    positive = np.asarray(variances, dtype=float)
    positive = positive[positive > 0]
    return grid_exponent_for(math.sqrt(float(positive.min())) if positive.size else fallback)


def exact_exponent(k: int, bound: float | None) -> int:
    """The smallest exponent ≥ k whose grid keeps values up to ``bound`` within 2^50 grid steps (k if None)."""
    if bound is None or bound <= 0 or not math.isfinite(bound):
        return k
    while bound / math.ldexp(1.0, k) >= MAX_GRID_UNITS:
        k += 1
    return k


def _too_large(k: int) -> InvalidParameterError:
    return InvalidParameterError(
        f"the released value spans more than 2^50 steps of the grid 2^{k}; declare bounds on the query (the grid "
        "is then chosen to fit them) or rescale the data."
    )


def snapped_sum(
    values: NDArray[np.float64],
    noise: NDArray[np.float64],
    exponent: int,
    *,
    in_range: bool = False,
    out: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Λ·round((v + w)/Λ), Λ = 2^exponent, for the exact real sum v + w (``noise`` is overwritten).

    ``in_range=True`` states that |v|/Λ < 2^50 is known (from declared bounds, :func:`exact_exponent`); the noise
    samplers never exceed 2^40 noise scales, so the sum stays exact and the final range check is skipped. ``out``
    receives the result when given.

    Raises
    ------
    InvalidParameterError
        When a value spans 2^52 grid steps or more (the exact arithmetic would fail).
    """
    shape = np.shape(values)
    inverse = math.ldexp(1.0, -exponent)
    t = np.multiply(np.reshape(values, -1), inverse)
    u = np.reshape(noise, -1)  # the caller's own draws: scaled in place
    np.multiply(u, inverse, out=u)
    s = np.add(t, u)
    k = np.rint(s, out=None if out is None else out.reshape(-1))
    d = np.subtract(s, k, out=s)
    np.abs(d, out=d)
    if float(np.max(d, initial=0.0)) >= 0.5:  # a half-way double: the exact error of t + u decides
        ties = np.flatnonzero(d.ravel() == 0.5)
        tt, uu = t.ravel()[ties], u.ravel()[ties]
        total = tt + uu
        back = total - tt
        error = (tt - (total - back)) + (uu - back)
        half = total - np.rint(total)
        step = np.where((half == 0.5) & (error > 0), 1.0, 0.0) - np.where((half == -0.5) & (error < 0), 1.0, 0.0)
        k.ravel()[ties] += step
    if not in_range and k.size and float(np.max(np.abs(k))) >= 2.0**52:
        raise _too_large(exponent)
    np.multiply(k, math.ldexp(1.0, exponent), out=k)
    return k.reshape(shape) if out is None else out


def lattice_sum(values: NDArray[np.float64], units: NDArray[np.float64], exponent: int) -> NDArray[np.float64]:
    """Λ·(rint(v/Λ) + K) for lattice noise K given in units of Λ = 2^exponent."""
    lattice = np.rint(np.ldexp(values, -exponent))
    lattice += units
    if lattice.size and float(np.max(np.abs(lattice))) >= 2.0**52:
        raise _too_large(exponent)
    return np.ldexp(lattice, exponent)
