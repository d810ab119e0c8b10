"""Bounded noise supports W in two and three dimensions, as frozen validated value objects.

Each support knows its dimension, whether a point lies in it, and how to produce a conforming simplicial mesh
of itself (:meth:`initial_mesh`) for the finite-element solver of :mod:`privnoise.fisher.fem`:

==================  ====================================================================================
:class:`Box`        ``[lower, upper]``, a rectangle (2-D) or a cuboid (3-D)
:class:`Polygon`    any simple polygon, convex or not (2-D), meshed by a constrained Delaunay triangulation
:class:`Ellipsoid`  ``{w : (w − c)ᵀ shape⁻¹ (w − c) ≤ 1}`` (2-D ellipse or 3-D ellipsoid)
:class:`Ball`       ``{w : ‖w − c‖ ≤ radius}``
:class:`Polyhedron` the convex hull of a set of points (3-D)
:class:`MeshSupport` a user's conforming simplicial mesh (points and cells)
==================  ====================================================================================

Curved supports (balls and ellipsoids) are meshed by simplices whose boundary vertices lie on ∂W; the solver
then curves the boundary cells (quadratic patches through nodes on ∂W, :mod:`privnoise.fisher._meshes`), which
stay inside W, so the noise supported on the mesh stays inside W.

References
----------
F. Farokhi, H. Sandberg, Automatica 99 (2019), Problem 2 and Theorem 2 (the support set 𝒲 of the noise).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, as_matrix, check_positive, readonly
from ..exceptions import DimensionError, InvalidParameterError, SolverError

__all__ = ["Ball", "Box", "Ellipsoid", "MeshSupport", "Polygon", "Polyhedron", "Support"]

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


def _check_dim(dim: int, owner: str, allowed: tuple[int, ...] = (2, 3)) -> None:
    if dim not in allowed:
        rule = " or ".join(str(a) for a in allowed)
        raise DimensionError(f"`{owner}` must be {rule}-dimensional; got dimension {dim}.")


@dataclass(frozen=True, slots=True, eq=False)
class Box(Support):
    """The box ``[lower, upper]`` in 2 or 3 dimensions.

    Examples
    --------
    >>> W = Box([-1, -1], [1, 1])
    >>> W.dim, W.volume()
    (2, 4.0)
    >>> W.contains([[0.0, 0.5], [2.0, 0.0]]).tolist()
    [True, False]
    """

    lower: Any
    upper: Any

    def __post_init__(self) -> None:
        lo = as_finite_array(self.lower, "lower", "Box", ndim=1)
        hi = as_finite_array(self.upper, "upper", "Box", ndim=1)
        if lo.shape != hi.shape:
            raise DimensionError(
                f"`lower` and `upper` of `Box` must have the same length; got {lo.size}, {hi.size}."
            )
        _check_dim(lo.size, "Box")
        if np.any(hi <= lo):
            raise InvalidParameterError("`upper` of `Box` must be > `lower` in every coordinate.")
        object.__setattr__(self, "lower", readonly(lo))
        object.__setattr__(self, "upper", readonly(hi))

    @property
    def dim(self) -> int:
        return int(self.lower.size)

    @property
    def widths(self) -> FloatArray:
        return np.asarray(self.upper - self.lower)

    def contains(self, w: ArrayLike, /) -> NDArray[np.bool_]:
        arr = self._points(w, "contains")
        return np.all((arr >= self.lower) & (arr <= self.upper), axis=-1)

    def initial_mesh(self) -> tuple[FloatArray, IntArray]:
        from skfem import MeshTet, MeshTri

        # split the longer sides so that the coarse cells are not long and thin
        ratio = self.widths / self.widths.min()
        axes = [
            np.linspace(lo, hi, 1 + 2 * max(1, round(float(r))))
            for lo, hi, r in zip(self.lower, self.upper, ratio, strict=True)
        ]
        mesh = MeshTri.init_tensor(*axes) if self.dim == 2 else MeshTet.init_tensor(*axes)
        return np.asarray(mesh.p.T, dtype=float), np.asarray(mesh.t.T, dtype=np.int64)

    def volume(self) -> float:
        return float(np.prod(self.widths))

    def describe(self) -> dict[str, Any]:
        return {"support": "box", "lower": self.lower.tolist(), "upper": self.upper.tolist()}


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
        from .._optional import require

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
        _check_dim(c.size, "Ellipsoid")
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
        vol = _volumes(p, cells)
        return p, cells[vol > 1e-12 * float(np.max(vol))]

    def volume(self) -> float:
        p, t = self.initial_mesh()
        return float(np.sum(_volumes(p, t)))

    def describe(self) -> dict[str, Any]:
        return {"support": "polyhedron", "vertices": self.vertices.tolist()}


def _volumes(points: FloatArray, cells: IntArray) -> FloatArray:
    """Unsigned volumes (areas in 2-D) of simplices."""
    d = points.shape[1]
    edges = points[cells[:, 1:]] - points[cells[:, :1]]
    return np.abs(np.linalg.det(edges)) / math.factorial(d)


@dataclass(frozen=True, slots=True, eq=False)
class MeshSupport(Support):
    """A user's conforming simplicial mesh: ``points`` (N, d) and ``cells`` (E, d + 1), d = 2 or 3.

    The support is the union of the cells; it is used as given (and refined by splitting its cells).

    Examples
    --------
    >>> M = MeshSupport(points=[[0, 0], [1, 0], [0, 1], [1, 1]], cells=[[0, 1, 2], [1, 3, 2]])
    >>> M.volume()
    1.0
    """

    points: Any
    cells: Any

    def __post_init__(self) -> None:
        p = as_finite_array(self.points, "points", "MeshSupport", ndim=2)
        _check_dim(p.shape[1], "MeshSupport")
        raw = np.asarray(self.cells)
        if raw.dtype.kind not in "iu" or raw.ndim != 2 or raw.shape[1] != p.shape[1] + 1 or raw.shape[0] == 0:
            raise DimensionError(
                f"`cells` of `MeshSupport` must be a non-empty integer array of shape (E, {p.shape[1] + 1})."
            )
        t = raw.astype(np.int64)
        if t.min() < 0 or t.max() >= p.shape[0]:
            raise InvalidParameterError("`cells` of `MeshSupport` must index rows of `points`.")
        vol = _volumes(p, t)
        if np.any(vol <= 1e-14 * float(np.max(vol))):
            raise InvalidParameterError("`cells` of `MeshSupport` must all have positive volume.")
        object.__setattr__(self, "points", readonly(p))
        object.__setattr__(self, "cells", readonly(t))

    @property
    def dim(self) -> int:
        return int(self.points.shape[1])

    def contains(self, w: ArrayLike, /) -> NDArray[np.bool_]:
        from ._simplices import SimplexLocator

        arr = self._points(w, "contains")
        loc = SimplexLocator(np.asarray(self.points), np.asarray(self.cells))
        return (loc.find(arr.reshape(-1, self.dim))[0] >= 0).reshape(arr.shape[:-1])

    def initial_mesh(self) -> tuple[FloatArray, IntArray]:
        return np.array(self.points), np.array(self.cells)

    def volume(self) -> float:
        return float(np.sum(_volumes(np.asarray(self.points), np.asarray(self.cells))))

    def describe(self) -> dict[str, Any]:
        return {"support": "mesh", "points": len(self.points), "cells": len(self.cells)}
