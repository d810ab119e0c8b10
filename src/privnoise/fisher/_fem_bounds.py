"""Guaranteed lower bounds of the principal Dirichlet eigenvalue of −∇·(A∇u) = λu on a simplicial mesh.

:mod:`privnoise.fisher.fem` brackets λ₁ of the support W: the conforming P2 Rayleigh quotient is an upper bound
(Rayleigh–Ritz, on a straight mesh inside W with exact quadrature); this module gives the lower bound, two ways,
both for the Laplacian in the mapped coordinates y = A^(−½)x (which turn −∇·(A∇u) into −Δ and simplices into
simplices):

* **Crouzeix–Raviart** (Carstensen & Gedicke 2014, Theorem 3.2; Liu 2015, Theorem 2.1): if the nonconforming
  interpolation error obeys ‖v − I_CR v‖ ≤ C_h ‖∇(v − I_CR v)‖, then λ_k ≥ λ_CR,k / (1 + C_h² λ_CR,k) for every
  k. The constant used here holds in any dimension and is computed per cell: f = v − I_CR v has zero mean on every
  face and a zero mean gradient, so ‖f − f̄‖_T ≤ (h_T/π)‖∇f‖_T (Payne–Weinberger on the convex cell, Bebendorf
  2003) and, from ∫_T ∇f·(x − x_T) = d |T| (f_F − f̄) with f_F = 0 the mean on a face, |T| f̄² ≤ (m_T/d²)‖∇f‖²_T
  with m_T the mean of |x − x_T|² over T. Hence C_h² = max_T [(h_T/π)² + m_T/d²] (in 2-D this is weaker than
  Liu's 0.1893·h, which is proved for triangles only). The bound converges like h².
* **Temple–Kato with an equilibrated flux** (Kato 1949; the complementary-energy form of Vejchodský 2016, §4):
  on (H¹₀, a(u, v) = ∫∇uᵀA∇v) the solution operator S of −∇·(A∇·) has eigenvalues 1/λ_k. For the P2
  eigenfunction u (∫u² = 1, ρ = a(u, u)) and any σ ∈ H(div), a(Su, Su) ≤ B = (‖A^(−½)σ‖ + η)² where
  η² = Σ_T (h̃_T/π)² ‖div σ + u‖²_T (valid when div σ + u has zero mean on every cell, h̃_T the diameter of the
  mapped cell). With λ̂₂ ≤ λ₂ from the Crouzeix–Raviart bound and ρ < λ̂₂, Temple's inequality gives
  1/λ₁ ≤ 1/ρ + ε²/(1/ρ − 1/λ̂₂), ε² = (B − 1/ρ)/ρ. The flux σ is the mixed (Raviart–Thomas) solution of
  −div σ = u: quadratic RT (div σ = Π₁u), and the bound converges like h³. It is used in 2-D only: in 3-D
  scikit-fem has the lowest-order RT alone (div σ = Π₀u, a bound converging like h²), measured no sharper than
  the Crouzeix–Raviart bound (−4.2 % against −3.8 % on the unit cube at 24,576 cells) and several times slower.

On curved supports (balls, ellipsoids) both are computed on the straight mesh W_h whose boundary vertices lie on
∂W, so W_h ⊂ W (W is convex); :func:`circumscribed_scale` gives the s for which s·W_h ⊃ W about the centre, and
λ₁(W) ≥ λ₁(s·W_h) = λ₁(W_h)/s² (domain monotonicity of Dirichlet eigenvalues).

The linear algebra is floating point: the bounds hold up to rounding, which a relative margin of 1e-11 covers.

References
----------
C. Carstensen, J. Gedicke, "Guaranteed lower bounds for eigenvalues", Math. Comp. 83 (2014).
X. Liu, "A framework of verified eigenvalue bounds for self-adjoint differential operators", Appl. Math.
Comput. 267 (2015).
T. Kato, "On the upper and lower bounds of eigenvalues", J. Phys. Soc. Japan 4 (1949).
T. Vejchodský, "Three methods for two-sided bounds of eigenvalues – a comparison", Numer. Methods PDE 34 (2018).
M. Bebendorf, "A note on the Poincaré inequality for convex domains", Z. Anal. Anwend. 22 (2003).
F. Farokhi, H. Sandberg, Automatica 99 (2019), Theorem 2: the eigenproblem bracketed here.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ._fem_levels import Level, eigen_forms, solve_level
from ._fem_symmetry import dirichlet_facets
from .supports import Support
from .supports.base import FloatArray, IntArray

__all__ = [
    "ROUNDING",
    "LevelBracket",
    "circumscribed_scale",
    "crouzeix_raviart_bounds",
    "level_bracket",
    "orthant_bracket",
    "temple_lower_bound",
]

#: Relative margin for the rounding of assembly and eigensolver (the bounds are moved outward by it).
ROUNDING = 1e-11


def _mapped(points: FloatArray, matrix: FloatArray) -> FloatArray:
    """y = A^(−½) x: −∇·(A∇u) in x is −Δ in y."""
    vals, vecs = np.linalg.eigh(matrix)
    return np.asarray(points @ ((vecs / np.sqrt(vals)) @ vecs.T))


def _diameters(corners: FloatArray) -> FloatArray:
    return np.asarray(np.linalg.norm(corners[:, :, None, :] - corners[:, None, :, :], axis=-1).max(axis=(1, 2)))


def interpolation_constant(points: FloatArray, cells: IntArray, matrix: FloatArray) -> float:
    """C_h with ‖v − I_CR v‖ ≤ C_h ‖A^½∇(v − I_CR v)‖: max over cells of √((h_T/π)² + m_T/d²), mapped."""
    corners = _mapped(points, matrix)[cells]  # (E, d + 1, d)
    d = corners.shape[2]
    centred = corners - corners.mean(axis=1, keepdims=True)
    second_moment = np.sum(centred**2, axis=(1, 2)) / ((d + 1) * (d + 2))  # mean |x − x_T|² over the simplex
    return float(np.sqrt(np.max((_diameters(corners) / math.pi) ** 2 + second_moment / d**2)))


def crouzeix_raviart_bounds(
    mesh: Any, matrix: FloatArray, count: int = 2, dirichlet: Any = None
) -> tuple[FloatArray, FloatArray]:
    """Guaranteed lower bounds of λ₁ … λ_count on the meshed domain, and the discrete CR eigenvalues.

    ``dirichlet``: the boundary facets with u = 0 (all by default; the others are natural, Neumann, facets: the
    interpolation keeps zero face means on the Dirichlet facets, so the bound holds for the mixed problem).
    """
    from scipy.sparse.linalg import eigsh
    from skfem import Basis, ElementTetCR, ElementTriCR

    d = mesh.p.shape[0]
    basis = Basis(mesh, ElementTriCR() if d == 2 else ElementTetCR())

    stiffness, mass = eigen_forms(matrix)
    k, m = stiffness.assemble(basis), mass.assemble(basis)
    inner = basis.complement_dofs(basis.get_dofs(mesh.boundary_facets() if dirichlet is None else dirichlet))
    ki, mi = k[inner][:, inner].tocsc(), m[inner][:, inner].tocsc()
    start = np.ones(inner.size)
    values = np.sort(eigsh(ki, k=count, M=mi, sigma=0.0, which="LM", tol=1e-12, v0=start)[0])
    c2 = interpolation_constant(np.asarray(mesh.p.T), np.asarray(mesh.t.T), matrix) ** 2
    lower = values / (1.0 + c2 * values) * (1.0 - ROUNDING)
    return np.asarray(lower), np.asarray(values)


def temple_lower_bound(
    mesh: Any, matrix: FloatArray, coefficients: FloatArray, rho: float, second: float
) -> float:
    """Temple–Kato lower bound of λ₁ from the P2 eigenfunction u (its ``coefficients`` per cell, ∫u² = 1,
    a(u, u) = ``rho``), given λ₂ ≥ ``second``.

    Returns 0 when the bound does not apply (ρ not below the lower bound of λ₂).
    """
    from scipy.sparse import bmat
    from scipy.sparse.linalg import splu
    from skfem import (
        Basis,
        BilinearForm,
        ElementDG,
        ElementTetP0,
        ElementTetP2,
        ElementTetRT0,
        ElementTriP1,
        ElementTriP2,
        ElementTriRT2,
    )
    from skfem.helpers import div

    if not rho < second:
        return 0.0
    d = mesh.p.shape[0]
    inverse = np.linalg.inv(matrix)
    if d == 2:
        flux_element, div_element, p2 = ElementTriRT2(), ElementDG(ElementTriP1()), ElementTriP2()
    else:
        flux_element, div_element, p2 = ElementTetRT0(), ElementTetP0(), ElementTetP2()
    order = 6
    flux = Basis(mesh, flux_element, intorder=order)
    pieces = Basis(mesh, div_element, intorder=order)
    scalar = Basis(mesh, p2, intorder=order)
    u = np.zeros(scalar.N)
    u[np.asarray(scalar.dofs.element_dofs).T] = coefficients

    @BilinearForm
    def weighted(s: Any, t: Any, _: Any) -> Any:
        return np.einsum("ij,j...,i...->...", inverse, s, t)

    @BilinearForm
    def divergence(s: Any, q: Any, _: Any) -> Any:
        return div(s) * q

    @BilinearForm
    def mixed_mass(w: Any, q: Any, _: Any) -> Any:
        return w * q

    m = weighted.assemble(flux)
    b = divergence.assemble(flux, pieces)
    rhs = -(mixed_mass.assemble(scalar, pieces) @ u)
    system = bmat([[m, b.T], [b, None]], format="csc")
    solution = splu(system).solve(np.concatenate([np.zeros(flux.N), rhs]))
    sigma = solution[: flux.N]
    energy = float(sigma @ (m @ sigma))
    residual = np.asarray(flux.interpolate(sigma).div) + np.asarray(scalar.interpolate(u))  # div σ + u, quadrature points
    per_cell = np.sum(residual**2 * scalar.dx, axis=1)
    corners = _mapped(np.asarray(mesh.p.T), matrix)[np.asarray(mesh.t.T)]
    eta = math.sqrt(float(np.sum((_diameters(corners) / math.pi) ** 2 * per_cell)))
    bound = (math.sqrt(energy) + eta) ** 2 * (1.0 + ROUNDING)
    tau = 1.0 / rho
    eps2 = max((bound - tau) / rho, 0.0)
    return 1.0 / (tau + eps2 / (tau - 1.0 / second)) * (1.0 - ROUNDING)


def circumscribed_scale(mesh: Any, support: Support, facets: Any = None) -> float:
    """s ≥ 1 with W ⊂ c + s(W_h − c) for a straight mesh W_h of an ellipsoid W with its boundary vertices on ∂W.

    In the coordinates v in which W is the unit ball, every boundary facet's plane is at distance δ_F from the
    centre; W_h is star-shaped about it, so scaling by s = 1/min δ_F puts every facet plane at distance ≥ 1.
    ``facets``: the boundary facets on ∂W (all by default; an orthant's facets on its symmetry planes pass
    through the centre and are left out).
    """
    center, root = np.asarray(support.center), np.asarray(support.root)  # type: ignore[attr-defined]
    unit = np.linalg.solve(root, (np.asarray(mesh.p.T) - center).T).T
    facets = np.asarray(mesh.facets[:, mesh.boundary_facets() if facets is None else facets].T)
    corners = unit[facets]  # (F, d, d)
    if corners.shape[2] == 2:
        edge = corners[:, 1] - corners[:, 0]
        normal = np.stack([edge[:, 1], -edge[:, 0]], axis=1)
    else:
        normal = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    distance = np.abs(np.einsum("fi,fi->f", normal, corners[:, 0]))
    return float(1.0 / distance.min())


class LevelBracket(NamedTuple):
    """Bounds of λ₁(W) from one mesh, the lower bound of λ₂(W) used, and the circumscribing scale (1 if flat)."""

    lower: float
    upper: float
    second: float
    scale: float


def level_bracket(
    mesh: Any, matrix: FloatArray, support: Support, level: Level, second: float = 0.0
) -> LevelBracket:
    """Bounds of λ₁(W) from one mesh and its P2 solve ``level``, given a lower bound ``second`` of λ₂(W).

    On a curved support the upper bound comes from a second P2 solve on the straight cells (inside W), and the
    lower bounds of the straight mesh W_h are divided by s² (:func:`circumscribed_scale`). Since W_h ⊂ W, a lower
    bound of λ₂(W) is one of λ₂(W_h) too; the Crouzeix–Raviart eigenproblem is solved only while none is known
    below which the level's Rayleigh quotient lies (Temple's inequality needs ρ < λ̂₂).
    """
    scale = 1.0
    if support.curved:
        level = solve_level(mesh, matrix, support, straight=True)
        scale = circumscribed_scale(mesh, support)
    upper = level.eigenvalue * (1.0 + ROUNDING)
    lower = 0.0
    if mesh.p.shape[0] == 3 or not level.eigenvalue < second:
        crouzeix, _ = crouzeix_raviart_bounds(mesh, matrix)
        lower = float(crouzeix[0]) / scale**2
        second = max(second, float(crouzeix[1]) / scale**2)
    if mesh.p.shape[0] == 2:
        temple = temple_lower_bound(mesh, matrix, level.coefficients, level.eigenvalue, second)
        lower = max(lower, temple / scale**2)
    return LevelBracket(lower, upper, second, scale)


def orthant_bracket(mesh: Any, matrix: FloatArray, orthant: Support, center: FloatArray) -> LevelBracket:
    """Bounds of λ₁(W) from a mesh of one orthant of W (:mod:`privnoise.fisher._fem_symmetry`: a box or an
    axis-aligned ellipsoid with a diagonal A, whose principal eigenfunction is even in every axis).

    λ₁(W) is the first eigenvalue of the mixed problem on the orthant (u = 0 on ∂W, ∂u/∂n = 0 on the planes
    xᵢ = cᵢ). The conforming P2 Rayleigh quotient of that problem on straight cells inside W bounds it above (the
    even extension is in H¹₀(W)); the Crouzeix–Raviart bound of the mixed problem bounds it below, divided on an
    ellipsoid by s², s the scale about c of the polytope circumscribing the orthant through its curved facets
    (the planes through c are invariant, and the even extension of the scaled polytope contains W). The cells
    are half the size for the same unknowns: the bracket, whose width falls like h², is about four times
    narrower than the one of the whole of W.
    """
    dirichlet = dirichlet_facets(mesh, center)
    upper = solve_level(mesh, matrix, orthant, straight=True, dirichlet=dirichlet).eigenvalue * (1.0 + ROUNDING)
    crouzeix, _ = crouzeix_raviart_bounds(mesh, matrix, count=1, dirichlet=dirichlet)
    scale = circumscribed_scale(mesh, orthant, dirichlet) if orthant.curved else 1.0
    # the mixed problem's second eigenvalue is not λ₂(W): none is returned (Temple's bound is not used here)
    return LevelBracket(float(crouzeix[0]) / scale**2, upper, 0.0, scale)
