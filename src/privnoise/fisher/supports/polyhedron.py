"""Convex polyhedra as 3-D supports: the convex hull of a set of points, meshed by its Delaunay tetrahedra."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._validation import as_finite_array, readonly
from ...exceptions import DimensionError, InvalidParameterError
from .base import FloatArray, IntArray, Support, simplex_volumes

__all__ = ["Polyhedron"]


@dataclass(frozen=True, slots=True, eq=False)
class Polyhedron(Support):
    """The convex hull of a set of points in 3-D (at least 4, not all in one plane).

    Examples
    --------
    >>> P = Polyhedron([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0.1, 0.1, 0.1]])
    >>> round(P.volume(), 12), len(P.vertices)      # the interior point is dropped
    (0.166666666667, 4)
    """

    points: Any
    vertices: FloatArray = field(init=False, repr=False)
    equations: FloatArray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        from scipy.spatial import ConvexHull, QhullError

        pts = as_finite_array(self.points, "points", "Polyhedron", ndim=2)
        if pts.shape[1] != 3 or pts.shape[0] < 4:
            raise DimensionError(f"`points` of `Polyhedron` must have shape (k >= 4, 3); got {pts.shape}.")
        try:
            hull = ConvexHull(pts)
        except QhullError:
            raise InvalidParameterError("`points` of `Polyhedron` must not all lie in one plane.") from None
        object.__setattr__(self, "points", readonly(pts))
        object.__setattr__(self, "vertices", readonly(pts[hull.vertices]))
        object.__setattr__(self, "equations", readonly(hull.equations))

    @property
    def dim(self) -> int:
        return 3

    def contains(self, w: ArrayLike, /) -> NDArray[np.bool_]:
        arr = self._points(w, "contains")
        flat = arr.reshape(-1, 3)
        scale = float(np.max(np.ptp(self.vertices, axis=0)))
        sides = flat @ self.equations[:, :3].T + self.equations[:, 3]
        return np.all(sides <= 1e-12 * scale, axis=1).reshape(arr.shape[:-1])

    def initial_mesh(self) -> tuple[FloatArray, IntArray]:
        from scipy.spatial import Delaunay

        tri = Delaunay(self.vertices)
        cells = np.asarray(tri.simplices, dtype=np.int64)
        p = np.asarray(self.vertices, dtype=float)
        # drop flat tetrahedra Qhull may produce for cospherical points
        vol = simplex_volumes(p, cells)
        return p, cells[vol > 1e-12 * float(np.max(vol))]

    def volume(self) -> float:
        p, t = self.initial_mesh()
        return float(np.sum(simplex_volumes(p, t)))

    def describe(self) -> dict[str, Any]:
        return {"support": "polyhedron", "vertices": self.vertices.tolist()}
