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

from .._validation import as_finite_array, as_matrix, check_positive, check_positive_int, readonly
from ..exceptions import DimensionError, InvalidParameterError
from ..linalg import DenseForm, IsotropicForm, SymmetricForm
from ._base import Mechanism
from .parameters import LISTED
from .protocol import GridFiller

__all__ = ["Gaussian"]

_SMALL = 8


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Gaussian(Mechanism):
    """Gaussian noise N(loc, cov).

    Parameters
    ----------
    cov : float, array_like or SymmetricForm
        A variance > 0 (scalar mechanism), an ``(m, m)`` symmetric positive-definite matrix, or a structured
        positive-definite form from :mod:`privnoise.linalg` (e.g. ``IsotropicForm(m, σ²)``), which is never
        expanded: the isotropic noise of an identity release over 10⁸ records takes O(1) memory.
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
    >>> big = Gaussian.from_std(0.5, 10**8)
    >>> big.second_moment(), big.information_form().max_diagonal()
    (25000000.0, 4.0)
    """

    cov: Any
    loc: Any = 0.0
    _form: SymmetricForm = field(init=False, repr=False)
    _factor: NDArray[np.float64] | None = field(init=False, repr=False)
    _precision: SymmetricForm = field(init=False, repr=False)
    _logdet: float = field(init=False, repr=False)
    _shape: tuple[int, ...] = field(init=False, repr=False)
    _centered: bool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        owner = "Gaussian"
        factor: NDArray[np.float64] | None = None
        if isinstance(self.cov, SymmetricForm):
            form = self.cov
            if not form.is_invertible(rtol=0.0) or form.eigenvalue_range()[0] <= 0:
                raise InvalidParameterError(f"`cov` of `{owner}` must be positive definite.")
            shape: tuple[int, ...] = (form.size,)
            cov: Any = form
        elif np.ndim(self.cov) == 0 and not isinstance(self.cov, str | bytes):
            variance = check_positive(self.cov, "cov", owner)
            form = IsotropicForm(1, variance)
            shape = ()
            cov = readonly(np.array(variance))
            factor = np.array([[math.sqrt(variance)]])
        else:
            matrix = as_matrix(self.cov, "cov", owner, positive_definite=True)
            shape = (matrix.shape[0],)
            cov = readonly(matrix)
            form = DenseForm(matrix, check=False)
            factor = readonly(np.linalg.cholesky(matrix))
        loc, centered = _location(self.loc, shape, owner)
        object.__setattr__(self, "cov", cov)
        object.__setattr__(self, "loc", loc)
        object.__setattr__(self, "_form", form)
        object.__setattr__(self, "_factor", factor)
        object.__setattr__(self, "_precision", form.inverse())
        object.__setattr__(self, "_logdet", form.log_determinant())
        object.__setattr__(self, "_shape", shape)
        object.__setattr__(self, "_centered", centered)

    @classmethod
    def from_std(cls, sigma: float, dim: int | None = None, *, loc: ArrayLike = 0.0) -> Gaussian:
        """Isotropic Gaussian with standard deviation ``sigma`` (scalar when ``dim`` is None; covariance σ²I kept
        as an :class:`~privnoise.linalg.IsotropicForm` otherwise)."""
        s = check_positive(sigma, "sigma", "Gaussian")
        if dim is None:
            return cls(cov=s * s, loc=loc)
        m = check_positive_int(dim, "dim", "Gaussian")
        return cls(cov=IsotropicForm(m, s * s), loc=loc)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def std(self) -> Any:
        """Standard deviation (scalar mechanism) or per-coordinate standard deviations."""
        if not self._shape:
            return math.sqrt(float(self.cov))
        return readonly(np.sqrt(self._form.diagonal()))

    def _sample(self, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
        if not self._shape:
            z = generator.standard_normal(n)
            z *= math.sqrt(float(self.cov))
            if not self._centered:
                z += self.loc.item()
            return z
        z = generator.standard_normal((n, self.dim))
        if self._factor is not None and self.dim <= _SMALL and not self._form.is_diagonal:
            # z Lᵀ column by column: for small m this beats a threaded BLAS call on a tall-skinny product
            out = np.empty_like(z)
            for i in range(self.dim):  # loop over coordinates, not samples
                col = out[:, i]
                np.multiply(z[:, 0], self._factor[i, 0], out=col)
                for j in range(1, i + 1):
                    col += self._factor[i, j] * z[:, j]
            z = out
        else:
            z = self._form.factor_apply(z)
        if not self._centered:
            z += self.loc
        return z

    def grid_filler(self, generator: np.random.Generator, exponent: int) -> tuple[GridFiller, int] | None:
        """Centred noise with independent coordinates: standard normals times σ_i·2^−k (exactly σ_i z scaled); None
        for a subclass that draws otherwise (its own ``_sample``)."""
        if self._sample.__func__ is not _GAUSSIAN_SAMPLE:  # type: ignore[attr-defined]
            return None
        if not self._centered or not (not self._shape or self._form.is_diagonal):
            return None
        low, high = self._form.eigenvalue_range()  # the smallest and largest variance (diagonal form)
        factor: Any = math.ldexp(math.sqrt(low), -exponent)
        if high != low:
            factor = np.ldexp(np.sqrt(np.asarray(self._form.diagonal(), dtype=np.float64)), -exponent)
        width = 1 if isinstance(factor, float) else len(factor)

        def fill(buffer: NDArray[np.float64], start: int) -> None:
            generator.standard_normal(out=buffer)
            if width == 1:
                if factor != 1.0:
                    buffer *= factor
            else:
                buffer.reshape(-1, width)[...] *= factor

        return fill, width

    def _logpdf(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        y = x - self.loc
        if not self._shape:
            quad = y * y * self._precision.max_diagonal()
        else:
            # Density 0 at a point with an infinite coordinate (the quadratic form would give inf − inf).
            finite = np.isfinite(y).all(axis=-1)
            y = np.where(finite[..., None], y, 0.0)
            quad = np.where(finite, self._precision.quadratic(y), np.inf)
        return -0.5 * (quad + self._logdet + self.dim * math.log(2.0 * math.pi))

    def _score(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        y = x - self.loc
        if not self._shape:
            return -y * self._precision.max_diagonal()
        return -self._precision.matvec(y)

    def cdf(self, x: ArrayLike, /) -> Any:
        """Distribution function of a scalar Gaussian."""
        if self._shape:
            raise DimensionError("`cdf` of `Gaussian` is defined for scalar mechanisms only.")
        from scipy import special

        arr = self._points(x, "cdf")
        out = special.ndtr((arr - self.loc) / math.sqrt(float(self.cov)))
        return float(out) if np.ndim(out) == 0 else out

    def mean(self) -> Any:
        return float(self.loc) if not self._shape else self.loc

    def covariance(self) -> Any:
        if not self._shape:
            return float(self.cov)
        return self.cov if isinstance(self.cov, np.ndarray) else self._form.dense()

    def covariance_form(self) -> SymmetricForm:
        return self._form

    def information_form(self) -> SymmetricForm:
        return self._precision

    def noise_scale(self) -> float:
        return math.sqrt(self._form.eigenvalue_range()[0])

    def fisher_information(self) -> Any:
        if not self._shape:
            return self._precision.max_diagonal()
        return self._precision.dense()

    def second_moment(self) -> float:
        shift = 0.0 if self._centered else float(np.dot(np.ravel(self.loc), np.ravel(self.loc)))
        return self._form.trace() + shift

    def entropy(self) -> float:
        return 0.5 * (self._logdet + self.dim * math.log(2.0 * math.pi * math.e))

    def marginal(self, start: int, stop: int) -> Gaussian | None:
        if not self._shape:
            return None
        block = self._form.principal(start, stop)
        if block is None:
            return None
        loc = 0.0 if self._centered else np.asarray(self.loc)[start:stop]
        return Gaussian(cov=block, loc=loc)

    @property
    def identical_coordinates(self) -> bool:
        """A vector Gaussian with covariance s·I and a constant mean (a broadcast one, or centred)."""
        if not self._shape or not self._form.is_diagonal:
            return False
        low, high = self._form.eigenvalue_range()
        return low == high and (self._centered or self.loc.strides == (0,))

    def describe(self) -> dict[str, Any]:
        if isinstance(self.cov, SymmetricForm) and self.dim > LISTED:
            loc: Any = 0.0 if self._centered else np.asarray(self.loc).tolist()
            return {"family": "gaussian", "loc": loc, "cov": self.cov.as_dict()}
        return {"family": "gaussian", "loc": np.asarray(self.loc).tolist(), "cov": np.asarray(self.covariance()).tolist()}


_GAUSSIAN_SAMPLE = vars(Gaussian)["_sample"]


def _location(value: Any, shape: tuple[int, ...], owner: str) -> tuple[NDArray[np.float64], bool]:
    """The mean as a read-only array of ``shape`` (a broadcast view, O(1) memory, when it is a constant)."""
    loc = as_finite_array(value, "loc", owner, ndim=(0, 1))
    if loc.ndim == 1 and loc.shape != shape:
        raise DimensionError(f"`loc` of `{owner}` must have shape {shape}; got {loc.shape}.")
    if loc.ndim == 0:
        out = np.broadcast_to(np.float64(loc), shape) if shape else readonly(loc.astype(float))
        return out, float(loc) == 0.0
    return readonly(loc.astype(float)), not np.any(loc)
