"""One safe-side calibrator behind every ``<family>_for_<target>`` and every profile inversion.

Every calibration in privnoise asks the same question: the smallest parameter p (a noise scale, an ε) at which a
privacy measure that decreases in p — δ(σ) of the Gaussian, δ(ε) of a profile, ε(b) of hardened Laplace noise —
is at most a target. :func:`smallest_parameter` answers it for all of them:

1. it brackets the answer by doubling from a start value (:class:`~privnoise.exceptions.CalibrationError` when the
   measure never reaches the target below a limit),
2. refines it with Brent's method on ``measure(p) − target``,
   — or, given a cheap floating-point ``estimate`` of an expensive exact measure, locates the root on the estimate
   and refines it on the exact measure only inside a narrow bracket around it (a handful of exact evaluations
   instead of dozens; the full search on the exact measure when the estimate misleads),
3. and then steps p up until the *exact* test ``holds(p)`` passes in floating point (or in exact rationals, for
   accountants), so the calibrated noise is never below the one the target needs.

Closed forms (Laplace b = Δ/ε) use :func:`safe_side` alone: the same final step.

Examples
--------
>>> import math
>>> round(smallest_parameter(lambda e: math.exp(-e), 0.01, start=1.0, what="an example"), 9)
4.605170186
>>> safe_side(0.1, lambda b: 1.0 / b <= 10.0, what="a scale") >= 0.1
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..exceptions import CalibrationError

__all__ = ["safe_side", "smallest_parameter"]

_MAX_STEPS = 4096


def safe_side(value: float, holds: Callable[[float], bool], *, what: str) -> float:
    """``value``, increased by the fewest relative steps (one ulp, then growing) until ``holds`` is true.

    Raises
    ------
    CalibrationError
        When no nearby value satisfies ``holds`` (the target is out of reach of the parameter).
    """
    step = 0.0
    current = value
    for _ in range(_MAX_STEPS):
        if holds(current):
            return current
        step = max(step * 2.0, 2.0**-52)
        current = math.nextafter(value * (1.0 + step), math.inf)
    raise CalibrationError(f"could not calibrate {what} to the safe side of its target.")


def smallest_parameter(
    measure: Callable[[float], Any],
    target: Any,
    *,
    start: float,
    what: str,
    holds: Callable[[float], bool] | None = None,
    estimate: Callable[[float], float] | None = None,
    limit: float = 1e12,
    xtol: float = 1e-15,
    rtol: float = 1e-14,
) -> float:
    """The smallest p > 0 with ``measure(p) ≤ target`` for a measure that decreases in p, never rounded down.

    Parameters
    ----------
    measure : callable
        p ↦ the privacy measure (a float, or a Fraction for exact tests).
    target : float or Fraction
        The level to reach.
    start : float
        A first guess of the scale of p (the bracket grows and shrinks from it).
    what : str
        What is calibrated, for error messages.
    holds : callable, optional
        The exact test of the final answer (default ``measure(p) <= target``).
    estimate : callable, optional
        A fast floating-point approximation of ``measure``: the root is located on it first, and the exact measure
        is then evaluated only in a bracket 1e-9 (then 1e-6, 1e-3) wide around that root. The answer is the same
        safe-side root either way; the estimate only decides where the exact measure is looked at.
    limit : float
        The bracket may grow to ``limit · start`` before :class:`CalibrationError`.

    Returns
    -------
    float
        p with ``holds(p)``; a tiny p (below 1e-300 · start) when even that one satisfies the target.
    """
    measure = _remembered(measure)
    check = holds if holds is not None else (lambda p: measure(p) <= target)
    if estimate is not None:
        near = _root_near_estimate(measure, target, estimate, check, start=start, limit=limit, xtol=xtol, rtol=rtol)
        if near is not None:
            return safe_side(near, check, what=what)
    high = start
    while not check(high):
        high *= 2.0
        if high > limit * start:
            raise CalibrationError(f"could not bracket {what}: the target is not reached below {high:g}.")
    low = start
    while check(low):
        low /= 2.0
        if low < 1e-300 * start:
            return low
    from scipy import optimize

    level = float(target)
    root = float(
        optimize.brentq(lambda p: float(measure(p)) - level, low, high, xtol=xtol * start, rtol=rtol)
    )
    return safe_side(max(root, low), check, what=what)


def _root_near_estimate(
    measure: Callable[[float], Any],
    target: Any,
    estimate: Callable[[float], float],
    check: Callable[[float], bool],
    *,
    start: float,
    limit: float,
    xtol: float,
    rtol: float,
) -> float | None:
    """The exact measure's root, searched only in narrow brackets around the estimate's root; None when the
    estimate's root is not within 1e-3 of the exact one (or the estimate cannot be bracketed)."""
    from scipy import optimize

    level = float(target)
    high = start
    while not estimate(high) <= level:
        high *= 2.0
        if high > limit * start:
            return None
    low = start
    while estimate(low) <= level:
        low /= 2.0
        if low < 1e-300 * start:
            return None
    guess = float(optimize.brentq(lambda p: estimate(p) - level, low, high, xtol=xtol * start, rtol=rtol))
    for width in (1e-9, 1e-6, 1e-3):
        below, above = guess * (1.0 - width), guess * (1.0 + width)
        if check(above) and not check(below):
            excess_above, excess_below = float(measure(above)) - level, float(measure(below)) - level
            if excess_below > 0.0 >= excess_above:
                root = optimize.brentq(lambda p: float(measure(p)) - level, below, above, xtol=xtol * start, rtol=rtol)
                return max(float(root), below)
    return None


def _remembered(measure: Callable[[float], Any]) -> Callable[[float], Any]:
    """``measure`` evaluated once per argument (the bracket ends are tested, then handed to Brent's method)."""
    values: dict[float, Any] = {}

    def remembered(p: float) -> Any:
        if p not in values:
            values[p] = measure(p)
        return values[p]

    return remembered
