"""Theorem 2 of Farokhi & Sandberg on general supports: λ₁ of −∇·(CCᵀ∇u) = λu with its guaranteed bracket.

The optimal bounded noise for a linear query on a support W is γ = u², u the principal Dirichlet eigenfunction
(Theorem 2, eq. (12); Tr 𝓘 = 4λ₁). :func:`privnoise.fisher.solve_dirichlet_eigenproblem` returns λ₁ with a
guaranteed bracket [λ_low, λ_up]; every row prints it. The second method of each row is independent of the
conforming finite-element code under test:

* a closed form where one exists (boxes with diagonal CCᵀ, the disk, ellipses matched to CCᵀ, the equilateral
  triangle, the ball, the cube), which must lie inside the bracket;
* the L-shape's literature value (Trefethen & Betcke 2006, by the method of particular solutions), inside the
  finite-element bracket and inside a bracket at 1e-9 by particular solutions
  (:mod:`privnoise.fisher.particular_solutions`: Fourier–Bessel functions at the re-entrant corner and
  Fox–Henrici–Moler's bound), which also certifies the correlated L-shape and the sheared box to 1e-9 against
  finite elements and tensor polynomials;
* elsewhere (correlated CCᵀ on a box, 2-D and 3-D) a different discretisation: the nonconforming lower bound
  (Crouzeix–Raviart elements with the Carstensen–Gedicke bound, and in 2-D Temple's inequality with a
  Raviart–Thomas flux) against the conforming P2 upper bound; the row's two values are λ_low and λ_up;
* on the correlated boxes also a bracket without a mesh (:func:`privnoise.fisher.spectral_bracket`: polynomials,
  Rayleigh–Ritz above and Kato–Temple with an equilibrated polynomial flux below), certified to 1e-6 in 2-D and
  3-D, which must overlap the finite-element bracket; beside every closed form of a box, a disk, the equilateral
  triangle, a ball or an ellipsoid (matched to a correlated CCᵀ in 2-D and 3-D) the same method certifies 1e-9
  around it (tensor polynomials on boxes, total-degree polynomials on the ball and the triangle).

Every row prints the bracket, its relative width and whether the requested tolerance was certified. In 2-D the
rows request 1e-4 (certified in seconds; 1e-5 takes up to a minute per support, 1e-6 several). In 3-D the lower
bound converges like h² and the rows stop at a bounded number of unknowns: on the cube and the ball, whose
eigenfunctions are even in every axis, the bracket comes from one orthant with Neumann conditions on the symmetry
planes and certifies 6e-2; on the correlated cube the row says it was not reached and prints the bracket.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...fisher import Ball, Box, Ellipsoid, Polygon, solve_dirichlet_eigenproblem, spectral_bracket
from .._report import Row, second_method
from .bracket_rows import bracket_row, overlap_text, reference_row
from .theorem2_particular import L_SHAPE_LAMBDA
from .theorem2_particular import rows as particular_rows

__all__ = ["L_SHAPE_LAMBDA", "bracket_text", "closed_forms", "rows", "solve"]

def bracket_text(solution: Any) -> str:
    """``guaranteed bracket [λ_low, λ_up] (relative width w; converged at rtol r: yes/no)``."""
    lo, up = solution.bracket
    return (
        f"guaranteed bracket [{lo:.10g}, {up:.10g}] (relative width {solution.relative_width:.2e}; "
        f"converged at rtol {solution.rtol:g}: {'yes' if solution.converged else 'no'}; "
        f"{solution.unknowns} unknowns)"
    )


# The parallelogram S·[−1, 1]²: −Δ on it is −∇·(S⁻¹S⁻ᵀ∇) on the square (x = Sy), the same λ₁.
_SHEAR = np.array([[1.0, 0.5], [0.0, 1.0]])
_SQUARE = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])


def _sheared_matrix() -> Any:
    inverse = np.linalg.inv(_SHEAR)
    return inverse @ inverse.T


def _triangle() -> Polygon:
    return Polygon([(0.0, 0.0), (1.0, 0.0), (0.5, math.sqrt(3.0) / 2.0)])


def solve(s: Any) -> dict[str, Any]:
    """The Theorem 2 solves of the setup ``s`` (:class:`~.general_supports.SupportsSetup`)."""
    c = np.array(s.correlated_c)
    gram = c @ c.T
    c3 = np.array(s.correlated_c3)
    gram3 = c3 @ c3.T
    two = {"rtol": s.rtol, "polynomial_bound": False}  # the elements alone: an independent discretisation
    three = {"rtol": s.rtol_3d, "max_unknowns": s.max_unknowns_3d, "polynomial_bound": False}
    return {
        "box-correlated": solve_dirichlet_eigenproblem(Box(*s.box), gram, **two),
        "l-shape-identity": solve_dirichlet_eigenproblem(Polygon(s.l_shape), **two),
        "rectangle": solve_dirichlet_eigenproblem(Box(*s.rectangle), np.diag(s.diagonal_a), **two),
        "ellipse": solve_dirichlet_eigenproblem(Ellipsoid([0.0, 0.0], s.ellipse_scale * gram), gram, **two),
        "disk": solve_dirichlet_eigenproblem(Ellipsoid([0.0, 0.0], np.eye(2)), **two),
        "triangle": solve_dirichlet_eigenproblem(_triangle(), **two),
        "box3-correlated": solve_dirichlet_eigenproblem(Box([-1] * 3, [1] * 3), gram3, **three),
        "cube3": solve_dirichlet_eigenproblem(Box([-1] * 3, [1] * 3), **three),
        "ball3": solve_dirichlet_eigenproblem(Ball([0, 0, 0], 1.0), **three),
        "box-correlated-polynomial": spectral_bracket(Box(*s.box), gram, rtol=1e-6),
        "box3-correlated-polynomial": spectral_bracket(Box([-1] * 3, [1] * 3), gram3, rtol=1e-6),
        "rectangle-polynomial": spectral_bracket(Box(*s.rectangle), np.diag(s.diagonal_a), rtol=1e-9),
        "ellipse-polynomial": spectral_bracket(Ellipsoid([0.0, 0.0], s.ellipse_scale * gram), gram, rtol=1e-9),
        "disk-polynomial": spectral_bracket(Ellipsoid([0.0, 0.0], np.eye(2)), rtol=1e-9),
        "cube3-polynomial": spectral_bracket(Box([-1] * 3, [1] * 3), rtol=1e-9),
        "triangle-polynomial": spectral_bracket(_triangle(), rtol=1e-9, method="polynomials"),
        "sheared-polygon": spectral_bracket(Polygon(_SQUARE @ _SHEAR.T), rtol=1e-6, method="polynomials"),
        "sheared-particular": spectral_bracket(Polygon(_SQUARE @ _SHEAR.T), rtol=1e-9),
        "l-shape-particular": spectral_bracket(Polygon(s.l_shape), rtol=1e-9),
        "l-shape-correlated-particular": spectral_bracket(Polygon(s.l_shape), gram, rtol=1e-9),
        "l-shape-correlated": solve_dirichlet_eigenproblem(Polygon(s.l_shape), gram, rtol=1e-3,
                                                           polynomial_bound=False),
        "sheared-box": spectral_bracket(Box([-1, -1], [1, 1]), _sheared_matrix(), rtol=1e-7),
        "ball3-polynomial": spectral_bracket(Ball([0, 0, 0], 1.0), rtol=1e-9),
        "ellipsoid3-polynomial": spectral_bracket(Ellipsoid([0.0] * 3, s.ellipse_scale * gram3), gram3, rtol=1e-9),
        "gram": gram,
        "gram3": gram3,
    }


@second_method
def closed_forms(diagonal_a: tuple[float, float], sides: tuple[float, float], ellipse_scale: float) -> dict[str, float]:
    """λ₁ by hand where a closed form exists (math and scipy.special only): boxes with a diagonal A
    (π²Σaᵢ/Lᵢ², product of sines), the disk and the matched ellipse (j₀,₁², j₀,₁²/s), the equilateral triangle of
    side 1 (16π²/3, Lamé), the unit ball (π², j_{1/2,1} = π), the matched ellipsoid in 3-D (π²/s) and the cube
    [−1, 1]³ (3π²/4)."""
    from scipy.special import jn_zeros

    j01 = float(jn_zeros(0, 1)[0]) ** 2
    pi2 = math.pi**2
    return {
        "rectangle": pi2 * (diagonal_a[0] / sides[0] ** 2 + diagonal_a[1] / sides[1] ** 2),
        "ellipse": j01 / ellipse_scale,
        "disk": j01,
        "triangle": 16.0 * pi2 / 3.0,
        "ball3": pi2,
        "ellipsoid3": pi2 / ellipse_scale,
        "cube3": 3.0 * pi2 / 4.0,
    }


def _closed_form_row(key: str, claim: str, exact: float, solution: Any, source: str, method: str) -> Row:
    return reference_row(key, claim, exact, solution.eigenvalue, solution.bracket,
                         f"{source}; {bracket_text(solution)}", "closed form", method)


def _two_discretisations_row(key: str, claim: str, solution: Any) -> Row:
    return bracket_row(
        key, claim, solution.bracket,
        "printed = the guaranteed lower bound from nonconforming elements (Crouzeix–Raviart with the "
        "Carstensen–Gedicke bound; in 2-D also Temple's inequality with a Raviart–Thomas flux), computed = the "
        f"conforming P2 Rayleigh–Ritz upper bound: two discretisations; {bracket_text(solution)}",
        "discretisation: nonconforming Crouzeix–Raviart elements (and, in 2-D, a mixed Raviart–Thomas "
        "flux) for the lower bound against conforming P2 elements for the upper bound, on the same mesh",
    )


def _polynomial_row(key: str, claim: str, bracket: Any, elements: Any) -> Row:
    return bracket_row(
        key, claim, (bracket.low, bracket.up),
        f"printed = the Kato–Temple lower bound, computed = the Rayleigh–Ritz upper bound, both from "
        f"polynomials of degree {bracket.degree} per coordinate ({bracket.unknowns} unknowns); relative width "
        f"{bracket.relative_width:.2e} (requested 1e-6: {'reached' if bracket.converged else 'not reached'}); the "
        f"finite-element bracket [{elements.lower_bound:.10g}, {elements.upper_bound:.10g}] "
        f"{overlap_text((bracket.low, bracket.up), elements.bracket)}",
        "discretisation: tensor bubble-Legendre polynomials (Rayleigh–Ritz) and the polynomial flux of "
        "least complementary energy with divergence −u (Kato–Temple), no mesh; λ₂ bounded below by "
        "Crouzeix–Raviart on a coarse mesh",
    )


def _polynomial_closed_form_row(key: str, claim: str, exact: float, bracket: Any, method: str, *,
                                shape: str = "ball", rtol: float = 1e-9) -> Row:
    box = shape == "box"
    basis = (f"degree {bracket.degree} per coordinate on the box" if box
             else f"total degree {bracket.degree} on the {shape}")
    return reference_row(
        key,
        f"{claim}: λ₁ certified to {rtol:g} by polynomials (printed = the closed form; not in the paper)",
        exact,
        bracket.up,
        (bracket.low, bracket.up),
        f"computed = the Rayleigh–Ritz upper bound of polynomials of {basis}; guaranteed bracket "
        f"[{bracket.low:.16g}, {bracket.up:.16g}] (relative width {bracket.relative_width:.2e}; converged at rtol "
        f"{rtol:g}: {'yes' if bracket.converged else 'no'}; {bracket.unknowns} unknowns)",
        "closed form",
        f"{method}; the bracket from bubble polynomials ({'tensor' if box else 'total-degree'} Legendre, "
        "Rayleigh–Ritz) and a polynomial flux with divergence −u (Kato–Temple), no mesh",
    )


def _sheared_row(polygon: Any, box: Any) -> Row:
    return bracket_row(
        "thm2-sheared-box-polynomial",
        "Thm 2 on the sheared box S·[−1, 1]², S = [[1, 0.5], [0, 1]], CCᵀ = I: λ₁ certified to 1e-6 by "
        "polynomials on the parallelogram (printed = lower bound, computed = upper bound; not in the paper)",
        (polygon.low, polygon.up),
        f"printed = the Kato–Temple lower bound, computed = the Rayleigh–Ritz upper bound, from "
        f"polynomials of total degree {polygon.degree} on the parallelogram; relative width "
        f"{polygon.relative_width:.2e} (requested 1e-6: {'reached' if polygon.converged else 'not reached'}); "
        f"the same λ₁ as the square with the matrix S⁻¹S⁻ᵀ, bracketed by tensor polynomials there: "
        f"[{box.low:.12g}, {box.up:.12g}], which {overlap_text((polygon.low, polygon.up), (box.low, box.up))}",
        "discretisation: total-degree polynomials times the edges' distances on the parallelogram, against "
        "tensor bubble-Legendre polynomials on the square with the transformed matrix (another trial space, "
        "another flux, another quadrature)",
    )


def rows(s: Any, sol: dict[str, Any]) -> list[Row]:
    """The Theorem 2 rows: closed forms and a literature value inside the bracket, and the bracket itself."""
    (x0, y0), (x1, y1) = s.rectangle
    exact = closed_forms(tuple(s.diagonal_a), (x1 - x0, y1 - y0), s.ellipse_scale)
    orthant = "the bracket from one orthant, Neumann on the symmetry planes"
    out = [
        _closed_form_row(
            "thm2-box-diagonal",
            "Thm 2 / Cor. 1: λ₁ on a box with diagonal CCᵀ = diag(2, 0.5), box [0, 2]×[0, 1] (printed = the "
            "closed form π²Σaᵢ/Lᵢ² of the cos² solution; the paper prints no eigenvalue)",
            exact["rectangle"],
            sol["rectangle"],
            "printed = π²Σaᵢ/Lᵢ²",
            "closed form: π²Σaᵢ/Lᵢ² of the product of sines, evaluated in the report",
        ),
        _closed_form_row(
            "thm2-ellipse-matched",
            f"Thm 2 on the ellipse with shape {s.ellipse_scale:g}·CCᵀ: λ₁ (printed = the closed form "
            f"j₀,₁²/{s.ellipse_scale:g} by w = (sCCᵀ)^½ v; not in the paper)",
            exact["ellipse"],
            sol["ellipse"],
            "printed = j₀,₁²/s",
            "closed form: j₀,₁²/s, the first zero of J₀ by scipy.special.jn_zeros",
        ),
        _closed_form_row(
            "thm2-disk",
            "Thm 2 on the unit disk, CCᵀ = I: λ₁ (printed = the closed form j₀,₁²; not in the paper)",
            exact["disk"],
            sol["disk"],
            "printed = j₀,₁²",
            "closed form: j₀,₁², the first zero of J₀ by scipy.special.jn_zeros",
        ),
        _closed_form_row(
            "thm2-triangle",
            "Thm 2 on the equilateral triangle of side 1, CCᵀ = I: λ₁ (printed = the closed form 16π²/3; "
            "not in the paper)",
            exact["triangle"],
            sol["triangle"],
            "printed = 16π²/(3a²)",
            "closed form: 16π²/(3a²) for the equilateral triangle of side a (Lamé), evaluated in the report",
        ),
        _closed_form_row(
            "thm2-l-shape",
            "Thm 2 on the (non-convex) L-shape with CCᵀ = I: λ₁ (printed = Trefethen & Betcke 2006)",
            L_SHAPE_LAMBDA,
            sol["l-shape-identity"],
            "adaptive refinement toward the re-entrant corner",
            "literature: 9.6397238440219, Trefethen & Betcke (2006), by the method of particular solutions",
        ),
        _two_discretisations_row(
            "thm2-box-correlated",
            "Thm 2 on the box [−1, 1]² with correlated CCᵀ (C = [[1, 0.6], [0, 1]]): λ₁ bracketed (printed = "
            "lower bound, computed = upper bound)",
            sol["box-correlated"],
        ),
        _closed_form_row(
            "thm2-ball-3d",
            "Thm 2 on the unit ball in 3-D, CCᵀ = I: λ₁ (printed = the closed form π²; not in the paper)",
            exact["ball3"],
            sol["ball3"],
            f"printed = π²; {orthant}",
            "closed form: π² = j_{1/2,1}², the first zero of the spherical Bessel function sin r/r",
        ),
        _closed_form_row(
            "thm2-cube-3d",
            "Thm 2 on the cube [−1, 1]³, CCᵀ = I: λ₁ (printed = the closed form 3π²/4; not in the paper)",
            exact["cube3"],
            sol["cube3"],
            f"printed = π²Σ1/Lᵢ²; {orthant}",
            "closed form: π²Σ1/Lᵢ² of the product of sines, evaluated in the report",
        ),
        _two_discretisations_row(
            "thm2-box-correlated-3d",
            "Thm 2 on the cube [−1, 1]³ with a correlated 3×3 CCᵀ: λ₁ bracketed (printed = lower bound, "
            "computed = upper bound)",
            sol["box3-correlated"],
        ),
        _polynomial_row(
            "thm2-box-correlated-polynomial",
            "Thm 2 on the box [−1, 1]² with correlated CCᵀ: λ₁ certified to 1e-6 by polynomials (printed = lower "
            "bound, computed = upper bound)",
            sol["box-correlated-polynomial"],
            sol["box-correlated"],
        ),
        _polynomial_row(
            "thm2-box-correlated-3d-polynomial",
            "Thm 2 on the cube [−1, 1]³ with the correlated 3×3 CCᵀ: λ₁ certified to 1e-6 by polynomials (printed "
            "= lower bound, computed = upper bound)",
            sol["box3-correlated-polynomial"],
            sol["box3-correlated"],
        ),
        _polynomial_closed_form_row(
            "thm2-box-diagonal-polynomial",
            "Thm 2 on the box [0, 2]×[0, 1] with diagonal CCᵀ = diag(2, 0.5)",
            exact["rectangle"],
            sol["rectangle-polynomial"],
            "closed form: π²Σaᵢ/Lᵢ² of the product of sines, evaluated in the report",
            shape="box",
        ),
        _polynomial_closed_form_row(
            "thm2-ellipse-matched-polynomial",
            f"Thm 2 on the ellipse with shape {s.ellipse_scale:g}·CCᵀ (closed form j₀,₁²/{s.ellipse_scale:g})",
            exact["ellipse"],
            sol["ellipse-polynomial"],
            "closed form: j₀,₁²/s, the first zero of J₀ by scipy.special.jn_zeros",
        ),
        _polynomial_closed_form_row(
            "thm2-disk-polynomial",
            "Thm 2 on the unit disk, CCᵀ = I (closed form j₀,₁²)",
            exact["disk"],
            sol["disk-polynomial"],
            "closed form: j₀,₁², the first zero of J₀ by scipy.special.jn_zeros",
        ),
        _polynomial_closed_form_row(
            "thm2-triangle-polynomial",
            "Thm 2 on the equilateral triangle of side 1, CCᵀ = I (closed form 16π²/3)",
            exact["triangle"],
            sol["triangle-polynomial"],
            "closed form: 16π²/(3a²) for the equilateral triangle of side a (Lamé), evaluated in the report",
            shape="triangle",
        ),
        _sheared_row(sol["sheared-polygon"], sol["sheared-box"]),
        _polynomial_closed_form_row(
            "thm2-cube-3d-polynomial",
            "Thm 2 on the cube [−1, 1]³, CCᵀ = I (closed form 3π²/4)",
            exact["cube3"],
            sol["cube3-polynomial"],
            "closed form: π²Σ1/Lᵢ² of the product of sines, evaluated in the report",
            shape="box",
        ),
        _polynomial_closed_form_row(
            "thm2-ball-3d-polynomial",
            "Thm 2 on the unit ball in 3-D, CCᵀ = I (closed form π²)",
            exact["ball3"],
            sol["ball3-polynomial"],
            "closed form: π² = j_{1/2,1}², the first zero of the spherical Bessel function sin r/r",
        ),
        _polynomial_closed_form_row(
            "thm2-ellipsoid-matched-3d-polynomial",
            f"Thm 2 on the ellipsoid of shape {s.ellipse_scale:g}·CCᵀ with the correlated 3×3 CCᵀ (closed form "
            f"π²/{s.ellipse_scale:g} by w = (sCCᵀ)^½ v)",
            exact["ellipsoid3"],
            sol["ellipsoid3-polynomial"],
            "closed form: π²/s, the unit ball's π² scaled by the map w = (sCCᵀ)^½ v",
        ),
        *particular_rows(sol),
    ]
    return out
