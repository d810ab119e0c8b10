"""The polynomial bracket of λ₁ on convex polygons (``method="polynomials"``): it holds the closed forms (the equilateral triangle's
16π²/(3a²), a rotated square's 2π²/L²), a wrong operator's bracket excludes them (power), it overlaps the
finite-element bracket of a parallelogram with a correlated matrix (an independent discretisation), its bubble
vanishes on every edge, its rule integrates monomials as the triangle formula does, and a non-convex polygon is
refused."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privnoise.exceptions import InvalidParameterError
from privnoise.fisher import Polygon, solve_dirichlet_eigenproblem, spectral_bracket
from privnoise.fisher._bubble_domains import convex_polygon_domain

pytest.importorskip("skfem")


def _rotated_square(side: float, angle: float) -> Polygon:
    rotation = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
    corners = side * np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    return Polygon((corners @ rotation.T + [0.3, -0.2]).tolist())


@pytest.mark.parametrize(("support", "exact"), [
    (Polygon([(0.0, 0.0), (1.0, 0.0), (0.5, math.sqrt(3.0) / 2.0)]), 16.0 * math.pi**2 / 3.0),
    (Polygon([(1.0, 1.0), (3.0, 1.0), (2.0, 1.0 + math.sqrt(3.0))]), 16.0 * math.pi**2 / 12.0),
    (_rotated_square(1.5, 0.5), 2.0 * math.pi**2 / 2.25),
])
def test_the_bracket_holds_the_closed_form(support: Polygon, exact: float) -> None:
    bracket = spectral_bracket(support, rtol=1e-9, method="polynomials")
    assert bracket.converged and bracket.relative_width <= 1e-9
    assert bracket.low <= exact <= bracket.up
    wrong = spectral_bracket(support, np.eye(2) * (1 + 1e-6), rtol=1e-9, method="polynomials")
    assert not wrong.low <= exact <= wrong.up


def test_a_correlated_parallelogram_agrees_with_the_finite_element_bracket() -> None:
    support = Polygon([(-1.5, -1.0), (0.5, -1.0), (1.5, 1.0), (-0.5, 1.0)])
    a = np.array([[1.0, -0.3], [-0.3, 1.0]])
    spectral = spectral_bracket(support, a, rtol=1e-6, max_degree=12, method="polynomials")
    fem = solve_dirichlet_eigenproblem(support, a, rtol=1e-3)
    assert fem.converged and not spectral.converged  # corner singularities: algebraic convergence
    assert max(fem.lower_bound, spectral.low) <= min(fem.upper_bound, spectral.up)  # two brackets of one number
    assert spectral.relative_width < 1e-3


def test_the_bubble_vanishes_on_every_edge_and_the_rule_is_exact() -> None:
    vertices = np.array([[-1.0, -0.5], [0.8, -1.0], [1.0, 0.7], [-0.2, 1.0], [-0.9, 0.4]])
    domain = convex_polygon_domain(vertices)
    t = np.linspace(0.0, 1.0, 7)[:, None]
    for k in range(5):
        edge = vertices[k] + t * (vertices[(k + 1) % 5] - vertices[k])
        assert np.max(np.abs(domain.bubble(edge)[0])) < 1e-14
    assert domain.bubble(np.array([[0.0, 0.0]]))[0][0] > 0
    # ∫ over a triangle of x^a y^b: the area times a!b!2!/(a + b + 2)! on the reference triangle, mapped
    triangle = convex_polygon_domain(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))
    nodes, weights = triangle.rule(12)
    for a in range(7):
        for b in range(7 - a):
            expected = math.factorial(a) * math.factorial(b) / math.factorial(a + b + 2)
            assert float(np.sum(weights * nodes[:, 0] ** a * nodes[:, 1] ** b)) == pytest.approx(expected, abs=1e-15)


def test_a_non_convex_polygon_is_refused() -> None:
    l_shape = Polygon([(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)])
    with pytest.raises(InvalidParameterError, match="must be a convex polygon"):
        spectral_bracket(l_shape, method="polynomials")


def test_a_parallelogram_is_certified_to_one_in_a_million_with_an_exact_divergence() -> None:
    # obtuse corners: algebraic convergence, yet the stream-function flux keeps div σ = −u to rounding at degree 24
    bracket = spectral_bracket(Polygon([(-1.5, -1.0), (0.5, -1.0), (1.5, 1.0), (-0.5, 1.0)]), rtol=1e-6,
                               method="polynomials")
    assert bracket.converged and bracket.relative_width <= 1e-6 and bracket.defect < 1e-12
    # the parallelogram lies between the rectangles [−0.5, 0.5]×[−1, 1] (inside) and [−1.5, 1.5]×[−1, 1] (around it)
    assert math.pi**2 / 4 * (1 / 2.25 + 1) < bracket.low < bracket.up < math.pi**2 / 4 * (1 / 0.25 + 1)
