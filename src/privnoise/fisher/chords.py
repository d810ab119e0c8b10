"""Longest chords of a planar support, and the densities that concentrate on them (Problem 1's limiting sequences).

Problem 1 (Farokhi & Sandberg 2019) maximises Tr 𝓘⁻¹ = Tr(𝓘_w⁻¹ B), B = (CCᵀ)⁻¹, over densities γ = u² on W with
𝓘_w = 4∫∇u∇uᵀ. Two facts about chords drive its solution.

*Every density pays at least 4π²/L_v² in direction v.* For a unit vector v let L_v be the supremum of the lengths
of the segments parallel to v that lie in W (the longest chord in direction v; for a non-convex W, the longest
connected piece of a line). On each such segment the 1-D Wirtinger (Dirichlet–Poincaré) inequality gives
∫(∂_v u)² ≥ π²/ℓ² ∫u² ≥ π²/L_v² ∫u², and integrating over the parallel segments (Fubini)

    vᵀ𝓘_w v = 4∫(∂_v u)² ≥ 4π²/L_v²,                                                        (C1)

the 1-D Fisher information of the cos² density on an interval of length L_v (Corollary 1 in one dimension).

*A thin rectangle along the chord reaches it.* Let R be the rectangle of length 2A along v and width 2D along the
normal n, centred at m, and γ_R(w) = cos²(πa/2A) cos²(πb/2D)/(AD) with a = vᵀ(w − m), b = nᵀ(w − m). It
integrates to one, vanishes on ∂R and outside R, and its information is 𝓘_w = (π²/A²)vvᵀ + (π²/D²)nnᵀ, so

    Tr 𝓘⁻¹ = (A² vᵀBv + D² nᵀBn)/π².                                                         (C2)

As D → 0 with R ⊂ W, 2A → L_v and Tr 𝓘⁻¹ → L_v² vᵀBv/(4π²): the *chord limit* V = sup_v L_v² vᵀBv/(4π²) is a lower
bound of sup Tr 𝓘⁻¹, approached by an explicit sequence of feasible densities whose information across the chord
blows up (π²/D²), so that the sequence has no limit density. Whether V is the supremum, and whether some other
density attains it, is decided by the upper bounds of :mod:`~privnoise.fisher.problem1_bounds`.

References
----------
F. Farokhi, H. Sandberg, Automatica 99 (2019): Problem 1, Theorem 1, Corollary 1, Remarks 2 and 6.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, as_matrix, check_positive_int
from ..exceptions import DimensionError, InvalidParameterError
from .supports import Box, Ellipsoid, Polygon, Support

__all__ = ["Chord", "ChordDensity", "ChordLimit", "chord_density", "chord_kinks", "chord_limit", "longest_chord"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Chord:
    """The longest segment of a support parallel to ``direction`` (a limit of segments inside W when it touches ∂W).

    Attributes
    ----------
    direction : ndarray (2,)
        Unit vector v.
    length : float
        L_v, the supremum of the lengths of segments parallel to v inside W.
    start, end : ndarray (2,)
        Its end points (on the closure of W).
    side : int
        Where W extends from the chord: +1 toward the normal n = (−v₂, v₁), −1 away from it, 0 on both sides.
    gap : float
        How far the band of parallel segments stays inside one piece where the segments' ends move linearly
        (a polygon's next vertex offset; ``inf`` for an ellipse).
    """

    direction: FloatArray
    length: float
    start: FloatArray
    end: FloatArray
    side: int
    gap: float

    @property
    def information_bound(self) -> float:
        """4π²/L_v²: the least vᵀ𝓘_w v of any density on W, (C1)."""
        return 4.0 * math.pi**2 / self.length**2


def _normal(v: FloatArray) -> FloatArray:
    return np.array([-v[1], v[0]])


def _polygon_vertices(support: Support, owner: str) -> FloatArray | None:
    if isinstance(support, Box):
        if support.dim != 2:
            raise InvalidParameterError(f"`support` of `{owner}` must be 2-D (chords of a plane support).")
        (x0, y0), (x1, y1) = support.lower, support.upper
        return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=float)
    if isinstance(support, Polygon):
        return np.asarray(support.vertices, dtype=float)
    if isinstance(support, Ellipsoid):
        if support.dim != 2:
            raise InvalidParameterError(f"`support` of `{owner}` must be 2-D (chords of a plane support).")
        return None
    raise InvalidParameterError(
        f"`support` of `{owner}` must be a 2-D Box, Polygon or Ellipsoid; got {type(support).__name__}."
    )


def chord_kinks(support: Support) -> FloatArray:
    """Directions (angles in [0, π)) where L_v may have a kink: those of a polygon's vertex-to-vertex segments.

    Between them the chords' ends slide along fixed edges and L_v is smooth; an ellipse has none.
    """
    vertices = _polygon_vertices(support, "chord_kinks")
    if vertices is None:
        return np.empty(0)
    diffs = (vertices[:, None, :] - vertices[None, :, :]).reshape(-1, 2)
    diffs = diffs[np.linalg.norm(diffs, axis=1) > 0]
    return np.unique(np.round(np.mod(np.arctan2(diffs[:, 1], diffs[:, 0]), math.pi), 15))


def _polygon_pieces(vertices: FloatArray, v: FloatArray, offset: float) -> FloatArray:
    """The connected pieces [t₀, t₁] (t = vᵀw) of the line nᵀw = offset inside the polygon (even–odd rule)."""
    n = _normal(v)
    a, b = vertices, np.roll(vertices, -1, axis=0)
    da, db = a @ n - offset, b @ n - offset
    cross = da * db < 0
    t = np.sort((da[cross] * (b[cross] @ v) - db[cross] * (a[cross] @ v)) / (da[cross] - db[cross]))
    return t[: 2 * (t.size // 2)].reshape(-1, 2)


def _ellipse_piece(support: Ellipsoid, v: FloatArray, offset: float) -> FloatArray:
    """The piece of the line nᵀw = offset inside the ellipse (empty when the line misses it)."""
    n = _normal(v)
    p = np.linalg.inv(np.asarray(support.shape))
    c0 = float(n @ support.center)
    base = np.asarray(support.center) + (offset - c0) * n  # a point of the line; w = base + s v
    qa, qb, qc = v @ p @ v, v @ p @ (base - support.center), (base - support.center) @ p @ (base - support.center) - 1
    disc = qb * qb - qa * qc
    if disc <= 0:
        return np.empty((0, 2))
    root = math.sqrt(disc)
    s0, s1 = (-qb - root) / qa, (-qb + root) / qa
    t0 = float(v @ base)
    return np.array([[t0 + s0, t0 + s1]])


def longest_chord(support: Support, direction: ArrayLike) -> Chord:
    """The longest chord of a 2-D ``support`` parallel to ``direction``: the L_v of (C1).

    For a polygon the pieces of the lines nᵀw = c inside W have ends that move linearly in c between consecutive
    vertex offsets, so the supremum is a limit at a vertex offset, evaluated by linear extrapolation from inside
    each such interval (a chord through a re-entrant corner, like the L-shape's diagonal, is the limit of chords
    beside it). For an ellipse {(w − c)ᵀS⁻¹(w − c) ≤ 1} it is the chord through the centre, 2/√(vᵀS⁻¹v).

    Examples
    --------
    >>> from privnoise.fisher import Box
    >>> round(longest_chord(Box([-1, -1], [1, 1]), [1, -1]).length ** 2, 12)       # the diagonal, 2√2
    8.0
    """
    owner = "longest_chord"
    vertices = _polygon_vertices(support, owner)
    d = as_finite_array(direction, "direction", owner, ndim=1)
    if d.shape != (2,) or float(np.linalg.norm(d)) == 0.0:
        raise InvalidParameterError(f"`direction` of `{owner}` must be a non-zero 2-vector; got {d.tolist()}.")
    v = d / np.linalg.norm(d)
    n = _normal(v)
    if vertices is None:
        assert isinstance(support, Ellipsoid)
        c0 = float(n @ support.center)
        (t0, t1), = _ellipse_piece(support, v, c0)
        return Chord(v, t1 - t0, c0 * n + t0 * v, c0 * n + t1 * v, 0, math.inf)
    offsets = np.unique(vertices @ n)
    scale = float(np.ptp(offsets))
    best: tuple[float, float, float, float, int, float] = (-1.0, 0.0, 0.0, 0.0, 0, 0.0)
    for lo, hi in zip(offsets[:-1], offsets[1:], strict=True):
        if hi - lo <= 1e-12 * scale:
            continue
        c1, c2 = lo + (hi - lo) / 3.0, lo + 2.0 * (hi - lo) / 3.0
        p1, p2 = _polygon_pieces(vertices, v, c1), _polygon_pieces(vertices, v, c2)
        if p1.shape != p2.shape:
            continue
        for end, side in ((lo, 1), (hi, -1)):
            pe = p1 + (p2 - p1) * (end - c1) / (c2 - c1)
            k = int(np.argmax(pe[:, 1] - pe[:, 0]))
            length = float(pe[k, 1] - pe[k, 0])
            if length > best[0] * (1 + 1e-12):
                best = (length, float(end), float(pe[k, 0]), float(pe[k, 1]), side, float(hi - lo))
    length, c, t0, t1, side, gap = best
    return Chord(v, length, c * n + t0 * v, c * n + t1 * v, side, gap)


@dataclass(frozen=True, slots=True)
class ChordDensity:
    """The product cos² density on a rectangle along a chord: an explicit feasible density of Problem 1, (C2).

    Attributes
    ----------
    center : ndarray (2,)
        Centre m of the rectangle.
    direction : ndarray (2,)
        Unit vector v along the chord; the normal is n = (−v₂, v₁).
    half_length, half_width : float
        A and D: the rectangle is {m + a v + b n : |a| ≤ A, |b| ≤ D}.
    """

    center: FloatArray
    direction: FloatArray
    half_length: float
    half_width: float

    def pdf(self, w: ArrayLike, /) -> FloatArray:
        """γ(w) = cos²(πa/2A) cos²(πb/2D)/(AD) inside the rectangle, 0 outside."""
        x = np.asarray(w, dtype=float) - self.center
        a, b = x @ self.direction, x @ _normal(self.direction)
        big_a, big_d = self.half_length, self.half_width
        inside = (np.abs(a) <= big_a) & (np.abs(b) <= big_d)
        value = np.cos(np.pi * a / (2 * big_a)) ** 2 * np.cos(np.pi * b / (2 * big_d)) ** 2 / (big_a * big_d)
        return np.where(inside, value, 0.0)

    def fisher_information(self) -> FloatArray:
        """𝓘_w = (π²/A²)vvᵀ + (π²/D²)nnᵀ (Corollary 1 along each side of the rectangle)."""
        v, n = self.direction, _normal(self.direction)
        return np.asarray(
            math.pi**2 / self.half_length**2 * np.outer(v, v) + math.pi**2 / self.half_width**2 * np.outer(n, n)
        )

    def trace_inverse(self, gram: ArrayLike) -> float:
        """Tr 𝓘⁻¹ = Tr(𝓘_w⁻¹(CCᵀ)⁻¹) = (A²vᵀBv + D²nᵀBn)/π², (C2)."""
        b = np.linalg.inv(np.asarray(gram, dtype=float))
        v, n = self.direction, _normal(self.direction)
        return float((self.half_length**2 * v @ b @ v + self.half_width**2 * n @ b @ n) / math.pi**2)


def chord_density(support: Support, chord: Chord, half_width: float) -> ChordDensity:
    """The widest-fitting rectangle of half-width ``half_width`` beside ``chord`` inside ``support``, with cos² on it.

    The rectangle lies on the chord's ``side`` (both sides, centred, for an ellipse). Its half-length is the largest
    for which it fits: for a polygon the band of parallel pieces is kept within one interval of linear motion
    (``half_width`` is capped there), so the pieces at the band's two edges bound every piece between them; for an
    ellipse, which is convex, the rectangle's corners on the boundary suffice.
    """
    owner = "chord_density"
    vertices = _polygon_vertices(support, owner)
    if not (isinstance(half_width, float | int) and math.isfinite(half_width) and half_width > 0):
        raise InvalidParameterError(f"`half_width` of `{owner}` must be a finite number > 0; got {half_width!r}.")
    v, n = chord.direction, _normal(chord.direction)
    c = float(n @ chord.start)
    t_mid = 0.5 * float(v @ (chord.start + chord.end))
    if vertices is None:
        assert isinstance(support, Ellipsoid)
        piece = _ellipse_piece(support, v, c + half_width)
        if piece.size == 0:
            raise InvalidParameterError(f"`half_width` of `{owner}` is wider than the support; got {half_width!r}.")
        lo, hi = float(piece[0, 0]), float(piece[0, 1])
        centre_offset, d = c, float(half_width)
    else:
        d = min(float(half_width), 0.5 * chord.gap * (1 - 1e-9))
        lo, hi = float(v @ chord.start), float(v @ chord.end)  # the band's first edge: the chord itself
        pieces = _polygon_pieces(vertices, v, c + chord.side * 2.0 * d)
        k = int(np.argmin(np.abs(pieces.mean(axis=1) - t_mid)))
        lo, hi = max(lo, float(pieces[k, 0])), min(hi, float(pieces[k, 1]))
        centre_offset = c + chord.side * d
    center = centre_offset * n + 0.5 * (lo + hi) * v
    return ChordDensity(center=center, direction=v, half_length=0.5 * (hi - lo), half_width=d)


@dataclass(frozen=True, slots=True)
class ChordLimit:
    """The chord limit V = sup_v L_v² vᵀBv/(4π²) of Problem 1, its chord and a sequence of densities approaching it.

    Attributes
    ----------
    value : float
        V, the limit of Tr 𝓘⁻¹ along ``sequence`` (C2).
    chord : Chord
        The maximising chord.
    sequence : tuple of ChordDensity
        Rectangles of half-widths halving from L_v/20: feasible densities whose Tr 𝓘⁻¹ increases to V.
    """

    value: float
    chord: Chord
    sequence: tuple[ChordDensity, ...]


def _chord_value(support: Support, theta: float, b: FloatArray) -> float:
    v = np.array([math.cos(theta), math.sin(theta)])
    return float(longest_chord(support, v).length ** 2 * (v @ b @ v) / (4.0 * math.pi**2))


def chord_limit(support: Support, gram: ArrayLike, *, samples: int = 720, terms: int = 12) -> ChordLimit:
    """Maximise L_v² vᵀBv/(4π²), B = (CCᵀ)⁻¹, over directions v: the value reached by concentrating on a chord.

    For an ellipse L_v² = 4/(vᵀS⁻¹v), so V = λ_max(SB)/π² in closed form (a generalised eigenvector). For a
    polygon L_v is smooth between the directions of vertex-to-vertex segments, where it may have a kink; those
    directions, a grid of ``samples`` directions and a golden-section refinement around the best of them are
    compared.

    Examples
    --------
    >>> import numpy as np
    >>> from privnoise.fisher import Box
    >>> lim = chord_limit(Box([-1, -1], [1, 1]), [[1.36, 0.6], [0.6, 1.0]])
    >>> round(lim.value, 6), np.round(np.abs(lim.chord.direction), 6).tolist()       # the (1, −1) diagonal
    (0.360703, [0.707107, 0.707107])
    """
    owner = "chord_limit"
    vertices = _polygon_vertices(support, owner)
    g = as_matrix(gram, "gram", owner, positive_definite=True)
    if g.shape != (2, 2):
        raise DimensionError(f"`gram` of `{owner}` must be 2×2 (CCᵀ of a plane support); got {g.shape}.")
    samples = check_positive_int(samples, "samples", owner, minimum=8)
    terms = check_positive_int(terms, "terms", owner)
    b: FloatArray = np.asarray(np.linalg.inv(g), dtype=np.float64)
    if vertices is None:
        assert isinstance(support, Ellipsoid)
        shape = np.asarray(support.shape)
        root = np.linalg.cholesky(shape)
        eig, vec = np.linalg.eigh(root.T @ b @ root)
        direction = root @ vec[:, -1]
        theta_best = math.atan2(direction[1], direction[0])
    else:
        grid = np.linspace(0.0, math.pi, samples, endpoint=False)
        thetas = np.concatenate([grid, chord_kinks(support)])
        values = np.array([_chord_value(support, t, b) for t in thetas])
        theta_best = float(thetas[int(np.argmax(values))])
        step = math.pi / samples
        for centre in grid[np.argsort(values[:samples])[-3:]]:
            lo, hi = centre - step, centre + step
            for _ in range(40):  # golden section on a bracket of one grid step
                m1, m2 = hi - 0.618 * (hi - lo), lo + 0.618 * (hi - lo)
                if _chord_value(support, m1, b) >= _chord_value(support, m2, b):
                    hi = m2
                else:
                    lo = m1
            if _chord_value(support, 0.5 * (lo + hi), b) > _chord_value(support, theta_best, b):
                theta_best = 0.5 * (lo + hi)
    chord = longest_chord(support, [math.cos(theta_best), math.sin(theta_best)])
    v = chord.direction
    value = float(chord.length**2 * (v @ b @ v) / (4.0 * math.pi**2))
    widths = [chord.length / 20.0 / 2.0**k for k in range(terms)]
    sequence = tuple(chord_density(support, chord, w) for w in widths)
    return ChordLimit(value=value, chord=chord, sequence=sequence)
