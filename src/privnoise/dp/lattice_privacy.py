"""The differential privacy of lattice noise added to a value rounded to the same lattice Λ·ℤ.

* :func:`discrete_laplace_epsilon` — pure ε of discrete Laplace noise: ε = (⌊Δ/Λ⌋ + m)·Λ/b, the ε of continuous
  Laplace noise with the rounding added to the sensitivity
  (:func:`~privnoise.mechanisms.lattice_grid.lattice_sensitivity`).
* :func:`discrete_gaussian_delta`, :func:`discrete_gaussian_epsilon` — the exact δ(ε) of the scalar discrete
  Gaussian at an integer sensitivity (Canonne, Kamath & Steinke 2020, Theorem 7), and its inverse.
* :func:`zcdp_delta`, :func:`zcdp_epsilon` — the (ε, δ) implied by ρ-zCDP (Corollary 13), used for vectors of
  discrete Gaussian noise, which are ρ-zCDP with ρ = (Δ/Λ)²/(2s²) (Theorem 14).

These are the guarantees of the ideal distributions; the floating-point caveat of
:mod:`privnoise.mechanisms.discrete` applies to the draws. The noise families
(:class:`~privnoise.mechanisms.DiscreteLaplace`, :class:`~privnoise.mechanisms.DiscreteGaussian`) sit below this
module and never import it: their privacy profiles (:mod:`privnoise.dp.privacy_profiles.discrete`) state these.

References
----------
.. [1] C. Canonne, G. Kamath, T. Steinke, "The discrete Gaussian for differential privacy", NeurIPS 2020
   (Theorem 7: exact δ(ε) of the discrete Gaussian; Theorem 14: multivariate zCDP; Corollary 13: zCDP → (ε, δ)).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .._validation import check_positive, check_probability
from ..exceptions import InvalidParameterError
from ..mechanisms.lattice_grid import lattice_sensitivity
from ..mechanisms.lattice_laws import discrete_gaussian_log_normaliser
from .inversion import smallest_epsilon

__all__ = [
    "discrete_gaussian_delta",
    "discrete_gaussian_epsilon",
    "discrete_laplace_epsilon",
    "zcdp_delta",
    "zcdp_epsilon",
]


def discrete_laplace_epsilon(scale: float, *, sensitivity: float, grid: float, dim: int = 1) -> float:
    """ε of discrete Laplace noise of scale b on Λ·ℤ added to a query rounded to Λ·ℤ (ℓ1 sensitivity Δ).

    ε = (⌊Δ/Λ⌋ + m)·Λ/b ≤ (Δ + mΛ)/b: the ε of continuous Laplace noise with the rounding added to the sensitivity.

    Examples
    --------
    >>> discrete_laplace_epsilon(1.0, sensitivity=1.0, grid=2.0**-10)
    1.0009765625
    """
    owner = "discrete_laplace_epsilon"
    b = check_positive(scale, "scale", owner)
    g = check_positive(grid, "grid", owner)
    units = lattice_sensitivity(sensitivity, g, dim=dim)
    return units * g / b


def discrete_gaussian_delta(sigma: float, epsilon: float, *, sensitivity: float) -> float:
    """Exact δ(ε) of the scalar discrete Gaussian N_ℤ(0, σ²) for an integer sensitivity Δ (in lattice units).

    Canonne, Kamath & Steinke (2020), Theorem 7:
    δ = P[Y > εσ²/Δ − Δ/2] − e^ε P[Y > εσ²/Δ + Δ/2], Y ~ N_ℤ(0, σ²), computed as the sum over integers
    j > εσ²/Δ − Δ/2 of the positive terms p(j)(1 − e^{ε − (2jΔ + Δ²)/(2σ²)}) (no cancellation). The cost grows
    linearly with σ (about 80σ terms). The sum is rounded up by a relative 1e-12, above its floating-point error, so
    the δ stated is never below the exact one.

    Examples
    --------
    >>> round(discrete_gaussian_delta(2.0, 1.0, sensitivity=1), 6)
    0.007249
    """
    owner = "discrete_gaussian_delta"
    s = check_positive(sigma, "sigma", owner)
    eps = check_positive(epsilon, "epsilon", owner, allow_zero=True)
    d = check_positive(sensitivity, "sensitivity", owner)
    if d != math.floor(d):
        raise InvalidParameterError(
            f"`sensitivity` of `{owner}` must be an integer (lattice units); got {d:g}."
        )
    if s > 2.0**30:
        raise InvalidParameterError(f"`sigma` of `{owner}` must be ≤ 2^30 lattice steps; got {s:g}.")
    c = eps * s * s / d - d / 2.0
    reach = math.ceil(39.0 * s) + 2  # exp(−j²/(2s²)) underflows to 0 beyond |j| ≈ 38.6 s
    start = max(math.floor(c) + 1, -reach)
    stop = reach
    if start > stop:
        return 0.0
    log_z = discrete_gaussian_log_normaliser(s)
    total = 0.0
    chunk = 1 << 20
    for lo in range(start, stop + 1, chunk):  # chunks of lattice points, not a loop per point
        j = np.arange(lo, min(lo + chunk, stop + 1), dtype=float)
        log_p = -(j * j) / (2.0 * s * s) - log_z
        factor = -np.expm1(np.minimum(eps - (2.0 * j * d + d * d) / (2.0 * s * s), 0.0))
        total += float(np.sum(np.exp(log_p) * factor))
    # Each term carries a relative error below (|log p| + 10)·2⁻⁵³ ≤ 1e-13 (exp of a log-probability ≥ −750) and
    # the pairwise sum adds log₂(terms) ulps: a relative 1e-12 on top keeps δ at or above the exact sum.
    return float(min(max(total * (1.0 + 1e-12), 0.0), 1.0))


def discrete_gaussian_epsilon(sigma: float, delta: float, *, sensitivity: float) -> float:
    """The smallest ε ≥ 0 with :func:`discrete_gaussian_delta` ≤ δ (bisection; rounded up).

    Examples
    --------
    >>> eps = discrete_gaussian_epsilon(2.0, 0.007249, sensitivity=1)
    >>> round(eps, 3)
    1.0
    """
    owner = "discrete_gaussian_epsilon"
    s = check_positive(sigma, "sigma", owner)
    dl = check_probability(delta, "delta", owner)
    d = check_positive(sensitivity, "sensitivity", owner)
    return smallest_epsilon(
        lambda e: discrete_gaussian_delta(s, e, sensitivity=d), dl, what="the discrete Gaussian", limit=1e6
    )


def _alphas() -> NDArray[np.float64]:
    return 1.0 + np.logspace(-6, 6, 4001)


def zcdp_delta(rho: float, epsilon: float) -> float:
    """δ(ε) implied by ρ-zero-concentrated DP (Canonne, Kamath & Steinke 2020, Corollary 13).

    δ = inf_{α>1} exp((α−1)(αρ − ε))/(α−1) · (1 − 1/α)^α, minimised over a fine grid of α (every α gives a valid
    bound, so the grid minimum is valid too).

    Examples
    --------
    >>> round(zcdp_delta(0.125, 1.0), 6)
    0.017986
    """
    r = check_positive(rho, "rho", "zcdp_delta")
    eps = check_positive(epsilon, "epsilon", "zcdp_delta", allow_zero=True)
    a = _alphas()
    log_delta = (a - 1.0) * (a * r - eps) - np.log(a - 1.0) + a * np.log1p(-1.0 / a)
    return float(min(1.0, math.exp(min(float(np.min(log_delta)), 0.0))))


def zcdp_epsilon(rho: float, delta: float) -> float:
    """ε(δ) implied by ρ-zCDP: inf_α αρ − (log δ + log α)/(α − 1) + log((α − 1)/α) (the same conversion).

    Examples
    --------
    >>> round(zcdp_epsilon(0.125, 0.017986), 3)
    1.0
    """
    r = check_positive(rho, "rho", "zcdp_epsilon")
    dl = check_probability(delta, "delta", "zcdp_epsilon")
    if dl == 0.0:
        return math.inf
    a = _alphas()
    eps = a * r - (math.log(dl) + np.log(a)) / (a - 1.0) + np.log((a - 1.0) / a)
    return float(max(0.0, float(np.min(eps))))
