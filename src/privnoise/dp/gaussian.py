"""Differential privacy of Gaussian noise: the exact (analytic) privacy profile and its calibration.

For a query of ℓ2 sensitivity Δ answered with N(0, σ²) noise, the tight privacy profile is (Balle & Wang,
"Improving the Gaussian mechanism for differential privacy", ICML 2018, Theorem 8)

    δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ),

so the release is (ε, δ)-DP exactly when δ ≥ δ(ε). The classical calibration σ = Δ√(2 ln(1.25/δ))/ε
(Dwork & Roth, Theorem A.1, ε < 1) is looser.
"""

from __future__ import annotations

import math

from scipy import special

from .._validation import check_positive, check_probability
from ..exceptions import CalibrationError, InvalidParameterError
from ..mechanisms import Gaussian
from ._invert import smallest_epsilon

__all__ = [
    "classical_gaussian_sigma",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_for_epsilon_delta",
    "gaussian_sigma",
]


def gaussian_delta(sigma: float, epsilon: float, *, sensitivity: float) -> float:
    """The smallest δ for which N(0, σ²) noise is (ε, δ)-DP at ℓ2 sensitivity Δ (the exact privacy profile).

    Examples
    --------
    >>> round(gaussian_delta(1.0, 1.0, sensitivity=1.0), 6)
    0.126937
    """
    s = check_positive(sigma, "sigma", "gaussian_delta")
    eps = check_positive(epsilon, "epsilon", "gaussian_delta", allow_zero=True)
    d = check_positive(sensitivity, "sensitivity", "gaussian_delta")
    a = d / (2.0 * s)
    b = eps * s / d
    first = special.ndtr(a - b)
    second_log = eps + special.log_ndtr(-a - b)
    value = first - math.exp(second_log) if second_log > -745 else first
    return float(min(max(value, 0.0), 1.0))


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
        lambda e: gaussian_delta(s, e, sensitivity=d), dl, what="the Gaussian privacy profile"
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
    lo, hi = 1e-3 * d, d
    while gaussian_delta(hi, eps, sensitivity=d) > dl:
        hi *= 2.0
        if hi > 1e12 * d:
            raise CalibrationError("could not bracket σ for the Gaussian privacy profile.")
    while gaussian_delta(lo, eps, sensitivity=d) <= dl:
        lo /= 2.0
        if lo < 1e-300:
            return lo
    from scipy import optimize

    sigma = float(
        optimize.brentq(
            lambda s: gaussian_delta(s, eps, sensitivity=d) - dl, lo, hi, xtol=1e-15 * d, rtol=1e-14
        )
    )
    while gaussian_delta(sigma, eps, sensitivity=d) > dl:  # the root may lie a rounding below: step up
        sigma *= 1.0 + 1e-13
    return sigma


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
