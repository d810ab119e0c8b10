"""Ellipsoids and balls as supports: ``{w : (w − c)ᵀ shape⁻¹ (w − c) ≤ 1}`` in 2-D or 3-D.

Their boundary is curved: they are meshed by simplices whose boundary vertices lie on ∂W, and the solver then
curves the boundary cells (quadratic patches through nodes on ∂W, :mod:`privnoise.fisher._meshes`), which stay
inside W, so the noise supported on the mesh stays inside W.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._validation import as_finite_array, as_matrix, check_positive, readonly
from ...exceptions import DimensionError
from .base import FloatArray, IntArray, Support, check_dim

__all__ = ["Ball", "Ellipsoid"]


@dataclass(frozen=True, slots=True, eq=False)
class Ellipsoid(Support):
    """``{w : (w − center)ᵀ shape⁻¹ (w − center) ≤ 1}`` for a symmetric positive definite ``shape`` (2-D or 3-D).

    Examples
    --------
    >>> E = Ellipsoid(center=[0, 0], shape=[[2, 0.5], [0.5, 1]])
    >>> round(E.volume(), 6)   # π √det(shape)
    4.155936
    """

    center: Any
    shape: Any
    root: FloatArray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        c = as_finite_array(self.center, "center", "Ellipsoid", ndim=1)
        check_dim(c.size, "Ellipsoid")
        s = as_matrix(self.shape, "shape", "Ellipsoid", positive_definite=True)
        if s.shape != (c.size, c.size):
            raise DimensionError(f"`shape` of `Ellipsoid` must be {c.size}×{c.size}; got {s.shape}.")
        eig, vec = np.linalg.eigh(s)
        object.__setattr__(self, "center", readonly(c))
        object.__setattr__(self, "shape", readonly(s))
        object.__setattr__(self, "root", readonly((vec * np.sqrt(eig)) @ vec.T))

    @property
    def dim(self) -> int:
        return int(self.center.size)

    @property
    def curved(self) -> bool:
        return True

    def _to_unit(self, w: FloatArray) -> FloatArray:
        return np.asarray(np.linalg.solve(self.root, (w - self.center).T).T)

    def contains(self, w: ArrayLike, /) -> NDArray[np.bool_]:
        arr = self._points(w, "contains")
        flat = arr.reshape(-1, self.dim)
        return (np.sum(self._to_unit(flat) ** 2, axis=1) <= 1.0 + 1e-12).reshape(arr.shape[:-1])

    def initial_mesh(self) -> tuple[FloatArray, IntArray]:
        from skfem import MeshTet, MeshTri

        mesh = MeshTri.init_circle(2) if self.dim == 2 else MeshTet.init_ball(1)
        unit = np.asarray(mesh.p.T, dtype=float)
        return self.center + unit @ self.root.T, np.asarray(mesh.t.T, dtype=np.int64)

    def project_to_boundary(self, points: FloatArray) -> FloatArray:
        v = self._to_unit(points)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        return np.asarray(self.center + v @ self.root.T)

    def volume(self) -> float:
        unit = math.pi if self.dim == 2 else 4.0 * math.pi / 3.0
        return float(unit * math.sqrt(np.linalg.det(self.shape)))

    def describe(self) -> dict[str, Any]:
        return {"support": "ellipsoid", "center": self.center.tolist(), "shape": self.shape.tolist()}


def Ball(center: ArrayLike, radius: float) -> Ellipsoid:  # noqa: N802 - a constructor that reads like a class
    """The ball ``{w : ‖w − center‖ ≤ radius}``, as the :class:`Ellipsoid` with ``shape = radius² I``.

    Examples
    --------
    >>> Ball([0, 0, 0], 2.0).shape.tolist()
    [[4.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 4.0]]
    """
    c = as_finite_array(center, "center", "Ball", ndim=1)
    r = check_positive(radius, "radius", "Ball")
    return Ellipsoid(center=c, shape=r * r * np.eye(c.size))
