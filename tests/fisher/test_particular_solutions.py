"""The particular-solutions bracket of λ₁ on polygons: it holds the L-shape's literature value and the closed forms
of triangles, squares and rectangles (a 1e-6 larger operator's bracket excludes them: power), it overlaps brackets
of independent methods (tensor polynomials on a correlated square, finite elements on a correlated L-shape and on
a U-shape with two re-entrant corners), it obeys domain monotonicity, it stays valid when stopped early, and
``solve_dirichlet_eigenproblem`` certifies the L-shape's density with it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privnoise.exceptions import InvalidParameterError
from privnoise.fisher import Box, Polygon, solve_dirichlet_eigenproblem, spectral_bracket

pytest.importorskip("skfem")
pytest.importorskip("shapely")

L_SHAPE = Polygon([(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)])
#: λ₁ of the L-shape made of three unit squares (Trefethen & Betcke 2006), from the literature
L_SHAPE_LAMBDA = 9.6397238440219
CORRELATED = np.array([[1.36, 0.6], [0.6, 1.0]])  # C Cᵀ with C = [[1, 0.6], [0, 1]]


def _contains(bracket: object, value: float) -> bool:
    return bool(bracket.low <= value <= bracket.up)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("support", "exact"), [
    (L_SHAPE, L_SHAPE_LAMBDA),
    (Polygon([(0.0, 0.0), (1.0, 0.0), (0.5, math.sqrt(3.0) / 2.0)]), 16.0 * math.pi**2 / 3.0),
    (Polygon([(-1, -1), (1, -1), (1, 1), (-1, 1)]), math.pi**2 / 2.0),
    (Polygon([(0, 0), (3, 0), (3, 1), (0, 1)]), math.pi**2 * (1.0 / 9.0 + 1.0)),
])
def test_the_bracket_holds_the_reference_and_a_wrong_operator_excludes_it(support: Polygon, exact: float) -> None:
    bracket = spectral_bracket(support, rtol=1e-9)
    assert bracket.converged and bracket.relative_width <= 1e-9
    assert _contains(bracket, exact)
    wrong = spectral_bracket(support, np.eye(2) * (1 + 1e-6), rtol=1e-9)
    assert wrong.converged and not _contains(wrong, exact)


def test_a_diagonal_operator_on_a_rectangle_matches_the_product_of_sines() -> None:
    a = np.diag([2.0, 0.5])
    bracket = spectral_bracket(Polygon([(0, 0), (2, 0), (2, 1), (0, 1)]), a, rtol=1e-9)
    assert bracket.converged and _contains(bracket, math.pi**2 * (2.0 / 4.0 + 0.5 / 1.0))


def test_a_correlated_square_agrees_with_tensor_polynomials() -> None:
    square = spectral_bracket(Polygon([(-1, -1), (1, -1), (1, 1), (-1, 1)]), CORRELATED, rtol=1e-8)
    box = spectral_bracket(Box([-1, -1], [1, 1]), CORRELATED, rtol=1e-6)  # another method entirely
    assert square.converged and box.converged
    assert max(square.low, box.low) <= min(square.up, box.up)
    assert square.relative_width < box.relative_width


@pytest.mark.parametrize(("support", "matrix", "rtol"), [
    (L_SHAPE, CORRELATED, 3e-3),
    (Polygon([(0, 0), (3, 0), (3, 2), (2, 2), (2, 1), (1, 1), (1, 2), (0, 2)]), np.eye(2), 1e-2),  # two re-entrant
])
def test_re_entrant_corners_agree_with_the_finite_element_bracket(support: Polygon, matrix: np.ndarray,
                                                                  rtol: float) -> None:
    particular = spectral_bracket(support, matrix, rtol=1e-6)
    elements = solve_dirichlet_eigenproblem(support, matrix, rtol=rtol, polynomial_bound=False)
    assert particular.converged and elements.converged
    assert max(particular.low, elements.lower_bound) <= min(particular.up, elements.upper_bound)
    assert particular.relative_width < 1e-3 * elements.relative_width


def test_domain_monotonicity() -> None:
    # [0, 1]×[0, 2] ⊂ L ⊂ [0, 2]²: λ₁ decreases as the domain grows
    inner = spectral_bracket(Polygon([(0, 0), (1, 0), (1, 2), (0, 2)]), rtol=1e-8)
    middle = spectral_bracket(L_SHAPE, rtol=1e-8)
    outer = spectral_bracket(Polygon([(0, 0), (2, 0), (2, 2), (0, 2)]), rtol=1e-8)
    assert outer.up < middle.low and middle.up < inner.low


def test_stopped_early_the_bracket_is_wider_but_still_holds() -> None:
    early = spectral_bracket(L_SHAPE, rtol=1e-12, max_degree=20)
    assert not early.converged and early.degree == 20
    assert _contains(early, L_SHAPE_LAMBDA) and early.relative_width < 1e-3


def test_the_l_shape_density_is_certified_with_it() -> None:
    solution = solve_dirichlet_eigenproblem(L_SHAPE, rtol=1e-5)
    assert solution.converged and solution.polynomial_bracket is not None
    assert solution.lower_bound <= L_SHAPE_LAMBDA <= solution.upper_bound
    assert solution.discrete_eigenvalue - solution.lower_bound <= 1e-5 * solution.lower_bound


def test_bad_methods_are_refused() -> None:
    with pytest.raises(InvalidParameterError, match="`method`"):
        spectral_bracket(L_SHAPE, method="bessel")
    with pytest.raises(InvalidParameterError, match="Polygon only"):
        spectral_bracket(Box([-1, -1], [1, 1]), method="particular solutions")
    with pytest.raises(InvalidParameterError, match="convex polygon"):
        spectral_bracket(L_SHAPE, method="polynomials")


def test_a_corner_no_straight_cut_can_leave_is_refused() -> None:
    # a cavity whose mouth its inner corner (1, 3) cannot see within its exterior angle
    hooked = Polygon([(5, 0), (5, 4), (0, 4), (0, 1.5), (1, 1.5), (1, 3), (4, 3), (4, 1), (0, 1), (0, 0)])
    with pytest.raises(InvalidParameterError, match=r"corner \[1\.0, 3\.0\]"):
        spectral_bracket(hooked)
