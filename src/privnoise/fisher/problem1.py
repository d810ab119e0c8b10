"""Problem 1 (Theorem 1): the supremum of Tr 𝓘⁻¹ over noise densities on a bounded plane support, bracketed.

For f(x) = Cx with C invertible (2×2) and γ = u² on W, 𝓘 = Cᵀ𝓘_w C with 𝓘_w = 4∫∇u∇uᵀ, and Problem 1 maximises
Tr 𝓘⁻¹ = Tr(𝓘_w⁻¹B), B = (CCᵀ)⁻¹, which is convex (not concave) in 𝓘 (Remark 6), so its supremum lies on the
boundary of the convex set 𝒦̂ of achievable information matrices (:mod:`~privnoise.fisher.problem1_bounds`) or
at infinity. :func:`solve_problem1` brackets it from both sides.

*From below, by explicit densities.* Every boundary point of 𝒦̂ with normal M ⪰ 0 is the information of the
principal eigenfunction u_M of −∇·(M∇u) = λu (Theorem 2 with CCᵀ replaced by M), so the interior of the search
is F(M) = Tr(𝓘_w(u_M)⁻¹B) over unit-trace M ≻ 0: a grid, a Nelder–Mead refinement, then the minorise–maximise
steps M ← C𝓘⁻²Cᵀ (each raises Tr 𝓘⁻¹ because Tr 𝓘⁻¹ ≥ Tr 𝓘ₖ⁻¹ − Tr(𝓘ₖ⁻²(𝓘 − 𝓘ₖ)) and u_{k+1} minimises the
subtracted term). At an interior maximum M ∝ C𝓘⁻²Cᵀ, which is (11) with μ = Tr 𝓘⁻¹/4: the maximiser is attained.
As M tends to a rank-one vvᵀ, u_M concentrates on the longest chord in direction v and F tends to the chord value
L_v²vᵀBv/(4π²); the sup over v, :func:`~privnoise.fisher.chords.chord_limit`, is reached by explicit cos²
densities on thin rectangles, but only in the limit (their information across the chord is π²/D² → ∞).

*From above, by theory.* Planes Tr(MX) ≥ 4λ₁(M) hold for every density: the chord planes (C1), closed-form
eigenvalue bounds, and the finite-element eigenvalues of the search itself (lowered by ten error estimates of
the levels' contraction, ``certify=False``: an estimate, not the guaranteed bracket, which would cost minutes per
weight at the search's 1e-6);
the maximum of Tr(X⁻¹B) over them is an upper bound U (:func:`~privnoise.fisher.problem1_bounds.relaxation_bound`).
Cutting planes at the relaxation's maximiser X_U (the eigenproblem for M ∝ X_U⁻¹BX_U⁻¹) tighten U until it meets
the best value reached.

Outcomes measured on the report's supports (C = [[1, 0.6], [0, 1]]): on the square [−1, 1]² and the L-shape the
upper bound meets the chord limit 8 vᵀBv/(4π²) = 0.3607034 along (1, −1) to 2·10⁻⁸ relative (the L-shape's chord
passes its re-entrant corner); the relaxation reaches it only as the information across the chord grows without
bound, and the best finite-element density stays near 0.21, so it is a limit, reached by the chord sequence. On
the unit disc the bracket closes to 10⁻⁵ on a finite-element density (≈ 0.206420) that solves (11): attained.

References
----------
F. Farokhi, H. Sandberg, Automatica 99 (2019): Problem 1, Theorem 1, eq. (11), Remarks 2, 5 and 6, Theorem 2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from scipy import optimize

from .._validation import check_in_range, check_positive_int
from ..exceptions import DimensionError, InvalidParameterError
from ..queries import LinearQuery, Query
from .chords import ChordDensity, ChordLimit, chord_kinks, chord_limit
from .fem import solve_dirichlet_eigenproblem
from .fem_noise import FiniteElementNoise
from .problem1_bounds import Planes, RelaxationBound, chord_planes, eigenvalue_lower_bound, relaxation_bound
from .support_design import query_gram
from .supports import Support

__all__ = ["Problem1Solution", "solve_problem1"]

FloatArray = NDArray[np.float64]
Status = Literal["attained", "chord-limit", "bracketed"]

#: Largest r of the unit-trace weights ½(I + r[[cos θ, sin θ], [sin θ, −cos θ]]) searched (eigenvalue ratio 39).
MAX_ANISOTROPY = 0.95


@dataclass(frozen=True, slots=True)
class Problem1Solution:
    """The bracket of sup Tr 𝓘⁻¹ returned by :func:`solve_problem1`.

    Attributes
    ----------
    noise : FiniteElementNoise
        The best finite-element density u_M² found (a feasible density: ∫u² = 1, u = 0 on ∂W). When the
        closed-form planes alone close the bracket on the chord limit, no search runs and this is Problem 2's.
    trace_inverse : float
        Its Tr 𝓘⁻¹.
    weight : ndarray (2, 2)
        Its M (unit trace): u is the principal eigenfunction of −∇·(M∇u) = λu.
    multiplier : float
        μ of (11) for that density: ∫∇uᵀ(C𝓘⁻²Cᵀ)∇u = Tr 𝓘⁻¹/4.
    limit : ChordLimit
        The chord limit V and its maximising sequence of cos² rectangle densities.
    lower_bound : float
        The largest Tr 𝓘⁻¹ of an explicit feasible density: ``noise`` or the last density of ``limit.sequence``.
    supremum : float
        max(trace_inverse, limit.value): the value shown to be reached, by a density or as a limit.
    upper_bound : float
        U from the planes of the closed forms and of every eigenproblem solved (≥ sup Tr 𝓘⁻¹).
    closed_form_upper_bound : float
        U from the closed-form planes only (chords, Faber–Krahn, bounding rectangles): no finite elements.
    status : {"attained", "chord-limit", "bracketed"}
        "attained": the bracket closed within ``tol`` on ``noise`` (a density reaching the supremum; an interior
        maximiser solves (11)); "chord-limit": it closed on the chord limit, which only ``limit.sequence`` approaches
        (every finite-element density evaluated stays further than ``tol`` below); "bracketed": it did not close.
    converged : bool
        Whether upper_bound − supremum ≤ tol · supremum.
    history : tuple of float
        Tr 𝓘⁻¹ of every finite-element density evaluated, the first being Problem 2's solution (M ∝ CCᵀ).
    """

    noise: FiniteElementNoise
    trace_inverse: float
    weight: FloatArray
    multiplier: float
    limit: ChordLimit
    lower_bound: float
    supremum: float
    upper_bound: float
    closed_form_upper_bound: float
    status: Status
    converged: bool
    history: tuple[float, ...] = field(default=())

    @property
    def best_chord_density(self) -> ChordDensity:
        """The narrowest (best) rectangle density of the chord sequence."""
        return self.limit.sequence[-1]


def _unit_weight(x: float, y: float) -> FloatArray:
    r = math.hypot(x, y)
    if r > MAX_ANISOTROPY:
        x, y = x * MAX_ANISOTROPY / r, y * MAX_ANISOTROPY / r
    return np.array([[0.5 + 0.5 * x, 0.5 * y], [0.5 * y, 0.5 - 0.5 * x]])


def _normalised(m: FloatArray) -> FloatArray:
    m = (m + m.T) / 2.0
    m = m / np.trace(m)
    eig, vec = np.linalg.eigh(m)
    floor = 0.5 * (1 - MAX_ANISOTROPY)
    return np.asarray((vec * np.maximum(eig, floor)) @ vec.T / np.sum(np.maximum(eig, floor)))


class _Search:
    """The densities u_M evaluated so far, and the planes their eigenvalues give."""

    def __init__(self, support: Support, c: FloatArray, rtol: float) -> None:
        self.support, self.c, self.rtol = support, c, rtol
        self.b = np.linalg.inv(c @ c.T)
        self.weights: list[FloatArray] = []
        self.levels: list[float] = []
        self.values: list[float] = []
        self.best: tuple[float, FiniteElementNoise | None, FloatArray] = (-math.inf, None, np.eye(2))

    def evaluate(self, m: FloatArray) -> float:
        # the search needs many eigenproblems, estimated, not certified (the planes are lowered by ten estimates)
        sol = solve_dirichlet_eigenproblem(self.support, m, rtol=self.rtol, certify=False)
        noise = FiniteElementNoise(solution=sol)
        info = np.asarray(noise.fisher_information())
        value = float(np.trace(np.linalg.solve(info, self.b)))
        self.weights.append(m)
        self.levels.append(4.0 * max(sol.eigenvalue - 10.0 * sol.error_estimate, 0.0))
        self.values.append(value)
        if value > self.best[0]:
            self.best = (value, noise, m)
        return value

    def information(self) -> FloatArray:
        noise = self.best[1]
        assert noise is not None
        return np.asarray(self.c.T @ np.asarray(noise.fisher_information()) @ self.c)

    def planes(self) -> Planes:
        return Planes.of(self.weights, self.levels)


def _closed_form_planes(support: Support, limit: ChordLimit, directions: int) -> Planes:
    theta = math.atan2(limit.chord.direction[1], limit.chord.direction[0])
    kinks = np.concatenate([[theta], chord_kinks(support)])
    offsets = np.concatenate([-(10.0 ** -np.arange(1.0, 7.5, 0.5)), [0.0], 10.0 ** -np.arange(1.0, 7.5, 0.5)])
    grid = np.linspace(0.0, math.pi, directions, endpoint=False)
    planes = chord_planes(support, np.concatenate([grid, (kinks[:, None] + offsets).ravel()]))
    weights, levels = [], []
    for r in (0.0, 0.3, 0.6, 0.8, 0.9):
        for a in np.linspace(0.0, 2 * math.pi, 1 if r == 0.0 else 24, endpoint=False):
            m = _unit_weight(r * math.cos(a), r * math.sin(a))
            weights.append(m)
            levels.append(4.0 * eigenvalue_lower_bound(support, m))
    return planes + Planes.of(weights, levels)


def solve_problem1(
    query: Query,
    support: Support,
    *,
    rtol: float = 1e-4,
    tol: float = 1e-3,
    max_iterations: int = 12,
    frames: int = 360,
) -> Problem1Solution:
    """Bracket sup Tr 𝓘⁻¹ over noise densities on a plane ``support`` (Problem 1, Theorem 1).

    Parameters
    ----------
    query : LinearQuery
        f(x) = Cx with C square and invertible, 2×2 (𝓘 must be invertible for Tr 𝓘⁻¹ to be finite).
    support : Box, Polygon or Ellipsoid
        The bounded 2-D support W.
    rtol : float
        Tolerance of each finite-element eigenproblem (on the change between levels, ``certify=False`` of
        :func:`~privnoise.fisher.solve_dirichlet_eigenproblem`: the search's densities need no certificate).
    tol : float
        Stop when upper_bound − supremum ≤ tol · supremum.
    max_iterations : int
        Largest number of cutting-plane rounds (and of minorise–maximise steps) after the search.
    frames : int
        Frame angles of the relaxation's grid (see :func:`~privnoise.fisher.problem1_bounds.relaxation_bound`).

    Returns
    -------
    Problem1Solution

    Raises
    ------
    DimensionError
        If C is not square, or the support is not 2-D.
    InvalidParameterError
        If C is singular, or a tolerance or count breaks its rule.

    Examples
    --------
    >>> import numpy as np, privnoise as pn
    >>> q = pn.queries.LinearQuery(np.diag([1.0, 2.0]))    # separable: the product cos² and the diagonal tie
    >>> sol = solve_problem1(q, pn.fisher.Box([0, 0], [1, 1]), rtol=1e-3, frames=90, tol=1e-2)
    >>> sol.status, bool(abs(sol.supremum - (1 + 1 / 4) / (4 * np.pi**2)) < 1e-12)
    ('attained', True)
    """
    owner = "solve_problem1"
    gram = query_gram(query, support, owner)
    assert isinstance(query, LinearQuery)  # query_gram refuses other queries
    c: FloatArray = np.asarray(query.matrix_2d, dtype=np.float64)
    if c.shape[0] != c.shape[1]:
        raise DimensionError(
            f"`query` of `{owner}` must be square (n = m): with n > m the information 𝓘 = Cᵀ𝓘_wC is singular and "
            "Tr 𝓘⁻¹ is infinite (Assumption 3)."
        )
    if support.dim != 2:
        raise DimensionError(f"`support` of `{owner}` must be 2-D (the chord bounds are planar); got {support.dim}-D.")
    if np.linalg.matrix_rank(c) < c.shape[0]:
        raise InvalidParameterError(f"`query` of `{owner}` must be invertible.")
    fem_tol = check_in_range(rtol, "rtol", owner, low=0.0, high=0.1, low_open=True)
    stop = check_in_range(tol, "tol", owner, low=0.0, high=1.0, low_open=True)
    rounds = check_positive_int(max_iterations, "max_iterations", owner)
    grid = check_positive_int(frames, "frames", owner, minimum=8)

    limit = chord_limit(support, gram)
    closed = _closed_form_planes(support, limit, grid)
    kinks = np.concatenate([[math.atan2(limit.chord.direction[1], limit.chord.direction[0])], chord_kinks(support)])
    candidates = tuple(np.concatenate([kinks, kinks + math.pi / 2]).tolist())
    closed_bound = relaxation_bound(support, gram, closed, frames=grid, candidates=candidates)

    search = _Search(support, c, fem_tol)
    search.evaluate(_normalised(gram))  # Problem 2's solution
    if closed_bound.value - limit.value <= stop * limit.value:  # closed forms alone close the bracket
        return _solution(search, limit, closed_bound.value, closed_bound.value, stop, gram)
    def ascend_and_cut() -> RelaxationBound:
        for _ in range(rounds):  # minorise–maximise steps of (11) from the best density
            inv = np.linalg.inv(search.information())
            before = search.best[0]
            search.evaluate(_normalised(c @ inv @ inv @ c.T))
            if search.best[0] - before <= 0.1 * stop * before:
                break
        bound = relaxation_bound(support, gram, closed + search.planes(), frames=grid, candidates=candidates)
        for _ in range(rounds):  # cutting planes at the relaxation's maximiser
            supremum = max(search.best[0], limit.value)
            if bound.value - supremum <= stop * supremum:
                break
            x_inv = np.linalg.inv(bound.information)
            search.evaluate(_normalised(x_inv @ search.b @ x_inv))
            bound = relaxation_bound(support, gram, closed + search.planes(), frames=grid, candidates=candidates)
        return bound

    bound = ascend_and_cut()
    if bound.value - max(search.best[0], limit.value) > stop * max(search.best[0], limit.value):
        # the local ascent stalled below the bound: a global grid of weights, Nelder–Mead, then again
        starts = [(r * math.cos(a), r * math.sin(a)) for r in (0.4, 0.8) for a in np.linspace(0, 2 * math.pi, 8, endpoint=False)]
        scores = [search.evaluate(_unit_weight(x, y)) for x, y in starts]
        x0 = np.array(starts[int(np.argmax(scores))])
        optimize.minimize(
            lambda z: -search.evaluate(_unit_weight(float(z[0]), float(z[1]))),
            x0,
            method="Nelder-Mead",
            options={"maxfev": 20, "xatol": 1e-3, "initial_simplex": x0 + 0.1 * np.array([[0, 0], [1, 0], [0, 1]])},
        )
        bound = ascend_and_cut()
    return _solution(search, limit, min(bound.value, closed_bound.value), closed_bound.value, stop, gram)


def _solution(
    search: _Search, limit: ChordLimit, upper: float, closed: float, stop: float, gram: FloatArray
) -> Problem1Solution:
    value, noise, weight = search.best
    assert noise is not None
    c = search.c
    info = search.information()
    inv = np.linalg.inv(info)
    multiplier = float(np.trace(c @ inv @ inv @ c.T @ np.asarray(noise.fisher_information())) / 4.0)
    supremum = max(value, limit.value)
    converged = upper - supremum <= stop * supremum
    reached = value >= supremum - stop * supremum  # a finite-element density within tol of the supremum
    status: Status = "bracketed" if not converged else ("attained" if reached else "chord-limit")
    chord_best = limit.sequence[-1].trace_inverse(gram)
    return Problem1Solution(
        noise=noise,
        trace_inverse=value,
        weight=weight,
        multiplier=multiplier,
        limit=limit,
        lower_bound=max(value, chord_best),
        supremum=supremum,
        upper_bound=upper,
        closed_form_upper_bound=closed,
        status=status,
        converged=converged,
        history=tuple(search.values),
    )
