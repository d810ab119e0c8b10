"""A guaranteed bracket of λ₁ of −∇·(A∇u) = λu on any polygon, by the method of particular solutions.

With B = A^(−½) the map y = Bx turns the operator into −Δ on the polygon BW, with the same eigenvalues. At a corner
of angle θ the Fourier–Bessel functions J_ν(√λ r) sin(νφ), ν = kπ/θ, solve Δu + λu = 0 exactly and vanish on the
corner's two edges; r^ν is the corner singularity, so a few of them capture a re-entrant corner that polynomials and
finite elements only approach algebraically. Expansions sit at every corner whose angle is not π/n (at the widest
corner if every angle is), each with its branch cut along a ray that leaves the polygon at once.

The combination u of such functions that is smallest on the boundary is found by the subspace angle of Betcke and
Trefethen: the orthonormalised basis sampled at boundary and interior points, λ chosen to minimise the smallest
singular value of its boundary block. The bound does not depend on how u was found. Fox, Henrici and Moler
(1967): if Δu + λu = 0 in a domain of area |W| and u is continuous to the boundary, some Dirichlet eigenvalue λ_k
satisfies |λ − λ_k| ≤ ε λ_k with ε = √|W| max_∂W |u| / ‖u‖ (u = h + v with h harmonic and v ∈ H¹₀; the maximum
principle gives ‖h‖ ≤ √|W| max|u|, and the eigen-expansion gives ‖u‖ ≤ max_k λ_k/|λ_k − λ| ‖h‖). Hence
λ_k ∈ [λ/(1 + ε), λ/(1 − ε)], and k = 1 when λ/(1 − ε) is below a Crouzeix–Raviart lower bound of λ₂.

The maximum of |u| on each edge is bounded by the sum of the magnitudes of its Chebyshev coefficients (u is
analytic along an edge: the functions of the edge's own corners vanish on it), the degree doubled until the last
coefficients are at rounding level; ‖u‖ is taken from below, from two quadrature levels and ten times their
difference.

References
----------
L. Fox, P. Henrici, C. Moler, "Approximations and bounds for eigenvalues of elliptic operators", SIAM J. Numer.
Anal. 4 (1967).
T. Betcke, L. N. Trefethen, "Reviving the method of particular solutions", SIAM Review 47 (2005).
F. Farokhi, H. Sandberg, Automatica 99 (2019), Theorem 2: the eigenproblem bracketed here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray
from scipy import linalg, special

from ..exceptions import InvalidParameterError
from ._fem_bounds import ROUNDING
from ._spectral_common import SpectralBracket, meshed_lower_bounds
from .supports import Polygon

__all__ = ["particular_solutions_bracket"]

FloatArray = NDArray[np.float64]

# Crouzeix–Raviart meshes for λ̂₁, λ̂₂: refined while λ̂₂ < _GAP·λ, up to _CELLS cells.
_GAP = 1.1
_CELLS = 100_000
# Sample points: per edge on the boundary, in all inside.
_EDGE_POINTS = 100
_INSIDE_POINTS = 300
# Directions tried for a corner's branch cut, as fractions of its exterior angle: the bisector first.
_CUT_FRACTIONS = tuple(sorted((k / 128 for k in range(1, 128)), key=lambda f: abs(f - 0.5)))
# Singular values of the sampled basis below this fraction of the largest are dropped (a dependent basis).
_RANK_TOL = 1e-14


@dataclass(frozen=True, slots=True)
class _Expansion:
    """Fourier–Bessel functions at ``corner`` of angle ``angle``; φ is measured counter-clockwise from the direction
    ``start`` of the outgoing edge and taken in (cut − 2π, cut]."""

    corner: FloatArray
    start: float
    angle: float
    cut: float

    def evaluate(self, points: FloatArray, lam: float, terms: int) -> FloatArray:
        d = points - self.corner
        r = np.hypot(d[:, 0], d[:, 1])
        phi = np.mod(np.arctan2(d[:, 1], d[:, 0]) - self.start, 2.0 * math.pi)
        phi = np.where(phi > self.cut, phi - 2.0 * math.pi, phi)
        nu = np.arange(1, terms + 1) * (math.pi / self.angle)
        return special.jv(nu[None, :], math.sqrt(lam) * r[:, None]) * np.sin(nu[None, :] * phi[:, None])


def _angles(v: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Each corner's interior angle and the direction of its outgoing edge (counter-clockwise polygon)."""
    out = np.roll(v, -1, axis=0) - v
    back = np.roll(v, 1, axis=0) - v
    start = np.arctan2(out[:, 1], out[:, 0])
    angle = np.mod(np.arctan2(back[:, 1], back[:, 0]) - start, 2.0 * math.pi)
    return angle, start


