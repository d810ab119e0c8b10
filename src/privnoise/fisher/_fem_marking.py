"""Where to refine next (:mod:`.fem`'s adaptive mode): a residual error indicator per cell of a P2 solution on
straight cells, and Dörfler's bulk marking."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from . import _simplices as sx

__all__ = ["dorfler_marking", "residual_indicators"]

FloatArray = NDArray[np.float64]


def _facets(cells: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Interior facets as (cell, opposite local vertex) pairs on both sides, shape (F, 2) each, and boundary
    facets as rows (cell, opposite local vertex)."""
    e, nv = cells.shape
    opposite = np.repeat(np.arange(nv)[None, :], e, axis=0).ravel()
    owner = np.repeat(np.arange(e), nv)
    keep = np.array([[j for j in range(nv) if j != a] for a in range(nv)])
    faces = np.sort(cells[:, keep], axis=2).reshape(e * nv, nv - 1)
    order = np.lexsort(faces.T[::-1])
    faces, owner, opposite = faces[order], owner[order], opposite[order]
    same = np.all(faces[1:] == faces[:-1], axis=1)
    first = np.flatnonzero(same)
    paired = np.zeros(e * nv, dtype=bool)
    paired[first] = paired[first + 1] = True
    boundary = np.stack([owner[~paired], opposite[~paired]], axis=1)
    return (
        np.stack([owner[first], owner[first + 1]], axis=1),
        np.stack([opposite[first], opposite[first + 1]], axis=1),
        boundary,
    )


def residual_indicators(
    points: FloatArray, cells: NDArray[np.int64], coefficients: FloatArray, matrix: FloatArray, lam: float
) -> FloatArray:
    """Squared residual error indicator per cell: h²‖λu + ∇·(A∇u)‖² + ½ Σ_faces h_F ‖[A∇u·n]‖²."""
    d = points.shape[1]
    grads, volumes = sx.simplex_geometry(points, cells)
    corners = points[cells]
    diam = np.linalg.norm(corners[:, :, None, :] - corners[:, None, :, :], axis=-1).max(axis=(1, 2))
    # interior residual: λu + Tr(A H), H constant on the cell
    div = np.einsum("kl,ekl->e", matrix, sx.hessians(coefficients, grads))
    rule = sx.quadrature(d, 4)
    resid = np.stack(
        [lam * sx.values(coefficients, np.broadcast_to(b, (cells.shape[0], d + 1))) + div for b in rule.bary],
        axis=1,
    )
    eta = diam**2 * volumes * (resid**2 @ rule.weights)
    # flux jumps across interior faces, exact for the affine gradient
    pairs, opp, _ = _facets(cells)
    gv = sx.gradients_at_vertices(coefficients, grads)
    left, right = pairs[:, 0], pairs[:, 1]
    normal = grads[left, opp[:, 0]]
    norm = np.linalg.norm(normal, axis=1)
    normal = normal / norm[:, None]
    face_measure = d * volumes[left] * norm
    local = cells[left]
    jumps = []
    for a in range(d + 1):
        vertex = local[:, a]
        on_face = a != opp[:, 0]
        # the same global vertex in the right cell
        pos = np.argmax(cells[right] == vertex[:, None], axis=1)
        diff = gv[left, a] - gv[right, pos]
        jumps.append(np.where(on_face, np.einsum("fk,kl,fl->f", normal, matrix, diff), np.nan))
    j = np.stack(jumps, axis=1)
    j = j[~np.isnan(j)].reshape(-1, d)
    face_h = face_measure ** (1.0 / (d - 1))
    jump_sq = face_h * face_measure * (np.sum(j**2, axis=1) + np.sum(j, axis=1) ** 2) / (d * (d + 1))
    np.add.at(eta, left, 0.5 * jump_sq)
    np.add.at(eta, right, 0.5 * jump_sq)
    return eta


def dorfler_marking(eta: FloatArray, bulk: float) -> NDArray[np.int64]:
    """The fewest cells whose indicators hold a fraction ``bulk`` of their total (Dörfler's bulk criterion)."""
    order = np.argsort(eta)[::-1]
    cumulative = np.cumsum(eta[order])
    count = int(np.searchsorted(cumulative, bulk * cumulative[-1])) + 1
    return np.sort(order[:count]).astype(np.int64)
