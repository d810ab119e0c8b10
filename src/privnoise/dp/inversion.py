"""Inverting a privacy profile: the smallest ε with δ(ε) ≤ δ, never rounded to the unsafe side."""

from __future__ import annotations

import math
from collections.abc import Callable

from .calibration import smallest_parameter

__all__ = ["smallest_epsilon"]


def smallest_epsilon(
    profile: Callable[[float], float], delta: float, *, what: str, limit: float = 1e8,
    estimate: Callable[[float], float] | None = None,
) -> float:
    """The smallest ε ≥ 0 with ``profile(ε) ≤ delta``, for a profile δ(ε) that decreases in ε.

    The one calibrator (:func:`~privnoise.dp.calibration.smallest_parameter`) brackets the root by doubling
    (``CalibrationError`` past ``limit``), finds it with Brent's method, and steps it up until ``profile(ε) ≤ delta``
    holds exactly in floating point, so the reported ε is never below the true one. A fast ``estimate`` of an
    expensive profile only decides where the profile itself is evaluated.

    Examples
    --------
    >>> round(smallest_epsilon(lambda e: math.exp(-e), 0.01, what="an example"), 9)
    4.605170186
    """
    if delta == 0.0:
        return math.inf
    if profile(0.0) <= delta:
        return 0.0
    eps = smallest_parameter(profile, delta, start=1.0, what=f"ε of {what} for δ = {delta:g}", limit=limit,
                             estimate=estimate)
    return eps if profile(eps) <= delta else math.inf