def _expansions(v: FloatArray) -> list[_Expansion]:
    """Expansions at the corners whose angle is not π/n (the widest corner if all are), each with a cut ray that
    meets the polygon only at its corner."""
    from .._optional import require

    shapely = require("shapely", feature="the method of particular solutions", extra="fem")
    angle, start = _angles(v)
    ratio = math.pi / angle
    singular = np.flatnonzero(np.abs(ratio - np.round(ratio)) > 1e-9)
    chosen = singular if singular.size else np.array([int(np.argmax(angle))])
    region = shapely.Polygon(v)
    length = 4.0 * float(np.max(np.ptp(v, axis=0)))
    out = []
    for j in chosen.tolist():
        for fraction in _CUT_FRACTIONS:  # the exterior bisector first, then ever closer to the edges
            cut = float(angle[j] + fraction * (2.0 * math.pi - angle[j]))
            end = v[j] + length * np.array([math.cos(start[j] + cut), math.sin(start[j] + cut)])
            step = 1e-9 * length * np.array([math.cos(start[j] + cut), math.sin(start[j] + cut)])
            if not shapely.LineString([v[j] + step, end]).intersects(region):
                out.append(_Expansion(v[j].copy(), float(start[j]), float(angle[j]), cut))
                break
        else:
            raise InvalidParameterError(
                f"`support`: none of {len(_CUT_FRACTIONS)} rays across the exterior angle of the corner "
                f"{v[j].tolist()} (in the coordinates A^(-1/2)x) leaves the polygon without crossing it, so no "
                "expansion can sit there."
            )
    return out


def _points(v: FloatArray, count: int) -> FloatArray:
    """``count`` points per edge, clustered toward the corners (Chebyshev nodes of the second kind)."""
    s = (1.0 - np.cos(math.pi * (np.arange(count) + 0.5) / count)) / 2.0
    nxt = np.roll(v, -1, axis=0)
    return (v[:, None, :] + s[None, :, None] * (nxt - v)[:, None, :]).reshape(-1, 2)


def _inside(polygon: Polygon, v: FloatArray, count: int) -> FloatArray:
    rng = np.random.default_rng(20070101)  # sample points only: any points inside will do
    low, high = v.min(axis=0), v.max(axis=0)
    found: list[FloatArray] = []
    while sum(len(f) for f in found) < count:
        trial = low + (high - low) * rng.random((4 * count, 2))
        found.append(trial[polygon.contains(trial)])
    return np.concatenate(found)[:count]


def _basis(expansions: list[_Expansion], points: FloatArray, lam: float, terms: int) -> FloatArray:
    return np.hstack([e.evaluate(points, lam, terms) for e in expansions])


def _subspace(expansions: list[_Expansion], boundary: FloatArray, inside: FloatArray, lam: float,
              terms: int) -> tuple[float, FloatArray]:
    """The smallest singular value of the boundary block of the orthonormalised basis, and the coefficients of
    the combination that attains it."""
    a = np.vstack([_basis(expansions, boundary, lam, terms), _basis(expansions, inside, lam, terms)])
    scale = np.linalg.norm(a, axis=0)
    scale[scale == 0.0] = 1.0
    u, s, vt = linalg.svd(a / scale, full_matrices=False)
    keep = s > _RANK_TOL * s[0]
    q = u[: boundary.shape[0], keep]
    _, sigma, wt = linalg.svd(q, full_matrices=False)
    coefficients = (vt[keep].T @ (wt[-1] / s[keep])) / scale
    return float(sigma[-1]), coefficients


def _locate(expansions: list[_Expansion], boundary: FloatArray, inside: FloatArray, low: float, high: float,
            terms: int) -> float:
    """The λ in [low, high] of the first deep minimum of the smallest singular value (a scan, then golden
    sections)."""
    grid = np.linspace(low, high, 81)
    values = np.array([_subspace(expansions, boundary, inside, float(x), terms)[0] for x in grid])
    minima = [i for i in range(1, grid.size - 1) if values[i] <= values[i - 1] and values[i] <= values[i + 1]]
    # the lowest dip (λ₁ is the smallest eigenvalue above λ̂₁), even where a higher one is deeper
    deep = [i for i in minima if values[i] <= 0.5 * float(np.median(values))] or [int(np.argmin(values))]
    i = deep[0]
    lo, hi = float(grid[max(i - 1, 0)]), float(grid[min(i + 1, grid.size - 1)])
    return _refine_minimum(expansions, boundary, inside, (lo + hi) / 2.0, (hi - lo) / 2.0, terms)


