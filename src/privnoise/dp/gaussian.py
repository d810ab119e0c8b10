"""Differential privacy of Gaussian noise: the exact (analytic) privacy profile and its calibration.

For a query of ℓ2 sensitivity Δ answered with N(0, σ²) noise, the tight privacy profile is (Balle & Wang,
"Improving the Gaussian mechanism for differential privacy", ICML 2018, Theorem 8)

    δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ),

so the release is (ε, δ)-DP exactly when δ ≥ δ(ε). The classical calibration σ = Δ√(2 ln(1.25/δ))/ε
(Dwork & Roth, Theorem A.1, ε < 1) is looser.
"""

from __future__ import annotations

import math
from typing import Any

from .._validation import check_positive, check_probability
from ..exceptions import CalibrationError, InvalidParameterError
from ..mechanisms import Gaussian
from .calibration import smallest_parameter
from .inversion import smallest_epsilon

__all__ = [
    "classical_gaussian_sigma",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_for_epsilon_delta",
    "gaussian_sigma",
]


def gaussian_delta(sigma: float, epsilon: float, *, sensitivity: float) -> float:
    """The smallest δ for which N(0, σ²) noise is (ε, δ)-DP at ℓ2 sensitivity Δ (the exact privacy profile).

    The two terms of the profile cancel when δ is small beside them, so the difference is taken in multiple
    precision (mpmath, with as many digits as the cancellation costs) and rounded *up* to the next double: the δ
    returned is never below the exact one, and every calibration and inversion built on it stays on the safe side.

    Examples
    --------
    >>> round(gaussian_delta(1.0, 1.0, sensitivity=1.0), 6)
    0.126937
    """
    s = check_positive(sigma, "sigma", "gaussian_delta")
    eps = check_positive(epsilon, "epsilon", "gaussian_delta", allow_zero=True)
    d = check_positive(sensitivity, "sensitivity", "gaussian_delta")
    first, estimate = _profile_in_doubles(s, eps, d)
    if not math.isfinite(d / (2.0 * s)) or not math.isfinite(eps * s / d):
        return float(min(max(estimate, 0.0), 1.0))
    return _round_up_probability(_profile_precisely(s, eps, d, estimate, first))


def _profile_in_doubles(sigma: float, epsilon: float, sensitivity: float) -> tuple[float, float]:
    """The profile's first term Φ(a − b) and the difference of the two terms, both in double precision (fast; the
    difference loses the digits the terms share, so it only guides the searches of the exact profile)."""
    from scipy import (
        special,  # loaded on first use (scipy is slow to import; the command line may not need it)
    )

    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    first = float(special.ndtr(a - b))
    second_log = epsilon + float(special.log_ndtr(-a - b))
    return first, (first - math.exp(second_log) if second_log > -745 else first)


def _profile_precisely(sigma: float, epsilon: float, sensitivity: float, estimate: float, first: float) -> Any:
    """δ(ε) of the Gaussian in multiple precision: 30 digits beyond those the difference of the terms cancels."""
    import mpmath

    lost = 0 if estimate <= 0.0 or first <= 0.0 else max(0, math.ceil(math.log10(first / estimate)))
    digits = 30 + min(lost, 400) if estimate > 0.0 else 430  # a non-positive estimate: δ below 1e-16·first
    with mpmath.workdps(digits):
        s, e, d = mpmath.mpf(sigma), mpmath.mpf(epsilon), mpmath.mpf(sensitivity)
        a, b = d / (2 * s), e * s / d
        return mpmath.ncdf(a - b) - mpmath.exp(e) * mpmath.ncdf(-a - b)


def _round_up_probability(value: Any) -> float:
    """The smallest double ≥ ``value`` (a multiple-precision probability), in [0, 1]; the smallest positive double
    when ``value`` is below every double (the profile is positive at every finite ε)."""
    if value <= 0:
        return math.ulp(0.0)
    rounded = float(value)
    if rounded < value:
        rounded = math.nextafter(rounded, math.inf)
    return min(rounded, 1.0)


def gaussian_epsilon(sigma: float, delta: float, *, sensitivity: float) -> float:
    """The smallest ε ≥ 0 for which N(0, σ²) noise is (ε, δ)-DP (inverse of :func:`gaussian_delta` in ε).

    Examples
    --------
    >>> round(gaussian_epsilon(1.0, 0.1269367375, sensitivity=1.0), 6)
    1.0
    """
    s = check_positive(sigma, "sigma", "gaussian_epsilon")
    dl = check_probability(delta, "delta", "gaussian_epsilon")
    d = check_positive(sensitivity, "sensitivity", "gaussian_epsilon")
    return smallest_epsilon(
        lambda e: gaussian_delta(s, e, sensitivity=d), dl, what="the Gaussian privacy profile",
        estimate=lambda e: _profile_in_doubles(s, e, d)[1],
    )


def gaussian_sigma(epsilon: float, delta: float, *, sensitivity: float) -> float:
    """The smallest σ for which N(0, σ²) noise is (ε, δ)-DP at ℓ2 sensitivity Δ (analytic Gaussian mechanism).

    The root of δ(σ) = δ is found with Brent's method and then nudged up until δ(σ) ≤ δ holds exactly in floating
    point, so the σ returned is never below the one the exact profile asks for.

    Examples
    --------
    >>> round(gaussian_sigma(1.0, 1e-5, sensitivity=1.0), 4)
    3.7306
    """
    eps = check_positive(epsilon, "epsilon", "gaussian_sigma")
    dl = check_probability(delta, "delta", "gaussian_sigma")
    d = check_positive(sensitivity, "sensitivity", "gaussian_sigma")
    if dl == 0.0:
        raise CalibrationError("Gaussian noise cannot give δ = 0; use a Laplace mechanism for pure ε-DP.")
    return smallest_parameter(
        lambda s: gaussian_delta(s, eps, sensitivity=d), dl, start=d, what="σ for the Gaussian privacy profile",
        estimate=lambda s: _profile_in_doubles(s, eps, d)[1],
    )


def gaussian_for_epsilon_delta(
    epsilon: float, delta: float, *, sensitivity: float, dim: int | None = None
) -> Gaussian:
    """Isotropic Gaussian noise calibrated exactly to (ε, δ)-DP for ℓ2 sensitivity Δ."""
    return Gaussian.from_std(gaussian_sigma(epsilon, delta, sensitivity=sensitivity), dim)


def classical_gaussian_sigma(epsilon: float, delta: float, *, sensitivity: float) -> float:
    """σ = Δ√(2 ln(1.25/δ))/ε, the classical sufficient calibration (valid for ε < 1 only)."""
    eps = check_positive(epsilon, "epsilon", "classical_gaussian_sigma")
    if eps >= 1.0:
        raise InvalidParameterError(f"`epsilon` of `classical_gaussian_sigma` must be < 1; got {eps:g}.")
    dl = check_probability(delta, "delta", "classical_gaussian_sigma")
    if dl == 0.0:
        raise InvalidParameterError("`delta` of `classical_gaussian_sigma` must be > 0.")
    d = check_positive(sensitivity, "sensitivity", "classical_gaussian_sigma")
    return d * math.sqrt(2.0 * math.log(1.25 / dl)) / eps
