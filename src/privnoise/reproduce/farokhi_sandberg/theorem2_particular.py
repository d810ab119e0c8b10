"""Farokhi & Sandberg, Theorem 2 on polygons by particular solutions: the rows of
:mod:`.theorem2_brackets` certified to 1e-9 without a mesh for λ₁.

:func:`privnoise.fisher.spectral_bracket` on a polygon uses Fourier–Bessel functions at its singular corners and
Fox–Henrici–Moler's inequality (:mod:`privnoise.fisher.particular_solutions`). Each row's second method is
independent of it: the L-shape's literature value (Trefethen & Betcke 2006), the finite-element bracket of the
correlated L-shape, and tensor polynomials on the square that the sheared box maps to.
"""

from __future__ import annotations

from typing import Any

from .._report import Row
from .bracket_rows import bracket_row, overlap_text, reference_row

__all__ = ["L_SHAPE_LAMBDA", "rows"]

#: λ₁ of the L-shaped domain of side 2 with a unit square removed (Trefethen & Betcke, 2006).
L_SHAPE_LAMBDA = 9.6397238440219

_PARTICULAR = ("Fourier–Bessel functions at the polygon's singular corners (the method of particular solutions), "
               "bounded by Fox–Henrici–Moler's inequality, λ₂ bounded below by Crouzeix–Raviart; no polynomial and "
               "no finite element for λ₁")


def _particular_text(bracket: Any, rtol: float) -> str:
    return (f"guaranteed bracket [{bracket.low:.16g}, {bracket.up:.16g}] (relative width "
            f"{bracket.relative_width:.2e}; converged at rtol {rtol:g}: {'yes' if bracket.converged else 'no'}; "
            f"{bracket.degree} functions per corner, {bracket.unknowns} unknowns; Fox–Henrici–Moler "
            f"ε = {bracket.defect:.2e})")


def _particular_reference_row(key: str, claim: str, reference: float, bracket: Any, source: str) -> Row:
    return reference_row(key, claim, reference, bracket.up, (bracket.low, bracket.up),
                         f"computed = the upper end; {_particular_text(bracket, 1e-9)}", "reference",
                         f"{source}; the bracket from {_PARTICULAR}")


def _particular_overlap_row(key: str, claim: str, bracket: Any, other: tuple[float, float], other_name: str,
                            other_method: str) -> Row:
    ends = (bracket.low, bracket.up)
    reason = (f"printed = the lower end, computed = the upper end; {_particular_text(bracket, 1e-9)}; "
              f"{other_name} [{other[0]:.12g}, {other[1]:.12g}] {overlap_text(ends, other)}")
    return bracket_row(key, claim, ends, reason, f"discretisation: {_PARTICULAR}, against {other_method}")


def rows(sol: dict[str, Any]) -> list[Row]:
    """The particular-solution rows from the solves of :func:`.theorem2_brackets.solve`."""
    return [
        _particular_reference_row(
            "thm2-l-shape-particular-solutions",
            "Thm 2 on the (non-convex) L-shape with CCᵀ = I: λ₁ certified to 1e-9 by particular solutions "
            "(printed = Trefethen & Betcke 2006)",
            L_SHAPE_LAMBDA,
            sol["l-shape-particular"],
            "literature: 9.6397238440219, Trefethen & Betcke (2006)",
        ),
        _particular_overlap_row(
            "thm2-l-shape-correlated-particular-solutions",
            "Thm 2 on the L-shape with correlated CCᵀ (C = [[1, 0.6], [0, 1]]): λ₁ certified to 1e-9 by particular "
            "solutions (printed = lower end, computed = upper end; not in the paper)",
            sol["l-shape-correlated-particular"],
            (sol["l-shape-correlated"].lower_bound, sol["l-shape-correlated"].upper_bound),
            "the finite-element bracket at rtol 1e-3",
            "adaptive finite elements (Crouzeix–Raviart and Raviart–Thomas below, P2 above)",
        ),
        _particular_overlap_row(
            "thm2-sheared-box-particular-solutions",
            "Thm 2 on the parallelogram S·[−1, 1]², S = [[1, 0.5], [0, 1]], CCᵀ = I: λ₁ certified to 1e-9 by "
            "particular solutions (printed = lower end, computed = upper end; not in the paper)",
            sol["sheared-particular"],
            (sol["sheared-box"].low, sol["sheared-box"].up),
            "the square with the matrix S⁻¹S⁻ᵀ, bracketed by tensor polynomials,",
            "tensor bubble-Legendre polynomials with a Kato–Temple flux on the square with the transformed matrix",
        ),
    ]
