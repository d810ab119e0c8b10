"""The support interface: a bounded set W ⊂ ℝᵈ (d = 2 or 3) on which noise may be supported.

A :class:`Support` knows its dimension, whether a point lies in it, its volume, and how to produce a conforming
simplicial mesh of itself for the finite-element solver of :mod:`privnoise.fisher.fem`; curved supports also move
boundary points onto ∂W. The supports themselves (:class:`~privnoise.fisher.Box`,
:class:`~privnoise.fisher.Polygon`, :class:`~privnoise.fisher.Ellipsoid`, :class:`~privnoise.fisher.Polyhedron`,
:class:`~privnoise.fisher.MeshSupport`) are in the sibling modules of :mod:`privnoise.fisher.supports`.

References
----------
F. Farokhi, H. Sandberg, Automatica 99 (2019), Problem 2 and Theorem 2 (the support set 𝒲 of the noise).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._validation import as_finite_array, as_matrix
from ...exceptions import DimensionError

__all__ = ["FloatArray", "IntArray", "Support", "check_dim", "operator_matrix", "simplex_volumes"]

#: The array types of the meshes and the finite elements (points and values; cells), for every module of
#: :mod:`privnoise.fisher` that annotates them.
FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


class Support:
    """A bounded set W ⊂ ℝᵈ (d = 2 or 3) on which noise may be supported."""

    __slots__ = ()

    @property
    def dim(self) -> int:
        raise NotImplementedError

    @property
    def curved(self) -> bool:
        """Whether the boundary is curved (the boundary cells are then curved, with their nodes on ∂W)."""
        return False

    def contains(self, w: ArrayLike, /) -> NDArray[np.bool_]:
        """Whether each point of ``w`` (shape ``(..., dim)``) lies in the closed set W."""
        raise NotImplementedError

    def initial_mesh(self) -> tuple[FloatArray, IntArray]:
        """A coarse conforming simplicial mesh: points ``(N, dim)`` and cells ``(E, dim + 1)``."""
        raise NotImplementedError

    def project_to_boundary(self, points: FloatArray) -> FloatArray:
        """Move points that should lie on ∂W onto it (the identity for flat-sided supports)."""
        return points

    def volume(self) -> float:
        """Lebesgue measure of W."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """A JSON-ready summary."""
        raise NotImplementedError

    def _points(self, w: ArrayLike, method: str) -> FloatArray:
        arr = as_finite_array(w, "w", f"{type(self).__name__}.{method}")
        if arr.ndim == 0 or arr.shape[-1] != self.dim:
            raise DimensionError(
                f"`w` of `{type(self).__name__}.{method}` must end with length {self.dim}; got shape {arr.shape}."
            )
        return arr


def operator_matrix(matrix: ArrayLike | None, dim: int, owner: str) -> FloatArray:
    """The matrix A of −∇·(A∇u) on a ``dim``-D support: symmetric positive definite and dim × dim, the identity
    when None."""
    a = np.eye(dim) if matrix is None else as_matrix(matrix, "matrix", owner, positive_definite=True)
    if a.shape != (dim, dim):
        raise DimensionError(f"`matrix` of `{owner}` must be {dim}×{dim} for a {dim}-D support; got {a.shape}.")
    return np.asarray(a, dtype=np.float64)


def check_dim(dim: int, owner: str, allowed: tuple[int, ...] = (2, 3)) -> None:
    if dim not in allowed:
        rule = " or ".join(str(a) for a in allowed)
        raise DimensionError(f"`{owner}` must be {rule}-dimensional; got dimension {dim}.")


def simplex_volumes(points: FloatArray, cells: IntArray) -> FloatArray:
    """Unsigned volumes (areas in 2-D) of simplices."""
    d = points.shape[1]
    edges = points[cells[:, 1:]] - points[cells[:, :1]]
    return np.abs(np.linalg.det(edges)) / math.factorial(d)
