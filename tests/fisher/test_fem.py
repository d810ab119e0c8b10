"""The finite-element Dirichlet eigensolver against every closed form (and a literature value), in 2-D and 3-D.

Closed forms: boxes with diagonal A (λ₁ = π² Σ aᵢ/Lᵢ²), ellipsoids whose shape is s·A (λ₁ = j₀,₁²/s in 2-D,
π²/s in 3-D). Second methods for the rest: a correlated A on a box equals the Laplacian on the sheared box
A^(−1/2)W (a parallelogram, meshed as a Polygon); the L-shape's λ₁ = 9.6397238440219 (Trefethen & Betcke 2006).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.fisher import (
    Ball,
    Box,
    Ellipsoid,
    MeshSupport,
    Polygon,
    Polyhedron,
    solve_dirichlet_eigenproblem,
)

pytest.importorskip("skfem")

J01 = float(special.jn_zeros(0, 1)[0])
L_SHAPE = [(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)]
L_SHAPE_LAMBDA = 9.6397238440219  # λ₁ of the L-shape of side 2 (Trefethen & Betcke, 2006)
A_CORRELATED = np.array([[2.0, 0.7], [0.7, 1.0]])


def _sqrt_inv(a: np.ndarray) -> np.ndarray:
    v, u = np.linalg.eigh(a)
    return (u / np.sqrt(v)) @ u.T


CLOSED_FORMS_2D = {
    "box-diagonal": (Box([0, 0], [2, 1]), np.diag([2.0, 0.5]), math.pi**2 * (2.0 / 4 + 0.5)),
    "ellipse-matched": (Ellipsoid([1.0, -1.0], 1.5 * A_CORRELATED), A_CORRELATED, J01**2 / 1.5),
}


@pytest.mark.parametrize("name", sorted(CLOSED_FORMS_2D))
def test_2d_closed_forms_bracketed_to_1e_4(name: str) -> None:
    support, matrix, exact = CLOSED_FORMS_2D[name]
    sol = solve_dirichlet_eigenproblem(support, matrix, rtol=1e-4)
    assert sol.converged
    assert sol.lower_bound <= exact <= sol.upper_bound
    assert sol.upper_bound - sol.lower_bound <= 1e-4 * sol.lower_bound
    assert abs(sol.eigenvalue - exact) <= sol.error_estimate
    # the discrete value is a Rayleigh quotient on a domain inside W: never below λ₁(W)
    assert sol.discrete_eigenvalue >= exact * (1 - 1e-12)


def test_l_shape_bracketed_to_1e_3() -> None:
    # 1e-4 is the report's row thm2-l-shape (tests/reproduce/test_farokhi_sandberg.py)
    sol = solve_dirichlet_eigenproblem(Polygon(L_SHAPE), rtol=1e-3, polynomial_bound=False)  # the elements alone
    assert sol.converged
    assert sol.lower_bound <= L_SHAPE_LAMBDA <= sol.upper_bound
    assert sol.discrete_eigenvalue > L_SHAPE_LAMBDA
    # adaptivity: the re-entrant corner (1, 1) carries the smallest cells
    corners = sol.points[sol.cells]
    size = np.linalg.norm(corners[:, 1] - corners[:, 0], axis=1)
    near = np.linalg.norm(corners.mean(axis=1) - [1.0, 1.0], axis=1) < 0.05
    assert size[near].min() < 0.05 * size.max()


def test_correlated_box_equals_laplacian_on_sheared_box() -> None:
    box = Box([-1.0, -1.0], [1.0, 1.0])
    direct = solve_dirichlet_eigenproblem(box, A_CORRELATED, rtol=1e-3)
    shear = _sqrt_inv(A_CORRELATED)
    corners = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], dtype=float) @ shear.T
    sheared = solve_dirichlet_eigenproblem(Polygon(corners), rtol=1e-3, polynomial_bound=False)
    # two guaranteed brackets of one number overlap
    assert max(direct.lower_bound, sheared.lower_bound) <= min(direct.upper_bound, sheared.upper_bound)
    assert direct.eigenvalue == pytest.approx(sheared.eigenvalue, rel=2e-3)
    # and it is not the diagonal value: the correlation matters
    assert abs(direct.eigenvalue - math.pi**2 * (2.0 + 1.0) / 4) > 0.05


def test_3d_box_closed_form() -> None:
    a = np.diag([1.0, 2.0, 0.5])
    sol = solve_dirichlet_eigenproblem(Box([0, 0, 0], [1, 1.5, 1]), a, rtol=1e-3, max_unknowns=10_000,
                                       polynomial_bound=False)
    exact = math.pi**2 * (1.0 / 1 + 2.0 / 2.25 + 0.5 / 1)
    # in 3-D the guaranteed bracket is wide (Crouzeix–Raviart, O(h²)): not converged at 1e-3, but it holds
    assert not sol.converged
    assert sol.lower_bound <= exact <= sol.upper_bound
    assert sol.eigenvalue == pytest.approx(exact, rel=1e-3)  # the extrapolated estimate
    assert sol.discrete_eigenvalue >= exact


def test_3d_ball_closed_form() -> None:
    sol = solve_dirichlet_eigenproblem(Ball([0, 0, 0], 1.0), rtol=1e-2, max_unknowns=10_000)
    assert sol.lower_bound <= math.pi**2 <= sol.upper_bound
    assert sol.eigenvalue == pytest.approx(math.pi**2, rel=2e-2)
    assert sol.discrete_eigenvalue > math.pi**2


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("support", "matrix", "exact"),
    [
        (Box([0, 0, 0], [1, 1, 1]), None, 3 * math.pi**2),
        # the ellipsoid matched to CCᵀ (v = (2CCᵀ)^(−½)w is the unit ball) and the ball itself
        (Ellipsoid([0, 0, 0], 2.0 * np.diag([1.0, 2.0, 3.0])), np.diag([1.0, 2.0, 3.0]), math.pi**2 / 2.0),
        (Ball([0, 0, 0], 1.0), None, math.pi**2),
    ],
    ids=["cube", "ellipsoid", "ball"],
)
def test_3d_closed_forms_bracketed(support: object, matrix: object, exact: float) -> None:
    sol = solve_dirichlet_eigenproblem(support, matrix, rtol=1e-6, max_unknowns=50_000)  # type: ignore[arg-type]
    assert sol.lower_bound <= exact <= sol.upper_bound
    assert abs(sol.eigenvalue - exact) <= sol.error_estimate
    assert sol.discrete_eigenvalue >= exact


def test_polyhedron_and_user_mesh_agree_with_box() -> None:
    cube = Polyhedron([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)])
    from_hull = solve_dirichlet_eigenproblem(cube, rtol=1e-3, max_unknowns=10_000)
    assert from_hull.lower_bound <= 3 * math.pi**2 <= from_hull.upper_bound
    assert from_hull.eigenvalue == pytest.approx(3 * math.pi**2, rel=1e-3)
    square = MeshSupport(points=[[0, 0], [1, 0], [1, 1], [0, 1]], cells=[[0, 1, 2], [0, 2, 3]])
    from_mesh = solve_dirichlet_eigenproblem(square, rtol=1e-3)
    assert from_mesh.lower_bound <= 2 * math.pi**2 <= from_mesh.upper_bound
    assert from_mesh.eigenvalue == pytest.approx(2 * math.pi**2, rel=1e-3)


def test_history_decreases_and_estimate_reported() -> None:
    sol = solve_dirichlet_eigenproblem(Polygon(L_SHAPE), rtol=1e-3, polynomial_bound=False)
    values = [lam for _, lam in sol.history]
    assert all(b <= a * (1 + 1e-12) for a, b in zip(values, values[1:], strict=False))  # nested meshes
    assert abs(sol.eigenvalue - L_SHAPE_LAMBDA) <= sol.error_estimate <= 1e-3 * sol.lower_bound
    assert sol.mesh_size > 0 and sol.describe()["converged"] == sol.converged


def test_max_unknowns_stops_unconverged() -> None:
    sol = solve_dirichlet_eigenproblem(Polygon(L_SHAPE), rtol=1e-9, max_unknowns=2000, polynomial_bound=False)
    assert not sol.converged
    assert sol.unknowns <= 2000


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"matrix": [[1.0, 2.0], [2.0, 1.0]]}, InvalidParameterError),  # not positive definite
        ({"matrix": np.eye(3)}, DimensionError),
        ({"rtol": 0.0}, InvalidParameterError),
        ({"rtol": float("nan")}, InvalidParameterError),
        ({"refinement": "random"}, InvalidParameterError),
        ({"max_unknowns": 10}, InvalidParameterError),
    ],
)
def test_bad_parameters(kwargs: dict, error: type) -> None:
    with pytest.raises(error):
        solve_dirichlet_eigenproblem(Box([0, 0], [1, 1]), **kwargs)


def test_bad_support() -> None:
    with pytest.raises(InvalidParameterError, match="support"):
        solve_dirichlet_eigenproblem((0, 1))  # type: ignore[arg-type]
