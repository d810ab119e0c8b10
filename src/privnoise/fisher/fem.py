"""The principal Dirichlet eigenpair of −∇·(A∇u) = λu on a support W, by P2 finite elements.

For a linear query f(x) = Cx and noise density γ = u² supported on W, the trace of the Fisher information the
release carries about x is

    Tr 𝓘 = Tr(Cᵀ 𝓘_w C) = 4 ∫_W ∇uᵀ (CCᵀ) ∇u dw,   u = 0 on ∂W,  ∫_W u² = 1,

so Problem 2 of Farokhi & Sandberg is a Rayleigh quotient: its minimiser is the principal eigenfunction of
−∇·(CCᵀ∇u) = λu with Dirichlet conditions (Theorem 2, eq. (12) with F(x) = C: Tr(CCᵀD²u) + μu = 0), and the
minimum is Tr 𝓘 = 4λ₁ (with γ = u² the factor 4 is the one Appendix E drops, ERRATA 2).

:func:`solve_dirichlet_eigenproblem` assembles the stiffness and mass matrices of continuous P2 elements with
scikit-fem, finds the smallest eigenvalue with scipy's shift-invert Lanczos (``eigsh(sigma=0)``; LOBPCG with
algebraic multigrid in 3-D), and refines the mesh until a **guaranteed bracket** [λ_low, λ_up] of λ₁ is narrower
than ``rtol`` relative (:mod:`privnoise.fisher._fem_bounds`):

* λ_up is the P2 Rayleigh quotient on a straight mesh inside W (Rayleigh–Ritz: every function of H¹₀(W) has a
  quotient ≥ λ₁(W); the quadrature of straight cells is exact);
* λ_low is the larger of the Crouzeix–Raviart bound λ_CR/(1 + C_h²λ_CR) (Carstensen & Gedicke 2014, with an
  explicit C_h valid in any dimension) and, in 2-D, Temple's inequality with an equilibrated Raviart–Thomas flux
  (Kato 1949), both for the Laplacian in the coordinates A^(−½)x; on balls and ellipsoids it is divided by s²,
  s the scale of a polytope circumscribing W (a bigger domain has a smaller λ₁);
* on a 3-D box or axis-aligned ellipsoid (a ball) with a diagonal A, whose eigenfunction is even in every axis,
  both come from one orthant with Neumann conditions on the symmetry planes (``_fem_bounds.orthant_bracket``):
  cells half the size for the same unknowns, a bracket about four times narrower.

On a box or an ellipsoid (and a ball), λ₁ is also bracketed by polynomials first, on a polygon by particular
solutions (:func:`~privnoise.fisher.spectral_bracket`, at rtol/4; ``polynomial_bound=False`` leaves it out): its
lower end is far sharper than the elements' own, which converges like h² in 3-D and like h^(4/3) at a re-entrant
corner. When it reaches rtol/4 it is the bracket, the
elements' bounds (and the orthant) are not computed, and the mesh is refined only until the density is good
enough. ``converged`` is ``λ_up − λ_low ≤ rtol·λ_low`` together with ``λ_h − λ_low ≤ rtol·λ_low`` for the
returned density (Tr 𝓘 = 4λ_h, its own Rayleigh quotient): the optimum is certified and so is the noise
returned. ``error_estimate`` is the width λ_up − λ_low. With
``certify=False`` (for searches that solve many eigenproblems, such as Problem 1's) no bracket is computed: the
mesh is refined until the Richardson extrapolation changes by less than ``rtol`` between levels, ``error_estimate``
is that change (an estimate, not a bound), the bounds are NaN and ``converged`` is False. The meshes:

* ``"adaptive"`` (the default on flat-sided supports): a residual error indicator per cell (the equation's
  residual inside each cell and the jumps of the flux A∇u across its faces) and Dörfler marking, so that corner
  singularities of non-convex polygons are resolved without refining everywhere;
* ``"uniform"`` (the default where the eigenfunction is smooth up to ∂W: balls, ellipsoids, and boxes with a
  diagonal A, whose eigenfunction is a product of sines): every cell is split, and new boundary vertices are
  moved onto ∂W. On balls and ellipsoids, while the circumscribed polytope dominates the bracket, only the cells
  at ∂W are split.

On balls and ellipsoids the returned density uses curved cells at the boundary (isoparametric P2,
:mod:`privnoise.fisher._meshes`): their boundary edges' midpoint nodes lie on ∂W, so the meshed domain misses W by
O(h⁴) (from inside) instead of the O(h²) of straight facets. Straight cells are assembled with their affine map;
curved ones with the P2 map and a degree-8 rule (the stiffness's rational integrand is then accurate to rounding,
not exactly integrated, which is why the bracket's upper bound comes from a second solve on straight cells).

The reported ``eigenvalue`` is the Richardson extrapolation of the discrete eigenvalues (λ_h ≈ λ₁ + c·N^(−r), r
fitted to the last three levels), clipped into the bracket: an estimate whose guaranteed error is the bracket's
width.

References
----------
F. Farokhi, H. Sandberg, "Ensuring privacy with constrained additive noise by minimizing Fisher information",
Automatica 99 (2019): Problem 2, Theorem 2, eq. (12), Remark 7.
C. Carstensen, J. Gedicke, "Guaranteed lower bounds for eigenvalues", Math. Comp. 83 (2014).
T. Kato, "On the upper and lower bounds of eigenvalues", J. Phys. Soc. Japan 4 (1949).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_in_range, check_positive_int, readonly
from ..exceptions import InvalidParameterError, SolverError
from ._fem_bounds import LevelBracket, level_bracket, orthant_bracket
from ._fem_extrapolation import error_estimate, extrapolate
from ._fem_levels import solve_level
from ._fem_marking import dorfler_marking, residual_indicators
from ._fem_symmetry import orthant_of, symmetry_center
from ._meshes import boundary_cells, quiet_skfem, refine, vertex_mesh
from ._spectral_common import SpectralBracket
from .spectral_bounds import spectral_bracket
from .supports import Box, Ellipsoid, Polygon, Support
from .supports.base import operator_matrix

__all__ = ["EigenSolution", "Refinement", "solve_dirichlet_eigenproblem"]

FloatArray = NDArray[np.float64]
Refinement = Literal["auto", "adaptive", "uniform"]

# Least number of cells before the first solve (coarse meshes give no usable extrapolation).
_MIN_CELLS = {2: 200, 3: 400}
# Fraction of the total squared error indicator that the marked cells carry (Dörfler marking).
_BULK = 0.4


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class EigenSolution:
    """The principal Dirichlet eigenpair of −∇·(A∇u) = λu on a support, from P2 finite elements.

    Attributes
    ----------
    support : Support
        The set W.
    matrix : ndarray (d, d)
        The operator's matrix A (CCᵀ for a linear query).
    points, cells : ndarray
        The final mesh: vertices (N, d) and simplices (E, d + 1).
    coefficients : ndarray (E, 6 or 10)
        u at each cell's vertices and edge midpoints (:mod:`privnoise.fisher._simplices` order), normalised so
        that ∫u² = 1 over the mesh and u ≥ 0 on most of it. On a curved cell these are the values at its P2
        nodes: u is quadratic in the cell's reference coordinates.
    curved_cells : ndarray (Ec,)
        Indices of the curved (P2-mapped) cells; empty on flat-sided supports.
    curved_nodes : ndarray (Ec, 6 or 10, d)
        The P2 nodes of each curved cell (vertices, then edge midpoints, some of them on ∂W); the cell is
        x = Σ φₐ(λ) xₐ (:mod:`privnoise.fisher._isoparametric`).
    eigenvalue : float
        The estimate of λ₁(W): the Richardson extrapolation of the discrete eigenvalues, clipped into
        [``lower_bound``, ``upper_bound``].
    discrete_eigenvalue : float
        The Rayleigh quotient ∫∇uᵀA∇u of the returned u: a density u² has Tr 𝓘 = 4 × this value exactly. It is
        ≥ λ₁ of the meshed domain, and ≥ λ₁(W) when the mesh lies inside W.
    error_estimate : float
        A guaranteed bound of the absolute error of ``eigenvalue``: the width ``upper_bound − lower_bound`` of the
        bracket (the value lies inside it). With ``certify=False``: the change of the extrapolation between the
        last levels, an estimate only.
    lower_bound, upper_bound : float
        A guaranteed bracket of λ₁(W) (:mod:`privnoise.fisher._fem_bounds`): the largest lower bound and the
        smallest upper bound over the levels. The upper bound is the conforming P2 Rayleigh quotient on a straight
        mesh inside W; the lower bound the larger of the Crouzeix–Raviart bound (Carstensen & Gedicke 2014) and
        the Temple–Kato bound with an equilibrated Raviart–Thomas flux, divided on curved supports by the square
        of the scale of a circumscribed polytope; on boxes and ellipsoids, the polynomial bracket
        (``polynomial_bracket``) where it is sharper. NaN with ``certify=False``.
    mesh_size : float
        The largest cell diameter of the final mesh.
    history : tuple of (int, float)
        (unknowns, discrete eigenvalue) at every level.
    converged : bool
        Whether ``upper_bound − lower_bound ≤ rtol · lower_bound`` and ``discrete_eigenvalue − lower_bound ≤
        rtol · lower_bound`` (the returned density within rtol of the optimum) were reached within the limits
        (always False with ``certify=False``: nothing is certified).
    polynomial_bracket : SpectralBracket or None
        On a box or an ellipsoid (with ``polynomial_bound``), the bracket of λ₁ by polynomials. Its lower end
        bounds ``lower_bound`` from below; when it reached rtol/4 it is ``lower_bound`` and ``upper_bound``, and
        the returned density is certified separately (``discrete_eigenvalue`` within rtol of ``lower_bound``:
        Tr 𝓘 of u² is 4 × ``discrete_eigenvalue``).
    """

    support: Support
    matrix: FloatArray
    points: FloatArray
    cells: NDArray[np.int64]
    coefficients: FloatArray
    eigenvalue: float
    discrete_eigenvalue: float
    error_estimate: float
    mesh_size: float
    history: tuple[tuple[int, float], ...]
    converged: bool
    rtol: float = field(default=1e-4)
    lower_bound: float = field(default=math.nan)
    upper_bound: float = field(default=math.nan)
    curved_cells: NDArray[np.int64] = field(default_factory=lambda: readonly(np.zeros(0, dtype=np.int64)))
    curved_nodes: FloatArray = field(default_factory=lambda: readonly(np.zeros((0, 6, 2))))
    polynomial_bracket: SpectralBracket | None = None

    @property
    def dim(self) -> int:
        return int(self.points.shape[1])

    @property
    def bracket(self) -> tuple[float, float]:
        """The guaranteed enclosure (``lower_bound``, ``upper_bound``) of λ₁(W)."""
        return (self.lower_bound, self.upper_bound)

    @property
    def relative_width(self) -> float:
        """(upper − lower)/lower: the certified relative accuracy; ``converged`` is ``relative_width ≤ rtol``."""
        return (self.upper_bound - self.lower_bound) / self.lower_bound

    @property
    def unknowns(self) -> int:
        return int(self.history[-1][0])

    def describe(self) -> dict[str, Any]:
        """A JSON-ready summary (no mesh arrays)."""
        return {
            "eigenvalue": self.eigenvalue,
            "discrete_eigenvalue": self.discrete_eigenvalue,
            "error_estimate": self.error_estimate,
            "lower_bound": self.lower_bound,
            "upper_bound": self.upper_bound,
            "mesh_size": self.mesh_size,
            "cells": int(self.cells.shape[0]),
            "unknowns": self.unknowns,
            "curved_cells": int(self.curved_cells.size),
            "converged": self.converged,
            "polynomial_bracket": None if self.polynomial_bracket is None
            else [self.polynomial_bracket.low, self.polynomial_bracket.up],
        }


def solve_dirichlet_eigenproblem(
    support: Support,
    matrix: ArrayLike | None = None,
    *,
    rtol: float = 1e-4,
    refinement: Refinement = "auto",
    max_unknowns: int | None = None,
    certify: bool = True,
    polynomial_bound: bool = True,
) -> EigenSolution:
    """The principal eigenpair of −∇·(A∇u) = λu on ``support`` with u = 0 on its boundary.

    Parameters
    ----------
    support : Support
        A :class:`~privnoise.fisher.Box`, :class:`~privnoise.fisher.Polygon`, :class:`~privnoise.fisher.Ellipsoid`,
        :class:`~privnoise.fisher.Polyhedron` or :class:`~privnoise.fisher.MeshSupport` (2-D or 3-D).
    matrix : array_like (d, d), optional
        Symmetric positive definite A (CCᵀ of a linear query); the identity when omitted.
    rtol : float, default 1e-4
        Refine until the guaranteed bracket of λ₁ is narrower than ``rtol`` relative to its lower end, and the
        returned density's λ_h within ``rtol`` of that end. On boxes and ellipsoids, with the polynomial lower
        bound: 1e-4 in 3-D in under 20 s (the cube, the unit ball, a correlated cube), 1e-5 on the ball in about
        12 s. With the elements alone (other supports, or ``polynomial_bound=False``): in 2-D 1e-4 takes seconds,
        1e-5 up to a minute and 1e-6 minutes; in 3-D, within the default limit, about 1e-2 on a box or a ball with
        a diagonal ``matrix`` (from one orthant) and 0.05–0.15 elsewhere: ``converged`` is then False.
    refinement : {"auto", "adaptive", "uniform"}
        "auto" is uniform where the eigenfunction is smooth (balls, ellipsoids, boxes with a diagonal ``matrix``)
        and adaptive elsewhere.
    max_unknowns : int, optional
        Stop refining (``converged=False``) before a level would exceed this many unknowns; by default 600,000
        in 2-D and 50,000 in 3-D (where the lower bound's sparse factorisations dominate: about 4 minutes).
    certify : bool, default True
        Compute the guaranteed bracket at every level and stop on its width. False refines on the contraction
        of successive levels only (an estimate; the bounds are NaN and ``converged`` is False): for searches
        over many weights whose eigenvalues need no certificate.
    polynomial_bound : bool, default True
        On a box or an ellipsoid, bound λ₁ below also by polynomials, on a polygon by particular solutions
        (:func:`~privnoise.fisher.spectral_bracket` at ``rtol/4``, computed once): far sharper than the elements' own lower bound, which converges like h² in
        3-D, so the density is certified within ``rtol`` at far fewer unknowns (the cube at 1e-4 with 29,791).
        False keeps the finite-element bounds alone: an independent discretisation, as the reproduction reports
        use it.

    Returns
    -------
    EigenSolution

    Raises
    ------
    InvalidParameterError
        If a parameter breaks its rule (``matrix`` not symmetric positive definite, ``rtol`` outside (0, 0.1)).
    SolverError
        If scikit-fem is not installed, or the eigensolver fails.

    Examples
    --------
    >>> import math
    >>> from privnoise.fisher import Box
    >>> sol = solve_dirichlet_eigenproblem(Box([0, 0], [1, 1]), rtol=1e-4)
    >>> sol.lower_bound <= 2 * math.pi**2 <= sol.upper_bound   # λ₁ of the unit square is 2π²
    True
    >>> sol.converged and sol.upper_bound - sol.lower_bound <= 1e-4 * sol.lower_bound
    True
    """
    owner = "solve_dirichlet_eigenproblem"
    if not isinstance(support, Support):
        raise InvalidParameterError(
            f"`support` of `{owner}` must be a privnoise Support; got {type(support).__name__}."
        )
    d = support.dim
    a = operator_matrix(matrix, d, owner)
    tol = check_in_range(rtol, "rtol", owner, low=0.0, high=0.1, low_open=True)
    if refinement not in ("auto", "adaptive", "uniform"):
        raise InvalidParameterError(
            f"`refinement` of `{owner}` must be 'auto', 'adaptive' or 'uniform'; got {refinement!r}."
        )
    limit = check_positive_int(
        (600_000 if d == 2 else 50_000) if max_unknowns is None else max_unknowns, "max_unknowns", owner, minimum=100
    )
    try:
        import skfem  # noqa: F401
    except ImportError:  # pragma: no cover - exercised only without the fem extra
        raise SolverError(
            "the finite-element solver needs scikit-fem: pip install 'privnoise[fem]'."
        ) from None

    polynomial = None
    if certify and polynomial_bound and isinstance(support, Box | Ellipsoid | Polygon) and type(support) in (
            Box, Ellipsoid, Polygon):  # not an orthant (a subclass)
        polynomial = spectral_bracket(support, a, rtol=tol / 4.0)
    with quiet_skfem():
        return _solve(support, a, tol, refinement, limit, certify=bool(certify), polynomial=polynomial)


def _solve(support: Support, a: FloatArray, tol: float, refinement: str, limit: int, *, certify: bool,
           polynomial: SpectralBracket | None) -> EigenSolution:
    d = support.dim
    if refinement == "auto":
        smooth = support.curved or (isinstance(support, Box) and np.count_nonzero(a - np.diag(np.diag(a))) == 0)
        mode = "uniform" if smooth else "adaptive"
    else:
        mode = refinement
    # λ_h − λ₁ ~ N^(−r): P2 gives r = 4/d on resolved meshes (on curved supports with the P2-mapped boundary
    # cells, whose geometric error is O(h⁴) too)
    nominal = 4.0 / d
    points, cells = support.initial_mesh()
    mesh = vertex_mesh(points, cells)
    while mesh.t.shape[1] < _MIN_CELLS[d]:
        mesh = refine(mesh, support)
    # a 3-D box or ball with a diagonal A: the bracket from one orthant, refined with the mesh (_fem_symmetry)
    # with a converged polynomial bracket the elements only have to make the density good: no bounds of theirs
    polynomial_only = polynomial is not None and polynomial.converged
    orthant = orthant_of(support, a) if certify and d == 3 and mode == "uniform" and not polynomial_only else None
    half = None
    if orthant is not None:
        half = vertex_mesh(*orthant.initial_mesh())
        while half.t.shape[1] < mesh.t.shape[1]:
            half = refine(half, orthant)

    history: list[tuple[int, float]] = []
    estimates: list[float] = []
    lower, upper, second, change = 0.0 if polynomial is None else polynomial.low, math.inf, 0.0, math.nan
    converged = False
    while True:
        level = solve_level(mesh, a, support)
        history.append((level.unknowns, level.eigenvalue))
        value, rate = extrapolate(history, nominal)
        estimates.append(value)
        if not certify:
            change = error_estimate(history, estimates, rate, uniform=mode == "uniform")
            if len(history) >= 2 and change <= tol * abs(value):
                break
            if level.unknowns * (2**d if mode == "uniform" else 1.6) > limit:
                break
            mesh = _refined(mesh, support, a, level, mode)
            continue
        if polynomial_only:
            assert polynomial is not None
            bounds = LevelBracket(polynomial.low, polynomial.up, 0.0, 1.0)
        elif orthant is not None:
            bounds = orthant_bracket(half, a, orthant, symmetry_center(orthant))
        else:
            bounds = level_bracket(mesh, a, support, level, second)
        lower, upper, second = max(lower, bounds.lower), min(upper, bounds.upper), bounds.second
        # certified: λ₁'s bracket and the returned density's Tr 𝓘 = 4λ_h, both within rtol of the lower bound
        if upper - lower <= tol * lower and level.eigenvalue - lower <= tol * lower:
            converged = True
            break
        # on a curved support, while the circumscribed polytope's scale dominates the bracket, refine at ∂W only
        at_boundary = bounds.scale**2 - 1.0 > 0.5 * (bounds.upper - bounds.lower) / bounds.lower
        growth = 2**d if mode == "uniform" and not at_boundary else 1.6
        if level.unknowns * growth > limit:
            break
        mesh = refine(mesh, support, boundary_cells(mesh)) if at_boundary else _refined(mesh, support, a, level, mode)
        if orthant is not None:
            half = refine(half, orthant, boundary_cells(half) if at_boundary else None)

    if not certify:
        lower, upper, converged = math.nan, math.nan, False
    corners = level.points[level.cells]
    diam = np.linalg.norm(corners[:, :, None, :] - corners[:, None, :, :], axis=-1).max()
    return EigenSolution(
        support=support,
        matrix=readonly(a),
        points=readonly(level.points),
        cells=readonly(level.cells),
        coefficients=readonly(level.coefficients),
        eigenvalue=float(min(max(estimates[-1], lower), upper)) if certify else float(estimates[-1]),
        discrete_eigenvalue=float(history[-1][1]),
        error_estimate=float(upper - lower) if certify else float(change),
        lower_bound=float(lower),
        upper_bound=float(upper),
        mesh_size=float(diam),
        history=tuple(history),
        converged=converged,
        rtol=tol,
        curved_cells=readonly(level.curved),
        curved_nodes=readonly(level.curved_nodes),
        polynomial_bracket=polynomial,
    )


def _refined(mesh: Any, support: Support, a: FloatArray, level: Any, mode: str) -> Any:
    """The next mesh: every cell split (uniform), or the Dörfler-marked cells of the residual indicator."""
    if mode == "uniform":
        return refine(mesh, support)
    eta = residual_indicators(level.points, level.cells, level.coefficients, a, level.eigenvalue)
    return refine(mesh, support, dorfler_marking(eta, _BULK))

