"""The polynomial bracket of λ₁ on balls and ellipsoids: its quadrature integrates monomials as the Gamma-function
formula does, it holds the closed forms (the unit ball's π², a disk's j₀,₁²/r², an ellipsoid matched to its matrix),
a wrong operator's bracket excludes them (power), it lies inside the finite-element bracket of a correlated ellipse
(an independent discretisation) and it certifies a correlated ball to 1e-6."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.special import gamma, jn_zeros

from privnoise.exceptions import DimensionError
from privnoise.fisher import Ball, Ellipsoid, solve_dirichlet_eigenproblem, spectral_bracket
from privnoise.fisher._bubble_domains import ball_domain, ball_rule
from privnoise.fisher._bubble_polynomials import bubble_flux, bubble_ritz

pytest.importorskip("skfem")

CORRELATED = np.array([[1.0, 0.5, 0.3], [0.5, 1.0, 0.2], [0.3, 0.2, 1.0]])


def _monomial_integral(powers: tuple[int, ...]) -> float:
    """∫ over the unit ball of Π x_i^(a_i): zero unless every a_i is even, else 2ΠΓ((a_i + 1)/2)/Γ((|a| + d)/2)
    over |a| + d (polar coordinates)."""
    if any(a % 2 for a in powers):
        return 0.0
    total = sum(powers) + len(powers)
    return 2.0 * math.prod(gamma((a + 1) / 2) for a in powers) / gamma(total / 2) / total


@pytest.mark.parametrize("d", [2, 3])
def test_the_ball_rule_integrates_every_monomial_of_its_degree(d: int) -> None:
    degree = 10
    nodes, weights = ball_rule(d, degree)
    for powers in itertools.product(range(degree + 1), repeat=d):
        if sum(powers) > degree:
            continue
        value = float(np.sum(weights * np.prod(nodes ** np.array(powers), axis=1)))
        assert value == pytest.approx(_monomial_integral(powers), abs=1e-13)


@pytest.mark.parametrize(("support", "matrix", "exact"), [
    (Ball([0.0, 0.0, 0.0], 1.0), None, math.pi**2),
    (Ball([1.0, -2.0, 0.5], 0.5), 2.0 * np.eye(3), 2.0 * math.pi**2 / 0.25),
    (Ball([1.0, 2.0], 2.0), None, jn_zeros(0, 1)[0] ** 2 / 4.0),
    # w = (sA)^½v turns −∇·(A∇u) on the ellipsoid of shape sA into −Δ/s on the unit ball
    (Ellipsoid([0.0, 1.0, 0.0], 0.7 * CORRELATED), CORRELATED, math.pi**2 / 0.7),
    (Ellipsoid([0.0, 0.0], 1.5 * CORRELATED[:2, :2]), CORRELATED[:2, :2], jn_zeros(0, 1)[0] ** 2 / 1.5),
])
def test_the_bracket_holds_the_closed_form(support: Ellipsoid, matrix: np.ndarray | None, exact: float) -> None:
    bracket = spectral_bracket(support, matrix, rtol=1e-9)
    assert bracket.converged and bracket.relative_width <= 1e-9
    assert bracket.low <= exact <= bracket.up
    assert bracket.defect < 1e-9  # the flux's divergence is −u up to rounding
    # power: an operator 1e-6 larger has a bracket that excludes the true value
    a = np.eye(support.dim) if matrix is None else matrix
    wrong = spectral_bracket(support, a * (1 + 1e-6), rtol=1e-9)
    assert not wrong.low <= exact <= wrong.up


def test_a_correlated_ellipse_agrees_with_the_finite_element_bracket() -> None:
    support = Ellipsoid([0.0, 0.0], [[2.0, 0.3], [0.3, 0.5]])
    a = np.array([[1.0, 0.7], [0.7, 1.0]])
    spectral = spectral_bracket(support, a, rtol=1e-8)
    fem = solve_dirichlet_eigenproblem(support, a, rtol=1e-3, polynomial_bound=False)  # the elements alone
    assert spectral.converged and fem.converged
    assert fem.lower_bound <= spectral.low <= spectral.up <= fem.upper_bound
    assert spectral.relative_width < fem.relative_width / 1000


def test_a_correlated_ball_is_certified_to_one_in_a_million() -> None:
    bracket = spectral_bracket(Ball([0.0, 0.0, 0.0], 1.0), CORRELATED, rtol=1e-6)
    assert bracket.converged and bracket.relative_width <= 1e-6
    extremes = np.linalg.eigvalsh(CORRELATED)  # λ₁ lies between π²·λ_min(A) and π²·λ_max(A)
    assert extremes[0] * math.pi**2 < bracket.low < bracket.up < extremes[-1] * math.pi**2
    assert bracket.second > bracket.up


def test_the_ritz_value_comes_down_with_the_degree_and_the_flux_balances_u() -> None:
    ball = ball_domain(3)
    values = [bubble_ritz(ball, CORRELATED, degree)[0] for degree in (2, 4, 6)]
    assert values[0] > values[1] > values[2]  # nested trial spaces: the upper bound only comes down
    _, coefficients = bubble_ritz(ball, CORRELATED, 6)
    energy, defect = bubble_flux(ball, CORRELATED, coefficients, 6)
    assert defect < 1e-10
    # the flux's energy bounds a(Su, Su) ≥ (u, Su)²/a(u, u) = 1/ρ (Cauchy–Schwarz): it is at least 1/ρ
    assert energy >= 1.0 / values[2] * (1 - 1e-12)


def test_a_degree_too_low_for_the_tolerance_is_not_converged() -> None:
    low_degree = spectral_bracket(Ball([0.0, 0.0, 0.0], 1.0), CORRELATED, rtol=1e-12, max_degree=4)
    assert not low_degree.converged and low_degree.degree == 4
    sharp = spectral_bracket(Ball([0.0, 0.0, 0.0], 1.0), CORRELATED, rtol=1e-9)
    assert low_degree.low <= sharp.low <= sharp.up <= low_degree.up


def test_a_matrix_of_the_wrong_size_is_refused() -> None:
    with pytest.raises(DimensionError, match="must be 3×3 for a 3-D support"):
        spectral_bracket(Ball([0.0, 0.0, 0.0], 1.0), np.eye(2))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_multiplying_by_a_coordinate_agrees_with_numpy_on_every_fibre(axis: int) -> None:
    from numpy.polynomial import legendre

    from privnoise.fisher._bubble_polynomials import legendre_times_x

    coefficients = np.random.default_rng(axis).normal(size=(4, 4, 4))
    product = legendre_times_x(coefficients, axis)
    assert product.shape == (5, 5, 5)
    expected = np.zeros((5, 5, 5))
    moved = np.moveaxis(coefficients, axis, -1)
    out = np.moveaxis(expected, axis, -1)
    for index in np.ndindex(moved.shape[:-1]):
        out[index] = legendre.legmulx(moved[index])
    assert np.allclose(product, expected, atol=1e-15)
