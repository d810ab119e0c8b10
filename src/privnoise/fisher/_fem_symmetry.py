"""One orthant of a support symmetric in every axis, for the bracket of :mod:`privnoise.fisher._fem_bounds`.

When W is a box or an axis-aligned ellipsoid (a ball) and A is diagonal, −∇·(A∇u) commutes with the reflections
xᵢ ↦ 2cᵢ − xᵢ (c the centre) that map W onto itself, so the simple, positive principal eigenfunction is even in
every axis, and λ₁(W) is the first eigenvalue of the mixed problem on the orthant {x ≥ c} ∩ W with u = 0 on ∂W
and ∂u/∂n = 0 on the planes xᵢ = cᵢ (every eigenfunction of that problem extends evenly to one of W, and W's
principal eigenfunction restricts to one of it). :func:`orthant_of` returns that orthant as a support, meshed
with cells half the size for the same number of unknowns; :func:`dirichlet_facets` tells its facets on ∂W from
those on the symmetry planes, which refinement must not move onto ∂W.

References
----------
F. Farokhi, H. Sandberg, Automatica 99 (2019), Theorem 2: the eigenproblem −∇·(CCᵀ∇u) = λu bracketed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .supports import Box, Ellipsoid, Support
from .supports.base import FloatArray, IntArray

__all__ = ["EllipsoidOrthant", "dirichlet_facets", "orthant_of", "symmetry_center"]


@dataclass(frozen=True, slots=True, eq=False)
class EllipsoidOrthant(Ellipsoid):
    """``{w ∈ Ellipsoid(center, shape) : w ≥ center}`` for a diagonal ``shape``: one orthant of an ellipsoid."""

    def contains(self, w: ArrayLike, /) -> NDArray[np.bool_]:
        arr = np.asarray(w, dtype=float)
        return np.asarray(Ellipsoid.contains(self, arr) & np.all(arr >= self.center - 1e-12, axis=-1))

    def initial_mesh(self) -> tuple[FloatArray, IntArray]:
        """The cells of the ball's initial mesh in the orthant (none of them crosses a coordinate plane)."""
        points, cells = Ellipsoid.initial_mesh(self)
        unit = np.linalg.solve(self.root, (points - self.center).T).T
        keep = cells[np.all(unit[cells].mean(axis=1) > 0.0, axis=1)]
        used, inverse = np.unique(keep, return_inverse=True)
        return points[used], inverse.reshape(keep.shape).astype(np.int64)

    def volume(self) -> float:
        return Ellipsoid.volume(self) / 2**self.dim

    def describe(self) -> dict[str, Any]:
        return {**Ellipsoid.describe(self), "support": "ellipsoid orthant"}


def orthant_of(support: Support, matrix: FloatArray) -> Support | None:
    """The orthant {x ≥ centre} of a box or an axis-aligned ellipsoid when ``matrix`` is diagonal, else None."""
    diagonal = not np.count_nonzero(matrix - np.diag(np.diag(matrix)))
    if not diagonal:
        return None
    if isinstance(support, Box):
        return Box((np.asarray(support.lower) + np.asarray(support.upper)) / 2.0, np.asarray(support.upper))
    if isinstance(support, Ellipsoid) and not np.count_nonzero(support.shape - np.diag(np.diag(support.shape))):
        return EllipsoidOrthant(center=support.center, shape=support.shape)
    return None


def symmetry_center(orthant: Support) -> FloatArray:
    """The corner of the orthant where its symmetry planes meet."""
    corner = orthant.lower if isinstance(orthant, Box) else orthant.center  # type: ignore[attr-defined]
    return np.asarray(corner, dtype=np.float64)


def dirichlet_facets(mesh: Any, center: FloatArray) -> IntArray:
    """The boundary facets of an orthant's mesh that are not on a symmetry plane xᵢ = cᵢ (where u = 0)."""
    facets = np.asarray(mesh.boundary_facets())
    middle = np.asarray(mesh.p[:, mesh.facets[:, facets]].mean(axis=1))  # (d, F)
    scale = np.max(np.abs(np.asarray(mesh.p)), axis=1, keepdims=True) + 1.0
    on_plane = np.any(np.abs(middle - center[:, None]) <= 1e-12 * scale, axis=0)
    return facets[~on_plane].astype(np.int64)
