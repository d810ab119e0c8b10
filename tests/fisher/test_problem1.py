"""Problem 1 (Theorem 1): the ascent on the nonlinear eigenproblem (11)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import privnoise as pn
from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.fisher import Box, Ellipsoid, Polygon, solve_problem1

pytest.importorskip("skfem")


def test_separable_box_is_a_fixed_point() -> None:
    q = pn.queries.LinearQuery(np.diag([1.0, 2.0]))
    sol = solve_problem1(q, Box([0, 0], [1, 1]), rtol=1e-5, max_iterations=3)
    exact = (1.0 + 1.0 / 4.0) / (4 * math.pi**2)  # Tr 𝓘⁻¹ of the product cos²: Σ 1/(cᵢ² 4π²)
    assert sol.trace_inverse == pytest.approx(exact, rel=1e-4)
    assert sol.converged
    assert sol.multiplier == pytest.approx(sol.trace_inverse / 4, rel=1e-10)


def test_iterations_never_decrease_the_objective_and_solve_11() -> None:
    c = np.array([[1.0, 0.6], [0.0, 1.0]])
    q = pn.queries.LinearQuery(c)
    sol = solve_problem1(
        q, Polygon([(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)]), rtol=1e-3, max_iterations=3
    )
    hist = np.array(sol.history)
    assert np.all(np.diff(hist) >= -1e-6 * hist[:-1])
    assert sol.trace_inverse > hist[0]
    info = c.T @ np.asarray(sol.noise.fisher_information()) @ c
    assert sol.trace_inverse == pytest.approx(float(np.trace(np.linalg.inv(info))), rel=1e-10)
    # (11) at the returned iterate: μ is the Rayleigh quotient of u for M = C𝓘⁻²Cᵀ, and equals Tr 𝓘⁻¹/4
    inv = np.linalg.inv(info)
    m = c @ inv @ inv @ c.T
    assert sol.multiplier == pytest.approx(np.trace(m @ sol.noise.fisher_information()) / 4, rel=1e-10)
    assert sol.multiplier == pytest.approx(sol.trace_inverse / 4, rel=1e-10)


def test_matched_ellipse_agrees_with_problem2() -> None:
    c = np.array([[1.0, 0.6], [0.0, 1.0]])
    sol = solve_problem1(pn.queries.LinearQuery(c), Ellipsoid([0, 0], c @ c.T), rtol=1e-3, max_iterations=2)
    assert sol.history[-1] == pytest.approx(sol.history[0], rel=1e-9)


def test_bad_queries() -> None:
    with pytest.raises(DimensionError, match="square"):
        solve_problem1(pn.queries.LinearQuery(np.array([[1.0, 0, 0], [0, 1.0, 0]])), Box([0, 0], [1, 1]))
    with pytest.raises(InvalidParameterError, match="tol"):
        solve_problem1(pn.queries.LinearQuery(np.eye(2)), Box([0, 0], [1, 1]), tol=0.0)
