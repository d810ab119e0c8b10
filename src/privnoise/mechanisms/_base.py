"""The interface every noise mechanism implements, and helpers shared by the families."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, check_positive_int, describe
from ..exceptions import DimensionError, InvalidParameterError
from ..random import RNGLike

__all__ = ["Mechanism", "sample_shape"]


def sample_shape(size: int | tuple[int, ...] | None, owner: str) -> tuple[int, ...]:
    """Normalise a ``size`` argument (None, an int or a tuple of ints) to a shape tuple."""
    if size is None:
        return ()
    if isinstance(size, int | np.integer) and not isinstance(size, bool):
        return (check_positive_int(size, "size", owner, minimum=0),)
    if isinstance(size, tuple) and all(
        isinstance(s, int | np.integer) and not isinstance(s, bool) for s in size
    ):
        return tuple(check_positive_int(s, "size", owner, minimum=0) for s in size)
    raise InvalidParameterError(
        f"`size` of `{owner}` must be None, an int >= 0 or a tuple of them; got {size!r}."
    )


class Mechanism:
    """Additive noise distribution: ``release = f(x) + w`` with ``w`` drawn from the mechanism.

    Subclasses are frozen dataclasses. ``shape`` is ``()`` for a scalar mechanism and ``(m,)`` for a vector one;
    ``sample(size)`` returns an array of shape ``size + shape``. Scalar mechanisms return floats from
    ``covariance()`` and ``fisher_information()``; vector ones return ``(m, m)`` read-only matrices.
    """

    __slots__ = ()

    # -- to be provided by each family ------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        raise NotImplementedError

    def _sample(self, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
        """Return ``n`` draws as an array of shape ``(n,) + shape``."""
        raise NotImplementedError

    def _logpdf(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """Log density of points ``x`` of shape ``(..., ) + shape``."""
        raise NotImplementedError

    def _score(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """Gradient of the log density with respect to the point, same shape as ``x``."""
        raise NotImplementedError

    def mean(self) -> Any:
        """Mean of the noise (float for a scalar mechanism, read-only vector otherwise)."""
        raise NotImplementedError

    def covariance(self) -> Any:
        """Covariance of the noise (variance for a scalar mechanism)."""
        raise NotImplementedError

    def fisher_information(self) -> Any:
        """Location Fisher information E[∇log g(w) ∇log g(w)ᵀ] of the noise density g."""
        raise NotImplementedError

    def entropy(self) -> float:
        """Differential entropy in nats."""
        raise NotImplementedError

    def support(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Lower and upper ends of the support, per coordinate (``±inf`` when unbounded)."""
        lower = np.full(self.shape, -np.inf)
        return lower, -lower

    # -- shared behaviour ----------------------------------------------------------------------------
    @property
    def dim(self) -> int:
        """Number of coordinates m of the noise (1 for a scalar mechanism)."""
        return int(math.prod(self.shape))

    @property
    def name(self) -> str:
        return type(self).__name__

    def sample(self, size: int | tuple[int, ...] | None = None, *, rng: RNGLike = None) -> Any:
        """Draw noise.

        Parameters
        ----------
        size : None, int or tuple of ints
            Number (shape) of independent draws; each draw has shape ``self.shape``.
        rng : None, int or numpy.random.Generator
            Source of randomness (see :func:`privnoise.random.default_rng`); the default is cryptographically strong.

        Returns
        -------
        float or numpy.ndarray
            An array of shape ``size + shape`` (a float when both are empty).
        """
        from ..random import default_rng

        leading = sample_shape(size, f"{self.name}.sample")
        generator = default_rng(rng)
        n = math.prod(leading)
        draws = self._sample(n, generator).reshape(leading + self.shape)
        if draws.ndim == 0:
            return float(draws)
        return draws

    def _points(self, x: ArrayLike, method: str) -> NDArray[np.float64]:
        if isinstance(x, str | bytes) or (isinstance(x, np.ndarray) and x.dtype.kind not in "iuf"):
            arr = None
        else:
            try:
                arr = np.asarray(x, dtype=np.float64)
            except (TypeError, ValueError):
                arr = None
        if arr is None:
            raise InvalidParameterError(
                f"`x` of `{self.name}.{method}` must be a real numeric array; got {describe(x)}."
            )
        if np.isnan(arr).any():
            raise InvalidParameterError(f"`x` of `{self.name}.{method}` must not contain NaN.")
        k = len(self.shape)
        if k and arr.shape[arr.ndim - k :] != self.shape:
            raise DimensionError(
                f"`x` of `{self.name}.{method}` must end with shape {self.shape}; got shape {arr.shape}."
            )
        return arr

    def logpdf(self, x: ArrayLike, /) -> Any:
        """Log density at ``x`` (``-inf`` outside the support); shape ``x.shape[:-len(shape)]``."""
        out = self._logpdf(self._points(x, "logpdf"))
        return float(out) if np.ndim(out) == 0 else out

    def pdf(self, x: ArrayLike, /) -> Any:
        """Density at ``x`` (0 outside the support)."""
        out = np.exp(self._logpdf(self._points(x, "pdf")))
        return float(out) if np.ndim(out) == 0 else out

    def score(self, x: ArrayLike, /) -> Any:
        """∇_w log g(w): the score of the location family, 0 where the density vanishes."""
        out = self._score(self._points(x, "score"))
        return float(out) if np.ndim(out) == 0 else out

    def second_moment(self) -> float:
        """Quality Q = E‖w‖² of the noise (Farokhi & Sandberg, Section 2)."""
        cov = np.atleast_2d(np.asarray(self.covariance(), dtype=float))
        mu = np.atleast_1d(np.asarray(self.mean(), dtype=float))
        return float(np.trace(cov) + mu @ mu)

    def fisher_information_matrix(self) -> NDArray[np.float64]:
        """The Fisher information as an ``(m, m)`` array, also for scalar mechanisms."""
        return np.atleast_2d(np.asarray(self.fisher_information(), dtype=float))

    def describe(self) -> dict[str, Any]:
        """A JSON-ready summary of the mechanism's parameters."""
        raise NotImplementedError


def vector_or_scalar(value: ArrayLike, name: str, owner: str) -> NDArray[np.float64]:
    """A finite 0-d or 1-d parameter array."""
    arr = as_finite_array(value, name, owner, ndim=(0, 1))
    if arr.ndim == 1 and arr.size == 0:
        raise DimensionError(f"`{name}` of `{owner}` must not be empty.")
    return arr
