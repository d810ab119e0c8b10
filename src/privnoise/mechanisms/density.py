"""Noise with a density: the base of the continuous families (Gaussian, Laplace, raised cosine, ℓ2 and multi-user
Laplace, tabulated).

:class:`Mechanism`
    ``pdf``, ``logpdf``, ``score`` (∇ log g, the score of the location family), ``mean``, ``covariance``,
    ``fisher_information`` (the location Fisher information E[∇log g ∇log g ᵀ] of Farokhi & Sandberg),
    ``second_moment`` (their quality Q = E‖w‖², Section 2), and the structured forms of the covariance and the
    information (:class:`~privnoise.linalg.SymmetricForm`). Its guarantee is the Fisher information always, and
    (ε, δ) where the family has a privacy profile, through the rules registered in
    :mod:`privnoise.mechanisms.statements`.
:func:`vector_or_scalar`
    The check of a family's per-coordinate parameter (a finite scalar or non-empty vector).

The protocol it implements is :class:`~privnoise.mechanisms.Noise` (:mod:`privnoise.mechanisms.protocol`); noise on
a lattice, which has no density, is its sibling :class:`~privnoise.mechanisms.LatticeMechanism`.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array
from ..exceptions import DimensionError
from ..linalg import DenseForm, SymmetricForm
from .protocol import Noise, as_output, points

if TYPE_CHECKING:
    from ..guarantees import Guarantee
    from ..queries import Query

__all__ = ["Mechanism", "vector_or_scalar"]


class Mechanism(Noise):
    """Additive noise with a density: ``release = f(x) + w`` with ``w`` drawn from the mechanism.

    Subclasses are frozen dataclasses. ``shape`` is ``()`` for a scalar mechanism and ``(m,)`` for a vector one;
    ``sample(size)`` returns an array of shape ``size + shape``. Scalar mechanisms return floats from
    ``covariance()`` and ``fisher_information()``; vector ones return ``(m, m)`` read-only matrices, and
    ``covariance_form()`` / ``information_form()`` keep them structured (s·I for isotropic noise, whatever m).
    """

    __slots__ = ()

    # -- to be provided by each family ------------------------------------------------------------
    @abstractmethod
    def _logpdf(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """Log density of points ``x`` of shape ``(..., ) + shape``."""

    @abstractmethod
    def _score(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """Gradient of the log density with respect to the point, same shape as ``x``."""

    @abstractmethod
    def mean(self) -> Any:
        """Mean of the noise (float for a scalar mechanism, read-only vector otherwise)."""

    @abstractmethod
    def covariance(self) -> Any:
        """Covariance of the noise (variance for a scalar mechanism)."""

    @abstractmethod
    def fisher_information(self) -> Any:
        """Location Fisher information E[∇log g(w) ∇log g(w)ᵀ] of the noise density g."""

    @abstractmethod
    def entropy(self) -> float:
        """Differential entropy in nats."""

    def support(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Lower and upper ends of the support, per coordinate (``±inf`` when unbounded)."""
        lower = np.full(self.shape, -np.inf)
        return lower, -lower

    # -- structured forms (overridden where a family knows its structure) ---------------------------------------
    def covariance_form(self) -> SymmetricForm:
        """The covariance as a :class:`~privnoise.linalg.SymmetricForm` (1×1 for a scalar mechanism)."""
        return DenseForm(np.atleast_2d(np.asarray(self.covariance(), dtype=float)))

    def information_form(self) -> SymmetricForm:
        """The location Fisher information as a :class:`~privnoise.linalg.SymmetricForm`.

        Raises
        ------
        CalibrationError
            When the information is infinite (a density with a jump): the noise then gives no Fisher-information
            privacy at all.
        """
        from ..exceptions import CalibrationError

        matrix = self.fisher_information_matrix()
        if not np.all(np.isfinite(matrix)):
            raise CalibrationError(
                f"{self.name} has infinite Fisher information (its density jumps or rises linearly from zero): "
                "it gives no Fisher-information privacy."
            )
        return DenseForm(matrix)

    def noise_scale(self) -> float:
        """The scale that sets the default grid: √λ_min of the covariance."""
        return math.sqrt(max(self.covariance_form().eigenvalue_range()[0], 0.0))

    # -- shared behaviour ----------------------------------------------------------------------------
    def default_grid_exponent(self) -> int:
        from ..snapping import grid_exponent_for

        return grid_exponent_for(self.noise_scale())

    def guarantee_for(
        self, query: Query, x: ArrayLike | None = None, *, delta: float | None = None, grid: float = 0.0
    ) -> Guarantee:
        """Fisher information always (Farokhi & Sandberg); (ε, δ) too where the family has a privacy profile and
        the query declares the bounds that give its sensitivity (:mod:`privnoise.dp.profile`), through the rules registered in :mod:`.statements`."""
        from ..guarantees import combine
        from .statements import DIFFERENTIAL_PRIVACY, FISHER_INFORMATION, statement

        fisher = statement(FISHER_INFORMATION)(query, self, x, grid=grid)
        guarantee = combine(fisher, statement(DIFFERENTIAL_PRIVACY)(self, query, delta=delta))
        assert guarantee is not None
        return guarantee

    def _points(self, x: ArrayLike, method: str) -> NDArray[np.float64]:
        return points(self, x, method)

    def logpdf(self, x: ArrayLike, /) -> Any:
        """Log density at ``x`` (``-inf`` outside the support); shape ``x.shape[:-len(shape)]``."""
        return as_output(np.asarray(self._logpdf(self._points(x, "logpdf"))))

    def pdf(self, x: ArrayLike, /) -> Any:
        """Density at ``x`` (0 outside the support)."""
        return as_output(np.exp(self._logpdf(self._points(x, "pdf"))))

    def score(self, x: ArrayLike, /) -> Any:
        """∇_w log g(w): the score of the location family, 0 where the density vanishes."""
        return as_output(np.asarray(self._score(self._points(x, "score"))))

    def second_moment(self) -> float:
        """Quality Q = E‖w‖² of the noise (Farokhi & Sandberg, Section 2)."""
        cov = np.atleast_2d(np.asarray(self.covariance(), dtype=float))
        mu = np.atleast_1d(np.asarray(self.mean(), dtype=float))
        return float(np.trace(cov) + mu @ mu)

    def fisher_information_matrix(self) -> NDArray[np.float64]:
        """The Fisher information as an ``(m, m)`` array, also for scalar mechanisms."""
        return np.atleast_2d(np.asarray(self.fisher_information(), dtype=float))


def vector_or_scalar(value: ArrayLike, name: str, owner: str) -> NDArray[np.float64]:
    """A finite 0-d or 1-d parameter array."""
    arr = as_finite_array(value, name, owner, ndim=(0, 1))
    if arr.ndim == 1 and arr.size == 0:
        raise DimensionError(f"`{name}` of `{owner}` must not be empty.")
    return arr
