"""Gaussian noise with any positive-definite covariance.

The Fisher-information-optimal noise with unbounded support (Farokhi & Sandberg, Corollary 6) is a zero-mean
Gaussian whose covariance is shaped to the query, Σ ∝ (CCᵀ)^{1/2}; this class samples any such Σ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from .._validation import as_finite_array, as_matrix, check_positive, check_positive_int, readonly
from ..exceptions import DimensionError
from ._base import Mechanism

__all__ = ["Gaussian"]

_SMALL = 8


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Gaussian(Mechanism):
    """Gaussian noise N(loc, cov).

    Parameters
    ----------
    cov : float or array_like
        A variance > 0 (scalar mechanism) or an ``(m, m)`` symmetric positive-definite matrix.
    loc : float or array_like, default 0
        Mean of the noise; broadcast to the mechanism's shape.

    Notes
    -----
    Fisher information Σ⁻¹; quality Q = Tr Σ + ‖loc‖²; entropy ½ log det(2πeΣ) nats.

    Examples
    --------
    >>> from privnoise.mechanisms import Gaussian
    >>> g = Gaussian(cov=[[2.0, 0.5], [0.5, 1.0]])
    >>> g.shape, g.second_moment()
    ((2,), 3.0)
    >>> Gaussian.from_std(2.0).fisher_information()
    0.25
    """

    cov: Any
    loc: Any = 0.0
    _factor: NDArray[np.float64] = field(init=False, repr=False)
    _precision: NDArray[np.float64] = field(init=False, repr=False)
    _logdet: float = field(init=False, repr=False)
    _shape: tuple[int, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        owner = "Gaussian"
        if np.ndim(self.cov) == 0 and not isinstance(self.cov, str | bytes):
            variance = check_positive(self.cov, "cov", owner)
            matrix = np.array([[variance]])
            shape: tuple[int, ...] = ()
            cov: NDArray[np.float64] = np.array(variance)
        else:
            matrix = as_matrix(self.cov, "cov", owner, positive_definite=True)
            shape = (matrix.shape[0],)
            cov = matrix
        loc = as_finite_array(self.loc, "loc", owner, ndim=(0, 1))
        if loc.ndim == 1 and loc.shape != shape:
            raise DimensionError(f"`loc` of `{owner}` must have shape {shape}; got {loc.shape}.")
        loc = np.broadcast_to(loc, shape).astype(float, copy=True)
        factor = np.linalg.cholesky(matrix)
        precision = np.linalg.inv(matrix)
        precision = (precision + precision.T) / 2.0
        object.__setattr__(self, "cov", readonly(cov))
        object.__setattr__(self, "loc", readonly(loc))
        object.__setattr__(self, "_factor", readonly(factor))
        object.__setattr__(self, "_precision", readonly(precision))
        object.__setattr__(self, "_logdet", float(2.0 * np.sum(np.log(np.diag(factor)))))
        object.__setattr__(self, "_shape", shape)

    @classmethod
    def from_std(cls, sigma: float, dim: int | None = None, *, loc: ArrayLike = 0.0) -> Gaussian:
        """Isotropic Gaussian with standard deviation ``sigma`` (scalar when ``dim`` is None)."""
        s = check_positive(sigma, "sigma", "Gaussian")
        if dim is None:
            return cls(cov=s * s, loc=loc)
        m = check_positive_int(dim, "dim", "Gaussian")
        return cls(cov=s * s * np.eye(m), loc=loc)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def std(self) -> Any:
        """Standard deviation (scalar mechanism) or per-coordinate standard deviations."""
        if not self._shape:
            return math.sqrt(float(self.cov))
        return readonly(np.sqrt(np.diag(self.cov)))

    def _sample(self, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
        if not self._shape:
            z = generator.standard_normal(n)
            z *= self._factor[0, 0]
            if self.loc.item() != 0.0:
                z += self.loc.item()
            return z
        z = generator.standard_normal((n, self.dim))
        if np.count_nonzero(self._factor - np.diag(np.diag(self._factor))) == 0:
            z *= np.diag(self._factor)
        elif self.dim <= _SMALL:
            # z Lᵀ column by column: for small m this beats a threaded BLAS call on a tall-skinny product
            out = np.empty_like(z)
            for i in range(self.dim):  # loop over coordinates, not samples
                col = out[:, i]
                np.multiply(z[:, 0], self._factor[i, 0], out=col)
                for j in range(1, i + 1):
                    col += self._factor[i, j] * z[:, j]
            z = out
        else:
            z = z @ self._factor.T
        if np.any(self.loc != 0.0):
            z += self.loc
        return z

    def _logpdf(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        y = x - self.loc
        if not self._shape:
            quad = y * y * self._precision[0, 0]
        else:
            # Density 0 at a point with an infinite coordinate (the quadratic form would give inf − inf).
            finite = np.isfinite(y).all(axis=-1)
            y = np.where(finite[..., None], y, 0.0)
            quad = np.where(finite, np.einsum("...i,ij,...j->...", y, self._precision, y), np.inf)
        return -0.5 * (quad + self._logdet + self.dim * math.log(2.0 * math.pi))

    def _score(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        y = x - self.loc
        if not self._shape:
            return -y * self._precision[0, 0]
        return -(y @ self._precision)

    def cdf(self, x: ArrayLike, /) -> Any:
        """Distribution function of a scalar Gaussian."""
        if self._shape:
            raise DimensionError("`cdf` of `Gaussian` is defined for scalar mechanisms only.")
        arr = self._points(x, "cdf")
        out = special.ndtr((arr - self.loc) / self._factor[0, 0])
        return float(out) if np.ndim(out) == 0 else out

    def mean(self) -> Any:
        return float(self.loc) if not self._shape else self.loc

    def covariance(self) -> Any:
        return float(self.cov) if not self._shape else self.cov

    def fisher_information(self) -> Any:
        return float(self._precision[0, 0]) if not self._shape else self._precision

    def entropy(self) -> float:
        return 0.5 * (self._logdet + self.dim * math.log(2.0 * math.pi * math.e))

    def describe(self) -> dict[str, Any]:
        return {"family": "gaussian", "loc": self.loc.tolist(), "cov": self.cov.tolist()}
