"""Independent references for the privacy statements of the conformance suite.

Nothing here imports privnoise: each curve is computed from the definition of the noise's law, by a different
route from the library's (quadrature of densities instead of closed forms, sums over lattice points in multiple
precision, convolutions of privacy-loss distributions, dp-accounting's optimistic PLD as a lower bound).

δ(ε) of a pair (P, Q) is ∫ (p − e^ε q)₊; ε(δ) is its inverse, found here by bisection on the reference δ.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np

mpmath.mp.dps = 50


def epsilon_for(
    delta_of: Callable[[float], float], delta: float, *, precise: Callable[[float], float] | None = None,
    high: float = 200.0,
) -> float:
    """A lower bound on the smallest ε ≥ 0 with δ(ε) ≤ ``delta`` (δ decreasing in ε), within about 1e-13 of it.

    Bisection on ``delta_of`` (a fast evaluation) to 1e-15 relative; then, when ``precise`` (a slow, exact
    evaluation) is given, the ε found is lowered in steps of 1e-13 (doubling) until ``precise`` confirms that it
    still violates ``delta``: the value returned is certified to lie below the exact root.
    """
    if delta_of(0.0) <= delta:
        return 0.0
    low = 0.0
    while delta_of(high) > delta:
        high *= 2.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if delta_of(mid) > delta:
            low = mid
        else:
            high = mid
        if high - low <= 1e-15 * high:
            break
    if precise is None:
        return low
    step = 1e-13
    candidate = low
    while precise(candidate) <= delta:
        candidate = low * (1.0 - step)
        step *= 2.0
        if step > 1.0:
            return 0.0
    return candidate


def _ratio(mu: float | tuple[float, float, int]) -> Any:
    """μ = Δ√k/σ in multiple precision from (Δ, σ, k), or a float μ as given."""
    if isinstance(mu, tuple):
        sensitivity, sigma, count = mu
        return mpmath.mpf(sensitivity) * mpmath.sqrt(count) / mpmath.mpf(sigma)
    return mpmath.mpf(mu)


def gaussian_delta_fast(mu: float | tuple[float, float, int], epsilon: float) -> float:
    """δ(ε) of N(μ, 1) against N(0, 1) from the closed form of Balle & Wang (2018), Theorem 8, in 40 digits;
    ``mu`` is μ or (Δ, σ, k) for μ = Δ√k/σ computed without rounding."""
    with mpmath.workdps(40):
        mu_, eps = _ratio(mu), mpmath.mpf(epsilon)
        return float(mpmath.ncdf(mu_ / 2 - eps / mu_) - mpmath.exp(eps) * mpmath.ncdf(-mu_ / 2 - eps / mu_))


def gaussian_delta(mu: float | tuple[float, float, int], epsilon: float) -> float:
    """δ(ε) of N(μ, 1) against N(0, 1) by quadrature of the densities from their crossing point (50 digits)."""
    mu_, eps = _ratio(mu), mpmath.mpf(epsilon)
    cross = eps / mu_ + mu_ / 2  # where φ(y − μ) = e^ε φ(y)
    gap = lambda y: mpmath.npdf(y, mu_, 1) - mpmath.exp(eps) * mpmath.npdf(y, 0, 1)  # noqa: E731
    return float(mpmath.quad(gap, [cross, cross + 1, cross + 4, cross + 16, mpmath.inf]))


def discrete_gaussian_pmf(sigma_steps: float, reach: int) -> np.ndarray:
    """P(Z = j) ∝ exp(−j²/(2s²)) for j = −reach … reach, normalised over ℤ in multiple precision."""
    s2 = 2 * mpmath.mpf(sigma_steps) ** 2
    total = mpmath.nsum(lambda j: mpmath.exp(-(j * j) / s2), [-mpmath.inf, mpmath.inf])
    return np.array([float(mpmath.exp(-(j * j) / s2) / total) for j in range(-reach, reach + 1)])


def discrete_gaussian_delta(sigma_steps: float, shift: int, epsilon: float, count: int = 1) -> float:
    """δ(ε) of ``count`` releases of N_ℤ(0, s²) against N_ℤ(shift, s²), each shifted by ``shift`` steps.

    The privacy loss of one release at output z is (shift² − 2 z shift)/(2s²) — linear in z — so that of the
    composition depends on the sum S of the draws only: δ = Σ_s P(S = s)(1 − e^{ε − L(s)})₊, with the law of S the
    ``count``-fold convolution of the pmf (exact up to the truncation of tails below 1e-300).
    """
    reach = int(math.ceil(40 * sigma_steps)) + 2
    pmf = discrete_gaussian_pmf(sigma_steps, reach)
    law = pmf
    for _ in range(count - 1):
        law = np.convolve(law, pmf)
    offset = count * reach
    s = np.arange(law.size, dtype=float) - offset
    loss = (count * shift * shift - 2.0 * shift * s) / (2.0 * sigma_steps**2)
    keep = loss > epsilon
    return float(np.sum(law[keep] * -np.expm1(epsilon - loss[keep])))


@functools.lru_cache(maxsize=64)
def _unnormalised_weights(sigma_steps: float, shift: int) -> tuple[Any, list[Any], list[Any]]:
    s2 = 2 * mpmath.mpf(sigma_steps) ** 2
    total = mpmath.nsum(lambda j: mpmath.exp(-(j * j) / s2), [-mpmath.inf, mpmath.inf])
    reach = int(math.ceil(40 * sigma_steps)) + 2
    p = [mpmath.exp(-(j * j) / s2) for j in range(-reach, reach + 1)]
    q = [mpmath.exp(-((j - shift) ** 2) / s2) for j in range(-reach, reach + 1)]
    return total, p, q


def discrete_gaussian_delta_precise(sigma_steps: float, shift: int, epsilon: float) -> float:
    """One release's δ(ε) of the discrete Gaussian as a sum over lattice points in 50-digit arithmetic."""
    total, p, q = _unnormalised_weights(sigma_steps, shift)
    factor = mpmath.exp(mpmath.mpf(epsilon))
    acc = mpmath.fsum(a - factor * b for a, b in zip(p, q, strict=False) if a > factor * b)
    return float(acc / total)


