"""The domains of :mod:`privnoise.fisher._bubble_polynomials`: the unit ball and convex polygons in [−1, 1]².

* **The unit ball** of ℝ² or ℝ³: b = 1 − |t|². The rule is a product rule exact for polynomials of total degree
  ≤ N: Gauss–Legendre in the radius with the weight r^(d−1) folded in, the trapezoidal rule in the azimuth (exact
  for trigonometric degree ≤ N) and, in 3-D, Gauss–Legendre in cos θ.
* **A convex polygon** with vertices v_k (counter-clockwise): b = Π_k ℓ_k, ℓ_k(t) = n_k·(t − v_k) the distance to
  the line of edge k (n_k its inward unit normal), positive inside and zero on that edge, so b vanishes on the
  whole boundary and nowhere inside. The rule fans the polygon into triangles from its first vertex and maps the
  square to each by the collapsed (Duffy) map (ξ, η) = (u(1 − w), w), with Jacobian 1 − w: Gauss–Legendre in u
  and w, exact for total degree ≤ N with N/2 + 2 points each.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.typing import NDArray

from ._bubble_polynomials import BubbleDomain, legendre_times_x

__all__ = ["ball_domain", "ball_rule", "convex_polygon_domain"]

FloatArray = NDArray[np.float64]


@functools.lru_cache(maxsize=16)
def ball_rule(d: int, degree: int) -> tuple[FloatArray, FloatArray]:
    """Nodes (n, d) and weights (n,) on the unit ball, exact for polynomials of total degree ≤ ``degree``."""
    radial = degree // 2 + 2  # 2·radial − 1 ≥ degree + d − 1: the radius carries r^(d−1)
    r, wr = np.polynomial.legendre.leggauss(radial)
    r, wr = (r + 1.0) / 2.0, wr / 2.0 * ((r + 1.0) / 2.0) ** (d - 1)
    turns = degree + 2
    phi = 2.0 * math.pi * np.arange(turns) / turns
    wphi = np.full(turns, 2.0 * math.pi / turns)
    if d == 2:
        radii, angles = np.meshgrid(r, phi, indexing="ij")
        plane = np.stack([radii * np.cos(angles), radii * np.sin(angles)], axis=-1).reshape(-1, 2)
        return plane, np.outer(wr, wphi).reshape(-1)
    z, wz = np.polynomial.legendre.leggauss(degree // 2 + 2)
    rr, zz, pp = np.meshgrid(r, z, phi, indexing="ij")
    ss = np.sqrt(1.0 - zz**2)
    space = np.stack([rr * ss * np.cos(pp), rr * ss * np.sin(pp), rr * zz], axis=-1).reshape(-1, 3)
    weights = (wr[:, None, None] * wz[None, :, None] * wphi[None, None, :]).reshape(-1)
    return space, weights


def _ball_bubble(nodes: FloatArray) -> tuple[FloatArray, FloatArray]:
    return 1.0 - np.sum(nodes**2, axis=1), -2.0 * nodes.T


def _ball_multiply(coefficients: FloatArray) -> FloatArray:
    out = np.pad(coefficients, 2)[(slice(2, None),) * coefficients.ndim]  # m, on the grown array
    for axis in range(coefficients.ndim):
        out = out - legendre_times_x(legendre_times_x(coefficients, axis), axis)
    return out


def ball_domain(d: int) -> BubbleDomain:
    """The unit ball of ℝ^d (d = 2 or 3) with b = 1 − |t|²."""
    return BubbleDomain(d, 2, functools.partial(ball_rule, d), _ball_bubble, _ball_multiply)


def _polygon_rule(vertices: tuple[tuple[float, float], ...], degree: int) -> tuple[FloatArray, FloatArray]:
    v = np.asarray(vertices)
    count = degree // 2 + 2
    x, w = np.polynomial.legendre.leggauss(count)
    x, w = (x + 1.0) / 2.0, w / 2.0
    uu, ww = np.meshgrid(x, x, indexing="ij")
    xi, eta = (uu * (1.0 - ww)).reshape(-1), ww.reshape(-1)
    reference = (np.outer(w, w) * (1.0 - ww)).reshape(-1)  # ∫ over the reference triangle, area 1/2
    nodes, weights = [], []
    for k in range(1, v.shape[0] - 1):
        e1, e2 = v[k] - v[0], v[k + 1] - v[0]
        nodes.append(v[0] + np.outer(xi, e1) + np.outer(eta, e2))
        weights.append(reference * abs(e1[0] * e2[1] - e1[1] * e2[0]))
    return np.concatenate(nodes), np.concatenate(weights)


def convex_polygon_domain(vertices: FloatArray) -> BubbleDomain:
    """A convex polygon inside [−1, 1]² (vertices counter-clockwise) with b = Π_k ℓ_k."""
    v = np.asarray(vertices, dtype=float)
    edges = np.roll(v, -1, axis=0) - v
    normals = np.stack([-edges[:, 1], edges[:, 0]], axis=1) / np.linalg.norm(edges, axis=1, keepdims=True)
    offsets = -np.einsum("ki,ki->k", normals, v)  # ℓ_k(t) = n_k·t + offsets_k

    def bubble(nodes: FloatArray) -> tuple[FloatArray, FloatArray]:
        factors = nodes @ normals.T + offsets  # (n, k)
        values = np.prod(factors, axis=1)
        gradient = np.zeros((2, nodes.shape[0]))
        for k in range(factors.shape[1]):
            others = np.prod(np.delete(factors, k, axis=1), axis=1)
            gradient += normals[k][:, None] * others
        return values, gradient

    def multiply(coefficients: FloatArray) -> FloatArray:
        out = coefficients
        for normal, offset in zip(normals, offsets, strict=True):
            grown = np.pad(out, 1)[(slice(1, None),) * 2]
            out = offset * grown + normal[0] * legendre_times_x(out, 0) + normal[1] * legendre_times_x(out, 1)
        return out

    rule = functools.lru_cache(maxsize=8)(functools.partial(_polygon_rule, tuple(map(tuple, v.tolist()))))
    return BubbleDomain(2, v.shape[0], rule, bubble, multiply)