def _refine_minimum(expansions: list[_Expansion], boundary: FloatArray, inside: FloatArray, guess: float,
                    width: float, terms: int) -> float:
    """Golden-section search of the smallest singular value's minimum in [guess − width, guess + width] down to
    1e-5 of the window (near λ₁ the value is V-shaped, ≈ |λ − λ₁| times a slope, above a floor); a minimum at an
    end of the window moves the window there, up to 20 times."""

    def value(x: float) -> float:
        return _subspace(expansions, boundary, inside, x, terms)[0]

    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    width = min(width, 0.5 * guess)
    for _ in range(20):
        a, b = guess - width, guess + width
        c, d = b - ratio * (b - a), a + ratio * (b - a)
        fc, fd = value(c), value(d)
        while b - a > max(1e-5 * width, 1e-15 * guess):
            if fc <= fd:
                b, d, fd = d, c, fc
                c = b - ratio * (b - a)
                fc = value(c)
            else:
                a, c, fc = c, d, fd
                d = a + ratio * (b - a)
                fd = value(d)
        found = c if fc <= fd else d
        if abs(abs(found - guess) - width) > 1e-3 * width:
            return found
        guess = found
        width = min(width, 0.5 * guess)
    return found


def _edge_maximum(expansions: list[_Expansion], v: FloatArray, c: FloatArray, lam: float, terms: int) -> float:
    """An upper bound of max |u| on the boundary: per edge, Σ|Chebyshev coefficients| of u along the edge plus the
    size of the last ones, at a degree doubled until they are at rounding level."""
    nxt = np.roll(v, -1, axis=0)
    worst = 0.0
    for a, b in zip(v, nxt, strict=True):
        degree = 32
        while True:
            t = np.cos(math.pi * (np.arange(degree + 1) + 0.5) / (degree + 1))  # Chebyshev points on [−1, 1]
            points = a + ((t + 1.0) / 2.0)[:, None] * (b - a)
            basis = _basis(expansions, points, lam, terms)
            values = basis @ c
            # the interpolant at the Chebyshev points of the first kind: discrete orthogonality of cos(kθ_j)
            coefficients = np.polynomial.chebyshev.chebvander(t, degree).T @ values * (2.0 / (degree + 1))
            coefficients[0] /= 2.0
            tail = float(np.max(np.abs(coefficients[-4:])))
            total = float(np.sum(np.abs(coefficients)))
            if tail <= 1e-13 * max(total, 1e-300) or degree >= 1024:
                break
            degree *= 2
        # rounding of the functions' values: about 1e-14 of the largest term
        size = float(np.max(np.abs(basis) @ np.abs(c)))
        worst = max(worst, total + 4.0 * tail + 1e-13 * size)
    return worst


def _norm_below(polygon_y: Polygon, expansions: list[_Expansion], c: FloatArray, lam: float, terms: int) -> float:
    """A lower estimate of ‖u‖ on the polygon: triangles refined once and twice with a collapsed Gauss rule,
    the smaller value less ten times their difference."""
    from ._meshes import quiet_skfem, refine, vertex_mesh

    x, w = np.polynomial.legendre.leggauss(10)
    s, ws = (x + 1.0) / 2.0, w / 2.0
    a_, b_ = np.meshgrid(s, s, indexing="ij")
    ref = np.column_stack([a_.ravel(), (b_ * (1.0 - a_)).ravel()])  # collapsed square → triangle
    ref_w = (np.outer(ws, ws) * (1.0 - a_)).ravel()
    mesh = vertex_mesh(*polygon_y.initial_mesh())
    values = []
    with quiet_skfem():
        for level in range(3):
            mesh = refine(mesh, polygon_y)
            if level < 1:
                continue
            p = mesh.p.T[mesh.t.T]  # (cells, 3, 2)
            e1, e2 = p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]
            jac = np.abs(e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0])
            pts = p[:, 0][:, None, :] + ref[None, :, 0:1] * e1[:, None, :] + ref[None, :, 1:2] * e2[:, None, :]
            u = _basis(expansions, pts.reshape(-1, 2), lam, terms) @ c
            values.append(math.sqrt(float(np.sum((u.reshape(len(jac), -1) ** 2) * ref_w[None, :] * jac[:, None]))))
    return min(values) - 10.0 * abs(values[1] - values[0])


