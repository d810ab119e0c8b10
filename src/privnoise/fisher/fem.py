"""The principal Dirichlet eigenpair of −∇·(A∇u) = λu on a support W, by P2 finite elements.

For a linear query f(x) = Cx and noise density γ = u² supported on W, the trace of the Fisher information the
release carries about x is

    Tr 𝓘 = Tr(Cᵀ 𝓘_w C) = 4 ∫_W ∇uᵀ (CCᵀ) ∇u dw,   u = 0 on ∂W,  ∫_W u² = 1,

so Problem 2 of Farokhi & Sandberg is a Rayleigh quotient: its minimiser is the principal eigenfunction of
−∇·(CCᵀ∇u) = λu with Dirichlet conditions (Theorem 2, eq. (12) with F(x) = C: Tr(CCᵀD²u) + μu = 0), and the
minimum is Tr 𝓘 = 4λ₁ (with γ = u² the factor 4 is the one Appendix E drops, ERRATA 2).

:func:`solve_dirichlet_eigenproblem` assembles the stiffness and mass matrices of continuous P2 elements with
scikit-fem, finds the smallest eigenvalue with scipy's shift-invert Lanczos (``eigsh(sigma=0)``), and refines the
mesh until the estimate of λ₁ changes by less than ``rtol``:

* ``"adaptive"`` (the default on flat-sided supports): a residual error indicator per cell (the equation's
  residual inside each cell and the jumps of the flux A∇u across its faces) and Dörfler marking, so that corner
  singularities of non-convex polygons are resolved without refining everywhere;
* ``"uniform"`` (the default where the eigenfunction is smooth up to ∂W: balls, ellipsoids, and boxes with a
  diagonal A, whose eigenfunction is a product of sines): every cell is split, and new boundary vertices are
  moved onto ∂W. The unknowns grow by 2ᵈ per level and the error falls like N^(−4/d), the regime in which the
  Richardson extrapolation below and its error estimate are reliable (adaptive levels grow irregularly, by about
  1.6, and a rate fitted to them is noisy).

On balls and ellipsoids the cells at the boundary are curved (isoparametric P2, :mod:`privnoise.fisher._meshes`):
their boundary edges' midpoint nodes lie on ∂W, so the meshed domain misses W by O(h⁴) (from inside) instead of
the O(h²) of straight facets, and λ_h − λ₁ = O(h⁴) like the P2 error itself. Straight cells are assembled with
their affine map; curved ones with the P2 map and a degree-8 rule (the mass integrand u²·det DF is then exact,
the stiffness's rational integrand accurate to rounding on these near-affine cells).

After each level the sequence of discrete eigenvalues λ_h is extrapolated (Richardson, λ_h ≈ λ₁ + c·N^(−r) in
the number N of unknowns, with r fitted to the last three levels); the change of that extrapolation between the
last two levels, or the size of the extrapolation's correction if larger, is the reported error estimate.

References
----------
F. Farokhi, H. Sandberg, "Ensuring privacy with constrained additive noise by minimizing Fisher information",
Automatica 99 (2019): Problem 2, Theorem 2, eq. (12), Remark 7.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_matrix, check_in_range, check_positive_int, readonly
from ..exceptions import DimensionError, InvalidParameterError, SolverError
from ._fem_extrapolation import error_estimate, extrapolate
from ._fem_levels import solve_level
from ._fem_marking import dorfler_marking, residual_indicators
from ._meshes import refine, vertex_mesh
from .supports import Box, Support

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
        The estimate of λ₁(W) (Richardson extrapolation of the discrete eigenvalues).
    discrete_eigenvalue : float
        The Rayleigh quotient ∫∇uᵀA∇u of the returned u: a density u² has Tr 𝓘 = 4 × this value exactly. It is
        ≥ λ₁ of the meshed domain, and ≥ λ₁(W) when the mesh lies inside W.
    error_estimate : float
        An estimate of the absolute error of ``eigenvalue`` from the last levels: under uniform refinement the
        change of the extrapolation between the last two levels times the contraction (N₋₁/N)^r of the fitted
        rate; under adaptive refinement the larger of that change and the Richardson correction
        ``discrete_eigenvalue − eigenvalue``.
    mesh_size : float
        The largest cell diameter of the final mesh.
    history : tuple of (int, float)
        (unknowns, discrete eigenvalue) at every level.
    converged : bool
        Whether ``error_estimate ≤ rtol · eigenvalue`` was reached within the limits.
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
    rtol: float = field(default=1e-6)
    curved_cells: NDArray[np.int64] = field(default_factory=lambda: readonly(np.zeros(0, dtype=np.int64)))
    curved_nodes: FloatArray = field(default_factory=lambda: readonly(np.zeros((0, 6, 2))))

    @property
    def dim(self) -> int:
        return int(self.points.shape[1])

    @property
    def unknowns(self) -> int:
        return int(self.history[-1][0])

    def describe(self) -> dict[str, Any]:
        """A JSON-ready summary (no mesh arrays)."""
        return {
            "eigenvalue": self.eigenvalue,
            "discrete_eigenvalue": self.discrete_eigenvalue,
            "error_estimate": self.error_estimate,
            "mesh_size": self.mesh_size,
            "cells": int(self.cells.shape[0]),
            "unknowns": self.unknowns,
            "curved_cells": int(self.curved_cells.size),
            "converged": self.converged,
        }


@contextmanager
def _quiet_skfem() -> Iterator[None]:
    """scikit-fem logs a warning whenever refinement leaves non-contiguous arrays; keep it off stderr."""
    logger = logging.getLogger("skfem")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def solve_dirichlet_eigenproblem(
    support: Support,
    matrix: ArrayLike | None = None,
    *,
    rtol: float = 1e-6,
    refinement: Refinement = "auto",
    max_unknowns: int = 600_000,
) -> EigenSolution:
    """The principal eigenpair of −∇·(A∇u) = λu on ``support`` with u = 0 on its boundary.

    Parameters
    ----------
    support : Support
        A :class:`~privnoise.fisher.Box`, :class:`~privnoise.fisher.Polygon`, :class:`~privnoise.fisher.Ellipsoid`,
        :class:`~privnoise.fisher.Polyhedron` or :class:`~privnoise.fisher.MeshSupport` (2-D or 3-D).
    matrix : array_like (d, d), optional
        Symmetric positive definite A (CCᵀ of a linear query); the identity when omitted.
    rtol : float, default 1e-6
        Refine until the estimate of λ₁ changes by less than ``rtol`` relative between two levels.
    refinement : {"auto", "adaptive", "uniform"}
        "auto" is uniform where the eigenfunction is smooth (balls, ellipsoids, boxes with a diagonal ``matrix``)
        and adaptive elsewhere.
    max_unknowns : int
        Stop refining (``converged=False``) before a level would exceed this many unknowns.

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
    >>> sol = solve_dirichlet_eigenproblem(Box([0, 0], [1, 1]), rtol=1e-5)
    >>> abs(sol.eigenvalue / (2 * math.pi**2) - 1) < 1e-5      # λ₁ of the unit square is 2π²
    True
    """
    owner = "solve_dirichlet_eigenproblem"
    if not isinstance(support, Support):
        raise InvalidParameterError(
            f"`support` of `{owner}` must be a privnoise Support; got {type(support).__name__}."
        )
    d = support.dim
    a = np.eye(d) if matrix is None else as_matrix(matrix, "matrix", owner, positive_definite=True)
    if a.shape != (d, d):
        raise DimensionError(f"`matrix` of `{owner}` must be {d}×{d} for a {d}-D support; got {a.shape}.")
    tol = check_in_range(rtol, "rtol", owner, low=0.0, high=0.1, low_open=True)
    if refinement not in ("auto", "adaptive", "uniform"):
        raise InvalidParameterError(
            f"`refinement` of `{owner}` must be 'auto', 'adaptive' or 'uniform'; got {refinement!r}."
        )
    limit = check_positive_int(max_unknowns, "max_unknowns", owner, minimum=100)
    try:
        import skfem  # noqa: F401
    except ImportError:  # pragma: no cover - exercised only without the fem extra
        raise SolverError(
            "the finite-element solver needs scikit-fem: pip install 'privnoise[fem]'."
        ) from None

    with _quiet_skfem():
        return _solve(support, a, tol, refinement, limit)


def _solve(support: Support, a: FloatArray, tol: float, refinement: str, limit: int) -> EigenSolution:
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

    history: list[tuple[int, float]] = []
    estimates: list[float] = []
    converged = False
    while True:
        level = solve_level(mesh, a, support)
        history.append((level.unknowns, level.eigenvalue))
        value, rate = extrapolate(history, nominal)
        estimates.append(value)
        change = error_estimate(history, estimates, rate, uniform=mode == "uniform")
        if len(history) >= 2 and change <= tol * abs(estimates[-1]):
            converged = True
            break
        growth = 2**d if mode == "uniform" else 1.6
        if level.unknowns * growth > limit:
            break
        if mode == "uniform":
            mesh = refine(mesh, support)
        else:
            eta = residual_indicators(level.points, level.cells, level.coefficients, a, level.eigenvalue)
            mesh = refine(mesh, support, dorfler_marking(eta, _BULK))

    corners = level.points[level.cells]
    diam = np.linalg.norm(corners[:, :, None, :] - corners[:, None, :, :], axis=-1).max()
    return EigenSolution(
        support=support,
        matrix=readonly(a),
        points=readonly(level.points),
        cells=readonly(level.cells),
        coefficients=readonly(level.coefficients),
        eigenvalue=float(estimates[-1]),
        discrete_eigenvalue=float(history[-1][1]),
        error_estimate=float(change),
        mesh_size=float(diam),
        history=tuple(history),
        converged=converged,
        rtol=tol,
        curved_cells=readonly(level.curved),
        curved_nodes=readonly(level.curved_nodes),
    )
