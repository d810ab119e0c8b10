"""Quadratic (P2-mapped) simplices: the map from the reference simplex, its Jacobian, bounds and inverse.

A curved cell is x = F(ξ) = Σₐ φₐ(λ) xₐ, with the P2 shape functions φₐ of :mod:`privnoise.fisher._simplices`
(vertices, then edge midpoints in :data:`~privnoise.fisher._p2_order.EDGES` order), nodes xₐ, and reference
coordinates ξ = (λ₁, …, λ_d), λ₀ = 1 − Σξ. A function on the cell is P2 in λ; its density in x carries the
Jacobian: ∫_K g dx = ∫_K̂ g(F(ξ)) |det DF(ξ)| dξ, where det DF is a polynomial of degree d in λ.

The Bernstein coefficients of det DF (its values at the degree-d lattice points, solved against the Bernstein
basis) bound it on the cell: all of one sign proves the map orientation-preserving (or reversing) everywhere, and
their largest magnitude bounds |det DF| (the rejection bound of the sampler).
"""

from __future__ import annotations

import itertools
import math
from functools import cache

import numpy as np
from numpy.typing import NDArray

from ._p2_order import EDGES

__all__ = [
    "determinant_bernstein",
    "jacobians",
    "map_points",
    "shape_functions",
    "shape_gradients",
    "to_reference",
]

FloatArray = NDArray[np.float64]


def _bary_gradients(dim: int) -> FloatArray:
    """∂λᵢ/∂ξ_k on the reference simplex, shape (d + 1, d)."""
    return np.vstack([-np.ones((1, dim)), np.eye(dim)])


def shape_functions(bary: FloatArray) -> FloatArray:
    """The P2 shape functions at barycentric points ``bary`` (n, d + 1), shape (n, nloc)."""
    d = bary.shape[1] - 1
    edges = [4.0 * bary[:, i] * bary[:, j] for i, j in EDGES[d]]
    return np.column_stack([bary * (2.0 * bary - 1.0), *edges])


def shape_gradients(bary: FloatArray) -> FloatArray:
    """∂φₐ/∂ξ at barycentric points, shape (n, nloc, d)."""
    d = bary.shape[1] - 1
    g = _bary_gradients(d)
    vertex = (4.0 * bary - 1.0)[:, :, None] * g[None, :, :]
    edges = [4.0 * (bary[:, j, None] * g[i] + bary[:, i, None] * g[j]) for i, j in EDGES[d]]
    return np.concatenate([vertex, np.stack(edges, axis=1)], axis=1)


def map_points(nodes: FloatArray, bary: FloatArray) -> FloatArray:
    """F(ξ) for one cell per point: ``nodes`` (n, nloc, d), ``bary`` (n, d + 1); shape (n, d)."""
    return np.einsum("na,nak->nk", shape_functions(bary), nodes)


def jacobians(nodes: FloatArray, bary: FloatArray) -> FloatArray:
    """DF(ξ) = ∂x/∂ξ for one cell per point, shape (n, d, d)."""
    return np.einsum("nak,nal->nkl", nodes, shape_gradients(bary))


@cache
def _lattice(dim: int) -> tuple[FloatArray, FloatArray]:
    """The degree-d lattice of the simplex (barycentric, (P, d + 1)) and the inverse of the Bernstein basis there."""
    alphas = [a for a in itertools.product(range(dim + 1), repeat=dim + 1) if sum(a) == dim]
    points = np.array(alphas, dtype=float) / dim
    coef = np.array([math.factorial(dim) / math.prod(math.factorial(k) for k in a) for a in alphas])
    basis = coef[None, :] * np.prod(points[:, None, :] ** np.array(alphas)[None, :, :], axis=2)
    return points, np.linalg.inv(basis)


def determinant_bernstein(nodes: FloatArray) -> FloatArray:
    """The Bernstein coefficients of det DF on each cell, shape (E, P); det DF lies between their min and max."""
    e, _, d = nodes.shape
    points, inverse = _lattice(d)
    bary = np.tile(points, (e, 1))
    det = np.linalg.det(jacobians(np.repeat(nodes, points.shape[0], axis=0), bary)).reshape(e, -1)
    return np.asarray(det @ inverse.T)


def to_reference(
    nodes: FloatArray, x: FloatArray, start: FloatArray, iterations: int = 12
) -> tuple[FloatArray, FloatArray]:
    """Solve F(ξ) = x by Newton's method from barycentric ``start``; return barycentric ξ and |F(ξ) − x|.

    The iterates are kept in a box around the simplex, so points far outside a cell end with a large residual
    (the caller rejects them) rather than diverging.
    """
    xi = np.array(start[:, 1:])
    for _ in range(iterations):
        bary = np.column_stack([1.0 - xi.sum(axis=1), xi])
        residual = map_points(nodes, bary) - x
        jac = jacobians(nodes, bary)
        singular = np.abs(np.linalg.det(jac)) <= 1e-300
        jac[singular] = np.eye(jac.shape[1])  # far outside a strongly curved cell: stay put, rejected later
        step = np.linalg.solve(jac, residual[:, :, None])[:, :, 0]
        step[singular] = 0.0
        xi = np.clip(xi - step, -0.5, 1.5)
    bary = np.column_stack([1.0 - xi.sum(axis=1), xi])
    return bary, np.linalg.norm(map_points(nodes, bary) - x, axis=1)