def _next_terms(seen: list[tuple[int, float]], target: float) -> int:
    """The next number of functions per expansion: where the estimates' geometric decay reaches ``target``
    (rounded up to a multiple of 5, between 5 and 30 more), or 10 more before two estimates are known."""
    terms, estimate = seen[-1]
    if len(seen) < 2 or seen[-2][1] <= estimate:
        return terms + 10
    rate = math.log(seen[-2][1] / estimate) / (terms - seen[-2][0])
    wanted = terms + math.log(max(estimate / target, 1.0)) / rate + 2.0
    return int(min(max(5 * math.ceil(wanted / 5.0), terms + 5), terms + 30))


def particular_solutions_bracket(support: Polygon, matrix: FloatArray, rtol: float,
                                 max_terms: int) -> SpectralBracket:
    """The bracket of λ₁ on the polygon ``support`` (any simple polygon; checked by
    :func:`~privnoise.fisher.spectral_bracket`): 10 functions per expansion, then as many as the estimates' decay
    asks for, up to ``max_terms``, until its relative width is ≤ ``rtol``. ``degree`` of the result is the number of functions per expansion,
    ``defect`` the Fox–Henrici–Moler ε of the last bound computed."""
    evals, evecs = np.linalg.eigh(matrix)
    to_y = evecs @ np.diag(evals**-0.5) @ evecs.T  # A^(−½)
    v = np.asarray(support.vertices, dtype=float) @ to_y.T
    mapped = Polygon(v)
    expansions = _expansions(v)
    area = mapped.volume()
    everywhere = _inside(mapped, v, _INSIDE_POINTS)

    def samples(terms: int) -> tuple[FloatArray, FloatArray]:  # about three rows per unknown on the boundary
        columns = terms * len(expansions)
        per_edge = int(np.clip(3 * columns // len(v) + 10, 24, _EDGE_POINTS))
        return _points(v, per_edge), everywhere[: int(np.clip(2 * columns, 60, _INSIDE_POINTS))]

    first, second = meshed_lower_bounds(support, matrix, 0.0, 0)
    lam = _locate(expansions, *samples(10), first, 1.5 * second, 10)
    if second < _GAP * lam:
        first, second = meshed_lower_bounds(support, matrix, _GAP * lam, _CELLS)
    bracket = None
    width = 0.02 * lam
    terms, seen = min(10, max_terms), []
    while True:
        boundary, inside = samples(terms)
        lam = _refine_minimum(expansions, boundary, inside, lam, width, terms)
        _, c = _subspace(expansions, boundary, inside, lam, terms)
        # a cheap estimate of ε from the samples; the bound is computed only where it may meet rtol
        on_boundary = float(np.max(np.abs(_basis(expansions, boundary, lam, terms) @ c)))
        mean_square = float(np.mean((_basis(expansions, inside, lam, terms) @ c) ** 2))
        estimate = math.sqrt(area) * on_boundary / math.sqrt(max(area * mean_square, 1e-300))
        seen.append((terms, estimate))
        width = min(max(20.0 * estimate * lam, 1e-13 * lam), 0.05 * lam)
        if estimate <= rtol / 4.0 or terms >= max_terms:
            sup = _edge_maximum(expansions, v, c, lam, terms)
            norm = _norm_below(mapped, expansions, c, lam, terms)
            epsilon = math.sqrt(area) * sup / norm if norm > 0 else math.inf
            if epsilon < 1.0 and lam / (1.0 - epsilon) < second:
                low = max(first, lam / (1.0 + epsilon) * (1.0 - ROUNDING))
                up = lam / (1.0 - epsilon) * (1.0 + ROUNDING)
                if bracket is not None:
                    low, up = max(bracket.low, low), min(bracket.up, up)
                bracket = SpectralBracket(low, up, terms, terms * len(expansions), second, epsilon, False)
                if bracket.relative_width <= rtol:
                    return replace(bracket, converged=True)
            if terms >= max_terms:
                break
        terms = min(max_terms, _next_terms(seen, rtol / 4.0))
    if bracket is None:
        return SpectralBracket(first, second, 0, 0, second, math.inf, False)
    return bracket
