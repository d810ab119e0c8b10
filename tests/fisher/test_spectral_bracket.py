"""The polynomial bracket of λ₁ on boxes: it holds the closed forms of boxes with a diagonal matrix, it agrees with
the finite-element bracket (an independent discretisation: P2 Ritz values and Crouzeix–Raviart bounds on meshes)
on correlated boxes, it certifies 1e-6 on the correlated cube, and a wrong operator's bracket excludes the true
value (the check has power)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.fisher import Box, Polyhedron, solve_dirichlet_eigenproblem
from privnoise.fisher.spectral_bounds import spectral_bracket

pytest.importorskip("skfem")


def _closed_form(lower: list[float], upper: list[float], diagonal: list[float]) -> float:
    """λ₁ of a box with a diagonal matrix: Σ_d a_d (π / L_d)² (separation of variables)."""
    return sum(a * (math.pi / (hi - lo)) ** 2 for lo, hi, a in zip(lower, upper, diagonal, strict=True))


@pytest.mark.parametrize(("lower", "upper", "diagonal"), [
    ([-1.0, -1.0], [1.0, 1.0], [1.0, 1.0]),
    ([0.0, 0.0], [1.0, 3.0], [2.0, 0.5]),
    ([-1.0, -1.0, -1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]),
    ([0.0, -2.0, 1.0], [1.0, 0.0, 2.5], [1.0, 3.0, 0.7]),
])
def test_the_bracket_holds_the_closed_form(lower: list[float], upper: list[float], diagonal: list[float]) -> None:
    exact = _closed_form(lower, upper, diagonal)
    bracket = spectral_bracket(Box(lower, upper), np.diag(diagonal), rtol=1e-7)
    assert bracket.converged and bracket.relative_width <= 1e-7
    assert bracket.low <= exact <= bracket.up
    # power: the same box with a matrix 1e-5 larger has a bracket that excludes the true value
    wrong = spectral_bracket(Box(lower, upper), np.diag(diagonal) * (1 + 1e-5), rtol=1e-7)
    assert not wrong.low <= exact <= wrong.up


def test_a_correlated_box_agrees_with_the_finite_element_bracket() -> None:
    c = np.array([[1.0, 0.6], [0.0, 0.8]])
    box = Box([-1.0, -0.5], [1.0, 1.0])
    spectral = spectral_bracket(box, c @ c.T, rtol=1e-6)
    fem = solve_dirichlet_eigenproblem(box, c @ c.T, rtol=1e-3, polynomial_bound=False)  # the elements alone
    assert spectral.converged and fem.converged
    assert fem.lower_bound <= spectral.low <= spectral.up <= fem.upper_bound  # the narrower inside the wider
    assert spectral.relative_width < fem.relative_width / 100


def test_the_correlated_cube_is_certified_to_one_in_a_million() -> None:
    c = np.array([[1.0, 0.4, 0.0], [0.0, 1.0, 0.3], [0.0, 0.0, 1.0]])
    bracket = spectral_bracket(Box([-1.0] * 3, [1.0] * 3), c @ c.T, rtol=1e-6)
    assert bracket.converged and bracket.relative_width <= 1e-6
    # the cube of the identity has λ₁ = 3π²/4; CCᵀ has eigenvalues around 1, and λ₁ lies between its extremes times it
    extremes = np.linalg.eigvalsh(c @ c.T)
    assert extremes[0] * 3 * math.pi**2 / 4 < bracket.low < bracket.up < extremes[-1] * 3 * math.pi**2 / 4
    assert bracket.second > bracket.up  # the lower bound of λ₂ Temple's inequality used lies above λ₁


def test_a_degree_too_low_for_the_tolerance_is_not_converged() -> None:
    c = np.array([[1.0, 0.6], [0.0, 0.8]])
    bracket = spectral_bracket(Box([-1.0, -1.0], [1.0, 1.0]), c @ c.T, rtol=1e-9, max_degree=6)
    assert not bracket.converged and bracket.relative_width > 1e-9 and bracket.degree == 6
    assert bracket.low < bracket.up


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: spectral_bracket(Polyhedron([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])), InvalidParameterError, "`support` of `spectral_bracket`"),
    (lambda: spectral_bracket(Box([0, 0], [1, 1]), [[1.0, 2.0], [2.0, 1.0]]), InvalidParameterError, "matrix"),
    (lambda: spectral_bracket(Box([0, 0], [1, 1]), np.eye(3)), DimensionError, "must be 2×2"),
    (lambda: spectral_bracket(Box([0, 0], [1, 1]), rtol=0.5), InvalidParameterError, "rtol"),
    (lambda: spectral_bracket(Box([0, 0], [1, 1]), max_degree=1), InvalidParameterError, "max_degree"),
])
def test_bad_input_is_refused_with_the_rule(call, error, message) -> None:  # noqa: ANN001
    with pytest.raises(error, match=message):
        call()