def rounded_shift(sensitivity: float, grid: float) -> float:
    """The largest distance between the grid roundings (np.rint) of two values within ``sensitivity`` of each
    other, by brute force over many positions of the pair relative to the grid."""
    offsets = np.linspace(0.0, grid, 4001)[None, :]
    shifts = np.linspace(0.0, sensitivity, 4001)[:, None]
    moved = np.abs(np.rint((offsets + shifts) / grid) - np.rint(offsets / grid))
    return float(np.max(moved) * grid)


def laplace_pld_lower(scale_over_sensitivity: float, count: int, delta: float) -> float:
    """A lower bound on the exact ε(δ) of ``count`` Laplace releases: dp-accounting's optimistic PLD."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    one = pld.from_laplace_mechanism(
        scale_over_sensitivity, pessimistic_estimate=False, value_discretization_interval=1e-4
    )
    return float(one.self_compose(count).get_epsilon_for_delta(delta)) if count > 1 else float(
        one.get_epsilon_for_delta(delta)
    )


def discrete_laplace_pld_lower(parameter: float, shift: int, count: int, delta: float) -> float:
    """A lower bound on the exact ε(δ) of ``count`` discrete Laplace releases (optimistic PLD)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    one = pld.from_discrete_laplace_mechanism(
        parameter, sensitivity=shift, pessimistic_estimate=False, value_discretization_interval=1e-4
    )
    return float(one.self_compose(count).get_epsilon_for_delta(delta)) if count > 1 else float(
        one.get_epsilon_for_delta(delta)
    )


def worst_log_ratio(log_density: Callable[[np.ndarray], np.ndarray], shift: np.ndarray, dim: int, seed: int) -> float:
    """sup_x log g(x) − log g(x − shift) over many x (along the shift and at random), by brute force."""
    rng = np.random.default_rng(seed)
    direction = shift / np.linalg.norm(shift)
    along = np.linspace(-50.0, 50.0, 20001)[:, None] * direction[None, :]
    scattered = rng.normal(scale=5.0, size=(20000, dim))
    x = np.vstack([along, scattered])
    return float(np.max(log_density(x) - log_density(x - shift[None, :])))
