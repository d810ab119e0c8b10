"""Upper bounds of Problem 1 (max Tr 𝓘⁻¹) from the set of information matrices that densities on W can have.

Let 𝒦 be the set of 𝓘_w = 4∫∇u∇uᵀ over u ∈ H¹₀(W) with ∫u² = 1, and B = (CCᵀ)⁻¹, so that Problem 1 is
sup_{X ∈ 𝒦} f(X), f(X) = Tr(X⁻¹B) = Tr((CᵀXC)⁻¹). Three facts give an upper bound that needs no density.

1. *f is convex and decreasing* in the Loewner order, and the Fisher information is matrix-convex in the density
   (Proposition 2 for the trace; for the matrix, ∇γ∇γᵀ/γ is the perspective of the matrix-convex xxᵀ), so a
   mixture of densities has information ⪯ the mixture of their informations. Hence sup_𝒦 f = sup_𝒦̂ f with 𝒦̂ = conv 𝒦 + PSD, a closed convex set.
2. *Its support function is Theorem 2's eigenvalue*: for M ⪰ 0, min_{X ∈ 𝒦̂} Tr(MX) = 4λ₁(M), λ₁(M) the
   principal Dirichlet eigenvalue of −∇·(M∇u) on W (the Rayleigh quotient of u is Tr(M𝓘_w)/4). So every
   X ∈ 𝒦̂ satisfies Tr(MX) ≥ 4λ for any λ ≤ λ₁(M). For M = vvᵀ this is (C1) of :mod:`~privnoise.fisher.chords`,
   λ₁(vvᵀ) = π²/L_v², exact and closed-form; for M ≻ 0, λ₁(M) = λ₁(Δ; M^{−½}W) is bounded below in closed form by
   Faber–Krahn, π j₀,₁² √det M/|W|, and by domain monotonicity in every rectangle containing M^{−½}W,
   π²(1/a² + 1/b²) for its sides a, b (:func:`eigenvalue_lower_bound`).
3. *The relaxation is a small problem.* U = sup{f(X) : Tr(M_k X) ≥ h_k} ≥ sup_𝒦 f for any such planes. In 2-D,
   write X = x₁e₁e₁ᵀ + x₂e₂e₂ᵀ in the frame e₁ = (cos φ, sin φ): each plane becomes p_k x₁ + q_k x₂ ≥ h_k with
   p_k, q_k ≥ 0, and f = b₁/x₁ + b₂/x₂ is convex and decreasing in (x₁, x₂), so its maximum over the polygon is at
   a vertex of the polygon's lower-left chain: the dual of the lower convex hull of the points (p_k, q_k)/h_k.
   The frame angle φ is searched on a grid, at the chord directions, and by golden sections around the best.

With exact λ₁(M) on a dense set of M the planes describe 𝒦̂ exactly and U is the supremum; the planes of the
closed forms (rank one, Faber–Krahn, rectangles) give a bound that is rigorous up to the search over φ, and
finite-element planes (λ₁ lowered by ten times its error estimate) tighten it where the maximiser is interior.

References
----------
F. Farokhi, H. Sandberg, Automatica 99 (2019): Problem 1, Theorem 1, Proposition 2, Theorem 2, Remarks 2 and 6.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import jn_zeros

from .._validation import as_matrix, check_positive_int
from ..exceptions import DimensionError, InvalidParameterError
from .chords import longest_chord
from .supports import Box, Ellipsoid, Polygon, Support

__all__ = ["Planes", "RelaxationBound", "eigenvalue_lower_bound", "relaxation_bound"]

FloatArray = NDArray[np.float64]

#: j₀,₁², the first Dirichlet eigenvalue of the unit disc (Faber–Krahn's constant).
BESSEL_ZERO_SQUARED = float(jn_zeros(0, 1)[0]) ** 2


def _support_function(support: Support, u: FloatArray) -> float:
    """max over w ∈ W of uᵀw."""
    if isinstance(support, Ellipsoid):
        return float(u @ support.center + math.sqrt(u @ np.asarray(support.shape) @ u))
    if isinstance(support, Box):
        return float(np.sum(np.where(u > 0, u * support.upper, u * support.lower)))
    assert isinstance(support, Polygon)
    return float(np.max(np.asarray(support.vertices) @ u))


def eigenvalue_lower_bound(support: Support, matrix: ArrayLike, *, orientations: int = 90) -> float:
    """A closed-form lower bound of λ₁ of −∇·(M∇u) = λu on a 2-D ``support`` (Dirichlet).

    λ₁(M; W) = λ₁(Δ; M^{−½}W) (substitute w = M^{½}z). Faber–Krahn bounds it by πj₀,₁²/|M^{−½}W|, and domain
    monotonicity by π²(1/a² + 1/b²) for a rectangle of sides a, b containing M^{−½}W; the best of Faber–Krahn
    and the bounding rectangles in ``orientations`` directions is returned.

    Examples
    --------
    >>> import math
    >>> from privnoise.fisher import Ball, Box
    >>> round(eigenvalue_lower_bound(Ball([0, 0], 1.0), [[1, 0], [0, 1]]), 6)          # j₀,₁²: exact on the disc
    5.783186
    >>> round(eigenvalue_lower_bound(Box([0, 0], [1, 1]), [[1, 0], [0, 1]]) / math.pi**2, 6)   # exact on the box
    2.0
    """
    owner = "eigenvalue_lower_bound"
    if not isinstance(support, Box | Polygon | Ellipsoid) or support.dim != 2:
        raise InvalidParameterError(f"`support` of `{owner}` must be a 2-D Box, Polygon or Ellipsoid.")
    m = np.asarray(matrix, dtype=float)
    if m.shape != (2, 2) or not np.allclose(m, m.T) or np.linalg.eigvalsh(m)[0] <= 0:
        raise InvalidParameterError(f"`matrix` of `{owner}` must be a symmetric positive definite 2×2 matrix.")
    eig, vec = np.linalg.eigh(m)
    inv_root = (vec / np.sqrt(eig)) @ vec.T
    best = math.pi * BESSEL_ZERO_SQUARED * math.sqrt(float(np.linalg.det(m))) / support.volume()
    for psi in np.linspace(0.0, math.pi / 2, orientations, endpoint=False):
        e = np.array([[math.cos(psi), math.sin(psi)], [-math.sin(psi), math.cos(psi)]])
        sides = [
            _support_function(support, inv_root @ d) + _support_function(support, -(inv_root @ d)) for d in e
        ]
        best = max(best, math.pi**2 * (1.0 / sides[0] ** 2 + 1.0 / sides[1] ** 2))
    return float(best)


@dataclass(frozen=True, slots=True)
class Planes:
    """Supporting planes Tr(M_k X) ≥ h_k of the achievable information matrices 𝓘_w.

    Attributes
    ----------
    weights : ndarray (K, 2, 2)
        The positive semi-definite M_k.
    levels : ndarray (K,)
        h_k ≤ 4λ₁(M_k).
    """

    weights: FloatArray
    levels: FloatArray

    @staticmethod
    def of(weights: list[FloatArray], levels: list[float]) -> Planes:
        return Planes(np.asarray(weights, dtype=float).reshape(-1, 2, 2), np.asarray(levels, dtype=float))

    def __add__(self, other: Planes) -> Planes:
        return Planes(np.concatenate([self.weights, other.weights]), np.concatenate([self.levels, other.levels]))


def chord_planes(support: Support, directions: ArrayLike) -> Planes:
    """The planes vᵀXv ≥ 4π²/L_v² (C1) for the given directions (angles, radians)."""
    thetas = np.asarray(directions, dtype=float).ravel()
    vs = np.column_stack([np.cos(thetas), np.sin(thetas)])
    levels = [longest_chord(support, v).information_bound for v in vs]
    return Planes(np.einsum("ki,kj->kij", vs, vs), np.asarray(levels))


@dataclass(frozen=True, slots=True)
class RelaxationBound:
    """The maximum of Tr(X⁻¹B) over the matrices X that satisfy a set of planes.

    Attributes
    ----------
    value : float
        U ≥ sup Tr 𝓘⁻¹ over every density on W (when the planes hold for all of them).
    information : ndarray (2, 2)
        The maximiser X of the relaxation (𝓘_w; very large across a chord when U is a chord limit).
    frame : float
        Its eigenvector angle φ.
    """

    value: float
    information: FloatArray
    frame: float


def _frame_value(planes: Planes, b: FloatArray, phi: float, edge: Callable[[float], Planes]) -> tuple[float, float, float]:
    e1 = np.array([math.cos(phi), math.sin(phi)])
    e2 = np.array([-e1[1], e1[0]])
    own = edge(phi) + planes
    p = np.einsum("i,kij,j->k", e1, own.weights, e1)
    q = np.einsum("i,kij,j->k", e2, own.weights, e2)
    pts = np.column_stack([p, q]) / own.levels[:, None]
    pts = pts[np.lexsort((pts[:, 1], pts[:, 0]))]
    chain: list[FloatArray] = []
    for a in pts:  # Andrew's lower hull; the part of negative slope faces the origin
        while len(chain) >= 2:
            o, m = chain[-2], chain[-1]
            if (m[0] - o[0]) * (a[1] - o[1]) - (m[1] - o[1]) * (a[0] - o[0]) <= 0:
                chain.pop()
            else:
                break
        chain.append(a)
    b1, b2 = float(e1 @ b @ e1), float(e2 @ b @ e2)
    hull = np.asarray(chain)
    a, c = hull[:-1], hull[1:]
    keep = np.cumprod(c[:, 1] < a[:, 1]).astype(bool)  # the edges of negative slope, from the left end
    a, c = a[keep], c[keep]
    det = a[:, 0] * c[:, 1] - a[:, 1] * c[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.column_stack([(c[:, 1] - a[:, 1]) / det, (a[:, 0] - c[:, 0]) / det])
    # a vertex must satisfy every plane (this drops the edges between coincident points, where det ≈ 0)
    ok = np.isfinite(x).all(axis=1) & (x > 0).all(axis=1)
    ok[ok] = np.min(pts @ x[ok].T, axis=0) >= 1.0 - 1e-9
    if not ok.any():
        return (-math.inf, math.nan, math.nan)
    values = b1 / x[ok, 0] + b2 / x[ok, 1]
    k = int(np.argmax(values))
    return (float(values[k]), float(x[ok][k, 0]), float(x[ok][k, 1]))


def relaxation_bound(
    support: Support,
    gram: ArrayLike,
    planes: Planes,
    *,
    frames: int = 360,
    candidates: tuple[float, ...] = (),
) -> RelaxationBound:
    """U = max Tr(X⁻¹(CCᵀ)⁻¹) over X with Tr(M_k X) ≥ h_k for ``planes`` and vᵀXv ≥ 4π²/L_v² for v along X's frame.

    Parameters
    ----------
    support : Box, Polygon or Ellipsoid (2-D)
        W: the frame's own chord planes (v = e₁, e₂) are added for every frame, so that x₁, x₂ stay bounded below.
    gram : array_like (2, 2)
        CCᵀ.
    planes : Planes
        Planes valid for every density on W (chord planes, closed-form or finite-element eigenvalue planes).
    frames : int
        Grid of frame angles φ in [0, π); ``candidates`` are added, and golden sections refine the best three.

    Returns
    -------
    RelaxationBound
    """
    owner = "relaxation_bound"
    if not isinstance(support, Box | Polygon | Ellipsoid) or support.dim != 2:
        raise InvalidParameterError(f"`support` of `{owner}` must be a 2-D Box, Polygon or Ellipsoid.")
    g = as_matrix(gram, "gram", owner, positive_definite=True)
    if g.shape != (2, 2):
        raise DimensionError(f"`gram` of `{owner}` must be 2×2 (CCᵀ of a plane support); got {g.shape}.")
    if not isinstance(planes, Planes):
        raise InvalidParameterError(f"`planes` of `{owner}` must be Planes; got {type(planes).__name__}.")
    frames = check_positive_int(frames, "frames", owner, minimum=8)
    b: FloatArray = np.asarray(np.linalg.inv(g), dtype=np.float64)

    def edge(phi: float) -> Planes:
        return chord_planes(support, [phi, phi + math.pi / 2])

    def value(phi: float) -> float:
        return _frame_value(planes, b, phi, edge)[0]

    grid = np.linspace(0.0, math.pi, frames, endpoint=False)
    angles = np.concatenate([grid, np.mod(np.asarray(candidates, dtype=float), math.pi)])
    values = np.array([value(float(a)) for a in angles])
    order = np.argsort(values)[::-1]
    best_phi, best = float(angles[order[0]]), float(values[order[0]])
    step = math.pi / frames
    for start in angles[order[:3]]:
        lo, hi = float(start) - step, float(start) + step
        for _ in range(30):
            m1, m2 = hi - 0.618 * (hi - lo), lo + 0.618 * (hi - lo)
            if value(m1) >= value(m2):
                hi = m2
            else:
                lo = m1
        mid = 0.5 * (lo + hi)
        if value(mid) > best:
            best_phi, best = mid, value(mid)
    _, x1, x2 = _frame_value(planes, b, best_phi, edge)
    e1 = np.array([math.cos(best_phi), math.sin(best_phi)])
    e2 = np.array([-e1[1], e1[0]])
    info = x1 * np.outer(e1, e1) + x2 * np.outer(e2, e2)
    return RelaxationBound(value=best, information=info, frame=best_phi % math.pi)
