"""Simple polygons (convex or not) as 2-D supports, meshed by a constrained Delaunay triangulation.

A polygon is validated as simple (no two non-adjacent edges touch or cross) and stored counter-clockwise; a point
lies in it by the even–odd rule, points on an edge included (the closed set).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._validation import as_finite_array, readonly
from ...exceptions import DimensionError, InvalidParameterError, SolverError
from .base import FloatArray, IntArray, Support

__all__ = ["Polygon"]


def _segments_cross(p: FloatArray, q: FloatArray, r: FloatArray, s: FloatArray) -> NDArray[np.bool_]:
    """Whether closed segments pq and rs (arrays of 2-vectors) intersect."""

    def orient(a: FloatArray, b: FloatArray, c: FloatArray) -> FloatArray:
        return np.sign(
            (b[..., 0] - a[..., 0]) * (c[..., 1] - a[..., 1])
            - (b[..., 1] - a[..., 1]) * (c[..., 0] - a[..., 0])
        )

    def on_segment(a: FloatArray, b: FloatArray, c: FloatArray) -> NDArray[np.bool_]:
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        return np.all((c >= lo) & (c <= hi), axis=-1)

    o1, o2, o3, o4 = orient(p, q, r), orient(p, q, s), orient(r, s, p), orient(r, s, q)
    proper = (o1 * o2 < 0) & (o3 * o4 < 0)
    touching = (
        ((o1 == 0) & on_segment(p, q, r))
        | ((o2 == 0) & on_segment(p, q, s))
        | ((o3 == 0) & on_segment(r, s, p))
        | ((o4 == 0) & on_segment(r, s, q))
    )
    return proper | touching


@dataclass(frozen=True, slots=True, eq=False)
class Polygon(Support):
    """A simple polygon (convex or not) given by its vertices in order; stored counter-clockwise.

    Raises
    ------
    InvalidParameterError
        If there are fewer than 3 vertices, repeated consecutive vertices, zero area, or two non-adjacent edges
        that touch or cross (the polygon is not simple).

    Examples
    --------
    >>> L = Polygon([(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)])   # an L-shape, not convex
    >>> L.volume(), L.contains([[0.5, 1.5], [1.5, 1.5]]).tolist()
    (3.0, [True, False])
    """

    vertices: Any

    def __post_init__(self) -> None:
        v = as_finite_array(self.vertices, "vertices", "Polygon", ndim=2)
        if v.shape[1] != 2 or v.shape[0] < 3:
            raise DimensionError(f"`vertices` of `Polygon` must have shape (k >= 3, 2); got {v.shape}.")
        if np.allclose(v[0], v[-1]) and v.shape[0] > 3:
            v = v[:-1]  # a closed ring repeats its first vertex
        nxt = np.roll(v, -1, axis=0)
        if np.any(np.all(v == nxt, axis=1)):
            raise InvalidParameterError("`vertices` of `Polygon` must not repeat a vertex consecutively.")
        area2 = float(np.sum(v[:, 0] * nxt[:, 1] - nxt[:, 0] * v[:, 1]))
        scale = float(np.max(np.abs(v - v.mean(axis=0)))) ** 2
        if abs(area2) <= 1e-12 * scale:
            raise InvalidParameterError("`vertices` of `Polygon` must enclose a positive area.")
        k = v.shape[0]
        i, j = np.triu_indices(k, 1)
        non_adjacent = (j - i > 1) & ~((i == 0) & (j == k - 1))
        i, j = i[non_adjacent], j[non_adjacent]
        crossing = _segments_cross(v[i], nxt[i], v[j], nxt[j])
        if crossing.any():
            a, b = int(i[crossing][0]), int(j[crossing][0])
            raise InvalidParameterError(
                f"`vertices` of `Polygon` must form a simple polygon; edges {a} and {b} touch or cross."
            )
        if area2 < 0:
            v = v[::-1]
        object.__setattr__(self, "vertices", readonly(v))

    @property
    def dim(self) -> int:
        return 2

    def contains(self, w: ArrayLike, /) -> NDArray[np.bool_]:
        arr = self._points(w, "contains")
        flat = arr.reshape(-1, 2)
        v = self.vertices
        a, b = v, np.roll(v, -1, axis=0)
        x, y = flat[:, 0:1], flat[:, 1:2]
        # even–odd rule: crossings of a ray to +x with edges that straddle the point's height
        straddle = (a[:, 1] > y) != (b[:, 1] > y)
        with np.errstate(divide="ignore", invalid="ignore"):
            x_cross = a[:, 0] + (y - a[:, 1]) * (b[:, 0] - a[:, 0]) / (b[:, 1] - a[:, 1])
        inside = (np.count_nonzero(straddle & (x < x_cross), axis=1) % 2) == 1
        # the closed set: points on an edge (to rounding) count as inside
        edge = b - a
        t = np.clip(np.einsum("nek,ek->ne", flat[:, None, :] - a, edge) / np.sum(edge**2, axis=1), 0.0, 1.0)
        nearest = a + t[:, :, None] * edge
        scale = float(np.max(np.ptp(v, axis=0)))
        on_edge = np.min(np.linalg.norm(flat[:, None, :] - nearest, axis=2), axis=1) <= 1e-12 * scale
        return (inside | on_edge).reshape(arr.shape[:-1])

    def initial_mesh(self) -> tuple[FloatArray, IntArray]:
        from ..._optional import require

        shapely = require("shapely", feature="meshing a Polygon", extra="fem")
        triangles = shapely.constrained_delaunay_triangles(shapely.Polygon(self.vertices))
        points: list[tuple[float, float]] = []
        index: dict[tuple[float, float], int] = {}
        cells = []
        for tri in shapely.get_parts(triangles):
            coords = np.asarray(tri.exterior.coords)[:3]
            ids = []
            for x, y in coords:
                key = (float(x), float(y))
                if key not in index:
                    index[key] = len(points)
                    points.append(key)
                ids.append(index[key])
            cells.append(ids)
        p = np.array(points, dtype=float)
        t = np.array(cells, dtype=np.int64)
        if len(points) != self.vertices.shape[0]:
            raise SolverError("the constrained Delaunay triangulation of the Polygon added or lost vertices.")
        return p, t

    def volume(self) -> float:
        v = self.vertices
        nxt = np.roll(v, -1, axis=0)
        return float(np.sum(v[:, 0] * nxt[:, 1] - nxt[:, 0] * v[:, 1]) / 2.0)

    def describe(self) -> dict[str, Any]:
        return {"support": "polygon", "vertices": self.vertices.tolist()}
