"""Quadratic (P2) functions on simplicial meshes in 2-D and 3-D: evaluation, exact integrals, bounds, location.

A P2 function on a simplex with barycentric coordinates λ₀, …, λ_d is stored by its values at the d + 1 vertices
and at the midpoints of the edges listed in :data:`~privnoise.fisher._p2_order.EDGES` (the local order of
scikit-fem's P2 elements, :mod:`privnoise.fisher._p2_order`):

    u = Σᵢ uᵢ λᵢ(2λᵢ − 1) + Σ_(i,j) 4 u_ij λᵢ λⱼ.

Its Bernstein coefficients are uᵢ (vertices) and 2u_ij − (uᵢ + uⱼ)/2 (edges); u lies between their minimum and
maximum on the simplex, which gives the rejection bound of the sampler.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._p2_order import EDGES
from .supports.base import FloatArray, IntArray

__all__ = [
    "EDGES",
    "SimplexLocator",
    "bernstein_bound",
    "bernstein_control_points",
    "gradients_at_vertices",
    "hessians",
    "quadrature",
    "simplex_geometry",
    "values",
]


def simplex_geometry(points: FloatArray, cells: IntArray) -> tuple[FloatArray, FloatArray]:
    """Gradients of the barycentric coordinates ``(E, d + 1, d)`` and volumes ``(E,)`` of every cell."""
    d = points.shape[1]
    x0 = points[cells[:, 0]]
    jac = np.swapaxes(points[cells[:, 1:]] - x0[:, None, :], 1, 2)  # columns x_i − x_0
    inv = np.linalg.inv(jac)  # rows are ∇λ_1 … ∇λ_d
    grads = np.concatenate([-inv.sum(axis=1, keepdims=True), inv], axis=1)
    volumes = np.abs(np.linalg.det(jac)) / math.factorial(d)
    return grads, volumes


def values(coefficients: FloatArray, bary: FloatArray) -> FloatArray:
    """u at points with barycentric coordinates ``bary`` (n, d + 1), one row of coefficients per point."""
    d = bary.shape[1] - 1
    out = np.einsum("ni,ni->n", coefficients[:, : d + 1], bary * (2.0 * bary - 1.0))
    for k, (i, j) in enumerate(EDGES[d]):
        out += 4.0 * coefficients[:, d + 1 + k] * bary[:, i] * bary[:, j]
    return out


def gradients_at_vertices(coefficients: FloatArray, grads: FloatArray) -> FloatArray:
    """∇u at the d + 1 vertices of each cell, shape ``(E, d + 1, d)`` (∇u is affine on a cell)."""
    d = grads.shape[2]
    vertex = coefficients[:, : d + 1]
    # ∇[λ_i(2λ_i − 1)] = (4λ_i − 1)∇λ_i; at vertex a: (4δ_ia − 1)∇λ_i
    common = -np.einsum("ei,eik->ek", vertex, grads)
    out = np.repeat(common[:, None, :], d + 1, axis=1) + 4.0 * vertex[:, :, None] * grads
    for k, (i, j) in enumerate(EDGES[d]):
        c = 4.0 * coefficients[:, d + 1 + k, None]
        out[:, j, :] += c * grads[:, i, :]  # ∇(4λ_iλ_j) = 4(λ_j∇λ_i + λ_i∇λ_j)
        out[:, i, :] += c * grads[:, j, :]
    return out


def hessians(coefficients: FloatArray, grads: FloatArray) -> FloatArray:
    """The (constant) Hessian of u on each cell, shape ``(E, d, d)``."""
    d = grads.shape[2]
    out = 4.0 * np.einsum("ei,eik,eil->ekl", coefficients[:, : d + 1], grads, grads)
    for k, (i, j) in enumerate(EDGES[d]):
        outer = np.einsum("ek,el->ekl", grads[:, i], grads[:, j])
        out += 4.0 * coefficients[:, d + 1 + k, None, None] * (outer + np.swapaxes(outer, 1, 2))
    return out


def bernstein_bound(coefficients: FloatArray) -> FloatArray:
    """max |u| over each cell is at most the largest absolute Bernstein coefficient (returned per cell)."""
    return np.asarray(np.abs(bernstein_control_points(coefficients[:, :, None])).max(axis=(1, 2)))


@dataclass(frozen=True)
class Rule:
    """A quadrature rule on the reference simplex: barycentric points (q, d + 1) and weights summing to 1."""

    bary: FloatArray
    weights: FloatArray


def quadrature(dim: int, degree: int) -> Rule:
    """An exact rule for polynomials of ``degree`` on a simplex (weights normalised to the simplex's volume 1).

    scikit-fem's tables (triangles to high degree, tetrahedra to degree 8); beyond them a conical product of
    Gauss–Jacobi rules (the simplex as a collapsed cube, Stroud 1971), exact for any degree.
    """
    from skfem.quadrature import get_quadrature
    from skfem.refdom import RefTet, RefTri

    try:
        x, w = get_quadrature(RefTri if dim == 2 else RefTet, degree)
    except NotImplementedError:
        x, w = _conical_product(dim, degree)
    bary = np.vstack([1.0 - x.sum(axis=0), x]).T
    return Rule(bary=np.ascontiguousarray(bary), weights=w / w.sum())


def _conical_product(dim: int, degree: int) -> tuple[FloatArray, FloatArray]:
    """Points (d, q) and weights of the collapsed-cube rule: ξ₁ = s₁, ξ₂ = (1 − s₁)s₂, ξ₃ = (1 − s₁)(1 − s₂)s₃,
    with Gauss–Jacobi weights (1 − s_k)^(d − k) in each s_k (the Jacobian of the collapse)."""
    from scipy.special import roots_jacobi

    n = degree // 2 + 1
    axes = []
    for k in range(dim):
        alpha = dim - 1 - k
        t, w = roots_jacobi(n, alpha, 0.0)
        axes.append(((t + 1.0) / 2.0, w / 2.0 ** (alpha + 1)))
    grids = np.meshgrid(*[a[0] for a in axes], indexing="ij")
    weights = np.prod(np.meshgrid(*[a[1] for a in axes], indexing="ij"), axis=0).ravel()
    s = [g.ravel() for g in grids]
    xi = []
    rest = np.ones_like(s[0])
    for k in range(dim):
        xi.append(rest * s[k])
        rest = rest * (1.0 - s[k])
    return np.array(xi), weights


class SimplexLocator:
    """Finds the cell that contains each point (−1 outside the mesh) and its barycentric coordinates.

    Candidate cells come from a k-d tree of the cell centroids; a point in a cell lies within the cell's reach of
    its centroid (its diameter; for a curved cell the farthest of its Bernstein control points, whose convex hull
    holds the cell), so once every centroid within the largest reach has been tried the point is outside.

    Curved cells (``curved`` indices with their P2 ``curved_nodes`` (Ec, nloc, d)) are inverted by Newton's method
    from the straight cell's coordinates; their barycentric coordinates are then those of the reference cell.
    """

    def __init__(
        self,
        points: FloatArray,
        cells: IntArray,
        curved: IntArray | None = None,
        curved_nodes: FloatArray | None = None,
    ) -> None:
        from scipy.spatial import cKDTree

        self.points = points
        self.cells = cells
        self.dim = points.shape[1]
        x0 = points[cells[:, 0]]
        self._origin = x0
        self._inverse = np.linalg.inv(np.swapaxes(points[cells[:, 1:]] - x0[:, None, :], 1, 2))
        corners = points[cells]
        centroids = corners.mean(axis=1)
        self._tree = cKDTree(centroids)
        diameters = np.linalg.norm(corners[:, :, None, :] - corners[:, None, :, :], axis=-1).max(axis=(1, 2))
        self._reach = float(diameters.max())
        self._row = np.full(cells.shape[0], -1, dtype=np.int64)
        extent = points
        if curved is not None and curved_nodes is not None and len(curved):
            self._row[curved] = np.arange(len(curved))
            self._nodes = curved_nodes
            control = bernstein_control_points(curved_nodes)
            reach = np.linalg.norm(control - centroids[curved][:, None, :], axis=2).max()
            self._reach = max(self._reach, float(reach))
            extent = np.vstack([points, control.reshape(-1, self.dim)])
        scale = float(np.max(np.ptp(extent, axis=0)))
        self._tol = 1e-10 * scale
        self._lo = extent.min(axis=0) - 1e-12 * scale
        self._hi = extent.max(axis=0) + 1e-12 * scale

    def _bary(self, x: FloatArray, cell: IntArray) -> FloatArray:
        rest = np.einsum("nij,nj->ni", self._inverse[cell], x - self._origin[cell])
        bary = np.concatenate([1.0 - rest.sum(axis=1, keepdims=True), rest], axis=1)
        curved = np.flatnonzero(self._row[cell] >= 0)
        if curved.size:
            from ._isoparametric import to_reference

            nodes = self._nodes[self._row[cell[curved]]]
            ref, residual = to_reference(nodes, x[curved], bary[curved])
            ref[residual > self._tol] = -1.0  # Newton did not land on x: not in this cell
            bary[curved] = ref
        return bary

    def find(self, x: FloatArray) -> tuple[IntArray, FloatArray]:
        """Cell index per point (−1 when outside) and barycentric coordinates (clipped to the cell)."""
        n = x.shape[0]
        found = np.full(n, -1, dtype=np.int64)
        bary = np.zeros((n, self.dim + 1))
        pending = np.flatnonzero(np.all((x >= self._lo) & (x <= self._hi), axis=1))
        k = 8
        tol = 1e-12
        total = self.cells.shape[0]
        while pending.size:
            kk = min(k, total)
            dist, cand = self._tree.query(x[pending], k=kk)
            dist = dist.reshape(pending.size, kk)
            cand = cand.reshape(pending.size, kk)
            for col in range(kk):
                open_ = found[pending] < 0
                if not open_.any():
                    break
                rows = pending[open_]
                b = self._bary(x[rows], cand[open_, col])
                hit = b.min(axis=1) >= -tol
                found[rows[hit]] = cand[open_, col][hit]
                bary[rows[hit]] = b[hit]
            unresolved = found[pending] < 0
            # a cell containing the point has its centroid within the largest reach
            exhausted = (dist[:, -1] > self._reach) | (kk == total)
            pending = pending[unresolved & ~exhausted]
            k *= 4
        np.clip(bary, 0.0, 1.0, out=bary)
        hit = found >= 0
        bary[hit] /= bary[hit].sum(axis=1, keepdims=True)
        return found, bary


def bernstein_control_points(nodes: FloatArray) -> FloatArray:
    """The Bernstein control points of P2 maps (vertices, and 2x_ij − (x_i + x_j)/2 per edge): (E, nloc, d).

    A quadratic cell lies in their convex hull.
    """
    d = {6: 2, 10: 3}[nodes.shape[1]]
    edges = [2.0 * nodes[:, d + 1 + k] - 0.5 * (nodes[:, i] + nodes[:, j]) for k, (i, j) in enumerate(EDGES[d])]
    return np.concatenate([nodes[:, : d + 1], np.stack(edges, axis=1)], axis=1)
