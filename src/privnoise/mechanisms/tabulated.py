"""Scalar noise with a tabulated density: piecewise linear or piecewise constant on a grid.

The numerical optimal-noise solvers (:func:`privnoise.dp.optimal_noise_lp`,
:func:`privnoise.fisher.minimum_fisher_noise`) return their solution as a :class:`TabulatedDensity`. Sampling is exact for the tabulated law: inverse CDF on the table, where the CDF is
piecewise quadratic (linear density) or piecewise linear (constant density), vectorised over draws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, readonly
from ..exceptions import DimensionError, InvalidParameterError
from ._base import Mechanism

__all__ = ["TabulatedDensity"]

Interpolation = Literal["linear", "constant"]


def _x_log_x_mean(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """(1/(b−a))∫_a^b y log y dy, the mean of y log y over [a, b] (a, b ≥ 0), stable when a ≈ b."""

    def antiderivative(y: NDArray[np.float64]) -> NDArray[np.float64]:
        safe = np.where(y > 0, y, 1.0)
        return np.where(y > 0, y * y * (0.5 * np.log(safe) - 0.25), 0.0)

    m = 0.5 * (a + b)
    d = b - a
    close = np.abs(d) <= 1e-4 * np.maximum(m, 1e-300)
    safe_d = np.where(close, 1.0, d)
    wide = (antiderivative(b) - antiderivative(a)) / safe_d
    safe_m = np.where(m > 0, m, 1.0)
    narrow = np.where(m > 0, m * np.log(safe_m) + d * d / (24.0 * safe_m), 0.0)
    return np.where(close, narrow, wide)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class TabulatedDensity(Mechanism):
    """Scalar noise whose density is given by a table on a grid.

    Parameters
    ----------
    grid : array_like
        Strictly increasing finite nodes x₀ < … < x_K (K ≥ 1). The support is [x₀, x_K].
    values : array_like
        Non-negative finite density values, not all zero: at the nodes (K + 1 values) for
        ``interpolation="linear"``, on the cells (K values) for ``"constant"``. They are normalised so that the
        density integrates to 1; the stored ``values`` are the normalised ones.
    interpolation : {"linear", "constant"}
        Piecewise-linear density between nodes, or piecewise-constant on cells.

    Notes
    -----
    Moments are exact for the tabulated law (three-point Gauss–Legendre per cell, exact for these polynomials);
    the entropy is exact per cell. The Fisher information ∫g′²/g is exact for a linear table: Σ s_j log(b_j/a_j)
    over cells with slope s_j and end values a_j, b_j; it is infinite (``math.inf``) when the density jumps (a
    constant table, or a linear table that does not vanish at both ends) or rises linearly from zero, and the
    noise is then useless for Fisher-information privacy. A table has bounded support, so it is never
    ε-differentially or Lipschitz private (its log density is −∞ outside the grid).

    Examples
    --------
    >>> t = TabulatedDensity(grid=[-1.0, 0.0, 1.0], values=[0.0, 1.0, 0.0])   # triangular density
    >>> t.pdf(0.0), t.cdf(0.0), round(t.covariance(), 12)
    (1.0, 0.5, 0.166666666667)
    >>> t.sample(3, rng=0).shape
    (3,)
    """

    grid: Any
    values: Any
    interpolation: Interpolation = "linear"
    _cum: NDArray[np.float64] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        owner = "TabulatedDensity"
        if self.interpolation not in ("linear", "constant"):
            raise InvalidParameterError(
                f"`interpolation` of `{owner}` must be 'linear' or 'constant'; got {self.interpolation!r}."
            )
        x = as_finite_array(self.grid, "grid", owner, ndim=1)
        if x.size < 2:
            raise DimensionError(f"`grid` of `{owner}` must have at least 2 nodes; got {x.size}.")
        h = np.diff(x)
        if np.any(h <= 0):
            raise InvalidParameterError(f"`grid` of `{owner}` must be strictly increasing.")
        v = as_finite_array(self.values, "values", owner, ndim=1)
        expected = x.size if self.interpolation == "linear" else x.size - 1
        if v.size != expected:
            raise DimensionError(
                f"`values` of `{owner}` must have {expected} entries for interpolation "
                f"{self.interpolation!r} on a grid of {x.size} nodes; got {v.size}."
            )
        if np.any(v < 0):
            raise InvalidParameterError(f"`values` of `{owner}` must be >= 0; got minimum {v.min():g}.")
        cells = 0.5 * (v[:-1] + v[1:]) * h if self.interpolation == "linear" else v * h
        total = float(cells.sum())
        if not total > 0 or not math.isfinite(total):
            raise InvalidParameterError(f"`values` of `{owner}` must have a positive finite integral.")
        v = v / total
        cum = np.concatenate(([0.0], np.cumsum(cells / total)))
        cum[-1] = 1.0
        object.__setattr__(self, "grid", readonly(x))
        object.__setattr__(self, "values", readonly(v))
        object.__setattr__(self, "_cum", readonly(cum))

    @property
    def shape(self) -> tuple[int, ...]:
        return ()

    # -- cell helpers ---------------------------------------------------------------------------------
    def _ends(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Density values at the left and right end of each cell."""
        if self.interpolation == "linear":
            return self.values[:-1], self.values[1:]
        return self.values, self.values

    def _cell(self, x: NDArray[np.float64]) -> tuple[NDArray[np.intp], NDArray[np.bool_]]:
        inside = (x >= self.grid[0]) & (x <= self.grid[-1])
        j = np.clip(np.searchsorted(self.grid, x, side="right") - 1, 0, self.grid.size - 2)
        return j, inside

    def _density(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        j, inside = self._cell(x)
        a, b = self._ends()
        t = np.clip(x - self.grid[j], 0.0, None)
        h = self.grid[j + 1] - self.grid[j]
        p = a[j] + (b[j] - a[j]) * np.clip(t / h, 0.0, 1.0)
        return np.where(inside, p, 0.0)

    # -- Mechanism interface ------------------------------------------------------------------------
    def _sample(self, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
        u = generator.random(n)
        j = np.clip(np.searchsorted(self._cum, u, side="right") - 1, 0, self.grid.size - 2)
        m = u - self._cum[j]  # mass to cover inside cell j
        h = self.grid[j + 1] - self.grid[j]
        a_all, b_all = self._ends()
        a, b = a_all[j], b_all[j]
        if self.interpolation == "constant":
            t = m / np.where(a > 0, a, np.inf)
        else:
            # F(t) = a t + s t²/2 with s = (b − a)/h; the stable root t = 2m / (a + √(a² + 2 s m)).
            s = (b - a) / h
            disc = np.sqrt(np.maximum(a * a + 2.0 * s * m, 0.0))
            denom = a + disc
            t = np.where(denom > 0, 2.0 * m / np.where(denom > 0, denom, 1.0), 0.0)
        return self.grid[j] + np.clip(t, 0.0, h)

    def _logpdf(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        p = self._density(x)
        with np.errstate(divide="ignore"):
            return np.log(p)

    def _score(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        if self.interpolation == "constant":
            return np.zeros_like(x)
        j, inside = self._cell(x)
        a, b = self._ends()
        slope = (b[j] - a[j]) / (self.grid[j + 1] - self.grid[j])
        p = self._density(x)
        ok = inside & (p > 0)
        return np.where(ok, slope / np.where(ok, p, 1.0), 0.0)

    def cdf(self, x: ArrayLike, /) -> Any:
        """Distribution function (exact for the table)."""
        arr = self._points(x, "cdf")
        j, _ = self._cell(arr)
        a, b = self._ends()
        h = self.grid[j + 1] - self.grid[j]
        t = np.clip(arr - self.grid[j], 0.0, h)
        s = (b[j] - a[j]) / h
        out = self._cum[j] + a[j] * t + 0.5 * s * t * t
        out = np.where(arr < self.grid[0], 0.0, np.where(arr >= self.grid[-1], 1.0, np.clip(out, 0.0, 1.0)))
        return float(out) if np.ndim(out) == 0 else out

    def _moment(self, k: int) -> float:
        # Three-point Gauss–Legendre per cell: exact for (linear density) × (polynomial of degree ≤ 4).
        nodes, weights = np.polynomial.legendre.leggauss(3)
        lo, hi = self.grid[:-1], self.grid[1:]
        half = 0.5 * (hi - lo)
        pts = (lo + half)[:, None] + half[:, None] * nodes[None, :]
        a, b = self._ends()
        frac = (pts - lo[:, None]) / (2.0 * half[:, None])
        dens = a[:, None] + (b - a)[:, None] * frac
        return float(np.sum(half[:, None] * weights[None, :] * dens * pts**k))

    def mean(self) -> float:
        return self._moment(1)

    def covariance(self) -> float:
        mu = self._moment(1)
        return max(self._moment(2) - mu * mu, 0.0)

    def second_moment(self) -> float:
        return self._moment(2)

    def fisher_information(self) -> float:
        """∫ g′²/g, exact for the table (``math.inf`` when the density jumps or rises linearly from 0)."""
        if self.interpolation == "constant":
            return math.inf
        v = self.values
        if v[0] > 0 or v[-1] > 0:
            return math.inf
        a, b = v[:-1], v[1:]
        h = np.diff(self.grid)
        flat = a == b
        if np.any(~flat & ((a == 0) | (b == 0)) & ~((a == 0) & (b == 0))):
            return math.inf
        live = ~flat & (a > 0) & (b > 0)
        s = (b[live] - a[live]) / h[live]
        return float(np.sum(s * (np.log(b[live]) - np.log(a[live]))))

    def entropy(self) -> float:
        a, b = self._ends()
        h = np.diff(self.grid)
        if self.interpolation == "constant":
            safe = np.where(a > 0, a, 1.0)
            return float(-np.sum(h * np.where(a > 0, a * np.log(safe), 0.0)))
        return float(-np.sum(h * _x_log_x_mean(a, b)))

    def support(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return readonly(np.array(self.grid[0])), readonly(np.array(self.grid[-1]))

    def describe(self) -> dict[str, Any]:
        return {
            "family": "tabulated",
            "interpolation": self.interpolation,
            "grid": self.grid.tolist(),
            "values": self.values.tolist(),
        }
