"""Integer-lattice noise: discrete Laplace and discrete Gaussian on the grid Λ·ℤ, Λ = 2^k, and their exact DP.

Noise on a power-of-two lattice added to an input rounded to the same lattice gives outputs that are exact
multiples of Λ, computed with exact (integer-valued) floating-point arithmetic: no low-order bit of the output
depends on the true value (Mironov 2012; SECURITY.md, requirement 2). Hardened releases built on these samplers
live in :mod:`privnoise.dp.hardening`.

* :class:`DiscreteLaplace` — P(w = jΛ) ∝ exp(−|j|Λ/b) per coordinate; drawn as the difference of two geometric
  variables, each the floor of a scaled exponential.
* :class:`DiscreteGaussian` — P(w = jΛ) ∝ exp(−(jΛ)²/(2σ²)); drawn by the rejection sampler of Canonne, Kamath &
  Steinke (2020, Algorithm 3) from discrete Laplace proposals, vectorised over batches.
* :func:`lattice_sensitivity` — the sensitivity, in lattice units, of a query whose value is rounded to Λ·ℤ.
* :func:`discrete_laplace_epsilon`, :func:`discrete_gaussian_delta`, :func:`discrete_gaussian_epsilon`,
  :func:`zcdp_delta`, :func:`zcdp_epsilon` — the guarantees.

Floating-point caveat
---------------------
The integer noise is produced from floating-point exponential, uniform and normal variates (not by the
exact-arithmetic samplers of Canonne, Kamath & Steinke). Its probability mass function therefore equals the ideal
one only up to relative errors of order 2⁻⁵⁰ per lattice point, and the tails are truncated where the floating-point
variates end (beyond ≈ 40 scales, ideal mass below e⁻⁴⁰ ≈ 4·10⁻¹⁸). The guarantees below are those of the ideal
distributions; the discrepancy acts like an additional δ of that order, which privnoise does not add to the reported
numbers. Because the noise does not depend on the input and the output is an exact lattice point, the porosity
attack of Mironov (2012) does not apply.

References
----------
.. [1] C. Canonne, G. Kamath, T. Steinke, "The discrete Gaussian for differential privacy", NeurIPS 2020
   (Theorem 7: exact δ(ε) of the discrete Gaussian; Theorem 14: multivariate zCDP; Corollary 13: zCDP → (ε, δ);
   Algorithm 3: sampler).
.. [2] I. Mironov, "On significance of the least significant bits for differential privacy", CCS 2012.
.. [3] S. Inusah, T. Kozubowski, "A discrete analogue of the Laplace distribution", J. Stat. Plan. Inference 2006.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from .._validation import check_positive, check_positive_int, check_probability
from ..exceptions import InvalidParameterError
from ..mechanisms import LatticeMechanism
from ..snapping import DEFAULT_GRID_BITS, grid_exponent_for
from .inversion import smallest_epsilon

__all__ = [
    "DEFAULT_GRID_BITS",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "default_grid_exponent",
    "discrete_gaussian_delta",
    "discrete_gaussian_epsilon",
    "discrete_laplace_epsilon",
    "lattice_sensitivity",
    "sample_discrete_gaussian",
    "sample_discrete_laplace",
    "zcdp_delta",
    "zcdp_epsilon",
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
    owner = "lattice_sensitivity"
    d = check_positive(sensitivity, "sensitivity", owner)
    g = check_positive(grid, "grid", owner)
    m = check_positive_int(dim, "dim", owner)
    if norm not in ("l1", "l2"):
        raise InvalidParameterError(f"`norm` of `{owner}` must be 'l1' or 'l2'; got {norm!r}.")
    if norm == "l1" or m == 1:
        return float(math.floor(d / g) + m)
    return d / g + math.sqrt(m)


# -- samplers on ℤ --------------------------------------------------------------------------------------------
def sample_discrete_laplace(t: float, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
    """``n`` draws of the discrete Laplace distribution on ℤ, P(j) ∝ exp(−|j|/t), as integer-valued doubles.

    G = ⌊t·E⌋ with E standard exponential is geometric on {0, 1, …} with P(G ≥ j) = exp(−j/t); the difference of
    two independent such variables is discrete Laplace (Inusah & Kozubowski 2006).
    """
    e = generator.standard_exponential((2, n))
    e *= t
    np.floor(e, out=e)
    return e[0] - e[1]


def sample_discrete_gaussian(sigma: float, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
    """``n`` draws of the discrete Gaussian on ℤ, P(j) ∝ exp(−j²/(2σ²)), as integer-valued doubles.

    Canonne, Kamath & Steinke (2020), Algorithm 3: propose Y from the discrete Laplace with t = ⌊σ⌋ + 1 and accept
    it with probability exp(−(|Y| − σ²/t)²/(2σ²)); here proposals are drawn in batches and the accepted ones kept
    in order, so the number of batches (and the time) does not depend on any data.
    """
    t = math.floor(sigma) + 1.0
    out = np.empty(n)
    filled = 0
    while filled < n:
        need = n - filled
        batch = int(need * 1.6) + 64
        y = sample_discrete_laplace(t, batch, generator)
        shift = np.abs(y) - sigma * sigma / t
        accept = generator.random(batch) < np.exp(-(shift * shift) / (2.0 * sigma * sigma))
        kept = y[accept][:need]
        out[filled : filled + kept.size] = kept
        filled += kept.size
    return out


# -- mechanisms ----------------------------------------------------------------------------------------------
def _dim_shape(dim: Any, owner: str) -> tuple[int, ...]:
    if dim is None:
        return ()
    return (check_positive_int(dim, "dim", owner),)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class DiscreteLaplace(LatticeMechanism):
    """Discrete Laplace noise on the lattice Λ·ℤ (per coordinate): P(w = jΛ) ∝ exp(−|j|Λ/b).

    Parameters
    ----------
    scale : float
        b > 0, in the units of the data (the lattice parameter is t = b/Λ steps).
    grid_exponent : int, optional
        k with Λ = 2^k; default the smallest Λ ≥ b/2^12 (:data:`DEFAULT_GRID_BITS`).
    dimension : int, optional
        Number of independent coordinates m (None for a scalar mechanism).

    Notes
    -----
    With q = e^{−Λ/b}: P(w = jΛ) = (1 − q)/(1 + q)·q^{|j|} and Var w = 2qΛ²/(1 − q)². Added to a value rounded to
    the lattice, a shift of s lattice units changes the log-probability of any output by at most sΛ/b, so the
    release is ε-DP with ε = (ℓ1 lattice sensitivity)·Λ/b (:func:`discrete_laplace_epsilon`).

    Examples
    --------
    >>> w = DiscreteLaplace(scale=1.0, grid_exponent=-3)
    >>> w.grid, round(w.pmf(0.0), 6)
    (0.125, 0.062419)
    >>> x = w.sample(5, rng=1); bool(np.all(x / w.grid == np.rint(x / w.grid)))
    True
    """

    scale: float
    grid_exponent: Any = None
    dimension: Any = None

    def __post_init__(self) -> None:
        owner = "DiscreteLaplace"
        b = check_positive(self.scale, "scale", owner)
        object.__setattr__(self, "scale", b)
        object.__setattr__(self, "grid_exponent", check_grid_exponent(self.grid_exponent, b, owner))
        _dim_shape(self.dimension, owner)

    @property
    def steps(self) -> float:
        """t = b/Λ, the scale in lattice steps."""
        return self.scale / self.grid

    def _units(self, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
        total = n * self.dim
        return sample_discrete_laplace(self.steps, total, generator).reshape((n,) + self.shape)

    def _log_unnormalised(self, j: NDArray[np.float64]) -> NDArray[np.float64]:
        return -np.abs(j) / self.steps

    def _log_normaliser(self) -> float:
        q = math.exp(-1.0 / self.steps)
        return math.log1p(q) - math.log1p(-q)

    def _variance(self) -> float:
        q = math.exp(-1.0 / self.steps)
        return 2.0 * q * self.grid**2 / (-math.expm1(-1.0 / self.steps)) ** 2

    def entropy(self) -> float:
        """Shannon entropy of the lattice distribution in nats."""
        q = math.exp(-1.0 / self.steps)
        per = self._log_normaliser() + (2.0 * q / (1.0 - q * q)) / self.steps
        return per * self.dim

    def describe(self) -> dict[str, Any]:
        return {
            "family": "discrete-laplace",
            "scale": self.scale,
            "grid": self.grid,
            "dimension": self.dimension,
        }


def _dg_log_normaliser(s: float) -> float:
    """log Σ_j exp(−j²/(2s²)): direct sum for s < 8, else the Poisson-summation value √(2π)s (exact in double)."""
    if s >= 8.0:
        return math.log(math.sqrt(2.0 * math.pi) * s)
    j = np.arange(-math.ceil(40 * s) - 1, math.ceil(40 * s) + 2, dtype=float)
    return float(np.log(np.sum(np.exp(-(j * j) / (2.0 * s * s)))))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class DiscreteGaussian(LatticeMechanism):
    """Discrete Gaussian noise on the lattice Λ·ℤ (per coordinate): P(w = jΛ) ∝ exp(−(jΛ)²/(2σ²)).

    Parameters
    ----------
    sigma : float
        σ > 0 in the units of the data (s = σ/Λ lattice steps).
    grid_exponent : int, optional
        k with Λ = 2^k; default the smallest Λ ≥ σ/2^12.
    dimension : int, optional
        Number of independent coordinates m (None for a scalar mechanism).

    Notes
    -----
    The variance is at most σ² (Canonne, Kamath & Steinke 2020, Corollary 9) and equals σ² to double precision
    once s ≥ 8. Guarantees: :func:`discrete_gaussian_delta` (exact, scalar) and :func:`zcdp_delta` with
    ρ = (Δ/Λ)²/(2s²) (vectors).

    Examples
    --------
    >>> w = DiscreteGaussian(sigma=2.0, grid_exponent=0)
    >>> round(w.pmf(0.0), 6), round(w.covariance(), 6)
    (0.199471, 4.0)
    """

    sigma: float
    grid_exponent: Any = None
    dimension: Any = None

    def __post_init__(self) -> None:
        owner = "DiscreteGaussian"
        s = check_positive(self.sigma, "sigma", owner)
        object.__setattr__(self, "sigma", s)
        object.__setattr__(self, "grid_exponent", check_grid_exponent(self.grid_exponent, s, owner))
        _dim_shape(self.dimension, owner)

    @property
    def steps(self) -> float:
        """s = σ/Λ, the standard deviation parameter in lattice steps."""
        return self.sigma / self.grid

    def _units(self, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
        total = n * self.dim
        return sample_discrete_gaussian(self.steps, total, generator).reshape((n,) + self.shape)

    def _log_unnormalised(self, j: NDArray[np.float64]) -> NDArray[np.float64]:
        s = self.steps
        return -(j * j) / (2.0 * s * s)

    def _log_normaliser(self) -> float:
        return _dg_log_normaliser(self.steps)

    def _variance(self) -> float:
        s = self.steps
        if s >= 8.0:
            return self.sigma**2
        j = np.arange(-math.ceil(40 * s) - 1, math.ceil(40 * s) + 2, dtype=float)
        w = np.exp(-(j * j) / (2.0 * s * s))
        return float(np.sum(j * j * w) / np.sum(w)) * self.grid**2

    def entropy(self) -> float:
        """Shannon entropy of the lattice distribution in nats."""
        s = self.steps
        return (self._log_normaliser() + self._variance() / self.grid**2 / (2.0 * s * s)) * self.dim

    def describe(self) -> dict[str, Any]:
        return {
            "family": "discrete-gaussian",
            "sigma": self.sigma,
            "grid": self.grid,
            "dimension": self.dimension,
        }


# -- guarantees ----------------------------------------------------------------------------------------------
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
    log_z = _dg_log_normaliser(s)
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
