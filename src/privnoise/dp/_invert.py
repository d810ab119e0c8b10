"""Inverting a privacy profile: the smallest ε with δ(ε) ≤ δ, never rounded to the unsafe side."""

from __future__ import annotations

import math
from collections.abc import Callable

from ..exceptions import CalibrationError

__all__ = ["smallest_epsilon"]


def smallest_epsilon(
    profile: Callable[[float], float], delta: float, *, what: str, limit: float = 1e8
) -> float:
    """The smallest ε ≥ 0 with ``profile(ε) ≤ delta``, for a profile δ(ε) that decreases in ε.

    The root is bracketed by doubling (``CalibrationError`` past ``limit``), found with Brent's method, and then
    nudged up until ``profile(ε) ≤ delta`` holds exactly in floating point, so the reported ε is never below
    the true one.

    Examples
    --------
    >>> round(smallest_epsilon(lambda e: math.exp(-e), 0.01, what="an example"), 9)
    4.605170186
    """
    if delta == 0.0:
        return math.inf
    if profile(0.0) <= delta:
        return 0.0
    hi = 1.0
    while profile(hi) > delta:
        hi *= 2.0
        if hi > limit:
            raise CalibrationError(f"could not bracket ε of {what} for δ = {delta:g}.")
    from scipy import optimize

    eps = float(optimize.brentq(lambda e: profile(e) - delta, 0.0, hi, xtol=1e-14, rtol=1e-13))
    while profile(eps) > delta:
        eps = eps * (1.0 + 1e-12) + 1e-14
    return eps
