"""The interface of a convex constraint set 𝒞 with an exact Euclidean projection (Farokhi, eq. (5)).

A :class:`Constraint` is a closed convex set of ℝⁿ: its projection P_𝒞[x] = argmin_{y ∈ 𝒞} ‖x − y‖₂ of a point or
a batch of points, membership, its :class:`RecessionCone` (the directions along which it is unbounded, which
:class:`~privnoise.optimization.QuadraticProgram` uses to refuse a problem whose objective is unbounded below) and
its form for :func:`scipy.optimize.minimize` (a second method). :func:`checked_vector` validates the vectors the
sets are built from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize

from ..._validation import as_finite_array, as_matrix
from ...exceptions import DimensionError, InvalidParameterError

__all__ = ["Constraint", "RecessionCone", "checked_system", "checked_vector"]


@dataclass(frozen=True, slots=True)
class RecessionCone:
    """{d : G d ≤ 0, A d = 0} (``None`` blocks are absent); the whole space when both are None."""

    inequality: NDArray[np.float64] | None
    equality: NDArray[np.float64] | None


class Constraint:
    """A closed convex set of ℝⁿ with an exact Euclidean projection."""

    __slots__ = ()

    @property
    def dim(self) -> int:
        """The dimension n of the space the set lives in."""
        raise NotImplementedError

    def project(self, x: ArrayLike, /) -> NDArray[np.float64]:
        """P_𝒞[x] for a point (shape ``(n,)``) or a batch of points (shape ``(..., n)``)."""
        raise NotImplementedError

    def contains(self, x: ArrayLike, /, *, atol: float = 1e-9) -> bool:
        """Whether the point ``x`` lies in 𝒞 (within ``atol``)."""
        raise NotImplementedError

    def recession_cone(self) -> RecessionCone | None:
        """The directions of unboundedness, or None when the set is bounded."""
        raise NotImplementedError

    def scipy_constraints(self) -> tuple[optimize.Bounds | None, list[Any]]:
        """The set as bounds and constraints for :func:`scipy.optimize.minimize` (a second method)."""
        raise NotImplementedError

    def _points(self, x: ArrayLike, owner: str) -> NDArray[np.float64]:
        arr = as_finite_array(x, "x", owner)
        if arr.ndim == 0 or arr.shape[-1] != self.dim:
            raise DimensionError(f"`x` of `{owner}` must end with length {self.dim}; got shape {arr.shape}.")
        return arr


def checked_vector(value: ArrayLike, name: str, owner: str, *, allow_inf: bool = False) -> NDArray[np.float64]:
    if allow_inf:
        arr = np.asarray(value, dtype=float) if not isinstance(value, str | bytes) else np.asarray([np.nan])
        if np.isnan(arr).any():
            raise InvalidParameterError(f"`{name}` of `{owner}` must not contain NaN.")
    else:
        arr = as_finite_array(value, name, owner)
    if arr.ndim != 1 or arr.size == 0:
        raise DimensionError(f"`{name}` of `{owner}` must be a non-empty vector; got shape {arr.shape}.")
    return arr


def checked_system(
    matrix: ArrayLike, vector: ArrayLike, names: tuple[str, str], owner: str
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The matrix M and right-hand side v of a system M x (=, ≤) v, checked: v has one entry per row of M."""
    m = as_matrix(matrix, names[0], owner)
    v = checked_vector(vector, names[1], owner)
    if v.size != m.shape[0]:
        raise DimensionError(f"`{names[1]}` of `{owner}` must have length {m.shape[0]}; got {v.size}.")
    return m, v
