"""The ranges every number entering a budget, a ledger or a noise calibration must lie in (SECURITY.md, 14).

A number that is not finite or out of its range is refused with an :class:`InvalidParameterError` naming the
parameter, its owner and the rule, before anything is charged or read. The ranges leave room for the arithmetic
done on them: squares of noise scales (Fisher information 1/b²), products of coefficients and bounds
(sensitivities), sums of many charges, so that no derived number can overflow, underflow to 0 or become NaN.

* DP budgets and charges are exact rationals (``p/q``) of at most :data:`RATIONAL_CHARS` characters: ε in
  (0, :data:`EPSILON_MAX`], δ in [0, 1).
* Fisher floors (smallest allowed Cramér–Rao bound of a record) lie in :data:`FLOOR_RANGE`, so 1/floor is finite.
* Declared bounds lie in [−:data:`BOUND_MAX`, :data:`BOUND_MAX`]; query coefficients are 0 or of magnitude in
  :data:`COEFFICIENT_RANGE`; noise scales (Laplace b, Gaussian σ, cos² half-width h, √Q) lie in
  :data:`SCALE_RANGE`, so the noise's Fisher information (≈ 1/scale²) is finite and positive.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

from ..dp.accounting import exact_rational
from ..exceptions import InvalidParameterError

__all__ = [
    "BOUND_MAX",
    "COEFFICIENT_RANGE",
    "EPSILON_MAX",
    "FLOOR_RANGE",
    "RATIONAL_CHARS",
    "SCALE_RANGE",
    "checked_coefficient",
    "checked_float",
    "checked_rational",
    "decimal_fraction",
]

EPSILON_MAX = Fraction(10**6)
RATIONAL_CHARS = 100
FLOOR_RANGE = (1e-300, 1e300)
BOUND_MAX = 1e100
COEFFICIENT_RANGE = (1e-100, 1e100)
SCALE_RANGE = (1e-150, 1e150)


def checked_rational(value: Any, name: str, owner: str, *, kind: str) -> Fraction:
    """``value`` as an exact rational: ``kind`` "epsilon" (0 < ε ≤ 10⁶), "delta" (0 ≤ δ < 1) or "admin"
    (ε = 0 allowed), written in at most :data:`RATIONAL_CHARS` characters as ``p/q``."""
    q = exact_rational(value, name, owner, allow_zero=kind in ("delta", "admin"))
    if kind == "delta" and q >= 1:
        raise InvalidParameterError(f"`{name}` of `{owner}` must be < 1; got {_short(q)}.")
    if kind != "delta" and q > EPSILON_MAX:
        raise InvalidParameterError(f"`{name}` of `{owner}` must be ≤ {EPSILON_MAX}; got {_short(q)}.")
    if len(str(q)) > RATIONAL_CHARS:
        raise InvalidParameterError(
            f"`{name}` of `{owner}` must be a rational p/q of at most {RATIONAL_CHARS} characters; "
            f"got one of {len(str(q))} characters ({_short(q)})."
        )
    return q


def _short(q: Fraction) -> str:
    text = str(q)
    return text if len(text) <= 40 else f"{text[:30]}… ({len(text)} characters)"


def checked_float(value: Any, name: str, owner: str, low: float, high: float) -> float:
    """A finite float in [low, high] (bools and non-numbers refused)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidParameterError(f"`{name}` of `{owner}` must be a number; got {value!r}.")
    try:
        x = float(value)
    except OverflowError:
        x = math.inf
    if not math.isfinite(x) or not low <= x <= high:
        raise InvalidParameterError(
            f"`{name}` of `{owner}` must be a finite number in [{low:g}, {high:g}]; got {value!r}."
        )
    return x


def checked_coefficient(value: float, name: str, owner: str) -> float:
    """0, or a finite number whose magnitude lies in :data:`COEFFICIENT_RANGE`."""
    low, high = COEFFICIENT_RANGE
    if not math.isfinite(value) or (value != 0.0 and not low <= abs(value) <= high):
        raise InvalidParameterError(
            f"`{name}` of `{owner}` must be 0 or of magnitude in [{low:g}, {high:g}]; got {value!r}."
        )
    return 0.0 if value == 0.0 else value


@functools.lru_cache(maxsize=4096)
@functools.lru_cache(maxsize=256)
def decimal_fraction(value: float) -> Fraction:
    """The rational a float was written as (its shortest decimal form): 0.01 → 1/100, so a floor of 0.01
    allows exactly 100 units of information (cached: a configuration's few floors are read at every charge and
    every budget view)."""
    return Fraction(repr(float(value)))
