"""Integer-lattice noise: discrete Laplace and discrete Gaussian on the grid Λ·ℤ, Λ = 2^k, and their exact DP.

Noise on a power-of-two lattice added to an input rounded to the same lattice gives outputs that are exact
multiples of Λ, computed with exact (integer-valued) floating-point arithmetic: no low-order bit of the output
depends on the true value (Mironov 2012; SECURITY.md, requirement 2). Hardened releases built on these samplers
live in :mod:`privnoise.mechanisms.hardening`.

* :class:`DiscreteLaplace` — P(w = jΛ) ∝ exp(−|j|Λ/b) per coordinate; drawn as a fair sign times a geometric
  variable (the floor of a scaled exponential), the pair (−, 0) rejected.
* :class:`DiscreteGaussian` — P(w = jΛ) ∝ exp(−(jΛ)²/(2σ²)); drawn by exact rejection from a rounded continuous
  Gaussian of a slightly larger scale (:mod:`privnoise.mechanisms.lattice_laws`; nearly every proposal is kept at
  the default grid), vectorised in cache-sized chunks.

The lattice and the sensitivity a rounded value leaves
(:func:`~privnoise.mechanisms.lattice_grid.lattice_sensitivity`) are in :mod:`privnoise.mechanisms.lattice_grid`,
the samplers on ℤ in :mod:`privnoise.mechanisms.lattice_laws`, and the guarantees
(:func:`~privnoise.dp.discrete_laplace_epsilon`, :func:`~privnoise.dp.discrete_gaussian_delta`,
:func:`~privnoise.dp.discrete_gaussian_epsilon`, :func:`~privnoise.dp.zcdp_delta`,
:func:`~privnoise.dp.zcdp_epsilon`) in :mod:`privnoise.dp.lattice_privacy`, where the privacy profiles of
:mod:`privnoise.dp.profile` state them (the noise families import nothing from :mod:`privnoise.dp`);
:mod:`privnoise.dp` exports them all.

Floating-point caveat
---------------------
The integer noise is produced from floating-point exponential, uniform and normal variates (not by the
exact-arithmetic samplers of Canonne, Kamath & Steinke); the rejection steps compare exactly bounded ratios. Its probability mass function therefore equals the ideal
one only up to relative errors of order 2⁻⁵⁰ per lattice point, and the tails are truncated where the floating-point
variates end (beyond ≈ 40 scales, ideal mass below e⁻⁴⁰ ≈ 4·10⁻¹⁸). The guarantees below are those of the ideal
distributions; the discrepancy acts like an additional δ of that order, which privnoise does not add to the reported
numbers. Because the noise does not depend on the input and the output is an exact lattice point, the porosity
attack of Mironov (2012) does not apply.

References
----------
.. [1] C. Canonne, G. Kamath, T. Steinke, "The discrete Gaussian for differential privacy", NeurIPS 2020
   (Theorem 7: exact δ(ε) of the discrete Gaussian; Theorem 14: multivariate zCDP; Corollary 13: zCDP → (ε, δ);
   Algorithm 3: the reference sampler, :func:`~privnoise.mechanisms.lattice_laws.sample_discrete_gaussian_cks`).
.. [2] I. Mironov, "On significance of the least significant bits for differential privacy", CCS 2012.
.. [3] S. Inusah, T. Kozubowski, "A discrete analogue of the Laplace distribution", J. Stat. Plan. Inference 2006.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_positive, check_positive_int
from .lattice import LatticeMechanism
from .lattice_grid import check_grid_exponent
from .lattice_laws import discrete_gaussian_log_normaliser, sample_discrete_gaussian, sample_discrete_laplace

__all__ = ["DiscreteGaussian", "DiscreteLaplace"]


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
        k with Λ = 2^k; default the smallest Λ ≥ b/2^12 (:data:`~privnoise.dp.DEFAULT_GRID_BITS`).
    dimension : int, optional
        Number of independent coordinates m (None for a scalar mechanism).

    Notes
    -----
    With q = e^{−Λ/b}: P(w = jΛ) = (1 − q)/(1 + q)·q^{|j|} and Var w = 2qΛ²/(1 − q)². Added to a value rounded to
    the lattice, a shift of s lattice units changes the log-probability of any output by at most sΛ/b, so the
    release is ε-DP with ε = (ℓ1 lattice sensitivity)·Λ/b (:func:`~privnoise.dp.discrete_laplace_epsilon`).

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

    def draw_units(self, buffer: NDArray[np.float64], generator: np.random.Generator) -> None:
        if self._units.__func__ is not _LAPLACE_UNITS:  # type: ignore[attr-defined]  # a subclass draws otherwise
            return LatticeMechanism.draw_units(self, buffer, generator)
        sample_discrete_laplace(self.steps, buffer.size, generator, out=buffer)
        return None

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


_LAPLACE_UNITS = vars(DiscreteLaplace)["_units"]


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
    once s ≥ 8. Guarantees: :func:`~privnoise.dp.discrete_gaussian_delta` (exact, scalar) and
    :func:`~privnoise.dp.zcdp_delta` with
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

    def draw_units(self, buffer: NDArray[np.float64], generator: np.random.Generator) -> None:
        if self._units.__func__ is not _GAUSSIAN_UNITS:  # type: ignore[attr-defined]  # a subclass draws otherwise
            return LatticeMechanism.draw_units(self, buffer, generator)
        sample_discrete_gaussian(self.steps, buffer.size, generator, out=buffer)
        return None

    def _log_unnormalised(self, j: NDArray[np.float64]) -> NDArray[np.float64]:
        s = self.steps
        return -(j * j) / (2.0 * s * s)

    def _log_normaliser(self) -> float:
        return discrete_gaussian_log_normaliser(self.steps)

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


_GAUSSIAN_UNITS = vars(DiscreteGaussian)["_units"]
