"""The finite-element solve with the polynomial lower bound (boxes and ellipsoids; polygons by particular solutions): the bracket holds the closed
form, ``converged`` certifies the returned density too (its Fisher information, computed from the density by the
noise's own quadrature, lies within rtol of the closed-form optimum 4λ₁), and without the polynomials the same
budget of unknowns certifies nothing in 3-D (the elements' lower bound converges like h²)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privnoise.fisher import Ball, Box, FiniteElementNoise, MeshSupport, Polygon, solve_dirichlet_eigenproblem

pytest.importorskip("skfem")


@pytest.mark.parametrize(("support", "matrix", "exact"), [
    (Box([-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]), np.diag([1.0, 2.0, 0.5]), 3.5 * math.pi**2 / 4),
    (Ball([0.0, 0.0, 0.0], 1.0), None, math.pi**2),
    (Ball([0.0, 1.0], 2.0), np.eye(2), 5.783185962946784 / 4),
], ids=["box-3d", "ball-3d", "disk"])
def test_a_converged_solve_certifies_the_optimum_and_the_density(support, matrix, exact: float) -> None:  # noqa: ANN001
    rtol = 1e-3
    sol = solve_dirichlet_eigenproblem(support, matrix, rtol=rtol, max_unknowns=50_000)
    assert sol.converged and sol.polynomial_bracket is not None
    assert sol.lower_bound <= exact <= sol.upper_bound
    assert sol.upper_bound - sol.lower_bound <= rtol / 4 * sol.lower_bound  # the polynomial bracket
    assert sol.lower_bound <= sol.discrete_eigenvalue <= (1 + rtol) * sol.lower_bound
    # the density's own Fisher information: Tr(A·𝓘_w) = 4λ_h, within rtol of the optimum 4λ₁ (closed form)
    a = np.eye(support.dim) if matrix is None else matrix
    information = float(np.trace(a @ FiniteElementNoise(solution=sol).fisher_information()))
    assert 4 * exact <= information <= 4 * exact * (1 + rtol)
    assert sol.describe()["polynomial_bracket"] == [sol.polynomial_bracket.low, sol.polynomial_bracket.up]


def test_the_elements_alone_do_not_certify_the_same_3d_budget() -> None:
    box = Box([-1.0, -1.0, -1.0], [1.0, 1.0, 1.0])
    with_polynomials = solve_dirichlet_eigenproblem(box, rtol=1e-3, max_unknowns=10_000)
    alone = solve_dirichlet_eigenproblem(box, rtol=1e-3, max_unknowns=10_000, polynomial_bound=False)
    assert with_polynomials.converged and not alone.converged
    assert alone.polynomial_bracket is None and alone.describe()["polynomial_bracket"] is None
    assert alone.lower_bound <= with_polynomials.lower_bound <= 3 * math.pi**2 / 4 <= with_polynomials.upper_bound


def test_a_tolerance_the_density_cannot_reach_is_not_converged() -> None:
    # the polynomials certify λ₁ to 2.5e-9 at once, but 2,000 unknowns cannot make the density that good
    sol = solve_dirichlet_eigenproblem(Box([0.0, 0.0], [1.0, 1.0]), rtol=1e-8, max_unknowns=2_000)
    assert not sol.converged
    assert sol.upper_bound - sol.lower_bound <= 1e-8 * sol.lower_bound
    assert sol.discrete_eigenvalue - sol.lower_bound > 1e-8 * sol.lower_bound


def test_other_supports_use_the_elements_alone() -> None:
    triangle = MeshSupport(points=[[0, 0], [1, 0], [0, 1]], cells=[[0, 1, 2]])
    sol = solve_dirichlet_eigenproblem(triangle, rtol=1e-3)
    assert sol.polynomial_bracket is None and sol.converged
    # a polygon is bracketed by particular solutions, and the density refined until it is within rtol
    polygon = solve_dirichlet_eigenproblem(Polygon([[0, 0], [1, 0], [0, 1]]), rtol=1e-3)
    assert polygon.polynomial_bracket is not None and polygon.polynomial_bracket.converged and polygon.converged
    assert max(sol.lower_bound, polygon.lower_bound) <= min(sol.upper_bound, polygon.upper_bound)
    assert polygon.upper_bound - polygon.lower_bound < 1e-3 * (sol.upper_bound - sol.lower_bound)
